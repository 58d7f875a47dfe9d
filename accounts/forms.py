from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.urls import reverse
from django.utils.html import format_html

from .models import Membership, Organization, User


class SignUpForm(forms.Form):
    name = forms.CharField(
        max_length=150,
        required=False,
        label="Your name",
        widget=forms.TextInput(attrs={"autocomplete": "name", "autofocus": True}),
    )
    email = forms.EmailField(
        label="Work email", widget=forms.EmailInput(attrs={"autocomplete": "email"})
    )
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters.",
    )

    def clean_email(self):
        email = self.cleaned_data["email"].strip().lower()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(
                format_html(
                    'An account with this email already exists. <a href="{}">Log in instead.</a>',
                    reverse("accounts:login"),
                )
            )
        return email

    def clean_password(self):
        password = self.cleaned_data["password"]
        password_validation.validate_password(password)
        return password

    def save(self) -> User:
        data = self.cleaned_data
        return User.objects.create_user(data["email"], data["password"], name=data["name"])


class LoginForm(AuthenticationForm):
    username = forms.EmailField(
        label="Email", widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"})
    )
    password = forms.CharField(
        strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": "Please enter a correct email and password. The password is "
        "case-sensitive.",
    }

    def clean_username(self):
        # Addresses are stored lower-cased at sign-up, so Grace@Example.com must still log in.
        return self.cleaned_data["username"].strip().lower()


class ProfileForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ["name", "email"]

    def clean_email(self):
        email = self.cleaned_data["email"].strip().lower()
        taken = User.objects.filter(email__iexact=email).exclude(pk=self.instance.pk).exists()
        if taken:
            raise forms.ValidationError("Another account uses this email.")
        return email


class OrganizationForm(forms.ModelForm):
    class Meta:
        model = Organization
        fields = ["name"]


class InviteForm(forms.Form):
    email = forms.EmailField()
    role = forms.ChoiceField(choices=Membership.ROLES, initial=Membership.MEMBER)

    def __init__(self, *args, organization, inviter_role, **kwargs):
        super().__init__(*args, **kwargs)
        self.organization = organization
        if inviter_role != Membership.OWNER:
            # Only owners make owners.
            self.fields["role"].choices = [c for c in Membership.ROLES if c[0] != Membership.OWNER]

    def clean_email(self):
        email = self.cleaned_data["email"].strip().lower()
        if Membership.objects.filter(organization=self.organization, user__email=email).exists():
            raise forms.ValidationError("This person is already a member.")
        return email


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.ROLES)
