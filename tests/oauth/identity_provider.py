"""A test enterprise identity provider: an RSA key pair made here, its JWKS served over HTTP on
loopback, and ID-JAGs (oauth-id-jag+jwt) signed with it, claims overridable per test."""

import json
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.conftest import free_port


class IdentityProvider:
    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(4)})
        self.port = free_port()
        self.issuer = f"https://idp-{uuid.uuid4().hex[:8]}.example.com"
        self.jwks_fetches = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path != "/jwks":
                    self.send_error(404)
                    return
                provider.jwks_fetches += 1
                body = json.dumps({"keys": [provider.key.as_dict(private=False)]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def jwks_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/jwks"

    def id_jag(
        self,
        *,
        audience: str,
        resource: str,
        client_id: str,
        email: str,
        header: dict | None = None,
        key: RSAKey | None = None,
        **claims,
    ) -> str:
        """An ID-JAG as the draft's example has it; `claims` override or (None) remove any,
        `header` overrides header fields, `key` signs with another key."""
        now = int(time.time())
        body = {
            "jti": uuid.uuid4().hex,
            "iss": self.issuer,
            "sub": f"00u{secrets.token_hex(6)}",
            "email": email,
            "aud": audience,
            "client_id": client_id,
            "exp": now + 300,
            "iat": now,
            "resource": resource,
            "scope": "mcp",
            **claims,
        }
        signed = {"alg": "RS256", "typ": "oauth-id-jag+jwt", "kid": self.key.kid, **(header or {})}
        payload = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(signed, payload, key or self.key)

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
