"""The guarded client against real HTTP servers on loopback: what the allow-list opens, what stays
refused, redirects, pinning against DNS rebinding, size caps and timeouts."""

import time

import pytest
from asgiref.sync import async_to_sync
from werkzeug import Response

from servers.outbound import (
    BlockedDestination,
    OutboundError,
    guarded_client,
    guarded_request,
    guarded_request_sync,
)
from tests.waiting import wait_until


async def test_loopback_is_refused_without_the_allow_list(httpserver, closed_allow_list):
    httpserver.expect_request("/").respond_with_data("secret internal page")
    with pytest.raises(BlockedDestination, match="loopback"):
        await guarded_request("GET", httpserver.url_for("/"))
    assert httpserver.log == []


async def test_the_deployment_allow_list_opens_loopback(httpserver, allow_loopback):
    httpserver.expect_request("/hello").respond_with_data("hi", content_type="text/plain")
    response = await guarded_request("GET", httpserver.url_for("/hello"))
    assert response.status_code == 200
    assert response.text == "hi"
    assert response.connected_to == [("127.0.0.1", "127.0.0.1")]


def test_the_allow_list_comes_from_the_environment_as_comma_separated_cidrs(settings):
    from getmcp.environment import Environment
    from servers.outbound.resolver import deployment_networks

    environ = {"OUTBOUND_ALLOWED_NETWORKS": "10.0.0.0/8, 192.168.0.0/16"}
    settings.OUTBOUND_ALLOWED_NETWORKS = Environment(environ).OUTBOUND_ALLOWED_NETWORKS
    assert [str(n) for n in deployment_networks()] == ["10.0.0.0/8", "192.168.0.0/16"]


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",
        "0x7f.0.0.1",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "localhost",
        "[::1]",
        "0.0.0.0",
    ],
)
async def test_odd_notations_of_loopback_are_refused(httpserver, closed_allow_list, host):
    httpserver.expect_request("/").respond_with_data("internal")
    url = f"http://{host}:{httpserver.port}/"
    with pytest.raises((BlockedDestination, OutboundError)) as caught:
        await guarded_request("GET", url)
    assert isinstance(caught.value, BlockedDestination) or "not valid" in caught.value.message
    assert httpserver.log == []


@pytest.mark.parametrize("host", ["2130706433", "0x7f.0.0.1", "127.1"])
async def test_odd_notations_reach_the_address_they_denote(httpserver, allow_loopback, host):
    httpserver.expect_request("/").respond_with_data("ok")
    response = await guarded_request("GET", f"http://{host}:{httpserver.port}/")
    assert response.text == "ok"
    assert response.connected_to[0][1] == "127.0.0.1"


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://0xa9fea9fe/",
    ],
)
async def test_cloud_metadata_is_refused_even_when_everything_is_allowed(settings, url):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["0.0.0.0/0", "::/0"]
    with pytest.raises(BlockedDestination, match="metadata"):
        await guarded_request("GET", url, timeout=2)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/", "gopher://x/"])
async def test_only_http_and_https_are_fetched(url):
    with pytest.raises(BlockedDestination, match="Only http and https"):
        await guarded_request("GET", url)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (["10.0.0.7"], "private"),
        (["100.64.3.2"], "carrier-grade NAT"),
        (["93.184.216.34", "192.168.1.10"], "private"),
        (["fe80::1"], "link-local"),
        (["169.254.169.254"], "metadata"),
    ],
)
async def test_a_name_that_resolves_to_a_forbidden_address_is_refused(
    fake_dns, closed_allow_list, answer, reason
):
    fake_dns.table["internal.example.test"] = answer
    with pytest.raises(BlockedDestination, match=reason):
        await guarded_request("GET", "http://internal.example.test/")


async def test_the_connection_is_pinned_to_the_checked_address_and_keeps_the_name(
    httpserver, fake_dns, allow_loopback
):
    fake_dns.table["api.example.test"] = ["127.0.0.1"]
    httpserver.expect_request("/v1").respond_with_data("pinned")
    response = await guarded_request("GET", f"http://api.example.test:{httpserver.port}/v1")
    assert response.text == "pinned"
    request, _ = httpserver.log[0]
    assert request.headers["Host"] == f"api.example.test:{httpserver.port}"
    assert fake_dns.lookups == ["api.example.test"]
    assert response.connected_to == [("api.example.test", "127.0.0.1")]


