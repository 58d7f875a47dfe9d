"""Dashboard sessions and "SSO required": switching it on ends the open *password* sessions of
the organization's members who are not owners, so nobody keeps working through a sign-in the
organization no longer accepts.

A sign-in through single sign-on is marked in its session (`mark_sso_sign_in`, sso/views.py);
those survive, as do owners' sessions (owners keep the password break-glass path, docs/sso.md).
Every other session of such a member is a password sign-in and is deleted, which signs the
person out on their next request on every web process (sessions live in the database), and
their open inspector sockets are told to check again at once (inspector/consumers.py closes
them, since their session is gone).

Django's database sessions are not indexed by user, so this reads the unexpired sessions once;
it runs only when an admin switches the requirement on, never on a request path.
"""

from importlib import import_module

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.db import transaction
from django.utils import timezone

from accounts.models import Membership, Organization
from infra import keys as rkeys
from infra.redis import publish, sync_client
from servers.outages import best_effort

# The session key that says this session signed in through single sign-on (the organization's
# id, for the record); sessions without it signed in with a password.
SSO_SIGN_IN = "sso_sign_in"


def mark_sso_sign_in(session, organization: Organization) -> None:
    session[SSO_SIGN_IN] = organization.pk


def signed_in_with_sso(session) -> bool:
    return session.get(SSO_SIGN_IN) is not None


def end_password_sessions(organization: Organization) -> int:
    """Deletes the password sessions of `organization`'s non-owner members; how many."""
    people = {
        str(pk)
        for pk in Membership.objects.filter(organization=organization)
        .exclude(role=Membership.OWNER)
        .values_list("user_id", flat=True)
    }
    if not people:
        return 0
    store = import_module(settings.SESSION_ENGINE).SessionStore
    ended, signed_out = [], set()
    for row in store.get_model_class().objects.filter(expire_date__gt=timezone.now()).iterator():
        data = store().decode(row.session_data)
        person = str(data.get(SESSION_KEY, ""))
        if person in people and not data.get(SSO_SIGN_IN):
            ended.append(row.session_key)
            signed_out.add(int(person))
    store.get_model_class().objects.filter(session_key__in=ended).delete()

    def tell_sockets() -> None:  # once the deletion is visible to the other processes
        for person in signed_out:
            best_effort(publish, sync_client(), rkeys.person_changed(person), "sso.required")

    transaction.on_commit(tell_sockets)
    return len(ended)
