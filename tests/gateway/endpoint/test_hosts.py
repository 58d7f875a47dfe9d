from gateway.endpoint import hosts


def test_a_host_is_judged_against_allowed_hosts_as_they_are_now(settings):
    settings.ALLOWED_HOSTS = ["mcp.example.com"]
    assert hosts.host_allowed("mcp.example.com:443")
    assert not hosts.host_allowed("evil.example.com")
    settings.ALLOWED_HOSTS = ["evil.example.com"]
    assert not hosts.host_allowed("mcp.example.com:443")
    assert hosts.host_allowed("evil.example.com")


def test_the_hosts_remembered_stay_bounded(settings):
    settings.ALLOWED_HOSTS = [".example.com"]
    for number in range(hosts.MAX_HOSTS_SEEN * 3):
        assert hosts.host_allowed(f"h{number}.example.com")
    assert hosts.host_allowed.cache_info().currsize <= hosts.MAX_HOSTS_SEEN
    assert not hosts.host_allowed("example.org")
