"""The command palette's search: servers and tools of the current organization only; an
outsider finds nothing of it, whatever they type."""

import pytest

from servers.models import Server, Tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def tools(org):
    server = Server.objects.create(organization=org, slug="billing", name="Billing")
    for name in ("createInvoice", "listInvoices", "refund"):
        Tool.objects.create(server=server, name=name, description=f"{name} of a customer")
    return server


def search(client, text):
    response = client.get("/search/", {"q": text})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    return response.json()["results"]


def test_names_that_start_with_the_text_come_first(member_client, tools):
    results = search(member_client, "invoice")
    assert [(r["kind"], r["name"]) for r in results] == [
        ("tool", "createInvoice"),
        ("tool", "listInvoices"),
    ]
    found = search(member_client, "list")
    assert found[0]["name"] == "listInvoices"
    assert found[0]["url"] == f"/servers/billing/tools/{tools.tools.get(name='listInvoices').pk}/"
    assert found[0]["detail"] == "Billing"


def test_a_server_is_found_by_its_slug_and_empty_text_lists_servers(member_client, tools):
    assert search(member_client, "billi")[0] == {
        "kind": "server",
        "name": "Billing",
        "detail": tools.get_status_display(),
        "url": "/servers/billing/",
    }
    assert [r["name"] for r in search(member_client, "")] == ["Billing"]


def test_an_outsider_finds_nothing_of_another_organization(client, outsider, outsider_org, tools):
    Server.objects.create(organization=outsider_org, slug="own", name="Own invoices")
    client.force_login(outsider)
    for text in ("invoice", "billing", "refund", "createInvoice", ""):
        names = [r["name"] for r in search(client, text)]
        assert "Billing" not in names and "createInvoice" not in names and "refund" not in names
    assert [r["name"] for r in search(client, "invoice")] == ["Own invoices"]


def test_signed_out_visitors_are_sent_to_log_in(client, tools):
    response = client.get("/search/", {"q": "refund"})
    assert response.status_code == 302 and "/login/" in response["Location"]
