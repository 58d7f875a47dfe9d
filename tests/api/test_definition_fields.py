from api.definition_fields import field_errors


def test_definition_messages_land_on_their_top_field_with_the_rest_of_their_path():
    errors = [
        "tools[1].inputSchema.type: must be 'object'",
        "tools[1].name: required",
        "tools[10].name: required",
        "tools[1]: must be a mapping",
        "slug: already taken",
    ]
    assert field_errors(errors, "tools[1]") == {
        "inputSchema": ["type: must be 'object'"],
        "name": ["required"],
        "non_field_errors": ["must be a mapping"],
    }
    assert field_errors(["tools[0].config.steps[2]: unknown step"], "") == {
        "tools": ["[0].config.steps[2]: unknown step"]
    }
