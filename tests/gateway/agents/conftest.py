"""A server of 300 tools imported from a generated OpenAPI document, plus a few static ones."""

import uuid
from types import SimpleNamespace

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from accounts.models import ApiKey, User
from integrations.importers import commit_import
from integrations.importers.openapi import parse_openapi
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import tenant  # noqa: F401 (a fixture used here too)

RESOURCES = [
    ("pet", "pets"),
    ("invoice", "invoices"),
    ("customer", "customers"),
    ("order", "orders"),
    ("product", "products"),
    ("shipment", "shipments"),
    ("refund", "refunds"),
    ("employee", "employees"),
    ("ticket", "tickets"),
    ("project", "projects"),
    ("comment", "comments"),
    ("user", "users"),
    ("warehouse", "warehouses"),
    ("supplier", "suppliers"),
    ("coupon", "coupons"),
    ("subscription", "subscriptions"),
    ("payment", "payments"),
    ("report", "reports"),
    ("document", "documents"),
    ("calendar_event", "calendar-events"),
    ("webhook", "webhooks"),
    ("team", "teams"),
    ("vehicle", "vehicles"),
    ("booking", "bookings"),
    ("recipe", "recipes"),
    ("playlist", "playlists"),
    ("course", "courses"),
    ("device", "devices"),
    ("contract", "contracts"),
    ("survey", "surveys"),
]
GENERIC = [
    ("get", "list{Plural}", "List {plural}", "Returns a page of {plural}.", None),
    ("get", "get{Single}", "Get one {single}", "Returns one {single} by its id.", "id"),
    ("post", "create{Single}", "Create a {single}", "Creates a new {single}.", None),
    ("put", "update{Single}", "Update a {single}", "Changes fields of a {single}.", "id"),
    ("delete", "delete{Single}", "Delete a {single}", "Removes a {single} for good.", "id"),
    ("get", "count{Plural}", "Count {plural}", "How many {plural} there are.", None),
    ("post", "archive{Single}", "Archive a {single}", "Hides a {single} from lists.", "id"),
    ("post", "restore{Single}", "Restore a {single}", "Brings back an archived {single}.", "id"),
    ("get", "export{Plural}", "Export {plural}", "Exports all {plural} as JSON.", None),
    ("post", "duplicate{Single}", "Duplicate a {single}", "Makes a copy of a {single}.", "id"),
]
# Operations with a path of their own (/<plural>[/{id}]/<word>).
SUFFIXED = ("count", "archive", "restore", "export", "duplicate")
# (operationId, method, path, summary, argument names): what the queries below look for.
SPECIFIC = [
    (
        "cancelOrder",
        "post",
        "/orders/{id}/cancel",
        "Cancel an order that has not shipped yet",
        ["reason"],
    ),
    (
        "sendInvoiceEmail",
        "post",
        "/invoices/{id}/send",
        "Email an invoice to its customer",
        ["recipient_email"],
    ),
    ("uploadPetPhoto", "post", "/pets/{id}/photo", "Upload a photo of a pet", ["image_url"]),
    (
        "getProductStockLevel",
        "get",
        "/products/{id}/stock",
        "Stock level of a product in each warehouse",
        [],
    ),
    (
        "resetUserPassword",
        "post",
        "/users/{id}/password-reset",
        "Send a password reset link to a user",
        [],
    ),
    (
        "trackShipment",
        "get",
        "/shipments/{id}/tracking",
        "Track where a shipment is and when it will be delivered",
        [],
    ),
    (
        "exportSalesReportCsv",
        "get",
        "/reports/sales/export",
        "Download the monthly sales report as CSV",
        ["month"],
    ),
    (
        "assignTicketToAgent",
        "post",
        "/tickets/{id}/assign",
        "Assign a support ticket to an agent",
        ["agent_id"],
    ),
    (
        "translateDocument",
        "post",
        "/documents/{id}/translate",
        "Translate a document into another language",
        ["target_language"],
    ),
    (
        "convertCurrency",
        "get",
        "/fx/convert",
        "Convert an amount between currencies at today's exchange rate",
        ["amount", "from_currency", "to_currency"],
    ),
]
QUERIES = [
    ("cancel my order before it ships", "cancelOrder"),
    ("email the invoice to the customer", "sendInvoiceEmail"),
    ("upload a photo of my pet", "uploadPetPhoto"),
    ("how many units of a product are left in stock", "getProductStockLevel"),
    ("user forgot their password", "resetUserPassword"),
    ("where is my shipment, when will it be delivered", "trackShipment"),
    ("download monthly sales numbers as a csv file", "exportSalesReportCsv"),
    ("give this support ticket to an agent", "assignTicketToAgent"),
    ("translate a document to French", "translateDocument"),
    ("convert 100 euros to dollars", "convertCurrency"),
]


