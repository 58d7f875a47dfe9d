"""The shop server of bench/codemode_tokens.py: 40 tools (three that the job uses, code tools with
an outputSchema, answering realistic JSON; the rest the usual operations of a shop API), and
the program an agent writes for the job."""

import random

CUSTOMER_IDS = [f"cus_{n}" for n in range(101, 121)]
PRODUCTS = [
    ("SKU-1042", "Merino wool crew sweater", 89.0),
    ("SKU-2210", "Organic cotton t-shirt", 24.5),
    ("SKU-3307", "Waterproof hiking jacket", 219.0),
    ("SKU-4471", "Leather belt, brown", 39.9),
    ("SKU-5125", "Running socks, 3 pairs", 14.0),
    ("SKU-6630", "Canvas tote bag", 19.0),
]
CITIES = [("Lyon", "69002", "FR"), ("Berlin", "10115", "DE"), ("Leeds", "LS1 4AP", "GB")]
FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]


def _orders() -> list[dict]:
    rng = random.Random(32)
    orders = []
    for n in range(20):
        items = [
            {"sku": sku, "name": name, "quantity": rng.randint(1, 3), "unit_price": price}
            for sku, name, price in rng.sample(PRODUCTS, rng.randint(1, 3))
        ]
        city, postcode, country = rng.choice(CITIES)
        day = 3 + n % 20
        orders.append(
            {
                "id": f"ord_{5300 + n}",
                "number": f"#{10400 + n}",
                "customer_id": rng.choice(CUSTOMER_IDS[:8]),
                "status": "open",
                "late": n in (2, 7, 11, 16),
                "created_at": f"2026-11-{day:02d}T09:{n:02d}:00Z",
                "promised_by": f"2026-11-{day + 5:02d}",
                "currency": "EUR",
                "total": round(sum(i["quantity"] * i["unit_price"] for i in items), 2),
                "items": items,
                "shipping_address": {
                    "line1": f"{10 + n} Rue de la Paix" if country == "FR" else f"{10 + n} High St",
                    "city": city,
                    "postcode": postcode,
                    "country": country,
                },
            }
        )
    return orders


def _customers() -> dict:
    rng = random.Random(7)
    found = {}
    for customer_id in CUSTOMER_IDS:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        found[customer_id] = {
            "id": customer_id,
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}@example.com",
            "phone": f"+33 6 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)}",
            "created_at": "2025-03-14T10:00:00Z",
            "orders_count": rng.randint(1, 30),
            "marketing_opt_in": rng.random() < 0.5,
        }
    return found


