"""A real OpenID provider on loopback for tests: the npm package oidc-provider on Node 22.

    provider = OidcProvider()            # or the session fixture `oidc_provider`
    provider.start()
    client = provider.add_client(redirect_uris=["http://127.0.0.1:8000/callback"])
    user = provider.add_user(email="ada@corp.example", groups=["engineering"])
    redirected = await provider.sign_in(page, authorize_url, user=user,
                                        redirect_prefix="http://127.0.0.1:8000/callback")
    provider.revoke(user)                # "revoked upstream": every grant and token of theirs
    provider.stop()

The provider's discovery is at `{issuer}/.well-known/openid-configuration`; its protected API
(standing in for GitHub) at `provider.api`: `GET /me` and `GET /items` answer only to a live
access token of this provider, with that user's data only. See provider/provider.mjs.
"""

import json
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

from tests import node
from tests.waiting import wait_until

CACHE = node.ROOT / ".node-identity"
PACKAGES = {"oidc-provider": "9.6.0"}
SCRIPT = Path(__file__).with_name("provider") / "provider.mjs"


@dataclass(frozen=True)
class Client:
    client_id: str
    client_secret: str | None
    redirect_uris: tuple[str, ...]


@dataclass(frozen=True)
class User:
    sub: str
    email: str
    name: str
    password: str
    groups: tuple[str, ...] = ()
    items: tuple[dict, ...] = field(default=())


class OidcProvider:
    """One oidc-provider process: an issuer and a protected API on free loopback ports.

    `access_token_ttl` (seconds) is the default lifetime of access tokens; `add_client` takes
    one per client too, for refresh tests."""

    def __init__(self, *, access_token_ttl: int = 3600):
        self.access_token_ttl = access_token_ttl
        self.admin_token = secrets.token_urlsafe(24)
        self.issuer = ""
        self.api = ""
        self._process: subprocess.Popen | None = None
        self._folder: tempfile.TemporaryDirectory | None = None
        self._log = None

    # --- lifecycle ---
    def start(self) -> "OidcProvider":
        node_binary = node.install(CACHE, PACKAGES)
        # ESM resolves packages from the script's own folder: the script runs from the cache.
        script = CACHE / SCRIPT.name
        shutil.copy(SCRIPT, script)
        self._folder = tempfile.TemporaryDirectory(prefix="oidc-provider-")
        config = Path(self._folder.name) / "config.json"
        config.write_text(
            json.dumps({"admin_token": self.admin_token, "access_token_ttl": self.access_token_ttl})
        )
        self._log = open(Path(self._folder.name) / "provider.log", "w")  # noqa: SIM115 (closed in stop)
        self._process = subprocess.Popen(
            [str(node_binary), str(script), str(config)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._process.wait(timeout=10)
            raise RuntimeError(f"oidc-provider did not start: {self.log()}")
        ready = json.loads(line)
        self.issuer, self.api = ready["issuer"], ready["api"]
        wait_until(self._answers, timeout=30, what="the OpenID provider's discovery document")
        return self

    def _answers(self) -> bool:
        try:
            return httpx2.get(self.discovery_url, timeout=5).status_code == 200
        except httpx2.HTTPError:
            return False

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stdout:
                self._process.stdout.close()
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def log(self) -> str:
        """What the provider wrote to stderr so far (for failure messages)."""
        if self._folder is None:
            return ""
        return (Path(self._folder.name) / "provider.log").read_text()

    # --- configuration while running ---
    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def _admin(self, path: str, body: dict) -> dict:
        response = httpx2.post(
            f"{self.issuer}/admin/{path}",
            json=body,
            headers={"authorization": f"Bearer {self.admin_token}"},
            timeout=10,
        )
        response.raise_for_status()
        return response.json()

    def add_client(
        self,
        *,
        redirect_uris: list[str] | tuple[str, ...],
        client_id: str | None = None,
        client_secret: str | None = "",
        grant_types: tuple[str, ...] = ("authorization_code", "refresh_token"),
        access_token_ttl: int | None = None,
    ) -> Client:
        """A confidential client (client_secret_basic) with a generated secret by default;
        `client_secret=None` for a public client (no secret, PKCE)."""
        client_id = client_id or f"client-{secrets.token_hex(6)}"
        if client_secret == "":
            client_secret = secrets.token_urlsafe(24)
        body: dict = {
            "client_id": client_id,
            "redirect_uris": list(redirect_uris),
            "grant_types": list(grant_types),
        }
        if client_secret is not None:
            body["client_secret"] = client_secret
        if access_token_ttl is not None:
            body["access_token_ttl"] = access_token_ttl
        self._admin("clients", body)
        return Client(client_id, client_secret, tuple(redirect_uris))

    def add_user(
        self,
        *,
        email: str,
        sub: str | None = None,
        name: str | None = None,
        password: str | None = None,
        groups: list[str] | tuple[str, ...] = (),
        items: list[dict] | None = None,
    ) -> User:
        """A user who signs in with `email` (or `sub`) and `password` (generated unless given);
        the `groups` claim carries `groups`; the API's /items returns `items`."""
        user = User(
            sub=sub or f"user-{secrets.token_hex(6)}",
            email=email,
            name=name or email.split("@")[0].title(),
            password=password or secrets.token_urlsafe(16),
            groups=tuple(groups),
            items=tuple(items or ()),
        )
        body = {
            "sub": user.sub,
            "email": user.email,
            "name": user.name,
            "password": user.password,
            "groups": list(user.groups),
        }
        if items is not None:
            body["items"] = list(items)
        self._admin("users", body)
        return user

    def revoke(self, user: User) -> int:
        """Revokes every grant of `user` (their access and refresh tokens die with them) and
        ends their sessions; returns how many grants there were."""
        return self._admin("revoke", {"sub": user.sub})["revoked"]

    def grants(self, client: Client) -> dict[str, int]:
        """How many tokens the token endpoint gave `client`, per grant type
        (`{"authorization_code": 1, "refresh_token": 3}`)."""
        return self._admin("grants", {"client_id": client.client_id})

    # --- the browser step ---
    async def sign_in(
        self,
        page,
        url: str | None,
        *,
        user: User,
        redirect_prefix: str,
        password: str | None = None,
    ) -> str:
        """Opens `url` in a Playwright page (None: goes on from the page's current one, say
        after a click that led to the provider); whenever the provider's login or consent page shows
        up, signs in as `user` and allows. Returns the first URL under `redirect_prefix` the
        browser was sent to (the client's callback, with code and state)."""
        from tests.identity import browser

        return await browser.sign_in(
            page,
            url,
            issuer=self.issuer,
            username=user.email,
            password=user.password if password is None else password,
            redirect_prefix=redirect_prefix,
        )

    def sign_in_sync(
        self,
        page,
        url: str | None,
        *,
        user: User,
        redirect_prefix: str,
        password: str | None = None,
    ) -> str:
        """`sign_in` for Playwright's sync API."""
        from tests.identity import browser

        return browser.sign_in_sync(
            page,
            url,
            issuer=self.issuer,
            username=user.email,
            password=user.password if password is None else password,
            redirect_prefix=redirect_prefix,
        )


@pytest.fixture(scope="session")
def oidc_provider():
    """The session's OpenID provider (clients and users are added per test)."""
    provider = OidcProvider().start()
    yield provider
    provider.stop()
