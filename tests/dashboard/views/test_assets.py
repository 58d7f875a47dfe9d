from email.utils import formatdate
from pathlib import Path

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


def test_the_api_docs_swagger_ui_is_served_from_this_site_at_the_locked_version(client):
    bundle = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert bundle["Content-Type"].split(";")[0] in {"text/javascript", "application/javascript"}
    assert len(bundle.content) > 100_000
    locked = next(
        line.split("==")[1].strip()
        for line in Path("requirements.lock").read_text().splitlines()
        if line.startswith("drf-spectacular-sidecar==")
    )
    from importlib.metadata import version

    assert version("drf-spectacular-sidecar") == locked


def test_a_path_out_of_the_static_directories_is_refused(client):
    assert client.get("/static/../getmcp/settings.py").status_code == 404
    assert client.get("/static/drf_spectacular_sidecar/../../settings.py").status_code == 404
    assert client.get("/static/no/such/file.js").status_code == 404
