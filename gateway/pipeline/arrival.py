"""What the entrance reads of an HTTP request, once, for the pipeline: typed values, never the
request itself, so no stage reads a header again and no stage can frame an answer."""

from dataclasses import dataclass
from typing import Literal

# Which surface a request reached, decided by its path at the entrance (gateway/endpoint/app.py).
Surface = Literal["mcp", "legacy_sse", "rest", "webtools", "document"]


@dataclass(frozen=True, slots=True)
class Arrival:
    surface: Surface
    slug: str
    # A pinned published version: /mcp/<slug>@1.2.3, Webtools' /<version>, or the version a
    # Webtools POST body pins (read before admission, so this is the one snapshot admitted).
    version: str | None
    host: str
    origin: str | None
    authorization: str | None
    session_id: str | None
    user_agent: str
    client_ip: str | None
