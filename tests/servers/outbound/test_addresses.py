import ipaddress

import pytest

from servers.outbound.addresses import (
    check_address,
    embedded_ipv4,
    parse_ip_literal,
    parse_networks,
    refusal_reason,
)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # decimal
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("0x7f.0.0.1", "127.0.0.1"),  # hex
        ("0x7f000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),  # short form: the last part fills the rest
        ("10.1", "10.0.0.1"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("fe80::1%eth0", "fe80::1"),
        ("8.8.8.8.", "8.8.8.8"),
    ],
)
def test_it_reads_every_notation_of_an_ip_literal(host, expected):
    assert parse_ip_literal(host) == ipaddress.ip_address(expected)


@pytest.mark.parametrize("host", ["example.com", "08.1.1.1", "0x", "1.2.3.4.5", "256.1.1.1", ""])
def test_it_leaves_names_and_invalid_numbers_to_the_resolver(host):
    assert parse_ip_literal(host) is None


# The SSRF matrix: every kind of address the guard must refuse, with the reason it gives.
REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.170.2", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"),
    ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("::ffff:10.0.0.1", "private"),
    ("::127.0.0.1", "loopback"),  # IPv4-compatible
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ("2002:a9fe:a9fe::1", "cloud metadata"),  # 6to4 of 169.254.169.254
    ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
    ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
    ("192.0.2.1", "private"),  # documentation
    ("198.18.0.1", "private"),  # benchmarking
    ("240.0.0.1", ""),  # reserved
    ("255.255.255.255", ""),  # broadcast
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_it_refuses_non_public_addresses(address, reason):
    found = refusal_reason(ipaddress.ip_address(address))
    assert found is not None
    assert reason in found


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "2002:808:808::1",
        "64:ff9b::808:808",
    ],
)
def test_it_lets_public_addresses_through(address):
    assert refusal_reason(ipaddress.ip_address(address)) is None


def test_embedded_ipv4_is_found_in_each_transition_form():
    assert str(embedded_ipv4(ipaddress.ip_address("::ffff:1.2.3.4"))) == "1.2.3.4"
    assert str(embedded_ipv4(ipaddress.ip_address("2002:102:304::"))) == "1.2.3.4"
    assert str(embedded_ipv4(ipaddress.ip_address("64:ff9b::102:304"))) == "1.2.3.4"
    assert str(embedded_ipv4(ipaddress.ip_address("::1.2.3.4"))) == "1.2.3.4"
    assert embedded_ipv4(ipaddress.ip_address("2606:4700::1")) is None
    assert embedded_ipv4(ipaddress.ip_address("::1")) is None  # loopback, not ::0.0.0.1


def test_an_allow_list_admits_the_ranges_it_names_and_nothing_else():
    allowed = parse_networks(["10.1.0.0/16", "fd00:1::/32"])
    assert check_address(ipaddress.ip_address("10.1.2.3"), allowed) is None
    assert check_address(ipaddress.ip_address("fd00:1::5"), allowed) is None
    assert check_address(ipaddress.ip_address("::ffff:10.1.2.3"), allowed) is None
    assert "private" in check_address(ipaddress.ip_address("10.2.0.1"), allowed)
    assert "loopback" in check_address(ipaddress.ip_address("127.0.0.1"), allowed)


def test_no_allow_list_opens_cloud_metadata():
    allowed = parse_networks(["169.254.0.0/16", "0.0.0.0/0", "::/0"])
    assert check_address(ipaddress.ip_address("169.254.1.1"), allowed) is None
    assert "metadata" in check_address(ipaddress.ip_address("169.254.169.254"), allowed)
    assert "metadata" in check_address(ipaddress.ip_address("::ffff:169.254.169.254"), allowed)
    assert "metadata" in check_address(ipaddress.ip_address("fd00:ec2::254"), allowed)


def test_a_bad_allow_list_entry_is_an_error():
    with pytest.raises(ValueError):
        parse_networks(["10.0.0.0/33"])