def generated_openapi() -> dict:
    paths: dict = {}
    for single, plural in RESOURCES:
        words = single.replace("_", " ")
        plural_words = plural.replace("-", " ")
        camel_single = "".join(part.title() for part in single.split("_"))
        camel_plural = "".join(part.title() for part in plural.split("-"))
        for method, op_id, summary, description, path_arg in GENERIC:
            path = f"/{plural}" + ("/{id}" if path_arg else "")
            word = next((w for w in SUFFIXED if op_id.startswith(w)), None)
            if word:
                path += f"/{word}"
            fill = {"Single": camel_single, "Plural": camel_plural}
            text = {"single": words, "plural": plural_words}
            operation = {
                "operationId": op_id.format(**fill),
                "summary": summary.format(**text),
                "description": description.format(**text),
                "responses": {"200": {"description": "OK"}},
            }
            if path_arg:
                operation["parameters"] = [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ]
            paths.setdefault(path, {})[method] = operation
    for op_id, method, path, summary, arguments in SPECIFIC:
        parameters = (
            [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
            if "{id}" in path
            else []
        )
        parameters += [
            {"name": name, "in": "query", "schema": {"type": "string"}} for name in arguments
        ]
        paths.setdefault(path, {})[method] = {
            "operationId": op_id,
            "summary": summary,
            "parameters": parameters,
            "responses": {"200": {"description": "OK"}},
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Everything API", "version": "1.0.0"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": paths,
    }


STATIC_TOOLS = [
    {
        "name": "echo",
        "description": "Echo a message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
        "pinned": True,
        "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
    },
    {
        "name": "big_report",
        "description": "A long numbered report.",
        "inputSchema": {"type": "object", "properties": {"lines": {"type": "integer"}}},
        "config": {
            "content": [
                {
                    "type": "text",
                    "text": "{% for i in range(lines) %}line {{ i }}: "
                    "the quick brown fox jumps over the lazy dog\n{% endfor %}",
                }
            ]
        },
    },
]


def make_big_server(unique: str) -> SimpleNamespace:
    """300 imported http tools and two static ones (echo is pinned), committed."""
    user = User.objects.create_user(f"agents-{unique}@example.com", "long enough password 1")
    org = user.personal_organization()
    definition = {
        "slug": f"big-{unique}",
        "name": "big",
        "tools": STATIC_TOOLS,
        "rateLimitPerMinute": 0,
    }
    server = import_definition(definition, org)
    preview = parse_openapi(generated_openapi())
    commit_import(server, preview)
    # An import leaves its tools disabled until the owner reviews them; these are reviewed.
    server.tools.update(enabled=True)
    _key, raw = ApiKey.issue(org, "agents key")
    return SimpleNamespace(
        user=user,
        org=org,
        server=server,
        slug=server.slug,
        raw=raw,
        tool_count=server.tools.count(),
    )


@pytest.fixture
def big_server(committed, unique):
    """A big server of this test's own: for a test that changes it or counts its calls."""
    return committed(make_big_server, unique)


@pytest.fixture(scope="module")
def shared_big_server(live_database, django_db_blocker):
    """One big server for the tests of a module that only read it and call it (importing 300
    tools, and compiling them in the live server, is most of such a test's time)."""
    with django_db_blocker.unblock():
        return make_big_server(uuid.uuid4().hex[:10])


def sdk_client(url: str, key: str, mode: str = "legacy", **callbacks) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    return Client(streamable_http_client(url, http_client=http), mode=mode, **callbacks)


def text_of(result) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))
