import pytest

from mcp_protocol.errors import McpError
from mcp_protocol.pagination import decode_cursor, encode_cursor, paginate


def test_a_cursor_decodes_to_the_offset_it_was_made_from():
    for offset in (0, 1, 50, 123456):
        assert decode_cursor(encode_cursor(offset)) == offset


def test_a_cursor_does_not_show_the_offset_in_clear():
    assert "50" not in encode_cursor(50)


@pytest.mark.parametrize("cursor", [None, ""])
def test_no_cursor_or_an_empty_one_means_the_start(cursor):
    assert decode_cursor(cursor) == 0


@pytest.mark.parametrize("cursor", ["garbage", "!!!", "bzE6LTE", "eHg6NQ", "bzE6", "a" * 100, 5])
def test_it_rejects_a_cursor_it_did_not_make(cursor):
    with pytest.raises(McpError) as raised:
        decode_cursor(cursor)
    assert raised.value.code == -32602
    assert raised.value.message == "Invalid cursor"


def test_it_pages_through_a_list_and_stops_on_the_last_page():
    items = list(range(120))
    first, cursor = paginate(items, None, 50)
    second, cursor2 = paginate(items, cursor, 50)
    third, cursor3 = paginate(items, cursor2, 50)
    assert first == items[:50] and second == items[50:100] and third == items[100:]
    assert cursor3 is None


def test_a_list_that_fits_one_page_has_no_next_cursor():
    assert paginate(list(range(50)), None, 50) == (list(range(50)), None)


def test_a_cursor_past_the_end_is_invalid():
    with pytest.raises(McpError):
        paginate([1, 2], encode_cursor(10), 50)
