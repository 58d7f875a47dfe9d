"""A deliberately small MCP-over-HTTP client for tests that need to see the wire exactly."""

import json

import httpx2

ACCEPT_BOTH = "application/json, text/event-stream"


def parse_sse(text: str) -> list[dict]:
    """Events as dicts with id, event, retry and data (data parsed as JSON when it is)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event = {"id": None, "data": None, "retry": None, "comment": False}
        data_lines = []
        for line in block.split("\n"):
            if line.startswith(":"):
                event["comment"] = True
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data_lines.append(value)
            elif field in ("id", "event", "retry"):
                event[field] = value
        if data_lines:
            raw = "\n".join(data_lines)
            try:
                event["data"] = json.loads(raw) if raw.strip() else ""
            except json.JSONDecodeError:
                event["data"] = raw  # e.g. the old transport's endpoint event
        events.append(event)
    return events


class RawMcp:
    def __init__(self, url: str, key: str | None = None, version: str = "2025-11-25"):
        self.url = url
        self.key = key
        self.version = version
        self.session_id = None
        self.http = httpx2.Client(timeout=30)
        self._next_id = 100

    def headers(self, **extra) -> dict:
        headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
        if self.key:
            headers["authorization"] = f"Bearer {self.key}"
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = self.version
        headers.update({k.replace("_", "-"): v for k, v in extra.items()})
        return headers

    def post(self, message, **headers) -> httpx2.Response:
        return self.http.post(
            self.url, content=json.dumps(message), headers=self.headers(**headers)
        )

    def initialize(self, capabilities=None, version=None) -> dict:
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version or self.version,
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "raw-test-client", "version": "0.1"},
                },
            }
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.version = response.json()["result"]["protocolVersion"]
        notified = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert notified.status_code == 202
        return response.json()["result"]

    def request(self, method: str, params=None, **headers) -> tuple[httpx2.Response, list[dict]]:
        """Send a request; returns the HTTP response and every JSON-RPC message it carried."""
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message, **headers)
        return response, messages_of(response)

    def call(self, method: str, params=None) -> dict:
        """The final JSON-RPC response of a request."""
        response, messages = self.request(method, params)
        assert response.status_code == 200, response.text
        return messages[-1]


def messages_of(response: httpx2.Response) -> list[dict]:
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        return [e["data"] for e in parse_sse(response.text) if isinstance(e["data"], dict)]
    if content_type.startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    return []
