"""Providers an imported API document proposes (integrations.importers finds them in its
`oauth2` authorization-code schemes): what each proposal means for the person importing, and
creating the ones they may create. Creating needs the client id the provider gave this
application, which no API document holds, so the person importing supplies it."""

from typing import Any

from django.core.exceptions import ValidationError

from accounts import policy
from accounts.models import Organization, User
from accounts.policy import Action

from .models import Provider
from .providers import provider_create


def _existing(organization: Organization) -> set[str]:
    return set(Provider.objects.filter(organization=organization).values_list("key", flat=True))


def describe_proposals(
    *, actor: User, organization: Organization, proposals: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each proposal with whether the organization has it already, whether this person may
    create it, and a sentence saying what happens on commit."""
    may = policy.can(user=actor, org=organization, action=Action.CONNECTIONS_MANAGE)
    existing = _existing(organization)
    described = []
    for proposal in proposals:
        key = proposal.get("key", "")
        if key in existing:
            note = f"The organization already has the provider {key!r}; the tools use it."
        elif may:
            note = (
                f"Give the client id (and secret) the provider registered for getmcp when "
                f"importing to create the provider {key!r}; the tools need it before anyone "
                "can connect."
            )
        else:
            note = (
                f"The tools need the connection provider {key!r}, which only an admin can "
                "add (Connected accounts, Providers); until then calls ask for it in vain."
            )
        described.append({**proposal, "exists": key in existing, "canCreate": may, "note": note})
    return described


def create_proposed(
    *,
    actor: User,
    organization: Organization,
    proposals: list[dict[str, Any]],
    credentials: dict[str, dict[str, str]],
) -> tuple[list[Provider], list[str]]:
    """Create each proposed provider the organization lacks and `credentials` gives a client
    id for, when `actor` may manage providers. Returns the providers made and notes about
    the ones not made."""
    described = describe_proposals(actor=actor, organization=organization, proposals=proposals)
    made, notes = [], []
    for proposal in described:
        key = proposal["key"]
        given = credentials.get(key) or {}
        if proposal["exists"]:
            continue
        if not proposal["canCreate"] or not (given.get("clientId") or "").strip():
            notes.append(proposal["note"])
            continue
        try:
            made.append(
                provider_create(
                    actor=actor,
                    organization=organization,
                    key=key,
                    name=proposal.get("name") or key,
                    authorization_url=proposal.get("authorizationUrl", ""),
                    token_url=proposal.get("tokenUrl", ""),
                    # each tool asks for the scopes its operation lists; none on every connect
                    scopes=[],
                    client_id=given["clientId"].strip(),
                    client_secret=given.get("clientSecret") or "",
                )
            )
        except ValidationError as exc:
            detail = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            notes.append(f"The provider {key!r} was not created: {detail}")
    return made, notes
