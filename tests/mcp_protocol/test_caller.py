from mcp_protocol.caller import ANONYMOUS, Caller, stored
from mcp_protocol.context import NullContext


def test_a_key_and_a_grant_are_named_as_sessions_and_tasks_have_always_named_them():
    key = Caller(1, "person", 7, "admin", "api_key", 42, "ci key")
    grant = Caller(1, "person", 7, "admin", "oauth", 9, client="Claude")
    assert (key.ident, grant.ident, ANONYMOUS.ident) == ("key:42", "grant:9", "anon")
    assert (key.api_key_id, key.grant_id) == (42, None)
    assert (grant.api_key_id, grant.grant_id, grant.is_oauth) == (None, 9, True)


def test_a_stored_ident_gives_back_its_credential_but_not_its_person():
    assert stored(3, "grant:9") == Caller(3, "person", None, "", "oauth", 9)
    assert stored(3, "key:42").credential_kind == "api_key"
    assert stored(3, "anon") is ANONYMOUS
    assert stored(3, "key:not-a-number") is ANONYMOUS


def test_a_context_names_its_credential_by_its_caller():
    caller = Caller(1, "person", 7, "member", "api_key", 42, "ci key")
    assert NullContext(caller=caller).credential == "key:42"
    assert NullContext().caller is ANONYMOUS
