"""YAML alias bombs are refused before anything expands them, everywhere YAML is read: the
import preview (API and dashboard), definitions (API and CLI) and the dashboard's YAML fields."""

import time

import httpx2
import pytest
from django.conf import settings
from django.test import Client

from api.models import PersonalAccessToken
from servers import documents
from servers.definition import DefinitionError, load_text

from .conftest import under_attack

# 10 levels of 9 aliases each: about 3.9 billion strings once expanded (387 bytes of text).
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{','.join(['*' + previous] * 9)}]\n"
    for previous, name in zip("abcdefghi", "bcdefghij", strict=True)
)
OPENAPI_BOMB = (
    'openapi: "3.0.3"\ninfo: {title: bomb, version: "1"}\npaths: {}\nx-bomb:\n'
    + "".join("  " + line + "\n" for line in BOMB.splitlines())
)


def test_the_bomb_is_small():
    assert len(OPENAPI_BOMB) < 600


@pytest.fixture
def attacker_api(committed, attacker, asgi_server):
    tenant = attacker(tools=[])
    _, raw = committed(PersonalAccessToken.issue, tenant.user, "attack")
    return httpx2.Client(
        base_url=asgi_server.url, headers={"authorization": f"Token {raw}"}, timeout=30
    ), tenant


def test_an_alias_bomb_sent_to_the_import_preview_is_refused_at_once(attacker_api, victim):
    api, tenant = attacker_api

    def attack():
        return api.post(
            f"/api/servers/{tenant.slug}/tools/import-api/preview/",
            json={"document": OPENAPI_BOMB},
        )

    response = under_attack(attack, victim, "YAML alias bomb (import preview)").answer
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert "aliases expand the document" in response.text


def test_an_alias_bomb_in_a_definition_file_is_refused():
    started = time.perf_counter()
    with pytest.raises(DefinitionError) as raised:
        load_text(f"slug: bomb\nname: bomb\n{BOMB}", "bomb.yaml")
    assert "aliases expand the document" in str(raised.value)
    assert time.perf_counter() - started < 0.5


def test_an_alias_bomb_in_a_dashboard_yaml_field_is_a_form_error(committed, attacker, asgi_server):
    tenant = attacker(tools=[])

    def session_cookie():
        django_client = Client()
        django_client.force_login(tenant.user)
        return django_client.cookies[settings.SESSION_COOKIE_NAME].value

    browser = httpx2.Client(base_url=asgi_server.url, timeout=30, follow_redirects=False)
    browser.cookies.set(settings.SESSION_COOKIE_NAME, committed(session_cookie))
    form = browser.get(f"/servers/{tenant.slug}/tools/new/")
    assert form.status_code == 200
    started = time.perf_counter()
    response = browser.post(
        f"/servers/{tenant.slug}/tools/new/",
        data={
            "name": "bomb",
            "description": "x",
            "kind": "static",
            "input_schema": '{"type": "object"}',
            "config": BOMB,
            "enabled": "on",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
        headers={"referer": f"{asgi_server.url}/servers/{tenant.slug}/tools/new/"},
    )
    assert time.perf_counter() - started < 2
    assert response.status_code == 400, (response.status_code, response.headers.get("location"))
    assert "aliases expand the document" in response.text


@pytest.mark.parametrize(
    "text, problem",
    [
        ("a: &a [*a]", "contains it"),
        ("[" * 5000 + "]" * 5000, "nested deeper"),  # past libyaml's own limit too
        ("[" * 129 + "]" * 129, "nested deeper"),
        ("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 1500)), "nested deeper"),
        ("x: !!binary aGVsbG8=", "only JSON values"),
        ("a: 1\na: 2", "duplicate key"),
    ],
)
def test_other_hostile_yaml_is_refused_cleanly(text, problem):
    with pytest.raises(documents.DocumentError) as raised:
        documents.load_yaml(text)
    assert problem in raised.value.problem


def test_aliases_that_a_yaml_dumper_writes_are_still_read():
    assert documents.load_yaml("auth: &h {k: v}\nother: *h") == {
        "auth": {"k": "v"},
        "other": {"k": "v"},
    }


def test_reading_yaml_stops_at_its_deadline(monkeypatch):
    monkeypatch.setattr(documents, "YAML_DEADLINE_SECONDS", 0.0)
    big = "".join(f"k{i}: [1, 2, 3]\n" for i in range(5000))
    with pytest.raises(documents.DocumentError, match="took longer than"):
        documents.load_yaml(big)
