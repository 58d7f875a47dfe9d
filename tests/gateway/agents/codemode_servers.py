"""A small shop server in discovery mode with code mode on (code tools play the shop's API), and
the program an agent sends it for a three-step job (helpers for the code-mode tests)."""

from types import SimpleNamespace

from tests.servers.kinds.code.live import code_tool_def

ORDERS = [
    {"id": "o-1", "customer": "c-7", "total": 120.5, "status": "open", "late": True},
    {"id": "o-2", "customer": "c-3", "total": 18.0, "status": "open", "late": False},
    {"id": "o-3", "customer": "c-7", "total": 64.25, "status": "open", "late": True},
    {"id": "o-4", "customer": "c-9", "total": 310.0, "status": "shipped", "late": False},
]
CUSTOMERS = {
    "c-3": {"id": "c-3", "name": "Ada Byron", "email": "ada@example.com"},
    "c-7": {"id": "c-7", "name": "Grace Hopper", "email": "grace@example.com"},
    "c-9": {"id": "c-9", "name": "Alan Turing", "email": "alan@example.com"},
}


def object_schema(required: dict[str, str], optional: dict[str, str] | None = None) -> dict:
    properties = {name: {"type": kind} for name, kind in {**required, **(optional or {})}.items()}
    return {"type": "object", "properties": properties, "required": list(required)}


SHOP_TOOLS = [
    code_tool_def(
        "list_orders",
        f"ORDERS = {ORDERS!r}\n"
        "def main(args):\n"
        "    status = args.get('status')\n"
        "    return {'orders': [o for o in ORDERS if status is None or o['status'] == status]}\n",
        description="List the shop's orders, optionally only those with a status (open, shipped).",
        inputSchema=object_schema({}, {"status": "string"}),
    ),
    code_tool_def(
        "get_customer",
        f"CUSTOMERS = {CUSTOMERS!r}\ndef main(args):\n    return CUSTOMERS[args['id']]\n",
        description="One customer by id: name and email address.",
        inputSchema=object_schema({"id": "string"}),
    ),
    {
        "name": "send_email",
        "description": "Send an email to an address.",
        "inputSchema": object_schema({"to": "string", "subject": "string"}),
        "config": {"content": [{"type": "text", "text": "Sent {{ subject }} to {{ to }}"}]},
    },
]

# The job: write to every customer with a late open order, once per customer.
JOB = """async def main():
    found = await call_tool("list_orders", {"status": "open"})
    late = [o for o in found["structuredContent"]["orders"] if o["late"]]
    sent = []
    for customer_id in sorted({o["customer"] for o in late}):
        customer = (await call_tool("get_customer", {"id": customer_id}))["structuredContent"]
        mail = await call_tool("send_email", {"to": customer["email"], "subject": "Late order"})
        sent.append(mail["content"][0]["text"])
    return {"late_orders": [o["id"] for o in late], "sent": sent}
"""
JOB_RESULT = {"late_orders": ["o-1", "o-3"], "sent": ["Sent Late order to grace@example.com"]}


def shop_definition(slug: str, *, code_mode=True, discovery="on", limits=None) -> dict:
    agents: dict = {"discovery": {"mode": discovery}}
    if code_mode is not None:
        agents["codeMode"] = {"enabled": code_mode, **({"limits": limits} if limits else {})}
    return {"slug": slug, "name": slug, "version": "1.0.0", "tools": SHOP_TOOLS, "agents": agents}


def make_shop(committed, slug: str, **options) -> SimpleNamespace:
    from accounts.models import ApiKey, User
    from servers.definition import import_definition

    def make():
        user = User.objects.create_user(f"{slug}@example.com", "long enough password 9")
        org = user.personal_organization()
        server = import_definition(shop_definition(slug, **options), org)
        _key, raw = ApiKey.issue(org, "shop key")
        return SimpleNamespace(user=user, org=org, server=server, slug=slug, raw=raw)

    return committed(make)


def issue_key(committed, shop, *, access=None, limits=None) -> str:
    from accounts.models import ApiKey

    def make():
        key, raw = ApiKey.issue(shop.org, "narrow key")
        if access is not None:
            key.access = {str(shop.server.pk): access}
        if limits is not None:
            key.limits = limits
        key.save()
        return raw

    return committed(make)


def member_key(committed, shop, *, role_tools: list[str]) -> str:
    """A key made by a member of the shop's organization, whose role may use only `role_tools`."""
    from accounts.models import ApiKey, Membership, User
    from servers.models import Server

    def make():
        member = User.objects.create_user(f"member-{shop.slug}@example.com", "long password 77")
        Membership.objects.create(organization=shop.org, user=member, role=Membership.MEMBER)
        Server.objects.filter(pk=shop.server.pk).update(
            role_access={"member": {"tools": role_tools}}
        )
        shop.server.refresh_from_db()
        shop.server.save()  # a new generation: live processes compile the role limit
        return ApiKey.issue(shop.org, "member's key", created_by=member)[1]

    return committed(make)
