import pytest

from mcp_protocol.errors import McpError
from mcp_protocol.jsonrpc import Request, parse_body


def nested(levels: int) -> bytes:
    """A tools/call whose arguments hold lists nested so that the whole body is `levels` deep."""
    inner = "[" * (levels - 2) + "]" * (levels - 2)
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":%s}}'
        % inner.encode()
    )


def test_a_body_nested_to_the_limit_is_parsed_and_one_level_more_is_refused():
    assert isinstance(parse_body(nested(65)), Request)
    with pytest.raises(McpError, match="nested deeper than 64 levels"):
        parse_body(nested(66))


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = "[{" * 200
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"text":"%s"}}' % text.encode()
    assert parse_body(body).params == {"text": text}
