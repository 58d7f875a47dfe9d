import pytest

from integrations.importers import ImportFailed, parse_postman
from servers.kinds import http


@pytest.fixture
def weather(data):
    return parse_postman(data / "weather-desk.postman_collection.json")


def test_folders_become_name_prefixes(weather):
    assert weather.format == "postman-2.1"
    assert weather.title == "Weather Desk"
    assert [(op.name, op.source) for op in weather.operations] == [
        ("forecasts_current_conditions", "Forecasts / Current conditions"),
        ("forecasts_daily_forecast", "Forecasts / Daily forecast"),
        ("alerts_subscribe_to_alerts", "Alerts / Subscribe to alerts"),
        ("alerts_admin_delete_subscription", "Alerts / Admin / Delete subscription"),
        ("alerts_admin_broadcast", "Alerts / Admin / Broadcast"),
        ("upload_station_photo", "Upload station photo"),
        ("health_check", "Health check"),
    ]


def test_collection_variables_are_resolved_and_unset_ones_become_arguments(weather):
    current = weather.find("forecasts_current_conditions")
    assert current.config["url"] == "https://api.weatherdesk.example/v1/current"
    # {{city}} has no value anywhere: the model must give it. {{units}} has one: a default.
    assert current.config["parameters"] == {"city": "query", "units": "query"}
    assert current.input_schema["required"] == ["city"]
    assert current.input_schema["properties"]["units"]["default"] == "metric"
    # Disabled query parameters and headers are left out.
    assert "debug" not in current.input_schema["properties"]
    assert current.config["headers"] == {"Accept": "application/json"}
    assert current.description == "The latest observation for a city."


def test_path_variables_become_path_arguments(weather):
    daily = weather.find("forecasts_daily_forecast")
    assert daily.config["url"] == "https://api.weatherdesk.example/v1/forecast/{city}/daily"
    assert daily.config["parameters"] == {"city": "path", "days": "query"}
    assert daily.input_schema["properties"]["city"]["examples"] == ["Lisbon"]
    assert daily.input_schema["properties"]["days"]["default"] == "5"
    assert daily.description == "A day-by-day forecast."


def test_raw_json_bodies_become_body_arguments(weather):
    subscribe = weather.find("alerts_subscribe_to_alerts")
    assert subscribe.config["bodyType"] == "json"
    assert subscribe.config["parameters"] == {
        "city": "body",
        "email": "body",
        "severity": "body",
        "quietHours": "body",
        "sms": "body",
    }
    props = subscribe.input_schema["properties"]
    assert props["quietHours"] == {
        "type": "object",
        "properties": {"from": {"type": "integer"}, "to": {"type": "integer"}},
        "default": {"from": 22, "to": 7},
    }
    assert props["sms"] == {"type": "boolean", "default": False}
    assert subscribe.input_schema["required"] == ["city"]
    # Content-Type follows the body type; the config does not repeat it.
    assert "headers" not in subscribe.config


def test_form_bodies(weather):
    broadcast = weather.find("alerts_admin_broadcast")
    assert broadcast.config["bodyType"] == "form"
    assert broadcast.config["parameters"] == {"message": "form", "region": "form"}
    assert broadcast.input_schema["required"] == ["message"]
    upload = weather.find("upload_station_photo")
    assert upload.config["bodyType"] == "multipart"
    assert upload.config["parameters"] == {"station": "multipart", "photo": "multipart"}


def test_auth_is_inherited_from_folders_and_its_variables_become_secrets(weather):
    assert weather.secrets == ["WEATHER_DESK_API_KEY", "WEATHER_DESK_ADMIN_TOKEN"]
    assert weather.find("forecasts_daily_forecast").config["auth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Api-Key",
        "value": "{{ secrets.WEATHER_DESK_API_KEY }}",
    }
    assert weather.find("alerts_admin_delete_subscription").config["auth"] == {
        "type": "bearer",
        "token": "{{ secrets.WEATHER_DESK_ADMIN_TOKEN }}",
    }
    assert "auth" not in weather.find("health_check").config  # noauth on the request


def test_every_generated_config_is_valid_for_the_http_kind(weather):
    for op in weather.operations:
        assert http.validate_config(op.config) == [], op.name
        http.compile({"name": op.name, "config": op.config})


def test_variables_given_override_the_collections(data):
    preview = parse_postman(
        data / "weather-desk.postman_collection.json",
        variables={"baseUrl": "https://staging.weatherdesk.example/v1", "city": "Porto"},
    )
    current = preview.find("forecasts_current_conditions")
    assert current.config["url"] == "https://staging.weatherdesk.example/v1/current"
    assert current.input_schema["properties"]["city"]["default"] == "Porto"
    assert "required" not in current.input_schema


def test_credentials_in_headers_and_text_bodies():
    collection = {
        "info": {
            "name": "Ticketing",
            "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
        },
        "variable": [{"key": "host", "value": "https://tickets.example.com"}],
        "item": [
            {
                "name": "Add note",
                "request": {
                    "method": "POST",
                    "header": [
                        {"key": "X-Session-Token", "value": "{{sessionToken}}"},
                        {"key": "X-Trace", "value": "{{traceId}}"},
                    ],
                    "body": {"mode": "raw", "raw": "Customer called at {{hour}}."},
                    "url": "{{host}}/tickets/{{ticketId}}/notes",
                },
            }
        ],
    }
    op = parse_postman(collection).find("add_note")
    assert op.config["url"] == "https://tickets.example.com/tickets/{ticketId}/notes"
    assert op.config["headers"] == {"X-Session-Token": "{{ secrets.TICKETING_SESSION_TOKEN }}"}
    assert op.config["parameters"] == {"ticketId": "path", "X-Trace": "header"}
    assert op.config["bodyType"] == "text"
    assert op.config["body"] == "{{ body }}"
    assert op.input_schema["properties"]["body"]["type"] == "string"
    assert http.validate_config(op.config) == []


def test_it_refuses_what_is_not_a_collection():
    with pytest.raises(ImportFailed, match="not a Postman collection"):
        parse_postman({"openapi": "3.0.0"})
    with pytest.raises(ImportFailed, match="no requests"):
        parse_postman({"info": {"name": "Empty"}, "item": [{"name": "folder", "item": []}]})
