"""What an inspector event hides: arguments unless the server logs them, the client's answers,
credentials and the organization's vault values in any of their forms."""

import base64

import orjson

from inspector.events import body_for_event, masked, parse_sse, redact_body, shown_headers
from vault.masking import Masker


def call(method, params):
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def test_tool_and_prompt_arguments_are_redacted_keys_kept_unless_the_server_logs_them():
    body = call("tools/call", {"name": "echo", "arguments": {"message": "diary", "n": 3}})
    assert redact_body(body, log_arguments=False)["params"]["arguments"] == {
        "message": "[redacted]",
        "n": "[redacted]",
    }
    assert body["params"]["arguments"]["message"] == "diary"  # the original is untouched
    prompt = call("prompts/get", {"name": "greet", "arguments": {"who": "alice"}})
    assert redact_body(prompt, log_arguments=False)["params"]["arguments"] == {"who": "[redacted]"}


def test_a_server_that_logs_arguments_shows_them_but_not_secret_looking_keys():
    body = call("tools/call", {"name": "login", "arguments": {"user": "ada", "password": "pw1"}})
    shown = redact_body(body, log_arguments=True)["params"]["arguments"]
    assert shown == {"user": "ada", "password": "[redacted]"}


def test_the_clients_answers_and_stateless_input_responses_are_redacted():
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept", "content": {"pin": "1"}}}
    assert redact_body([answer], log_arguments=False)[0]["result"] == {
        "action": "[redacted]",
        "content": "[redacted]",
    }
    stateless = call(
        "tools/call",
        {"name": "ask", "arguments": {}, "inputResponses": {"q": {"content": {"pin": "2"}}}},
    )
    assert redact_body(stateless, log_arguments=False)["params"]["inputResponses"] == "[redacted]"
    completion = call("completion/complete", {"argument": {"name": "who", "value": "ali"}})
    assert redact_body(completion, log_arguments=False)["params"]["argument"]["value"] == (
        "[redacted]"
    )


def test_credentials_and_vault_values_are_masked_in_every_form():
    secret = "sk-live-abcdef123456"
    event = {
        "response": {"text": f"upstream said {secret} and {base64.b64encode(secret.encode())}"},
        "error": "bad header Bearer gmcp_SOMETHINGsecret1234 from client",
        "key": "gmcp_AnotherKeyThatLeaked99",
    }
    shown = orjson.dumps(masked(event, Masker([secret]))).decode()
    assert secret not in shown
    assert base64.b64encode(secret.encode()).decode() not in shown
    assert "gmcp_SOMETHINGsecret1234" not in shown
    assert "gmcp_AnotherKeyThatLeaked99" not in shown


def test_the_authorization_header_shows_its_scheme_only():
    headers = {"authorization": "Bearer gmcp_x", "user-agent": "ua", "cookie": "sessionid=1"}
    assert shown_headers(headers) == {"user-agent": "ua", "authorization": "Bearer ***"}


def test_an_sse_body_becomes_its_messages_and_a_large_body_is_not_shown():
    raw = b'id: a.1\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n: ping\n\n'
    assert parse_sse(raw) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    big = orjson.dumps(call("tools/call", {"name": "x", "arguments": {"a": "b" * 40_000}}))
    shown = body_for_event(big, "application/json", log_arguments=True, from_client=True)
    assert shown == {"[truncated]": f"{len(big)} bytes, not shown"}


def test_the_event_budget_counts_what_it_skips_and_says_so_on_the_next_event(monkeypatch):
    from inspector import publish

    now = [100.0]
    monkeypatch.setattr(publish.time, "monotonic", lambda: now[0])
    budget = publish.Budget()
    assert [budget.take(1, 2) for _ in range(5)] == [0, 0, None, None, None]
    assert budget.take(2, 2) == 0  # another server has its own budget
    now[0] = 101.0
    assert budget.take(1, 2) == 3
    assert budget.take(1, 2) == 0


def test_every_credential_form_the_call_log_hides_is_hidden_from_events_too():
    # Events skip the scrubbing expression when no credential marker is present: each form
    # the expression knows must still be found.
    event = {
        "a": "key gmcp_Abcdef0123456789 here",
        "b": "token gmcp_at_Abcdef0123456789",
        "c": "personal gpat_Abcdef0123456789",
        "d": "Bearer abcdef.0123456789",
        "e": "Basic dXNlcjpwYXNzd29yZA==",
        "f": "x" * 3000 + " gmcp_LongTextKey0123456789",
    }
    shown = orjson.dumps(masked(event, None)).decode()
    for secret in ("Abcdef0123456789", "abcdef.0123456789", "dXNlcjpwYXNzd29yZA", "LongTextKey"):
        assert secret not in shown
    untouched = {"text": "nothing secret in here", "n": 3}
    assert masked(untouched, None) == untouched
