"""Postman Collection 2.1 documents turned into a preview of `http` tools.

collection.py walks the folders; request.py turns one request into a tool, with urls.py,
bodies.py and auth.py for its parts; variables.py holds the `{{variables}}` they all render
with, and entries.py the readers of Postman's key/value lists.
"""

from .collection import parse_postman

__all__ = ["parse_postman"]
