import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import servers.cli
from servers.models import Server

COLLECTION = str(
    Path(__file__).resolve().parents[1]
    / "importers"
    / "data"
    / "weather-desk.postman_collection.json"
)


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    names = list(servers.cli.SUBCOMMANDS)
    if "integrations.cli.import_postman" not in names:
        names.append("integrations.cli.import_postman")
    monkeypatch.setattr(servers.cli, "SUBCOMMANDS", names)


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="weather", name="weather")


def run(*args):
    out = io.StringIO()
    call_command("server", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_collection_is_imported_with_an_environment_and_variables(server, user, tmp_path):
    environment = tmp_path / "staging.postman_environment.json"
    environment.write_text(
        json.dumps(
            {
                "name": "staging",
                "values": [
                    {
                        "key": "baseUrl",
                        "value": "https://staging.weatherdesk.example/v1",
                        "enabled": True,
                    },
                    {"key": "units", "value": "imperial", "enabled": False},
                ],
            }
        )
    )
    out = run(
        "import-postman",
        COLLECTION,
        "--server",
        "weather",
        "--owner",
        user.email,
        "--environment",
        str(environment),
        "--var",
        "city=Porto",
        "--select",
        "forecasts_current_conditions,Alerts / Admin / Broadcast",
    )
    assert "Imported into weather: 2 added (disabled until reviewed)" in out
    assert (
        "Secrets to set on the Secrets page: WEATHER_DESK_API_KEY, WEATHER_DESK_ADMIN_TOKEN" in out
    )
    current = server.tools.get(name="forecasts_current_conditions")
    assert current.config["url"] == "https://staging.weatherdesk.example/v1/current"
    assert current.input_schema["properties"]["city"]["default"] == "Porto"
    assert current.input_schema["properties"]["units"]["default"] == "metric"  # disabled entry
    assert current.enabled is False
    assert server.tools.filter(name="alerts_admin_broadcast").exists()


def test_a_bad_variable_is_an_error(server, user):
    with pytest.raises(CommandError, match="--var: 'city' is not NAME=VALUE"):
        run(
            "import-postman",
            COLLECTION,
            "--server",
            "weather",
            "--owner",
            user.email,
            "--var",
            "city",
        )
