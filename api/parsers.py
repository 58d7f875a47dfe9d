"""The API's JSON parser, bounded: a body nested deeper than the platform's document depth is a
400, not a RecursionError somewhere later (a 500)."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from mcp_protocol.limits import depth_exceeds
from servers.documents import MAX_DOCUMENT_DEPTH

TOO_DEEP = f"JSON parse error - nested deeper than {MAX_DOCUMENT_DEPTH} levels"


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        if depth_exceeds(data, MAX_DOCUMENT_DEPTH):
            raise ParseError(TOO_DEEP)
        return data
