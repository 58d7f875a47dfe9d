import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import servers.cli
from servers.models import Server

DATA = Path(__file__).resolve().parents[1] / "importers" / "data"
PETSTORE = str(DATA / "petstore-3.0.yaml")


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    """The subcommand list is another module's; make sure this one is on it for the test."""
    names = list(servers.cli.SUBCOMMANDS)
    for module in ("integrations.cli.import_openapi", "integrations.cli.import_postman"):
        if module not in names:
            names.append(module)
    monkeypatch.setattr(servers.cli, "SUBCOMMANDS", names)


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="petshop", name="petshop")


def run(*args):
    out = io.StringIO()
    call_command("server", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_preview_lists_the_operations_and_imports_nothing(server, user):
    out = run("import-openapi", PETSTORE, "--server", "petshop", "--owner", user.email, "--preview")
    assert "Petstore 2.4.0 (openapi-3.0)" in out
    assert "getPetById" in out and "GET /pets/{petId}" in out
    assert "Secrets the tools use: PETSTORE_API_KEY" in out
    assert "Connection provider the tools use: petstore (https://" in out
    assert not server.tools.exists()


def test_selected_operations_are_imported_as_drafts(server, user):
    out = run(
        "import-openapi",
        PETSTORE,
        "--server",
        "petshop",
        "--owner",
        user.email,
        "--select",
        "listPets,getPetById",
    )
    assert "Imported into petshop: 2 added (disabled until reviewed)" in out
    assert list(server.tools.values_list("name", "kind", "enabled")) == [
        ("listPets", "http", False),
        ("getPetById", "http", False),
    ]


def test_json_preview(server, user):
    out = run(
        "import-openapi",
        PETSTORE,
        "--server",
        "petshop",
        "--owner",
        user.email,
        "--preview",
        "--json",
    )
    preview = json.loads(out)
    assert preview["format"] == "openapi-3.0"
    assert len(preview["operations"]) == 8


def test_a_server_of_another_organization_is_not_found(server, outsider):
    with pytest.raises(CommandError, match="has no server 'petshop'"):
        run("import-openapi", PETSTORE, "--server", "petshop", "--owner", outsider.email)
    assert not server.tools.exists()


def test_an_unknown_selection_is_an_error(server, user):
    with pytest.raises(CommandError, match="no operation named 'nope'"):
        run(
            "import-openapi",
            PETSTORE,
            "--server",
            "petshop",
            "--owner",
            user.email,
            "--select",
            "nope",
        )


def test_a_document_that_is_not_openapi_is_an_error(server, user, tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_text("hello: world\n")
    with pytest.raises(CommandError, match="not an OpenAPI or Swagger document"):
        run("import-openapi", str(path), "--server", "petshop", "--owner", user.email)


LOCAL_API = """\
openapi: 3.0.3
info: {title: Local, version: 1.0.0}
servers: [{url: "http://localhost:4010"}]
paths:
  /status:
    get:
      operationId: getStatus
      summary: The service's status.
      responses: {"200": {description: ok}}
"""


def test_an_import_of_an_api_on_this_machine_warns_that_calls_will_be_refused(
    server, user, settings, tmp_path
):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    document = tmp_path / "local.yaml"
    document.write_text(LOCAL_API)
    out = run("import-openapi", str(document), "--server", "petshop", "--owner", user.email)
    (warning,) = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert warning.startswith(
        "warning: getStatus: config.url: localhost (127.0.0.1) is a loopback address"
    )
    assert "OUTBOUND_ALLOW_LOOPBACK=true" in warning


def test_an_import_of_an_api_on_a_public_host_prints_no_warning(server, user):
    out = run("import-openapi", PETSTORE, "--server", "petshop", "--owner", user.email)
    assert "Imported" in out and "warning:" not in out


TEAMWORK = str(DATA / "teamwork-openapi-3.0.yaml")


def import_teamwork(user, *extra: str, source: str = TEAMWORK) -> str:
    return run("import-openapi", source, "--server", "petshop", "--owner", user.email, *extra)


def test_importing_the_same_document_twice_leaves_one_tool_per_operation(server, user):
    import_teamwork(user)
    out = import_teamwork(user)
    assert (
        "Imported into petshop: 0 added (disabled until reviewed), 0 updated, 45 unchanged" in out
    )
    assert server.tools.count() == 45


def test_a_dry_run_shows_added_changed_and_removed_and_changes_nothing(server, user, tmp_path):
    import yaml

    import_teamwork(user)
    document = yaml.safe_load(Path(TEAMWORK).read_text())
    document["paths"]["/search"]["get"]["summary"] = "Search everything"
    del document["paths"]["/labels/{labelId}"]
    document["paths"]["/audit-log"] = {
        "get": {"operationId": "listAuditEvents", "summary": "List audit events", "responses": {}}
    }
    newer = tmp_path / "teamwork-2.5.yaml"
    newer.write_text(yaml.safe_dump(document))
    before = list(server.tools.values_list("name", "title"))

    out = import_teamwork(user, "--dry-run", source=str(newer))

    assert "On the server: 1 added, 1 changed, 3 removed, 41 unchanged" in out
    assert "  + listAuditEvents" in out
    assert "  ~ search" in out and "(title, description)" in out
    assert "  - deleteLabel" in out
    assert list(server.tools.values_list("name", "title")) == before

    import_teamwork(user, "--remove-missing", source=str(newer))
    names = set(server.tools.values_list("name", flat=True))
    assert "listAuditEvents" in names and "deleteLabel" not in names
    assert server.tools.get(name="search").title == "Search everything"
