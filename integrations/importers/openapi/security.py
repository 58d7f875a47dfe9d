"""A document's security schemes turned into `http` auth settings, secret names and the
connection providers its authorization-code flows propose, and the settings each operation's
security requirement picks from them."""

import copy

from django.utils.text import slugify

from ..preview import secret_name, secret_placeholder
from ..schemas import RefError
from .document import OpenAPIDocument


class SecuritySchemes:
    def __init__(self, document: OpenAPIDocument) -> None:
        self.document = document
        self.schemes: dict[str, dict | None] = {}  # scheme name -> auth setting (None: unsupported)
        self.secrets: list[str] = []
        # scheme name -> the connection provider an authorization-code flow proposes: tools
        # that need it act as the calling person, through a connected account
        self.providers: dict[str, dict] = {}

    def read(self) -> None:
        document = self.document
        if document.dialect == "2.0":
            schemes = document.doc.get("securityDefinitions") or {}
        else:
            schemes = (document.doc.get("components") or {}).get("securitySchemes") or {}
        for name, raw in schemes.items():
            try:
                scheme = document.resolver.resolve(raw)
            except RefError as exc:
                document.problems.append(f"securitySchemes.{name}: {exc}")
                self.schemes[name] = None
                continue
            self.schemes[name] = self._auth_setting(name, scheme)

    def _secret(self, scheme_name: str, suffix: str = "") -> str:
        name = secret_name(self.document.prefix, scheme_name, suffix)
        if name not in self.secrets:
            self.secrets.append(name)
        return name

    def _api_key_setting(self, name: str, scheme: dict, where: str) -> dict | None:
        location = scheme.get("in")
        if location == "cookie":
            self.document.problems.append(
                f"{where}: API keys in cookies are not supported; not sent"
            )
            return None
        if location not in ("header", "query"):
            self.document.problems.append(f"{where}.in: {location!r} is not header or query")
            return None
        return {
            "type": "apiKey",
            "in": location,
            "name": str(scheme.get("name") or "X-API-Key"),
            "value": secret_placeholder(self._secret(name)),
        }

    def _auth_setting(self, name: str, scheme: dict) -> dict | None:
        scheme_type = str(scheme.get("type", "")).lower()
        where = f"securitySchemes.{name}"
        if scheme_type == "apikey":
            return self._api_key_setting(name, scheme, where)
        http_scheme = str(scheme.get("scheme", "")).lower()
        if scheme_type == "basic" or (scheme_type == "http" and http_scheme == "basic"):
            return {
                "type": "basic",
                "username": secret_placeholder(self._secret(name, "username")),
                "password": secret_placeholder(self._secret(name, "password")),
            }
        if scheme_type == "http" and http_scheme == "bearer":
            return {"type": "bearer", "token": secret_placeholder(self._secret(name, "token"))}
        flows = scheme.get("flows")
        if not isinstance(flows, dict):
            flows = {}
        authorization_code = flows.get("authorizationCode") or (
            scheme if scheme_type == "oauth2" and scheme.get("flow") == "accessCode" else None
        )
        if scheme_type == "oauth2" and isinstance(authorization_code, dict):
            proposal = self._provider(name, authorization_code)
            if proposal is not None:
                return {"type": "connection", "provider": proposal["key"]}
        client_credentials = flows.get("clientCredentials") or (
            scheme if scheme_type == "oauth2" and scheme.get("flow") == "application" else None
        )
        if (
            scheme_type == "oauth2"
            and isinstance(client_credentials, dict)
            and client_credentials.get("tokenUrl")
        ):
            setting = {
                "type": "oauth2",
                "tokenUrl": str(client_credentials["tokenUrl"]),
                "clientId": secret_placeholder(self._secret(name, "client_id")),
                "clientSecret": secret_placeholder(self._secret(name, "client_secret")),
            }
            scopes = client_credentials.get("scopes")
            if isinstance(scopes, dict) and scopes:
                setting["scope"] = " ".join(scopes)
            return setting
        if scheme_type in ("oauth2", "openidconnect"):
            self.document.problems.append(
                f"{where}: {scheme.get('type')} flows are not run by the importer; "
                "the tools send a bearer access token you store as a secret"
            )
            return {"type": "bearer", "token": secret_placeholder(self._secret(name, "token"))}
        self.document.problems.append(
            f"{where}: security scheme type {scheme.get('type')!r} is not supported"
        )
        return None

    def _provider(self, name: str, flow: dict) -> dict | None:
        """The connection provider an authorization-code flow describes, or None (and a
        problem) when its endpoints are not absolute URLs."""
        document = self.document
        where = f"securitySchemes.{name}"
        urls = {}
        for field_name in ("authorizationUrl", "tokenUrl", "refreshUrl"):
            raw = flow.get(field_name)
            if not raw:
                continue
            url = document.absolute(str(raw), f"{where}.{field_name}")
            if url is None:
                return None
            if not url.startswith(("https://", "http://")):
                document.problems.append(f"{where}.{field_name}: {raw!r} is not an http(s) URL")
                return None
            urls[field_name] = url
        if "authorizationUrl" not in urls or "tokenUrl" not in urls:
            document.problems.append(f"{where}: an authorization-code flow needs both URLs")
            return None
        taken = {p["key"] for p in self.providers.values()}
        key = slugify(document.title)[:50].strip("-") or slugify(name)[:50] or "api"
        if key in taken:
            key = slugify(f"{document.title}-{name}")[:50].strip("-")
        scopes = flow.get("scopes")
        if not isinstance(scopes, dict):
            scopes = {}
        proposal = {
            "key": key,
            "name": document.title[:100],
            "scheme": name,
            "authorizationUrl": urls["authorizationUrl"],
            "tokenUrl": urls["tokenUrl"],
            # scope -> what the document says it allows, for the person deciding
            "scopes": {str(k): str(v or "") for k, v in scopes.items()},
        }
        self.providers[name] = proposal
        return proposal

    def for_operation(self, op, problems) -> tuple[list[dict], dict | None]:
        """The auth settings of the operation's (or the document's) first security
        requirement, and the connection it needs when that names an authorization-code
        scheme, with the scopes the requirement lists."""
        requirements = op.get("security", self.document.doc.get("security"))
        if not isinstance(requirements, list) or not requirements:
            return [], None
        if any(req == {} for req in requirements):
            return [], None  # anonymous access is one of the alternatives: send no credentials
        chosen = requirements[0]
        if len(requirements) > 1:
            names = " or ".join("+".join(req) for req in requirements)
            problems.append(f"security: {names} accepted; the tool uses {'+'.join(chosen)}")
        settings, connection = [], None
        for scheme in chosen:
            setting = self.schemes.get(scheme)
            if setting is None:
                problems.append(
                    f"security: scheme {scheme!r} is not defined or not supported; no credentials sent for it"
                )
                continue
            if setting.get("type") == "connection":
                if connection is not None:
                    problems.append(f"security: one connection per tool; {scheme!r} not sent")
                    continue
                scopes = chosen[scheme] if isinstance(chosen[scheme], list) else []
                connection = {
                    "provider": setting["provider"],
                    "scopes": [str(s) for s in scopes if s],
                }
                continue
            settings.append(copy.deepcopy(setting))
        return settings, connection
