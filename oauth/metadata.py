"""The discovery documents: protected resource metadata (RFC 9728) for each OAuth server and the
authorization server metadata (RFC 8414), plus the URLs every other module derives from them."""

from urllib.parse import urlsplit

from django.conf import settings

from servers.slugs import is_slug

from .assertions import ALGORITHMS
from .client_metadata import JWT_BEARER
from .models import SCOPE_MCP, SCOPE_OFFLINE, SCOPE_READ

CHALLENGE_SCOPE = SCOPE_MCP
GRANT_TYPES = ["authorization_code", "refresh_token", JWT_BEARER, "client_credentials"]


def issuer() -> str:
    return (settings.OAUTH_ISSUER or settings.SITE_URL).rstrip("/")


def issuer_path() -> str:
    """The issuer's path without slashes ("" for an issuer at the site's root)."""
    return urlsplit(issuer()).path.strip("/")


def authorization_server_metadata_url() -> str:
    """Where RFC 8414 puts the metadata: the well-known name inserted before the issuer's path."""
    parts = urlsplit(issuer())
    suffix = f"/{issuer_path()}" if issuer_path() else ""
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{suffix}"


def resource_uri(slug: str) -> str:
    """A server's canonical URI (RFC 8707 `resource`, the audience of its tokens)."""
    return f"{settings.SITE_URL.rstrip('/')}/mcp/{slug}"


def slug_of_resource(resource: object) -> str:
    """The slug of the server whose canonical URI `resource` is, as the authorization and token
    endpoints accept it (a trailing slash aside), else "": a URI on another host, port or
    scheme, or with more after the slug, names no server of this deployment."""
    if not isinstance(resource, str):
        return ""
    prefix = resource_uri("")
    candidate = resource.rstrip("/")
    if not candidate.startswith(prefix):
        return ""
    slug = candidate[len(prefix) :]
    return slug if is_slug(slug) else ""


def resource_metadata_url(slug: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}/.well-known/oauth-protected-resource/mcp/{slug}"


def endpoint(name: str) -> str:
    return f"{issuer()}/oauth/{name}"


def protected_resource_metadata(server) -> dict:
    return {
        "resource": resource_uri(server.slug),
        "authorization_servers": [issuer()],
        "scopes_supported": [SCOPE_MCP, SCOPE_READ, SCOPE_OFFLINE],
        "bearer_methods_supported": ["header"],
        "resource_name": server.title or server.name,
    }


def authorization_server_metadata() -> dict:
    return {
        "issuer": issuer(),
        "authorization_endpoint": endpoint("authorize"),
        "token_endpoint": endpoint("token"),
        "registration_endpoint": endpoint("register"),
        "revocation_endpoint": endpoint("revoke"),
        "scopes_supported": [SCOPE_MCP, SCOPE_READ, SCOPE_OFFLINE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        # jwt-bearer: enterprise identity assertions (ID-JAG, docs/oauth.md); client_credentials:
        # service accounts' credentials.
        "grant_types_supported": GRANT_TYPES,
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": [
            "none",
            "client_secret_post",
            "client_secret_basic",
            "private_key_jwt",
        ],
        "token_endpoint_auth_signing_alg_values_supported": list(ALGORITHMS),
        "revocation_endpoint_auth_methods_supported": [
            "none",
            "client_secret_post",
            "client_secret_basic",
        ],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": f"{settings.SITE_URL.rstrip('/')}/api/docs/",
    }
