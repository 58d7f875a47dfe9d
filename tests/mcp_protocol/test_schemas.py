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
