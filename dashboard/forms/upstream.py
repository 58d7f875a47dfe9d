"""Which upstream MCP server to add tools from: its URL, transport and headers."""

from django import forms

from servers.upstream.target import DEFAULT_TRANSPORT

from .structured import StructuredField

TRANSPORTS = [(DEFAULT_TRANSPORT, "Streamable HTTP"), ("sse", "SSE (legacy)")]


class UpstreamForm(forms.Form):
    url = forms.CharField(
        label="Upstream URL",
        max_length=2000,
        widget=forms.URLInput(attrs={"placeholder": "https://mcp.example.com/mcp"}),
        help_text="Reached from our servers; private and internal addresses are refused.",
    )
    transport = forms.ChoiceField(choices=TRANSPORTS, initial=DEFAULT_TRANSPORT, required=False)
    headers = StructuredField(
        empty={},
        rows=3,
        allow_yaml=False,
        help_text="Optional, a JSON object. Values may name secrets (set on the Secrets page): "
        '{"Authorization": "Bearer {{ secrets.UPSTREAM_TOKEN }}"}.',
    )

    def connection(self) -> dict:
        data = self.cleaned_data
        return {
            "url": data["url"].strip(),
            "transport": data["transport"] or DEFAULT_TRANSPORT,
            "headers": data["headers"],
        }
