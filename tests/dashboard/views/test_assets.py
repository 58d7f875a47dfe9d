from email.utils import formatdate

import pytest

# Requests end by closing stale database connections, which needs database access.
pytestmark = pytest.mark.django_db


def test_a_static_file_is_sent_whole_with_its_type_and_cache_header(client):
    response = client.get("/static/css/app.css")
    assert response.status_code == 200
    # Not a streaming file response: those make ASGI servers warn on every asset.
    assert not response.streaming
    assert response["Content-Type"].startswith("text/css")
    assert response["Cache-Control"] == "public, max-age=300"
    assert "Last-Modified" in response
    assert b".clamp-tall" in response.content


def test_an_unchanged_file_answers_not_modified(client):
    last_modified = client.get("/static/js/playground.js")["Last-Modified"]
    response = client.get("/static/js/playground.js", HTTP_IF_MODIFIED_SINCE=last_modified)
    assert response.status_code == 304


def test_a_file_changed_since_is_sent_again(client):
    long_ago = formatdate(0, usegmt=True)
    response = client.get("/static/img/logo.svg", HTTP_IF_MODIFIED_SINCE=long_ago)
    assert response.status_code == 200
    assert response.content.startswith(b"<svg")


def test_nothing_outside_the_static_folder_is_served(client):
    for path in ("/static/../manage.py", "/static/%2e%2e/manage.py", "/static/nope.css"):
        assert client.get(path).status_code == 404, path
