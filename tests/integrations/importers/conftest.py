from pathlib import Path

import pytest

from servers.models import Server

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def data():
    return DATA


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="imports", name="imports")


@pytest.fixture
def loopback_allowed(settings):
    """pytest-httpserver listens on loopback, which the SSRF guard refuses unless opened."""
    settings.OUTBOUND_ALLOWED_NETWORKS = "127.0.0.0/8,::1/128"