def _schema(properties: dict, required=()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required)}


ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "number": {"type": "string"},
        "customer_id": {"type": "string"},
        "status": {"type": "string"},
        "late": {"type": "boolean", "description": "Past its promised delivery date."},
        "created_at": {"type": "string"},
        "promised_by": {"type": "string"},
        "currency": {"type": "string"},
        "total": {"type": "number"},
        "items": {"type": "array", "items": {"type": "object"}},
        "shipping_address": {"type": "object"},
    },
}
JOB_TOOLS = [
    {
        "name": "list_orders",
        "description": "List the shop's orders, newest first; filter by status "
        "(open, shipped, delivered, cancelled).",
        "inputSchema": _schema(
            {"status": {"type": "string", "enum": ["open", "shipped", "delivered", "cancelled"]}}
        ),
        "outputSchema": _schema({"orders": {"type": "array", "items": ORDER_SCHEMA}}, ["orders"]),
        "kind": "code",
        "config": {
            "source": f"ORDERS = {_orders()!r}\n"
            "def main(args):\n"
            "    status = args.get('status')\n"
            "    return {'orders': [o for o in ORDERS if status in (None, o['status'])]}\n"
        },
    },
    {
        "name": "get_customer",
        "description": "Look up one customer by id: name, email address, phone and history.",
        "inputSchema": _schema({"id": {"type": "string"}}, ["id"]),
        "outputSchema": _schema(
            {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "email": {"type": "string"},
                "phone": {"type": "string"},
                "created_at": {"type": "string"},
                "orders_count": {"type": "integer"},
                "marketing_opt_in": {"type": "boolean"},
            }
        ),
        "kind": "code",
        "config": {
            "source": f"CUSTOMERS = {_customers()!r}\n"
            "def main(args):\n"
            "    return CUSTOMERS[args['id']]\n"
        },
    },
    {
        "name": "send_email",
        "description": "Send an email to a customer's address; answers the queued message's id.",
        "inputSchema": _schema(
            {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}},
            ["to", "subject"],
        ),
        "outputSchema": _schema(
            {"message_id": {"type": "string"}, "status": {"type": "string"}}, ["message_id"]
        ),
        "kind": "code",
        "config": {
            "source": "def main(args):\n"
            "    return {'message_id': 'msg_' + args['to'].split('@')[0], 'status': 'queued'}\n"
        },
    },
]
OTHER_OPERATIONS = [
    ("get_order", "Get one order by id with its items and shipping address."),
    ("cancel_order", "Cancel an order that has not shipped yet."),
    ("update_order_address", "Change the shipping address of an open order."),
    ("refund_order", "Refund an order, in full or in part."),
    ("list_customers", "List customers, newest first, optionally by email or name."),
    ("create_customer", "Create a customer record."),
    ("update_customer", "Change a customer's name, email, phone or marketing consent."),
    ("delete_customer", "Delete a customer and their personal data."),
    ("list_products", "List the catalogue's products with prices and stock."),
    ("get_product", "Get one product by SKU."),
    ("create_product", "Add a product to the catalogue."),
    ("update_product_price", "Change the price of a product."),
    ("archive_product", "Hide a product from the storefront."),
    ("get_stock_level", "Units in stock of a product in each warehouse."),
    ("adjust_stock", "Add or remove units of stock after a count."),
    ("list_shipments", "List shipments with their carrier and tracking number."),
    ("track_shipment", "Where a shipment is and when it should arrive."),
    ("create_shipment", "Ship an order's items with a carrier."),
    ("list_refunds", "List refunds with their status."),
    ("list_coupons", "List discount coupons and their usage."),
    ("create_coupon", "Create a discount coupon."),
    ("delete_coupon", "Delete a discount coupon."),
    ("list_reviews", "List product reviews, newest first."),
    ("reply_to_review", "Post the shop's public reply to a review."),
    ("list_sms_templates", "List SMS templates."),
    ("send_sms", "Send a text message to a phone number."),
    ("sales_report", "Revenue, orders and average basket per day over a period."),
    ("export_orders_csv", "Export orders of a period as CSV."),
    ("list_webhooks", "List webhook subscriptions."),
    ("create_webhook", "Subscribe a URL to shop events."),
    ("list_staff", "List staff accounts and their roles."),
    ("invite_staff", "Invite a person to the shop's admin."),
    ("get_shop_settings", "The shop's name, currency, time zone and policies."),
    ("update_shop_settings", "Change the shop's settings."),
    ("list_gift_cards", "List gift cards and their balance."),
    ("issue_gift_card", "Issue a gift card of an amount."),
    ("list_abandoned_carts", "Carts left before checkout, with their contents."),
]
FILLER_TOOLS = [
    {
        "name": name,
        "description": description,
        "inputSchema": _schema({"id": {"type": "string"}}),
        "config": {"content": [{"type": "text", "text": "ok"}]},
    }
    for name, description in OTHER_OPERATIONS
]

# (search query, the tool it must find): what both agents look up before the job.
WANTED = [
    ("list open orders", "list_orders"),
    ("look up a customer email address", "get_customer"),
    ("send an email", "send_email"),
]

JOB_PROGRAM = """async def main():
    found = await call_tool("list_orders", {"status": "open"})
    late = [o for o in found["structuredContent"]["orders"] if o["late"]]
    emailed = []
    for customer_id in sorted({o["customer_id"] for o in late}):
        customer = (await call_tool("get_customer", {"id": customer_id}))["structuredContent"]
        mail = await call_tool(
            "send_email", {"to": customer["email"], "subject": "About your late order"}
        )
        emailed.append(mail["structuredContent"]["message_id"])
    return {"late_orders": [o["id"] for o in late], "emailed": emailed}
"""


def shop_snapshot():
    from servers.snapshot import compile_definition

    definition = {
        "slug": "bench-shop",
        "name": "Bench shop",
        "tools": JOB_TOOLS + FILLER_TOOLS,
        "agents": {"discovery": {"mode": "on"}, "codeMode": {"enabled": True}},
    }
    return compile_definition(definition, server_id=1, organization_id=1, generation="bench")
