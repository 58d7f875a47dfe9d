import pytest

from mcp_protocol.context import NullContext
from servers.kinds import static


async def run(config, arguments=None):
    return await static.call(static.compile({"config": config}), arguments or {}, NullContext())


async def test_it_renders_content_and_structured_content_over_the_arguments():
    result = await run(
        {
            "content": [{"type": "text", "text": "You said {{ message }}"}],
            "structuredContent": {"echo": "{{ message }}", "length": "{{ message | length }}"},
        },
        {"message": "hi"},
    )
    assert result == {
        "content": [{"type": "text", "text": "You said hi"}],
        "structuredContent": {"echo": "hi", "length": 2},
    }


async def test_every_content_block_type_comes_back():
    blocks = [
        {"type": "text", "text": "t"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {
            "type": "resource",
            "resource": {"uri": "test://r/{{ id }}", "mimeType": "text/plain", "text": "x"},
        },
        {"type": "resource_link", "uri": "test://static-text", "name": "static-text"},
    ]
    result = await run({"content": blocks}, {"id": 7})
    assert result["content"][3]["resource"]["uri"] == "test://r/7"
    assert [block["type"] for block in result["content"]] == [
        "text",
        "image",
        "audio",
        "resource",
        "resource_link",
    ]


async def test_a_lone_number_expression_in_a_text_block_still_gives_text():
    result = await run({"content": [{"type": "text", "text": "{{ a * 2 }}"}]}, {"a": 21})
    assert result["content"] == [{"type": "text", "text": "42"}]


async def test_is_error_marks_the_result():
    result = await run({"content": [{"type": "text", "text": "broken"}], "isError": True})
    assert result["isError"] is True


async def test_structured_content_alone_also_shows_as_json_text():
    result = await run({"structuredContent": {"n": "{{ n }}"}}, {"n": 5})
    assert result == {
        "content": [{"type": "text", "text": '{"n":5}'}],
        "structuredContent": {"n": 5},
    }


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "config.content: required"),
        ({"content": "text"}, "config.content: must be a list of content blocks"),
        ({"content": [{"type": "video"}]}, "config.content[0].type: must be one of"),
        ({"content": [{"type": "text"}]}, "config.content[0].text: required"),
        ({"content": [{"type": "image", "data": "x"}]}, "config.content[0].mimeType: required"),
        (
            {"content": [{"type": "resource", "resource": {"uri": "a"}}]},
            "config.content[0].resource: needs exactly one of text or blob",
        ),
        ({"content": [{"type": "resource_link", "uri": "a"}]}, "config.content[0].name: required"),
        ({"content": [], "isError": 3}, "config.isError: must be true or false"),
        ({"content": [], "extra": 1}, "config.extra: unknown field"),
        ({"content": [{"type": "text", "text": "{{ oops "}]}, "Template syntax error"),
    ],
)
def test_it_names_the_offending_field(config, message):
    errors = static.validate_config(config)
    assert any(message in error for error in errors), errors


def test_a_valid_config_has_no_errors():
    assert static.validate_config({"content": [{"type": "text", "text": "ok {{ x }}"}]}) == []
