"""An event's summary of what the server asked the client: the requests on a call's stream, or
an `input_required` result's inputRequests; a URL elicitation shows its link and message."""

from inspector.asked import asked_of

URL_ELICITATION = {
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Connect Corp",
        "url": "https://getmcp.example/connections/connect/abc/",
        "elicitationId": "e-1",
    },
}


def test_a_request_on_the_call_s_stream_is_summarised_and_the_answer_is_not():
    stream = [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
        {"jsonrpc": "2.0", "id": "s-1", **URL_ELICITATION},
        {"jsonrpc": "2.0", "id": 3, "result": {"content": []}},
    ]
    assert asked_of(stream) == [{"method": "elicitation/create", **URL_ELICITATION["params"]}]


def test_an_input_required_result_s_requests_are_summarised():
    form = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {}}}
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                "corp": URL_ELICITATION,
                "name": form,
                "llm": {"method": "sampling/createMessage"},
            },
            "requestState": "sealed",
        },
    }
    assert asked_of(body) == [
        {"method": "elicitation/create", **URL_ELICITATION["params"]},
        {"method": "elicitation/create", "mode": "form", "message": "Name?"},
        {"method": "sampling/createMessage"},
    ]


def test_a_plain_answer_asked_nothing():
    assert asked_of({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}) == []
    assert asked_of(None) == []
