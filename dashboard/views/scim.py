"""The organization's SCIM provisioning page (scim/tokens.py): the endpoint to paste into the
identity provider, the bearer token (created or rotated here, shown once), the default role and
the group-to-role mapping. Admins and owners only; every rule is the service's."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods, require_POST

from accounts.policy import Action
from scim import tokens
from scim.models import ROLES

from .base import DashboardRequest, authorize, dashboard_view, page


class ScimSettingsForm(forms.Form):
    default_role = forms.ChoiceField(
        choices=ROLES, help_text="The role of a provisioned person whose groups map to none."
    )
    group_roles = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Group roles",
        help_text="One line per group: “Group name = role” (admin, member or viewer). A person "
        "gets the highest role of their mapped groups.",
    )

    def clean_group_roles(self) -> dict[str, str]:
        mapping = {}
        for number, line in enumerate(self.cleaned_data["group_roles"].splitlines(), 1):
            if not line.strip():
                continue
            name, sep, role = line.rpartition("=")
            if not sep or not name.strip():
                raise ValidationError(f"Line {number}: write “Group name = role”.")
            mapping[name.strip()] = role.strip().lower()
        return mapping


def _lines(mapping: dict) -> str:
    return "\n".join(f"{name} = {role}" for name, role in sorted(mapping.items()))


def _page(request: DashboardRequest, form: ScimSettingsForm, new_token: str = "", status=200):
    directory = tokens.directory_of(request.org)
    return page(
        request,
        "dashboard/orgs/scim.html",
        {
            "directory": directory,
            "form": form,
            "new_token": new_token,
            "endpoint": settings.SITE_URL.rstrip("/") + "/scim/v2",
            "provisioned": request.org.scim_users.count(),
        },
        status=status,
    )


@dashboard_view
@require_http_methods(["GET", "POST"])
def scim_settings(request: DashboardRequest):
    authorize(request, Action.SCIM_MANAGE)
    directory = tokens.directory_of(request.org)
    initial = {"default_role": directory.default_role, "group_roles": _lines(directory.group_roles)}
    form = ScimSettingsForm(request.POST or None, initial=initial)
    if request.method == "POST":
        if form.is_valid():
            try:
                tokens.settings_update(
                    actor=request.user, organization=request.org, **form.cleaned_data
                )
            except ValidationError as error:
                for field, errors in error.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                messages.success(request, "SCIM settings saved; provisioned people's roles follow.")
                return redirect("dashboard:scim")
        return _page(request, form, status=400)
    return _page(request, form)


@dashboard_view
@require_POST
def scim_token(request: DashboardRequest):
    """Create or rotate the token: the page answers with it, once."""
    authorize(request, Action.SCIM_MANAGE)
    raw = tokens.token_rotate(actor=request.user, organization=request.org)
    directory = tokens.directory_of(request.org)
    form = ScimSettingsForm(
        initial={
            "default_role": directory.default_role,
            "group_roles": _lines(directory.group_roles),
        }
    )
    return _page(request, form, new_token=raw)


@dashboard_view
@require_POST
def scim_token_revoke(request: DashboardRequest):
    authorize(request, Action.SCIM_MANAGE)
    tokens.token_revoke(actor=request.user, organization=request.org)
    messages.success(request, "SCIM token revoked: provisioning stops until a new one is made.")
    return redirect("dashboard:scim")
