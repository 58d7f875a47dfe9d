"""The tool editor and the test page take what they show of a kind from its contract
(servers/kinds/contract.py), never from its name."""

import json
import re

import pytest

from servers.kinds import KINDS
from servers.models import Tool
from tests.servers.kinds.test_contract import CONFIGS


def test_the_kind_choices_are_the_contracts_labels_in_registry_order(member_client, server):
    form = member_client.get(f"/servers/{server.slug}/tools/new/").context["form"]
    assert list(form.fields["kind"].choices) == [(k.name, k.label) for k in KINDS.values()]
    assert form.initial["kind"] == "static"


def test_the_editor_starts_each_kind_with_its_contracts_example(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/tools/new/").content.decode()
    found = re.search(r'<script id="kind-examples" type="application/json">(.*?)</script>', page)
    assert found is not None
    assert json.loads(found.group(1)) == {k.name: dict(k.config_example) for k in KINDS.values()}


@pytest.mark.parametrize("name", list(KINDS))
def test_the_editor_holds_own_fields_for_exactly_the_kinds_declaring_them(
    member_client, server, name
):
    page = member_client.get(f"/servers/{server.slug}/tools/new/").content.decode()
    assert (f'data-kind-only="{name}"' in page) is bool(KINDS[name].form_template)


@pytest.mark.parametrize("name", list(KINDS))
def test_the_test_page_shows_host_calls_only_for_a_kind_that_reports_them(
    member_client, server, name
):
    tool = Tool.objects.create(
        server=server,
        name=f"a_{name}",
        kind=name,
        input_schema={"type": "object"},
        config=CONFIGS[name],
    )
    page = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/test/").content.decode()
    assert ('id="tr-host-card"' in page) is KINDS[name].reports_host_calls
