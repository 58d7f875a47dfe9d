"""Server-Sent Events framing."""


def event(
    data: bytes,
    event_id: str | None = None,
    event_type: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    parts = []
    if event_id is not None:
        parts.append(b"id: " + event_id.encode())
    if event_type is not None:
        parts.append(b"event: " + event_type.encode())
    if retry_ms is not None:
        parts.append(b"retry: " + str(int(retry_ms)).encode())
    # A data payload may not contain raw newlines in one field; JSON from orjson never does,
    # but other text might, so split it into several data lines as the SSE spec requires.
    for line in data.split(b"\n"):
        parts.append(b"data: " + line if line else b"data:")
    return b"\n".join(parts) + b"\n\n"


def comment(text: str = "keep-alive") -> bytes:
    return b": " + text.encode() + b"\n\n"
