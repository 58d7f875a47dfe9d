import pytest

from servers.snapshot import compile_definition

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/number"}, "b": {"$ref": "#/$defs/number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
    "$defs": {"number": {"type": "number", "minimum": -1e9, "maximum": 1e9}},
}


def calculator_definition(**changes):
    data = {
        "slug": "calc",
        "name": "my-calculator",
        "title": "Calculator <b>&</b> friends",
        "version": "2.1.0",
        "auth": "none",
        "instructions": "Use <script>alert(1)</script> carefully.",
        "tools": [
            {
                "name": "add",
                "title": "Add",
                "description": "Add two numbers together.",
                "inputSchema": ADD_SCHEMA,
                "outputSchema": {
                    "type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "required": ["sum"],
                },
                "config": {
                    "content": [{"type": "text", "text": "{{ a + b }}"}],
                    "structuredContent": {"sum": "{{ a + b }}"},
                },
            },
            {
                "name": "files/echo",
                "description": "Echo <i>a</i> message.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"message": {"type": "string", "maxLength": 50}},
                    "required": ["message"],
                },
                "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
            },
        ],
        "resources": [{"uri": "test://readme", "name": "readme", "text": "hi"}],
        "prompts": [
            {
                "name": "plan",
                "description": "Plan.",
                "messages": [{"role": "user", "content": {"type": "text", "text": "Plan"}}],
            }
        ],
    }
    data.update(changes)
    return data


FAILING_TOOLS = [
    {
        "name": "divide",
        "description": "Divide.",
        "inputSchema": {"type": "object"},
        "kind": "workflow",
        "config": {"steps": [{"fail": {"message": "Cannot divide by zero"}}]},
    },
    {
        "name": "crash",
        "description": "A JSON-RPC error.",
        "inputSchema": {"type": "object"},
        "kind": "workflow",
        "config": {"steps": [{"fail": {"message": "upstream failed", "code": -32603}}]},
    },
    {
        "name": "ask",
        "description": "Needs an answer.",
        "inputSchema": {"type": "object"},
        "kind": "workflow",
        "config": {
            "steps": [
                {"elicit": {"message": "Name?", "requestedSchema": {"type": "object"}}},
                {"return": {"content": [{"type": "text", "text": "ok"}]}},
            ]
        },
    },
    {
        "name": "picture",
        "description": "An image.",
        "inputSchema": {"type": "object"},
        "config": {"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]},
    },
]


def make_snapshot(definition=None, **changes):
    return compile_definition(
        definition or calculator_definition(**changes),
        server_id=1,
        organization_id=1,
        generation="1",
    )


@pytest.fixture
def snapshot():
    return make_snapshot()


@pytest.fixture
def everything():
    definition = calculator_definition()
    definition["tools"] = definition["tools"] + FAILING_TOOLS
    return make_snapshot(definition)
