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


# -- the flat-object fast path -----------------------------------------------------------------

FLAT_SCHEMAS = [
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}},
    {
        "type": "object",
        "properties": {"b": {"type": "boolean", "description": "a flag"}, "z": {"type": "null"}},
        "required": ["b"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"any": {"title": "anything scalar"}}},
    {"type": "object"},
]
NOT_FLAT_SCHEMAS = [
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}},
    {"type": "object", "properties": {"s": {"type": ["string", "null"]}}},
    {"type": "object", "properties": {"s": {"type": "string", "format": "email"}}},
    {"type": "object", "properties": {"o": {"type": "object"}}},
    {"type": "object", "additionalProperties": True},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
    {"properties": {"text": {"type": "string"}}},
    {"type": "object", "required": "text"},
]
INSTANCES = [
    {},
    {"text": "hi"},
    {"text": 1},
    {"text": None},
    {"text": "hi", "extra": "x"},
    {"text": "hi", "extra": {"deep": [1, 2]}},
    {"n": 1, "x": 1.5},
    {"n": 1.0},
    {"n": True},
    {"x": True},
    {"x": 2},
    {"b": False},
    {"b": 0},
    {"b": True, "z": None},
    {"b": True, "z": 0},
    {"b": True, "other": 1},
    {"any": [1]},
    {"any": "s"},
    [],
    "text",
    None,
]


def full_errors(schema, instance):
    """What the validator answers without the fast path."""
    validator = validator_for(schema)
    validator._flat = None
    return [error.message for error in validator.iter_errors(instance)]


def test_schemas_of_scalar_properties_take_the_fast_path_and_others_do_not():
    from mcp_protocol.schemas import flat_object_schema

    assert all(flat_object_schema(schema) is not None for schema in FLAT_SCHEMAS)
    assert all(flat_object_schema(schema) is None for schema in NOT_FLAT_SCHEMAS)


def test_the_fast_path_accepts_only_what_the_full_validator_finds_valid():
    from mcp_protocol.schemas import flat_object_schema

    accepted = 0
    for schema in FLAT_SCHEMAS:
        flat = flat_object_schema(schema)
        for instance in INSTANCES:
            if flat.accepts(instance):
                accepted += 1
                assert full_errors(schema, instance) == [], (schema, instance)
    assert accepted >= 10  # the path is taken, not merely safe


def test_every_schema_answers_with_or_without_the_fast_path_the_same_errors():
    for schema in FLAT_SCHEMAS + NOT_FLAT_SCHEMAS:
        for instance in INSTANCES:
            fast = [error.message for error in validator_for(schema).iter_errors(instance)]
            assert fast == full_errors(schema, instance), (schema, instance)


def test_schemas_that_mean_the_same_share_one_fast_path_checker_and_others_do_not():
    from mcp_protocol.schemas import flat_object_schema

    plain = {"type": "object", "properties": {"text": {"type": "string"}}}
    described = {
        "type": "object",
        "title": "Echo",
        "properties": {"text": {"type": "string", "description": "What to echo"}},
    }
    assert flat_object_schema(plain) is flat_object_schema(described)
    required = {**plain, "required": ["text"]}
    closed = {**plain, "additionalProperties": False}
    numeric = {"type": "object", "properties": {"text": {"type": "number"}}}
    checkers = {id(flat_object_schema(schema)) for schema in (plain, required, closed, numeric)}
    assert len(checkers) == 4
    assert not flat_object_schema(required).accepts({})
    assert flat_object_schema(plain).accepts({})
