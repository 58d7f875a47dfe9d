"""The invited person's side: the emailed link's page, and the list of invitations waiting
for the logged-in user. Nothing here accepts on GET (mail scanners open links); accepting and
declining are POSTs by the logged-in, addressed user (accounts.services checks that)."""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from dashboard.views.base import page

from . import services


def _answer(request, invitation, accept: bool):
    if accept:
        services.invitation_accept(user=request.user, invitation=invitation)
        # The current organization stays what it was: what the user creates next must not
        # move into the new organization unless they pick it themselves.
        messages.success(
            request,
            f"You joined {invitation.organization.name}. Pick it in the organization menu at "
            "the top to work in it.",
        )
        return redirect("dashboard:server_list")
    services.invitation_decline(user=request.user, invitation=invitation)
    messages.success(request, f"Invitation to {invitation.organization.name} declined.")
    return redirect("accounts:invitations")


@require_http_methods(["GET", "POST"])
def invitation(request, token):
    """The page the emailed link opens."""
    try:
        found = services.invitation_from_token(token)
    except services.InvitationInvalid as exc:
        return render(request, "accounts/invitation.html", {"error": str(exc)}, status=404)
    context = {"invitation": found, "token": token}
    if not request.user.is_authenticated:
        here = request.get_full_path()
        # Both ways in are offered whatever the address: the page must not tell a link holder
        # whether an account exists.
        context["login_url"] = reverse("accounts:login") + "?" + urlencode({"next": here})
        context["signup_url"] = (
            reverse("accounts:signup") + "?" + urlencode({"email": found.email, "next": here})
        )
        return render(request, "accounts/invitation.html", context)
    if request.user.email.lower() != found.email.lower():
        context["error"] = (
            f"This invitation is for {found.email}, and you are logged in as "
            f"{request.user.email}. Log out and log in with the invited address to answer it."
        )
        return render(request, "accounts/invitation.html", context, status=403)
    if request.method == "POST":
        try:
            return _answer(request, found, request.POST.get("answer") == "accept")
        except (services.InvitationInvalid, services.InvitationNotYours) as exc:
            return render(request, "accounts/invitation.html", {"error": str(exc)}, status=409)
    return render(request, "accounts/invitation.html", context)


@login_required
def invitation_list(request):
    """Invitations addressed to the logged-in user."""
    pending = services.invitations_pending_for(user=request.user).order_by("-created_at")
    return page(request, "accounts/invitations.html", {"pending": pending})


@login_required
@require_POST
def invitation_answer(request, pk, answer):
    found = get_object_or_404(services.invitations_pending_for(user=request.user), pk=pk)
    try:
        return _answer(request, found, answer == "accept")
    except (services.InvitationInvalid, services.InvitationNotYours) as exc:
        messages.error(request, str(exc))
        return redirect("accounts:invitations")
