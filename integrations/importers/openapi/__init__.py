"""OpenAPI 3.0, 3.1 and Swagger 2.0 documents turned into a preview of `http` tools.

parse.py walks the document's paths; document.py reads its dialect and servers; security.py
its security schemes; operations.py turns one operation into a tool, with naming.py for its
name and parameters.py and bodies.py for its arguments.
"""

from .parse import parse_openapi

__all__ = ["parse_openapi"]
