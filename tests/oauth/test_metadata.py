"""Discovery: protected resource metadata per OAuth server, authorization server metadata."""

from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition


def test_an_oauth_server_publishes_its_protected_resource_metadata(client, oauth_server, settings):
    response = client.get(f"/.well-known/oauth-protected-resource/mcp/{oauth_server.slug}")
    assert response.status_code == 200
    body = response.json()
    site = settings.SITE_URL.rstrip("/")
    assert body["resource"] == f"{site}/mcp/{oauth_server.slug}"
    assert body["authorization_servers"] == [site]
    assert "mcp" in body["scopes_supported"]
    assert response["Access-Control-Allow-Origin"] == "*"


def test_a_server_that_takes_only_keys_serves_no_oauth_metadata(client, owner):
    org = owner.personal_organization()
    for mode in ("api_key", "none"):
        server = import_definition(
            server_definition(f"plain-{mode.replace('_', '')}", auth=mode), org
        )
        response = client.get(f"/.well-known/oauth-protected-resource/mcp/{server.slug}")
        assert response.status_code == 404


def test_an_unknown_or_draft_server_serves_no_metadata(client, owner):
    org = owner.personal_organization()
    import_definition(server_definition("drafty", auth="oauth", status="draft"), org)
    assert client.get("/.well-known/oauth-protected-resource/mcp/drafty").status_code == 404
    assert client.get("/.well-known/oauth-protected-resource/mcp/nope").status_code == 404


def test_a_server_taking_keys_and_oauth_publishes_metadata(client, owner):
    server = import_definition(
        server_definition("both-ways", auth="api_key+oauth"), owner.personal_organization()
    )
    assert client.get(f"/.well-known/oauth-protected-resource/mcp/{server.slug}").status_code == 200


def test_the_authorization_server_metadata_says_what_mcp_clients_need(client, settings):
    response = client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["issuer"] == settings.SITE_URL.rstrip("/")
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert body["client_id_metadata_document_supported"] is True
    assert body["authorization_response_iss_parameter_supported"] is True
    assert "none" in body["token_endpoint_auth_methods_supported"]
    assert body["response_types_supported"] == ["code"]
    assert "offline_access" in body["scopes_supported"]
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        assert body[name].startswith(body["issuer"] + "/oauth/")


def test_openid_style_discovery_serves_the_same_document(client):
    openid = client.get("/.well-known/openid-configuration").json()
    assert openid == client.get("/.well-known/oauth-authorization-server").json()


def test_the_issuer_can_be_set_apart_from_the_site(client, settings):
    settings.OAUTH_ISSUER = "https://auth.example.com"
    body = client.get("/.well-known/oauth-authorization-server").json()
    assert body["issuer"] == "https://auth.example.com"
    assert body["token_endpoint"] == "https://auth.example.com/oauth/token"


def test_the_site_root_names_no_resource(client):
    response = client.get("/.well-known/oauth-protected-resource")
    assert response.status_code == 404
    assert "/.well-known/oauth-protected-resource/mcp/" in response.json()["error_description"]


def test_paths_that_are_not_the_issuer_serve_no_authorization_server_metadata(client, settings):
    # Issuer at the site's root: only the two root documents exist; paths are not issuers.
    for url in (
        "/.well-known/oauth-authorization-server/mcp/some-server",
        "/.well-known/openid-configuration/mcp/some-server",
        "/tenant/.well-known/openid-configuration",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "/.well-known/oauth-authorization-server" in response.json()["error_description"]


def test_an_issuer_with_a_path_is_found_by_every_discovery_url_mcp_clients_try(client, settings):
    settings.OAUTH_ISSUER = "https://auth.example.com/tenant"
    # The MCP spec's order for an issuer with a path: RFC 8414 path insertion, OpenID path
    # insertion, OpenID path appending (plus the RFC 8414 name appended, which some clients try).
    for url in (
        "/.well-known/oauth-authorization-server/tenant",
        "/.well-known/openid-configuration/tenant",
        "/tenant/.well-known/openid-configuration",
        "/tenant/.well-known/oauth-authorization-server",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.json()["issuer"] == "https://auth.example.com/tenant"
        assert response["Access-Control-Allow-Origin"] == "*"
    other = client.get("/.well-known/oauth-authorization-server/other")
    assert other.status_code == 404
    assert (
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant"
        in other.json()["error_description"]
    )


def test_the_site_root_names_no_resource_and_says_so_in_json(client):
    # RFC 9728 §3.3: a document here would have to name the site itself as the resource; every
    # server is its own resource, so a client that lands here is pointed back at its 401.
    response = client.get("/.well-known/oauth-protected-resource")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert client.options("/.well-known/oauth-protected-resource").status_code == 204
