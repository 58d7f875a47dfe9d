import re

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis import GenerationMode

from accounts.models import ApiKey
from api.models import PersonalAccessToken
from servers import publishing
from vault.models import Secret


@pytest.fixture
def api_schema(db):
    # Like Django's test client: a request must not close the connection holding the test's
    # transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_the_schema_is_a_valid_openapi_document(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    document = response.json()
    validate(document)
    paths = set(document["paths"])
    assert {"/api/servers/", "/api/calls/", "/api/calls.csv", "/api/tokens/", "/api/keys/"} <= paths
    assert "/api/schema/" not in paths
    assert document["components"]["securitySchemes"]["personalToken"]["scheme"] == "bearer"


def test_the_docs_page_loads_swagger_ui_from_this_site_and_points_at_the_schema(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts and all(src.startswith("/") and not src.startswith("//") for src in scripts)
    assert "<script>" not in page  # the start-up script is a file, so no inline script runs
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy
    start_up = client.get(next(src for src in scripts if "script" in src.split("?")[-1]))
    assert b"/api/schema/" in start_up.content


def real_path_parameters(path: str, objects: dict) -> dict:
    """Path parameters naming objects that exist, so generated requests reach the views."""
    if path.startswith("/api/organizations/"):
        return {"slug": objects["org"]}
    part = path.split("/")[4] if path.count("/") > 4 else ""
    values = {"slug": "weather", "server_slug": "weather", "version": "1.0.0"}
    values["id"] = objects.get(part) or objects.get(path.split("/")[2])
    return values


def test_the_api_honours_its_schema(api_schema, user, server, org):
    _, raw = PersonalAccessToken.issue(user, "schemathesis")
    objects = {
        "org": org.slug,
        "tools": server.tools.get().pk,
        "resources": server.resources.get().pk,
        "resource-templates": server.resource_templates.get().pk,
        "prompts": server.prompts.get().pk,
        "keys": ApiKey.issue(org, "fuzzed")[0].pk,
        "tokens": PersonalAccessToken.issue(user, "fuzzed")[0].pk,
        "secrets": Secret.store(org, "FUZZED", "v").pk,
    }
    publishing.publish(server)
    headers = {"Authorization": f"Token {raw}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) > 30

    for operation in operations:
        real = real_path_parameters(operation.path, objects)
        real = {k: v for k, v in real.items() if k in operation.path and v is not None}
        # Valid and invalid data (the latter must be refused with a 4xx), at random paths and
        # at paths naming real objects.
        strategies = [
            operation.as_strategy(mode, path_parameters=path)
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
            for path in ([None, real] if real else [None])
        ]
        strategy = st.one_of(strategies)

        @given(case=strategy)
        @settings(
            max_examples=4,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
        )
        def honours(case):
            case.call_and_validate(
                headers=headers,
                # Semantic rules (definition format, unique slugs) refuse some schema-valid
                # bodies, and DRF accepts some schema-invalid ones (a number for a string,
                # an empty page number); every other check applies, 500s above all.
                excluded_checks=[
                    schemathesis.checks.positive_data_acceptance,
                    schemathesis.checks.negative_data_rejection,
                ],
            )

        honours()
