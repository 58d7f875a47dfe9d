"""What an upstream failure tells the user: masked through vault.masking, the one masker."""

from mcp.shared.exceptions import MCPError

from servers.upstream.connection import Upstream, describe

SECRET = "s3cret/token+with=chars"


def upstream() -> Upstream:
    return Upstream(url="https://upstream.example/mcp", secret_values=(SECRET,))


def refused_with(text: str) -> MCPError:
    return MCPError(-32600, text)


def test_a_secret_in_the_upstreams_reason_is_masked():
    reason = describe(refused_with(f"bad token {SECRET}"), upstream())
    assert SECRET not in reason and "***" in reason


def test_a_url_encoded_secret_in_the_upstreams_reason_is_masked_too():
    echoed = "https://upstream.example/mcp?token=s3cret%2Ftoken%2Bwith%3Dchars"
    reason = describe(refused_with(f"no such url {echoed}"), upstream())
    assert "s3cret" not in reason.lower()
    assert reason == "it refused the session (no such url https://upstream.example/mcp?token=***)"
