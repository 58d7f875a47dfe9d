"""Importing a document into a server that already holds an earlier import of it."""

import copy

import pytest
import yaml

from integrations.importers import apply_import, commit_import, parse_openapi, plan_import
from servers.models import Tool


@pytest.fixture
def teamwork_document(data):
    return yaml.safe_load((data / "teamwork-openapi-3.0.yaml").read_text())


@pytest.fixture
def teamwork(teamwork_document):
    return parse_openapi(teamwork_document)


def test_the_teamwork_document_has_forty_five_operations(teamwork):
    assert len(teamwork.operations) == 45


def test_importing_the_same_document_twice_creates_each_tool_once(server, teamwork):
    first = commit_import(server, teamwork)
    second = commit_import(server, teamwork)
    assert [t.pk for t in second] == [t.pk for t in first]
    assert server.tools.count() == 45
    assert not server.tools.filter(name__endswith="_2").exists()


def test_a_second_import_plans_nothing_but_unchanged_tools(server, teamwork):
    commit_import(server, teamwork)
    plan = plan_import(server, teamwork)
    assert plan.summary() == "0 added, 0 changed, 0 removed, 45 unchanged"


def test_a_new_version_of_the_document_shows_added_changed_and_removed_before_applying(
    server, teamwork_document
):
    commit_import(server, parse_openapi(teamwork_document))
    newer = copy.deepcopy(teamwork_document)
    newer["paths"]["/users"]["get"]["description"] = "Every user of the organization."
    newer["paths"]["/users"]["get"]["parameters"].append(
        {"name": "role", "in": "query", "schema": {"type": "string"}}
    )
    del newer["paths"]["/search"]
    newer["paths"]["/audit-log"] = {
        "get": {"operationId": "listAuditEvents", "summary": "List audit events", "responses": {}}
    }
    preview = parse_openapi(newer)
    before = {t.name: (t.description, t.input_schema) for t in server.tools.all()}

    plan = plan_import(server, preview)

    assert [c.name for c in plan.of("added")] == ["listAuditEvents"]
    assert [(c.name, c.fields) for c in plan.of("changed")] == [
        ("listUsers", ["description", "inputSchema", "config"])
    ]
    assert [c.name for c in plan.of("removed")] == ["search"]
    assert {t.name: (t.description, t.input_schema) for t in server.tools.all()} == before


def test_applying_updates_matching_tools_in_place_and_keeps_them_switched_on(
    server, teamwork_document
):
    commit_import(server, parse_openapi(teamwork_document))
    server.tools.filter(name="listUsers").update(enabled=True)
    newer = copy.deepcopy(teamwork_document)
    newer["paths"]["/users"]["get"]["description"] = "Every user of the organization."

    plan, _tools = apply_import(server, parse_openapi(newer))

    tool = server.tools.get(name="listUsers")
    assert tool.description == "List users\n\nEvery user of the organization."
    assert tool.enabled is True
    assert [c.name for c in plan.of("changed")] == ["listUsers"]


def test_removed_operations_are_deleted_only_when_asked(server, teamwork_document):
    commit_import(server, parse_openapi(teamwork_document))
    newer = copy.deepcopy(teamwork_document)
    del newer["paths"]["/search"]
    apply_import(server, parse_openapi(newer))
    assert server.tools.filter(name="search").exists()
    apply_import(server, parse_openapi(newer), remove_missing=True)
    assert not server.tools.filter(name="search").exists()


def test_a_renamed_operation_id_updates_the_tool_that_calls_the_same_method_and_url(
    server, teamwork_document
):
    commit_import(server, parse_openapi(teamwork_document))
    newer = copy.deepcopy(teamwork_document)
    newer["paths"]["/search"]["get"]["operationId"] = "searchEverything"
    plan, (tool,) = apply_import(server, parse_openapi(newer), ["searchEverything"])
    assert tool.name == "search"
    assert plan.of("added") == []
    assert server.tools.count() == 45


def test_a_hand_made_http_tool_on_another_url_is_never_listed_as_removed(server, teamwork):
    Tool.objects.create(
        server=server,
        name="weather",
        description="mine",
        kind="http",
        config={"method": "GET", "url": "https://weather.example/now"},
    )
    commit_import(server, teamwork)
    assert plan_import(server, teamwork).of("removed") == []


def test_descriptions_do_not_repeat_the_summary(teamwork):
    list_users = teamwork.find("listUsers")
    assert list_users.title == "List users"
    assert list_users.description == "List users. Returns users page by page, newest first."
    create = teamwork.find("createUser")
    assert create.description.startswith("Create a user.\n\nThe name must be unique")
    get_user = teamwork.find("getUser")
    assert get_user.description == "Get a user\n\nReturns one user by its id."
    assert teamwork.find("updateUser").description == "Update a user"
