"""The source of a code tool travels wherever a definition does: YAML export/import, versions,
diff and rollback, the REST API (with its checks), and `manage.py tool test`."""

import json

import pytest
from django.core.management import CommandError, call_command

from servers import publishing
from servers.definition import dump_text, export_definition, import_definition, load_text
from servers.models import Tool
from tests.api.conftest import client_for

SOURCE_V1 = "def main(args):\n    return 'v1 ' + args.get('x', '')\n"
SOURCE_V2 = "async def main(args, ctx):\n    log('info', 'v2')\n    return 'v2'\n"


def definition(source=SOURCE_V1):
    return {
        "slug": "coded",
        "name": "coded",
        "tools": [
            {
                "name": "run",
                "description": "Runs code.",
                "inputSchema": {"type": "object"},
                "kind": "code",
                "config": {"language": "python", "source": source, "limits": {"cpuSeconds": 2}},
            }
        ],
    }


def test_yaml_export_shows_the_source_as_a_block_and_imports_back_unchanged(org):
    server = import_definition(definition(), org)
    text = dump_text(export_definition(server))
    assert "source: |\n" in text
    assert "      def main(args):\n" in text
    server.delete()
    again = import_definition(load_text(text, "coded.yaml"), org)
    assert again.tools.get().config["source"] == SOURCE_V1


def test_versions_diff_and_rollback_carry_the_source(org):
    server = import_definition(definition(), org)
    publishing.publish(server)
    tool = server.tools.get()
    tool.config = {**tool.config, "source": SOURCE_V2}
    tool.save()
    publishing.publish(server)
    assert publishing.diff(server, "1.0.0", "1.0.1") == ["tool changed: run (config)"]
    publishing.rollback(server, "1.0.0")
    assert server.tools.get().config["source"] == SOURCE_V1
    assert publishing.served_definition(server)["tools"][0]["config"]["source"] == SOURCE_V1


def test_the_rest_api_refuses_a_broken_source_with_its_line_and_accepts_a_good_one(user, org):
    import_definition(definition(), org)
    api = client_for(user)
    tool = {
        "name": "other",
        "description": "d",
        "inputSchema": {"type": "object"},
        "kind": "code",
        "config": {"source": "def main(args):\n    return [\n"},
    }
    response = api.post("/api/servers/coded/tools/", tool, format="json")
    assert response.status_code == 400
    (message,) = response.json()["error"]["fields"]["config"]
    assert message == "source: line 2, column 1: unexpected EOF while parsing"
    good = {**tool, "config": {"source": SOURCE_V2}}
    assert api.post("/api/servers/coded/tools/", good, format="json").status_code == 201
    row = Tool.objects.get(server__slug="coded", name="other")
    assert api.get(f"/api/servers/coded/tools/{row.pk}/").json()["config"]["source"] == SOURCE_V2
    report = api.post(f"/api/servers/coded/tools/{row.pk}/test/", {"arguments": {}}).json()
    assert report["result"]["content"] == [{"type": "text", "text": "v2"}]
    assert [call["function"] for call in report["hostCalls"]] == ["log"]


def test_manage_py_tool_test_prints_the_report_with_host_calls(org, capsys):
    import_definition(definition(SOURCE_V2), org)
    call_command("tool", "test", "coded", "run")
    report = json.loads(capsys.readouterr().out)
    assert report["result"]["content"][0]["text"] == "v2"
    assert report["hostCalls"][0]["function"] == "log"


def test_manage_py_tool_test_fails_when_the_code_fails(org):
    import_definition(definition("def main(args):\n    return 1 / 0\n"), org)
    with pytest.raises(CommandError, match="The tool call failed"):
        call_command("tool", "test", "coded", "run")


def test_server_wide_limits_apply_to_every_code_tool_and_a_tool_may_narrow_them(org):
    data = definition()
    data["code"] = {"limits": {"cpuSeconds": 1, "memoryMb": 32}}
    data["tools"].append({**data["tools"][0], "name": "plain", "config": {"source": SOURCE_V1}})
    server = import_definition(data, org)
    assert export_definition(server)["code"] == {"limits": {"cpuSeconds": 1, "memoryMb": 32}}
    from servers.snapshot import compile_definition

    snapshot = compile_definition(
        export_definition(server), server_id=server.pk, organization_id=org.pk, generation="g"
    )
    narrowed = snapshot.tools["run"].compiled.limits  # the tool says cpuSeconds: 2
    plain = snapshot.tools["plain"].compiled.limits
    assert (narrowed.cpu_seconds, narrowed.memory_mb) == (2, 32)
    assert (plain.cpu_seconds, plain.memory_mb, plain.wall_seconds) == (1, 32, 30)


def test_server_wide_limits_are_checked_against_the_platform(org):
    from servers.definition import validate_definition

    data = {**definition(), "code": {"limits": {"memoryMb": 10**6}, "extra": 1}}
    assert validate_definition(data) == [
        "code.limits.memoryMb: at most 128 on this platform",
        "code.extra: unknown field",
    ]
