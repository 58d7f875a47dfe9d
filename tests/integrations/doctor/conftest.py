import pytest

from tests.conftest import LiveServer


@pytest.fixture(scope="session")
def doctor_live(live_database):
    """A live server that is its own SITE_URL (the doctor calls SITE_URL/mcp/<slug>)."""
    server = LiveServer(
        live_database, own_site_url=True, extra_env={"DOCTOR_ALLOW_PRIVATE_SITE": "1"}
    )
    yield server
    server.stop()


@pytest.fixture
def doctor_settings(settings, doctor_live):
    """This process runs the doctor against the live server, admitted on loopback by the
    explicit setting (tests only)."""
    settings.SITE_URL = doctor_live.url
    settings.DOCTOR_ALLOW_PRIVATE_SITE = True
    settings.DOCTOR_SSE_WAIT_SECONDS = 3
    return settings
