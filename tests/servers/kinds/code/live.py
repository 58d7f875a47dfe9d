"""Tenants with code tools on a live uvicorn process (helpers for the over-HTTP tests)."""

from types import SimpleNamespace


def code_tool_def(name: str, source: str, **extra) -> dict:
    return {
        "name": name,
        "description": f"code tool {name}",
        "inputSchema": extra.pop("inputSchema", {"type": "object"}),
        "kind": "code",
        "config": {"language": "python", "source": source, **extra.pop("config", {})},
        **extra,
    }


def make_tenant(committed, slug: str, tools: list[dict], secrets: dict | None = None):
    from accounts.models import ApiKey, User
    from servers.definition import import_definition
    from vault.models import Secret

    def make():
        user = User.objects.create_user(f"{slug}@example.com", "long enough password 9")
        org = user.personal_organization()
        server = import_definition(
            {"slug": slug, "name": slug, "version": "1.0.0", "tools": tools}, org
        )
        for name, value in (secrets or {}).items():
            Secret.store(org, name, value, server=server)
        key, raw = ApiKey.issue(org, "test key")
        return SimpleNamespace(org=org, server=server, slug=slug, raw=raw)

    return committed(make)