async def test_a_rebinding_name_is_resolved_once_so_the_checked_answer_is_the_one_used(
    httpserver, fake_dns, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    # First answer allowed, every later answer forbidden: a second lookup would be refused.
    fake_dns.table["rebind.example.test"] = [["127.0.0.1"], ["10.0.0.1"]]
    httpserver.expect_request("/").respond_with_data("first answer")
    response = await guarded_request("GET", f"http://rebind.example.test:{httpserver.port}/")
    assert response.text == "first answer"
    assert fake_dns.lookups == ["rebind.example.test"]


async def test_a_rebinding_name_whose_checked_answer_is_private_never_connects(
    httpserver, fake_dns, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    fake_dns.table["rebind.example.test"] = [["10.0.0.1"], ["127.0.0.1"]]
    with pytest.raises(BlockedDestination, match="private"):
        await guarded_request("GET", f"http://rebind.example.test:{httpserver.port}/")
    assert httpserver.log == []


async def test_a_redirect_to_cloud_metadata_is_refused(httpserver, allow_loopback):
    httpserver.expect_request("/r").respond_with_data(
        "", status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}
    )
    with pytest.raises(BlockedDestination, match="metadata"):
        await guarded_request("GET", httpserver.url_for("/r"))


async def test_every_redirect_is_checked_against_the_allow_list(httpserver, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    other = f"http://127.0.0.2:{httpserver.port}/inside"
    httpserver.expect_request("/r").respond_with_data("", status=307, headers={"Location": other})
    with pytest.raises(BlockedDestination, match=r"127\.0\.0\.2.*loopback"):
        await guarded_request("GET", httpserver.url_for("/r"))


async def test_a_redirect_through_a_name_is_resolved_and_checked_again(
    httpserver, fake_dns, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    fake_dns.table["sneaky.example.test"] = ["192.168.0.1"]
    httpserver.expect_request("/r").respond_with_data(
        "", status=301, headers={"Location": "http://sneaky.example.test/admin"}
    )
    with pytest.raises(BlockedDestination, match="private"):
        await guarded_request("GET", httpserver.url_for("/r"))
    assert fake_dns.lookups.count("sneaky.example.test") == 1


async def test_allowed_redirects_are_followed_and_reported(httpserver, allow_loopback):
    httpserver.expect_request("/a").respond_with_data("", status=302, headers={"Location": "/b"})
    httpserver.expect_request("/b").respond_with_data("landed")
    response = await guarded_request("GET", httpserver.url_for("/a"))
    assert response.text == "landed"
    assert response.redirects == [httpserver.url_for("/b")]
    assert response.url == httpserver.url_for("/b")


async def test_redirects_are_not_followed_when_asked_not_to(httpserver, allow_loopback):
    httpserver.expect_request("/a").respond_with_data("", status=302, headers={"Location": "/b"})
    response = await guarded_request("GET", httpserver.url_for("/a"), follow_redirects=False)
    assert response.status_code == 302


async def test_a_redirect_loop_ends_with_a_clear_error(httpserver, allow_loopback):
    httpserver.expect_request("/loop").respond_with_data(
        "", status=302, headers={"Location": "/loop"}
    )
    with pytest.raises(OutboundError, match="redirected too many times"):
        await guarded_request("GET", httpserver.url_for("/loop"))


async def test_credentials_are_not_carried_to_another_origin(httpserver, fake_dns, allow_loopback):
    fake_dns.table["elsewhere.example.test"] = ["127.0.0.1"]
    target = f"http://elsewhere.example.test:{httpserver.port}/landing"
    httpserver.expect_request("/start").respond_with_data(
        "", status=302, headers={"Location": target}
    )
    httpserver.expect_request("/landing").respond_with_data("ok")
    await guarded_request(
        "GET",
        httpserver.url_for("/start"),
        headers={"Authorization": "Bearer s3cr3t", "X-Api-Key": "k3y", "Accept": "text/plain"},
    )
    first, _ = httpserver.log[0]
    second, _ = httpserver.log[1]
    assert first.headers["Authorization"] == "Bearer s3cr3t"
    assert "Authorization" not in second.headers
    assert "X-Api-Key" not in second.headers
    assert second.headers["Accept"] == "text/plain"


async def test_the_body_is_cut_at_the_size_cap(httpserver, allow_loopback):
    httpserver.expect_request("/big").respond_with_data("x" * 10_000)
    response = await guarded_request("GET", httpserver.url_for("/big"), max_bytes=1000)
    assert response.truncated
    assert len(response.content) == 1000
    small = await guarded_request("GET", httpserver.url_for("/big"), max_bytes=10_000)
    assert not small.truncated


async def test_a_slow_upstream_times_out_with_a_clear_error(httpserver, allow_loopback):
    def slow(request):
        time.sleep(1.5)  # deliberate: a slow upstream is the subject
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    started = time.perf_counter()
    with pytest.raises(OutboundError, match="timed out after 0.3 seconds"):
        await guarded_request("GET", httpserver.url_for("/slow"), timeout=0.3)
    assert time.perf_counter() - started < 1.2
    # The late request must finish before the next test (it would land in that test's log).
    wait_until(lambda: httpserver.log, timeout=5, what="the late request to finish")


async def test_an_unresolvable_name_is_a_clear_error(closed_allow_list):
    with pytest.raises(OutboundError, match="could not be resolved"):
        await guarded_request("GET", "http://no-such-host.invalid/")


async def test_the_streaming_client_is_guarded_too(httpserver, closed_allow_list):
    httpserver.expect_request("/").respond_with_data("x")
    async with guarded_client() as client:
        with pytest.raises(BlockedDestination):
            await client.get(httpserver.url_for("/"))


async def test_the_streaming_client_checks_redirects_it_follows(httpserver, allow_loopback):
    httpserver.expect_request("/r").respond_with_data(
        "", status=302, headers={"Location": "http://10.0.0.1/"}
    )
    async with guarded_client(follow_redirects=True) as client:
        with pytest.raises(BlockedDestination, match="private"):
            await client.get(httpserver.url_for("/r"))


def test_the_sync_variant_is_guarded_the_same_way(httpserver, closed_allow_list):
    with pytest.raises(BlockedDestination):
        guarded_request_sync("GET", httpserver.url_for("/"))


def test_an_organization_allowance_opens_a_range_for_that_organization_only(
    httpserver, closed_allow_list, org, outsider_org
):
    from vault.models import NetworkAllowance

    NetworkAllowance.objects.create(organization=org, cidr="127.0.0.0/8", note="self-hosted")
    httpserver.expect_request("/").respond_with_data("for org")
    response = guarded_request_sync("GET", httpserver.url_for("/"), organization_id=org.pk)
    assert response.text == "for org"
    with pytest.raises(BlockedDestination):
        guarded_request_sync("GET", httpserver.url_for("/"), organization_id=outsider_org.pk)
    with pytest.raises(BlockedDestination):
        async_to_sync(guarded_request)("GET", httpserver.url_for("/"))


def test_a_removed_organization_allowance_stops_applying_to_a_long_lived_client(
    httpserver, closed_allow_list, org, monkeypatch
):
    from asgiref.sync import sync_to_async

    from servers.outbound import transport
    from vault.models import NetworkAllowance

    monkeypatch.setattr(transport, "ALLOW_LIST_SECONDS", 0.0)
    allowance = NetworkAllowance.objects.create(organization=org, cidr="127.0.0.1/32")
    httpserver.expect_request("/").respond_with_data("ok")

    async def before_and_after():
        first = await guarded_request("GET", httpserver.url_for("/"), organization_id=org.pk)
        await sync_to_async(allowance.delete)()
        try:
            await guarded_request("GET", httpserver.url_for("/"), organization_id=org.pk)
        except BlockedDestination as exc:
            return first, exc
        return first, None

    first, refused = async_to_sync(before_and_after)()
    assert first.text == "ok"
    assert isinstance(refused, BlockedDestination)


async def test_a_closed_port_is_a_clear_error(allow_loopback):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(OutboundError, match="could not connect to the server"):
        await guarded_request("GET", f"http://127.0.0.1:{port}/")


def test_a_malformed_deployment_allow_list_is_a_configuration_error(settings):
    from django.core.exceptions import ImproperlyConfigured

    from servers.outbound.resolver import deployment_networks

    settings.OUTBOUND_ALLOWED_NETWORKS = ["10.0.0.0/8", "not-a-network"]
    with pytest.raises(ImproperlyConfigured, match="OUTBOUND_ALLOWED_NETWORKS"):
        deployment_networks()
