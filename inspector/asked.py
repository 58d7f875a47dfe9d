"""What the server asked the client while answering a request, for an inspector event's summary:
the requests it sent on the call's stream (2025-11-25 sessions) or the `inputRequests` of an
`input_required` result (2026-07-28). A URL elicitation, as a connected account's first call
sends (connections/need.py), shows its message and the getmcp link the person is asked to open;
the link carries no token (tokens never leave getmcp), and the event is masked as a whole after.
"""

# The params of an elicitation a summary shows; the requested schema and the rest stay in the body.
SHOWN_ELICITATION = ("mode", "message", "url", "elicitationId")


def asked_of(response_body) -> list[dict]:
    requests: list = []
    if isinstance(response_body, list):
        requests = [m for m in response_body if isinstance(m, dict) and "method" in m and "id" in m]
        results = [m.get("result") for m in response_body if isinstance(m, dict)]
    elif isinstance(response_body, dict):
        results = [response_body.get("result")]
    else:
        return []
    for result in results:
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            inputs = result.get("inputRequests")
            if isinstance(inputs, dict):
                requests.extend(r for r in inputs.values() if isinstance(r, dict))
    return [_summary(request) for request in requests[:10]]


def _summary(request: dict) -> dict:
    method = str(request.get("method", ""))[:100]
    params = request.get("params")
    shown: dict = {"method": method}
    if method == "elicitation/create" and isinstance(params, dict):
        shown["mode"] = "form"  # the spec's default when a request names no mode
        shown.update(
            {name: str(params[name])[:2000] for name in SHOWN_ELICITATION if name in params}
        )
    return shown
