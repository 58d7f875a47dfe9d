"""The OAuth endpoints during a Postgres outage: every one answers as OAuth clients read errors,
a JSON 503 `temporarily_unavailable` with Retry-After (RFC 6749 §5.2's shape), never the HTML
page the dashboard shows; and they work again once Postgres is back. The shared live server of
the fault tests runs on its private Postgres, which the test stops mid-way."""

import httpx2

from .test_api_during_outages import _logged_in

CALLBACK = "http://127.0.0.1:8976/callback"


def _register(http: httpx2.Client) -> dict:
    response = http.post(
        "/oauth/register",
        json={
            "client_name": "Outage App",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "client_secret_post",
            "grant_types": ["authorization_code", "refresh_token"],
        },
    )
    assert response.status_code == 201, response.text
    return response.json()


def _assert_oauth_503(response: httpx2.Response, what: str) -> None:
    assert response.status_code == 503, (what, response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/json", (what, response.headers)
    assert int(response.headers["retry-after"]) > 0, what
    assert response.headers["cache-control"] == "no-store", what
    assert response.headers["access-control-allow-origin"] == "*", what
    body = response.json()
    assert body["error"] == "temporarily_unavailable", (what, body)
    assert "retry" in body["error_description"], (what, body)
    assert "Traceback" not in response.text and "OperationalError" not in response.text


def test_every_oauth_endpoint_answers_a_postgres_outage_with_a_json_503(stack):
    server, tenant = stack.server, stack.tenant
    http = httpx2.Client(base_url=server.url, timeout=30)
    client = _register(http)
    credentials = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    browser = _logged_in(server, tenant)
    authorize = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": CALLBACK,
        "state": "s1",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "resource": f"{server.url}/mcp/{tenant['slug']}",
    }

    stack.postgres.stop(mode="immediate")
    try:
        requests = {
            "token (refresh)": lambda: http.post(
                "/oauth/token",
                data={"grant_type": "refresh_token", "refresh_token": "gmcp_rt_x", **credentials},
            ),
            "token (code)": lambda: http.post(
                "/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": "c",
                    "redirect_uri": CALLBACK,
                    "code_verifier": "v" * 43,
                    **credentials,
                },
            ),
            "token (basic auth)": lambda: http.post(
                "/oauth/token",
                data={"grant_type": "refresh_token", "refresh_token": "gmcp_rt_x"},
                auth=(client["client_id"], client["client_secret"]),
            ),
            "register": lambda: http.post(
                "/oauth/register",
                json={"client_name": "Late App", "redirect_uris": [CALLBACK]},
            ),
            "revoke": lambda: http.post("/oauth/revoke", data={"token": "t", **credentials}),
            "authorize (signed out)": lambda: http.get("/oauth/authorize", params=authorize),
            "authorize (signed in)": lambda: browser.get("/oauth/authorize", params=authorize),
            "authorize (consent form)": lambda: browser.post(
                "/oauth/authorize",
                data={**authorize, "decision": "allow", "consent_token": "x"},
                headers={"origin": server.url},
            ),
            "resource metadata": lambda: http.get(
                f"/.well-known/oauth-protected-resource/mcp/{tenant['slug']}"
            ),
            "resource metadata (appended)": lambda: http.get(
                f"/mcp/{tenant['slug']}/.well-known/oauth-protected-resource"
            ),
        }
        for what, send in requests.items():
            _assert_oauth_503(send(), what)

        # The authorization server's own metadata needs no database: it is still served.
        metadata = http.get("/.well-known/oauth-authorization-server")
        assert metadata.status_code == 200
        assert metadata.json()["token_endpoint"].endswith("/oauth/token")
    finally:
        stack.postgres.start()

    again = http.post(
        "/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": "gmcp_rt_x", **credentials},
    )
    assert again.status_code == 400, again.text
    assert again.json()["error"] == "invalid_grant"
    assert _register(http)["client_id"]


def test_with_redis_down_every_oauth_answer_is_json_and_failures_a_503(stack):
    server, tenant = stack.server, stack.tenant
    http = httpx2.Client(base_url=server.url, timeout=30)
    client = _register(http)
    credentials = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    stack.redis.kill()
    try:
        answers = {
            "register": http.post(
                "/oauth/register", json={"client_name": "App", "redirect_uris": [CALLBACK]}
            ),
            "token": http.post(
                "/oauth/token",
                data={"grant_type": "refresh_token", "refresh_token": "gmcp_rt_x", **credentials},
            ),
            "revoke": http.post("/oauth/revoke", data={"token": "t", **credentials}),
            "resource metadata": http.get(
                f"/.well-known/oauth-protected-resource/mcp/{tenant['slug']}"
            ),
            "server metadata": http.get("/.well-known/oauth-authorization-server"),
        }
    finally:
        stack.redis.start()
    print({what: response.status_code for what, response in answers.items()})
    for what, response in answers.items():
        if response.status_code >= 500:
            _assert_oauth_503(response, what)
        elif what != "revoke":  # RFC 7009: a revocation's success is an empty 200
            assert response.headers["content-type"] == "application/json", (what, response.text)
