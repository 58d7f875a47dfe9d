"""Where an imported document comes from: a dict, pasted text, a file, or a URL.

URLs are fetched through the SSRF-guarded client, so an import can never be used to read the
platform's own network.
"""

from pathlib import Path

from servers import documents

from .preview import ImportFailed

MAX_DOCUMENT_BYTES = 10 * 1024 * 1024


def is_url(text: str) -> bool:
    return text.strip().lower().startswith(("http://", "https://")) and "\n" not in text.strip()


def parse_text(text: str | bytes, label: str = "document") -> dict:
    if isinstance(text, bytes):
        if len(text) > MAX_DOCUMENT_BYTES:
            raise ImportFailed(f"{label}: larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
        text = text.decode("utf-8-sig", errors="replace")
    if len(text) > MAX_DOCUMENT_BYTES:
        raise ImportFailed(f"{label}: larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
    stripped = text.lstrip()
    if not stripped:
        raise ImportFailed(f"{label}: empty")
    try:
        if stripped[0] in "{[":
            data = documents.load_json(stripped, unique_keys=False)
        else:
            data = documents.load_yaml(stripped, unique_keys=False)
    except documents.DocumentError as exc:
        kind = "JSON" if stripped[0] in "{[" else "YAML or JSON"
        raise ImportFailed(f"{exc.where(label)}: not valid {kind} ({exc.problem})") from None
    if not isinstance(data, dict):
        raise ImportFailed(f"{label}: must be a JSON or YAML mapping at the top level")
    return data


def read_file(path) -> dict:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot be read ({exc.strerror})") from None
    return parse_text(raw, str(path))


def fetch_url(url: str, organization_id: int | None = None, timeout: float = 20.0) -> dict:
    """The document at `url`, fetched through the SSRF guard (the organization's allowances
    apply when `organization_id` is given)."""
    from servers.outbound import OutboundError, guarded_request_sync

    try:
        response = guarded_request_sync(
            "GET",
            url,
            organization_id=organization_id,
            headers={"Accept": "application/json, application/yaml;q=0.9, */*;q=0.5"},
            timeout=timeout,
            max_bytes=MAX_DOCUMENT_BYTES,
        )
    except OutboundError as exc:
        raise ImportFailed(f"url: {exc.message}") from None
    if response.status_code >= 400:
        raise ImportFailed(f"url: {url} answered HTTP {response.status_code}")
    if response.truncated:
        raise ImportFailed(
            f"url: the document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB"
        )
    return parse_text(response.content, url)


def load(source, organization_id: int | None = None) -> tuple[dict, str | None]:
    """(document, the URL it came from or None) for a dict, a URL, a path or pasted text."""
    if isinstance(source, dict):
        return source, None
    if isinstance(source, Path):
        return read_file(source), None
    if isinstance(source, bytes):
        return parse_text(source), None
    if isinstance(source, str):
        if is_url(source):
            return fetch_url(source.strip(), organization_id), source.strip()
        return parse_text(source), None
    raise ImportFailed("document: expected a mapping, text, a path or a URL")
