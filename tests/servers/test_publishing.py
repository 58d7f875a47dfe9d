import pytest
from django.core.management import CommandError, call_command

import servers.cli
from infra import keys
from infra.redis import sync_client
from servers.definition import export_definition, import_definition
from servers.models import ServerVersion
from servers.publishing import (
    PublishError,
    definition_to_serve,
    diff,
    diff_definitions,
    publish,
    publish_import,
    rollback,
    served_definition,
    versions,
)

MY_SUBCOMMANDS = [
    "servers.cli.publish",
    "servers.cli.versions",
    "servers.cli.diff",
    "servers.cli.rollback",
]


def definition(**changes):
    data = {
        "slug": "weather",
        "name": "weather",
        "version": "1.0.0",
        "tools": [
            {
                "name": "forecast",
                "description": "Tomorrow's weather.",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
                "config": {"content": [{"type": "text", "text": "Sunny in {{ city }}"}]},
            },
            {
                "name": "alerts",
                "description": "Weather alerts.",
                "inputSchema": {"type": "object"},
                "config": {"content": [{"type": "text", "text": "none"}]},
            },
        ],
        "prompts": [
            {
                "name": "plan",
                "description": "Plan a trip.",
                "messages": [{"role": "user", "content": {"type": "text", "text": "Plan"}}],
            }
        ],
    }
    data.update(changes)
    return data


@pytest.fixture
def server(org, user):
    return import_definition(definition(), org, user=user)


@pytest.fixture
def cli(monkeypatch):
    """`manage.py server` with these subcommands listed, whether or not the list has them yet."""
    listed = [path for path in servers.cli.SUBCOMMANDS if path not in MY_SUBCOMMANDS]
    monkeypatch.setattr(servers.cli, "SUBCOMMANDS", listed + MY_SUBCOMMANDS)

    def run(*args):
        from io import StringIO

        out = StringIO()
        call_command(*args, stdout=out)
        return out.getvalue()

    return run


def edit_tool(server, name, **fields):
    tool = server.tools.get(name=name)
    for key, value in fields.items():
        setattr(tool, key, value)
    tool.save()


def test_nothing_is_served_before_the_first_publish(server):
    assert served_definition(server) is None
    assert versions(server) == []


def test_the_first_publish_is_1_0_0_and_freezes_the_draft(server, user):
    published = publish(server, user=user)
    assert published.version == "1.0.0"
    assert published.published_by == user
    assert published.definition == export_definition(server)
    assert served_definition(server) == published.definition


def test_later_publishes_bump_the_patch_of_the_latest_version(server):
    publish(server, "2.3.9")
    assert publish(server).version == "2.3.10"
    assert [v.version for v in versions(server)] == ["2.3.10", "2.3.9"]


def test_the_next_version_follows_the_highest_number_not_the_last_published(server):
    publish(server, "2.0.0")
    publish(server, "1.5.0")
    assert publish(server).version == "2.0.1"


def test_draft_edits_do_not_change_what_is_served_until_published(server):
    publish(server)
    edit_tool(server, "forecast", description="Changed under the client.")
    assert served_definition(server)["tools"][0]["description"] == "Tomorrow's weather."
    publish(server)
    assert served_definition(server)["tools"][0]["description"] == "Changed under the client."


def test_a_pinned_version_keeps_serving_its_definition(server):
    publish(server)
    edit_tool(server, "forecast", description="New words.")
    publish(server)
    assert served_definition(server, "1.0.0")["tools"][0]["description"] == "Tomorrow's weather."
    assert served_definition(server, "1.0.1")["tools"][0]["description"] == "New words."
    assert served_definition(server, "9.9.9") is None


def test_the_published_definition_carries_its_version_as_server_version(server):
    assert publish(server, "3.1.4").definition["version"] == "3.1.4"


@pytest.mark.parametrize("bad", ["1.0", "v1.0.0", "1.0.0-beta", "01.0.0", "", "1.0.0.0"])
def test_it_refuses_a_version_that_is_not_x_y_z(server, bad):
    with pytest.raises(PublishError, match="semantic version"):
        publish(server, bad)
    assert not ServerVersion.objects.filter(server=server).exists()


def test_it_refuses_to_publish_a_version_twice(server):
    publish(server, "1.0.0")
    edit_tool(server, "forecast", description="Other.")
    with pytest.raises(PublishError, match="already published"):
        publish(server, "1.0.0")
    assert served_definition(server)["tools"][0]["description"] == "Tomorrow's weather."


def test_the_diff_names_added_removed_and_changed_tools_with_their_fields(server):
    publish(server)
    edit_tool(server, "forecast", description="Better.", input_schema={"type": "object"})
    server.tools.get(name="alerts").delete()
    server.tools.create(
        name="radar", description="Radar image.", input_schema={"type": "object"}, position=5
    )
    server.title = "Weather"
    server.save()
    publish(server)
    assert diff(server, "1.0.0", "1.0.1") == [
        'server title: null -> "Weather"',
        "tool removed: alerts",
        "tool added: radar",
        "tool changed: forecast (description, inputSchema)",
    ]


def test_the_diff_of_a_version_with_itself_is_empty_and_draft_may_be_compared(server):
    publish(server)
    assert diff(server, "1.0.0", "1.0.0") == []
    edit_tool(server, "alerts", title="Alerts")
    assert diff(server, "1.0.0", "draft") == ["tool changed: alerts (title)"]


