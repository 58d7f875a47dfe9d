import secrets

from mcp_protocol.schemas import external_refs, validator_for


def test_it_finds_every_ref_that_leaves_the_schema():
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/a"},
            "b": {"$ref": "https://example.com/b.json"},
            "c": {"anyOf": [{"$dynamicRef": "other.json#x"}]},
        },
        "$defs": {"a": {"type": "string"}},
    }
    assert external_refs(schema) == ["properties.b.$ref", "properties.c.anyOf[0].$dynamicRef"]


def test_it_resolves_local_refs_and_never_fetches_remote_ones(httpserver):
    httpserver.expect_request("/schema.json").respond_with_json({"type": "string"})
    local = validator_for(
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"type": "string"}},
        }
    )
    assert list(local.iter_errors({"a": 1}))
    remote = validator_for({"$ref": httpserver.url_for("/schema.json")})
    [error] = remote.iter_errors("x")
    assert "cannot be resolved" in error.message
    assert httpserver.log == []


def test_a_schema_seen_before_is_meta_validated_once_per_process(monkeypatch):
    from jsonschema import Draft202012Validator

    from mcp_protocol import schemas

    checked = []
    real = Draft202012Validator.check_schema
    monkeypatch.setattr(
        Draft202012Validator, "check_schema", lambda s: (checked.append(s), real(s))
    )
    # Unseen by this process so far (the cache is the process's).
    tag = secrets.token_hex(8)
    first = {"type": "object", "title": tag, "properties": {"q": {"type": "string"}}}
    same = {"properties": {"q": {"type": "string"}}, "title": tag, "type": "object"}
    broken = {"type": "object", "title": tag, "properties": {"q": {"type": 7}}}
    assert schemas.schema_problems(first) == []
    assert schemas.schema_problems(same) == []  # same schema, keys in another order
    assert schemas.schema_problems(broken) and schemas.schema_problems(broken)
    assert checked == [first, broken]
    assert schemas.schema_problems(broken)[0][0] == ".properties.q.type"
