import pytest


@pytest.fixture(scope="session")
def httpserver_listen_address():
    # An address, not "localhost": the guard judges every address a name resolves to.
    return ("127.0.0.1", 0)


@pytest.fixture
def allow_loopback(settings):
    """The deployment allow-list that lets these tests reach their own loopback servers."""
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def closed_allow_list(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []


@pytest.fixture
def fake_dns(monkeypatch):
    """Names resolved from a table (a list per name, or a list of answers per lookup)."""
    from servers.outbound import resolver

    real = resolver.resolve
    table: dict[str, list] = {}
    lookups: list[str] = []

    async def resolve(host, port):
        lookups.append(host)
        if host not in table:
            return await real(host, port)
        answer = table[host]
        if answer and isinstance(answer[0], list):  # a sequence of answers, one per lookup
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        return [resolver.parse_ip_literal(a) for a in answer]

    monkeypatch.setattr(resolver, "resolve", resolve)
    table_obj = type("FakeDns", (), {"table": table, "lookups": lookups})()
    return table_obj