def test_the_diff_notices_prompts_resources_and_reordering():
    a = definition()
    b = definition(
        tools=list(reversed(a["tools"])),
        prompts=[],
        resources=[{"uri": "test://x", "name": "x", "text": "hi"}],
    )
    assert diff_definitions(a, b) == [
        "tools reordered",
        "resource added: test://x",
        "prompt removed: plan",
    ]


def test_diff_of_an_unknown_version_says_so(server):
    publish(server)
    with pytest.raises(PublishError, match="no published version '7.0.0'"):
        diff(server, "1.0.0", "7.0.0")


def test_rollback_publishes_the_old_definition_as_a_new_version_and_resets_the_draft(server):
    publish(server)
    edit_tool(server, "forecast", description="Broken description.")
    server.tools.get(name="alerts").delete()
    publish(server)
    edit_tool(server, "forecast", description="Unpublished draft edit.")

    restored = rollback(server, "1.0.0")

    assert restored.version == "1.0.2"
    old = ServerVersion.objects.get(server=server, version="1.0.0").definition
    assert restored.definition == {**old, "version": "1.0.2"}
    assert served_definition(server) == restored.definition
    server.refresh_from_db()
    assert [t.name for t in server.tools.all()] == ["forecast", "alerts"]
    assert server.tools.get(name="forecast").description == "Tomorrow's weather."
    assert diff(server, "1.0.2", "draft") == []


def test_rollback_to_an_unknown_version_changes_nothing(server):
    publish(server)
    with pytest.raises(PublishError):
        rollback(server, "0.9.0")
    assert [v.version for v in versions(server)] == ["1.0.0"]


def test_versions_of_one_server_do_not_mix_with_another(server, outsider_org):
    other = import_definition(definition(slug="other"), outsider_org)
    publish(server, "5.0.0")
    publish(other)
    assert [v.version for v in versions(server)] == ["5.0.0"]
    assert [v.version for v in versions(other)] == ["1.0.0"]


def test_the_commands_publish_list_diff_and_roll_back(server, cli):
    assert cli("server", "publish", "weather") == "Published weather@1.0.0\n"
    edit_tool(server, "forecast", description="Edited.")
    assert cli("server", "publish", "weather", "--version", "1.1.0") == "Published weather@1.1.0\n"

    listing = cli("server", "versions", "weather").splitlines()
    assert [line.split()[0] for line in listing] == ["1.1.0", "1.0.0"]
    assert listing[0].endswith("(served)") and "2 tools, 0 resources, 1 prompts" in listing[0]

    assert cli("server", "diff", "weather", "1.0.0", "1.1.0") == (
        "tool changed: forecast (description)\n"
    )
    out = cli("server", "rollback", "weather", "1.0.0")
    assert "published as weather@1.1.1" in out
    assert served_definition(server)["tools"][0]["description"] == "Tomorrow's weather."


def test_the_commands_explain_what_went_wrong(server, cli):
    with pytest.raises(CommandError, match="no server 'nope'"):
        cli("server", "publish", "nope")
    with pytest.raises(CommandError, match="semantic version"):
        cli("server", "publish", "weather", "--version", "latest")
    assert "no published version" in cli("server", "versions", "weather")
    with pytest.raises(CommandError, match="no published version '1.0.0'"):
        cli("server", "rollback", "weather", "1.0.0")


def test_an_import_is_published_under_its_own_version_once(server):
    assert publish_import(server).version == "1.0.0"
    assert publish_import(server) is None  # the same definition again adds no version
    edit_tool(server, "forecast", description="Changed.")
    assert publish_import(server).version == "1.0.1"  # 1.0.0 is taken: next patch
    assert publish_import(server) is None  # still 1.0.0 in the file, nothing new
    server.version = "3.0.0"
    server.save()
    assert publish_import(server).version == "3.0.0"  # a bumped version is published as is


def test_publishing_makes_every_process_drop_its_cached_snapshot(
    server, django_capture_on_commit_callbacks
):
    key = keys.server_generation(server.slug)
    before = int(sync_client().get(key) or 0)
    with django_capture_on_commit_callbacks(execute=True):
        publish(server)
    assert int(sync_client().get(key)) > before


def test_a_never_published_server_serves_its_draft(server):
    assert definition_to_serve(server) == export_definition(server)
    # ...also when pinned to the version the draft names, and to no other.
    assert definition_to_serve(server, "1.0.0") == export_definition(server)
    assert definition_to_serve(server, "2.0.0") is None


def test_once_published_the_latest_version_is_served_not_the_draft(server):
    publish(server)
    edit_tool(server, "forecast", description="Draft only.")
    served = definition_to_serve(server)
    assert served["tools"][0]["description"] == "Tomorrow's weather."
    assert definition_to_serve(server, "1.0.0") == served
    assert definition_to_serve(server, "2.0.0") is None


def test_status_and_auth_of_the_live_server_apply_to_every_version(server):
    publish(server)
    server.status, server.auth_mode, server.allowed_origins = "paused", "none", ["https://a.test"]
    server.save()
    pinned = definition_to_serve(server, "1.0.0")
    assert (pinned["status"], pinned["auth"], pinned["allowedOrigins"]) == (
        "paused",
        "none",
        ["https://a.test"],
    )
