"""A request's Postman auth block turned into an `http` auth setting whose credentials are
secret placeholders, never the values the collection holds."""

import copy

from .variables import WHOLE_VARIABLE, Variables


def auth_settings(variables: Variables, found: list[dict], auth, problems) -> list[dict]:
    """The request's auth settings; each distinct setting is also added to `found` (the
    preview's list of the collection's auth)."""
    if not isinstance(auth, dict) or auth.get("type") in (None, "noauth", "inherit"):
        return []
    kind = auth["type"]
    entries = {
        str(e.get("key")): e.get("value") for e in auth.get(kind) or [] if isinstance(e, dict)
    }

    def secret_value(raw, fallback):
        raw = "" if raw is None else str(raw)
        whole = WHOLE_VARIABLE.match(raw)
        if whole:
            variables.secret_variables.add(whole.group(1))
            return variables.secret(whole.group(1))
        if raw:
            problems.append(
                f"auth: a literal {kind} credential is in the collection; it is stored as "
                "a secret placeholder instead, set the secret to that value"
            )
        return variables.secret(fallback)

    if kind == "bearer":
        setting = {"type": "bearer", "token": secret_value(entries.get("token"), "token")}
    elif kind == "basic":
        setting = {
            "type": "basic",
            "username": secret_value(entries.get("username"), "username"),
            "password": secret_value(entries.get("password"), "password"),
        }
    elif kind == "apikey":
        location = str(entries.get("in") or "header")
        setting = {
            "type": "apiKey",
            "in": "query" if location == "query" else "header",
            "name": variables.render(str(entries.get("key") or "X-API-Key"), problems, "auth"),
            "value": secret_value(entries.get("value"), "api_key"),
        }
    elif kind == "oauth2":
        problems.append("auth: OAuth 2.0 flows are not run; the access token is a secret")
        setting = {
            "type": "bearer",
            "token": secret_value(entries.get("accessToken"), "access_token"),
        }
    else:
        problems.append(f"auth: Postman auth type {kind!r} is not supported; no credentials sent")
        return []
    if setting not in [{k: v for k, v in a.items() if k != "scheme"} for a in found]:
        found.append({"scheme": kind, **setting})
    return [copy.deepcopy(setting)]
