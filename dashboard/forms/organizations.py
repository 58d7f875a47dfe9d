"""Creating an organization."""

from django import forms


class OrganizationCreateForm(forms.Form):
    name = forms.CharField(max_length=150, label="Organization name")
