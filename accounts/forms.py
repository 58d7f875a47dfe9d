from typing import cast

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.urls import reverse
from django.utils.html import format_html

from sso.passwords import password_refusal

from . import throttle
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

    def clean(self):
        """Refuse while the account or the source address is locked (before the password is
        even checked, so the right one is refused too), and count failures."""
        email = self.cleaned_data.get("username") or ""
        address = throttle.source_address(self.request) if self.request else "unknown"
        wait = throttle.login_blocked(email=email, address=address)
        if wait:
            self.throttled = True
            minutes = max(1, -(-wait // 60))
            raise forms.ValidationError(
                "Too many failed attempts for this account or from your network. "
                f"Try again in {minutes} minute{'s' if minutes != 1 else ''}, "
                "or reset your password.",
                code="throttled",
            )
        try:
            return super().clean()
        except forms.ValidationError as exc:
            if exc.code != "sso_required":  # the password was right
                throttle.login_failed(email=email, address=address)
            raise

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        # An organization of theirs may require single sign-on (sso/passwords.py).
        refusal = password_refusal(user)
        if refusal:
            raise forms.ValidationError(refusal, code="sso_required")


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

    def __init__(self, *args, roles, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Only the roles the inviter may grant (accounts.policy.grantable_roles).
        cast(forms.ChoiceField, self.fields["role"]).choices = roles

    def clean_email(self):
        return self.cleaned_data["email"].strip().lower()


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.ROLES)
