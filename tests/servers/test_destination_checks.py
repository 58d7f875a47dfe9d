"""Save-time warnings for tools whose fixed URL the outbound guard will refuse."""

import pytest

from servers.destination_checks import definition_warnings, refusal_warnings, tool_warnings
from servers.outbound.addresses import parse_networks


def http_tool(url: str, kind: str = "http") -> dict:
    return {"name": "t", "kind": kind, "config": {"method": "GET", "url": url}}


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://127.0.0.1:8080/x", "127.0.0.1 is a loopback address"),
        ("http://localhost:3000/mcp", "localhost (127.0.0.1) is a loopback address"),
        ("http://[::1]/x", "::1 is a loopback address"),
        ("https://10.0.0.7/api", "10.0.0.7 is a private address"),
        ("http://0x7f.1/x", "0x7f.1 (127.0.0.1) is a loopback address"),
    ],
)
def test_a_tool_url_on_loopback_or_a_private_network_is_warned_about(url, shown):
    (warning,) = refusal_warnings(http_tool(url))
    assert warning.startswith(f"config.url: {shown}, so calls of this tool will be refused.")
    assert "OUTBOUND_ALLOWED_NETWORKS" in warning and "restart" in warning


@pytest.mark.parametrize(
    "url",
    ["https://api.example.com/x", "http://{{ host }}/x", "/relative/without/base", "{{ url }}"],
)
def test_public_names_and_hosts_from_arguments_are_judged_when_called_not_at_save(url):
    assert refusal_warnings(http_tool(url)) == []


def test_a_path_under_a_private_base_url_is_warned_about_with_the_full_url():
    (warning,) = refusal_warnings(
        http_tool("/users"), server_http={"baseUrl": "http://192.168.1.9:8000/api"}
    )
    assert warning.startswith("config.url: 192.168.1.9 is a private address")


def test_upstream_tools_and_workflow_http_steps_are_checked_too():
    assert refusal_warnings(http_tool("http://127.0.0.1:9000/mcp", kind="upstream"))
    workflow = {
        "kind": "workflow",
        "config": {"steps": [{"log": {"message": "x"}}, {"http": {"url": "http://10.1.1.1/"}}]},
    }
    (warning,) = refusal_warnings(workflow)
    assert warning.startswith("config.steps[1].http.url: 10.1.1.1 is a private address")


def test_an_allowed_network_silences_the_warning():
    tool = http_tool("http://10.0.0.7/api")
    assert refusal_warnings(tool, networks=parse_networks(["10.0.0.0/8"])) == []


def test_cloud_metadata_is_warned_about_without_a_way_round_it():
    (warning,) = refusal_warnings(http_tool("http://169.254.169.254/latest"))
    assert "cloud metadata" in warning and "OUTBOUND_ALLOWED_NETWORKS" not in warning


@pytest.mark.django_db
def test_a_saved_tool_is_judged_with_the_deployment_and_organization_allow_lists(settings, org):
    from servers.models import Server
    from vault.models import NetworkAllowance

    server = Server.objects.create(organization=org, slug="local-checks", name="local")
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    assert tool_warnings(http_tool("http://127.0.0.1:9/x"), server)
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    assert tool_warnings(http_tool("http://127.0.0.1:9/x"), server) == []
    assert tool_warnings(http_tool("http://172.16.0.4/x"), server)
    NetworkAllowance.objects.create(organization=server.organization, cidr="172.16.0.0/12")
    assert tool_warnings(http_tool("http://172.16.0.4/x"), server) == []


def test_a_whole_definition_names_each_tool_with_a_warning(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    definition = {
        "http": {"baseUrl": "http://localhost:8080"},
        "tools": [http_tool("https://api.example.com/"), {**http_tool("/a"), "name": "local"}],
    }
    (warning,) = definition_warnings(definition, None)
    assert warning.startswith("tools[1] (local).config.url: localhost (127.0.0.1) is a loopback")
