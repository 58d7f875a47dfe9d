"""Personal access tokens for the management API (/api/), made and revoked by their owner.

A token acts for its user (in every organization the user belongs to), so these pages show
and touch only the signed-in user's own tokens: no organization check applies, and another
user's token answers 404 like one that does not exist."""

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from api.models import PersonalAccessToken
from dashboard.views.base import DashboardRequest

from .base import dashboard_view, page

EXPIRY_CHOICES = [
    ("30", "30 days"),
    ("90", "90 days"),
    ("365", "One year"),
    ("", "Never"),
]


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What uses it, like “CI deploy” or “terraform laptop”."
    )
    expires_in = forms.ChoiceField(
        choices=EXPIRY_CHOICES,
        required=False,
        initial="90",
        label="Expires",
        help_text="A token that never expires stays valid until you revoke it.",
    )

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Give the token a name.")
        return name


def token_create(*, user, name: str, expires_in_days: int | None):
    expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    return PersonalAccessToken.issue(user, name, expires_at=expires_at)


@dashboard_view
def token_list(request: DashboardRequest):
    tokens = PersonalAccessToken.objects.filter(user=request.user)
    active = tokens.filter(revoked_at=None).order_by("-created_at")
    revoked = tokens.exclude(revoked_at=None).order_by("-revoked_at")[:20]
    return page(request, "dashboard/tokens/list.html", {"active": active, "revoked": revoked})


@dashboard_view
@require_http_methods(["GET", "POST"])
def token_new(request: DashboardRequest):
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data["expires_in"]
        token, raw = token_create(
            user=request.user,
            name=form.cleaned_data["name"],
            expires_in_days=int(days) if days else None,
        )
        # The raw token is rendered once, in this response, and never stored.
        api_url = request.build_absolute_uri("/api/")
        response = page(
            request,
            "dashboard/tokens/created.html",
            {"token": token, "raw": raw, "api_url": api_url},
        )
        response["Cache-Control"] = "no-store"
        return response
    return page(request, "dashboard/tokens/form.html", {"form": form})


@dashboard_view
@require_POST
def token_revoke(request: DashboardRequest, pk: int):
    token = get_object_or_404(PersonalAccessToken, pk=pk, user=request.user, revoked_at=None)
    token.revoke()
    messages.success(request, f"Token “{token.name}” revoked. It is refused from now on.")
    return redirect("dashboard:token_list")
