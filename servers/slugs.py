"""The one slug pattern of servers: in their URLs (/mcp/<slug>, /webtools/<slug>/, the REST API,
OAuth resource URIs), in the model's validator and in imported definitions.

Two to 63 characters (a DNS label): lower-case letters, digits and hyphens, not starting with a
hyphen. Routes embed `SLUG_PATTERN`; validators use the anchored `SLUG_RE` or `SLUG`.
"""

import re

SLUG_PATTERN = r"[a-z0-9][a-z0-9-]{1,62}"
SLUG_RE = rf"^{SLUG_PATTERN}$"
SLUG = re.compile(SLUG_RE)


def is_slug(text: str) -> bool:
    return SLUG.match(text) is not None
