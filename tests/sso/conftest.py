import pytest

from accounts.models import Membership, User
from sso.models import Connection


@pytest.fixture
def connection(org):
    """Single sign-on for `org` (alice@example.com owns it): corp.example people may sign in."""
    made = Connection(
        organization=org,
        issuer="https://idp.corp.example",
        client_id="getmcp",
        allowed_domains=["corp.example"],
        default_role=Membership.VIEWER,
        role_mapping={"engineering": Membership.MEMBER, "platform-admins": Membership.ADMIN},
    )
    made.set_client_secret("s3cret-of-the-client")
    made.save()
    return made


def member(org, email: str, role: str) -> User:
    user = User.objects.create_user(email, "a long enough password")
    Membership.objects.create(organization=org, user=user, role=role)
    return user
