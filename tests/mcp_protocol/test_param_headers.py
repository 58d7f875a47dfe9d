from mcp_protocol.param_headers import header_parameters


def test_each_marked_top_level_property_names_its_lowercased_header_in_schema_order():
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "plain": {"type": "string"},
            "tenant": {"type": "string", "x-mcp-header": "TENANT-Id"},
        },
    }
    assert header_parameters(schema) == (
        ("region", "mcp-param-region"),
        ("tenant", "mcp-param-tenant-id"),
    )


def test_a_nested_mark_is_not_a_header_parameter():
    schema = {
        "type": "object",
        "properties": {
            "outer": {
                "type": "object",
                "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}},
            }
        },
    }
    assert header_parameters(schema) == ()


def test_empty_or_non_string_marks_and_odd_schemas_give_none():
    assert header_parameters({"properties": {"a": {"x-mcp-header": ""}}}) == ()
    assert header_parameters({"properties": {"a": {"x-mcp-header": 5}}}) == ()
    assert header_parameters({"properties": {"a": True}}) == ()
    assert header_parameters({"properties": []}) == ()
    assert header_parameters({"type": "object"}) == ()
    assert header_parameters(True) == ()
