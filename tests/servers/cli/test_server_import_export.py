import io
import json

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from servers.definition import load_file
from servers.models import Server

pytestmark = pytest.mark.django_db

GOOD = """\
slug: cli-server
name: cli server
tools:
  - name: hello
    description: Say hello.
    inputSchema: {type: object, properties: {}}
    kind: static
    config:
      content: [{type: text, text: Hello}]
"""

BAD = """\
slug: Not A Slug
name: bad
auth: magic
tools:
  - name: has space
    description: x
    inputSchema: {type: objekt}
    kind: static
    config: {content: [{type: text, text: hi}]}
"""


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("server", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_creates_the_server_in_the_owners_organization(tmp_path, user, org):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    out, _ = run("import", str(path), "--owner", user.email)
    assert "Imported server 'cli-server'" in out and "1 tools" in out
    assert Server.objects.get(slug="cli-server").organization == org


def test_an_owner_at_the_organization_cap_with_none_left_gets_a_clear_command_error(
    tmp_path, user, org, settings
):
    from accounts.models import Membership

    settings.ORGANIZATIONS_PER_PERSON = 1
    Membership.objects.filter(organization=org, user=user).delete()
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    with pytest.raises(CommandError, match="ORGANIZATIONS_PER_PERSON"):
        run("import", str(path), "--owner", user.email)
    assert not Server.objects.filter(slug="cli-server").exists()


def test_import_reads_standard_input_for_a_dash(monkeypatch, user):
    monkeypatch.setattr("sys.stdin", io.StringIO(GOOD))
    run("import", "-", "--owner", user.email)
    assert Server.objects.filter(slug="cli-server").exists()


def test_a_bad_file_fails_listing_every_error_one_per_line(tmp_path, user):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    err = io.StringIO()
    with pytest.raises(CommandError, match="4 errors; nothing imported"):
        call_command("server", "import", str(path), "--owner", user.email, stderr=err)
    lines = err.getvalue().strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "slug",
        "auth",
        "tools[0].name",
        "tools[0].inputSchema.type",
    ]
    # Of this user's: rows other tests committed for live servers stay for the session.
    assert not Server.objects.filter(organization__memberships__user=user).exists()


def test_a_yaml_syntax_error_fails_with_its_position(tmp_path, user):
    path = tmp_path / "broken.yaml"
    path.write_text("slug: a\nname: [\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("server", "import", str(path), "--owner", user.email, stderr=err)
    assert f"{path}:3:1: invalid YAML" in err.getvalue()


def test_reimporting_needs_replace(tmp_path, user):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    run("import", str(path), "--owner", user.email)
    with pytest.raises(CommandError):
        call_command("server", "import", str(path), "--owner", user.email, stderr=io.StringIO())
    path.write_text(GOOD.replace("name: cli server", "name: renamed"))
    run("import", str(path), "--owner", user.email, "--replace")
    assert Server.objects.get(slug="cli-server").name == "renamed"


def test_an_outsider_cannot_replace_anothers_server_and_learns_nothing(tmp_path, user, outsider):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    run("import", str(path), "--owner", user.email)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "server", "import", str(path), "--owner", outsider.email, "--replace", stderr=err
        )
    assert err.getvalue().splitlines()[0] == "slug: already taken"
    assert "--slug NEW-SLUG" in err.getvalue()
    assert user.email not in err.getvalue()


def test_slug_imports_a_definition_under_a_slug_of_ones_own(tmp_path, user, outsider):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    run("import", str(path), "--owner", user.email)
    run("import", str(path), "--owner", outsider.email, "--slug", "my-copy")
    run("import", str(path), "--owner", outsider.email, "--slug", "my-copy", "--replace")
    copy = Server.objects.get(slug="my-copy")
    assert copy.organization == outsider.personal_organization()
    assert Server.objects.get(slug="cli-server").organization == user.personal_organization()


def test_an_outsider_cannot_name_another_organization_with_org(tmp_path, org, outsider):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    with pytest.raises(CommandError, match="has no organization"):
        run("import", str(path), "--owner", outsider.email, "--org", org.slug)
    # Of these two people's: rows other tests committed for live servers stay for the session.
    assert not Server.objects.filter(
        organization__in=[org, outsider.personal_organization()]
    ).exists()


def test_export_prints_yaml_that_imports_back(tmp_path, user, examples_yaml):
    run("import", str(examples_yaml), "--owner", user.email)
    out, _ = run("export", "demo")
    assert yaml.safe_load(out) == load_file(examples_yaml)


def test_export_writes_json_to_a_file(tmp_path, user, examples_yaml):
    run("import", str(examples_yaml), "--owner", user.email)
    target = tmp_path / "out.json"
    run("export", "demo", "--format", "json", "-o", str(target))
    assert json.loads(target.read_text()) == load_file(examples_yaml)


def test_export_of_an_unknown_slug_fails():
    with pytest.raises(CommandError, match="no server 'nope'"):
        run("export", "nope")


def test_import_publishes_what_it_imports_unless_told_draft(tmp_path, user):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    out, _ = run("import", str(path), "--owner", user.email)
    assert "Published version 1.0.0" in out
    server = Server.objects.get(slug="cli-server")
    assert list(server.versions.values_list("version", flat=True)) == ["1.0.0"]

    path.write_text(GOOD.replace("Say hello.", "Say hello twice."))
    out, _ = run("import", str(path), "--owner", user.email, "--replace", "--draft")
    assert "Published" not in out
    assert server.versions.count() == 1
    assert server.tools.get().description == "Say hello twice."


LOCAL = """\
slug: cli-local
name: cli local
http: {baseUrl: "http://127.0.0.1:8080"}
tools:
  - name: status
    description: The status of a service on this machine.
    inputSchema: {type: object, properties: {}}
    kind: http
    config: {method: GET, url: /status}
"""


def test_import_warns_about_a_tool_the_outbound_guard_will_refuse(tmp_path, user, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    path = tmp_path / "local.yaml"
    path.write_text(LOCAL)
    out, _ = run("import", str(path), "--owner", user.email)
    assert "Imported server 'cli-local'" in out
    (warning,) = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert warning.startswith(
        "warning: tools[0] (status).config.url: 127.0.0.1 is a loopback address"
    )
    assert "OUTBOUND_ALLOW_LOOPBACK=true" in warning


def test_import_of_tools_on_public_hosts_prints_no_warning(tmp_path, user):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    out, _ = run("import", str(path), "--owner", user.email)
    assert "warning:" not in out


def test_a_template_typo_in_an_imported_file_is_an_error_naming_the_argument(tmp_path, user):
    path = tmp_path / "typo.yaml"
    path.write_text(
        GOOD.replace("text: Hello", "text: 'Hello {{ nmae }}'").replace(
            "properties: {}", "properties: {name: {type: string}}"
        )
    )
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 error; nothing imported"):
        call_command("server", "import", str(path), "--owner", user.email, stderr=err)
    assert "tools[0].config.content[0].text: the template reads 'nmae'" in err.getvalue()
    assert "did you mean 'name'?" in err.getvalue()


def test_publishing_a_draft_with_a_template_typo_publishes_and_warns(tmp_path, user):
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    run("import", str(path), "--owner", user.email, "--draft")
    server = Server.objects.get(slug="cli-server")
    server.tools.update(config={"content": [{"type": "text", "text": "Hello {{ nmae }}"}]})
    out, err = run("publish", "cli-server")
    assert "Published cli-server@1.0.0" in out
    assert "warning: tools[0].config.content[0].text: the template reads 'nmae'" in err
