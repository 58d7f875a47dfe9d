"""How the doctor names the address SITE_URL leads to."""

from integrations.doctor.probe import SiteAddress
from servers.outbound.addresses import parse_ip_literal


def site(host: str, *addresses: str, why: str | None) -> SiteAddress:
    return SiteAddress(host, [parse_ip_literal(a) for a in addresses], why)


def test_an_address_written_as_one_is_not_named_twice():
    assert site("127.0.0.1", "127.0.0.1", why="a loopback address").described() == (
        "127.0.0.1 is a loopback address"
    )
    assert (
        site("[::1]", "::1", why="a loopback address").described() == "[::1] is a loopback address"
    )


def test_a_name_says_what_it_resolves_to():
    assert site("localhost", "127.0.0.1", "::1", why="a loopback address").described() == (
        "localhost resolves to 127.0.0.1, ::1, a loopback address"
    )
    assert site("mcp.example.com", "203.0.113.7", why=None).described() == (
        "mcp.example.com resolves to 203.0.113.7, a public address"
    )


def test_only_a_site_whose_every_address_is_loopback_is_local():
    assert site("localhost", "127.0.0.1", "::1", why="a loopback address").local
    assert not site("mixed", "127.0.0.1", "10.0.0.1", why="a loopback address").local
    assert not site("lan", "192.168.1.2", why="a private address").local
    assert not site("nowhere", why=None).local
