from datetime import UTC, datetime, timedelta

import orjson
import pytest

from activity import recorder, stream
from activity.models import CallLog
from infra.redis import sync_client
from servers.models import Server


@pytest.fixture
def call_queue():
    """The Redis stream of this test run's DB, empty before and after the test."""
    client = sync_client()
    recorder.flush()
    client.delete(stream.STREAM_KEY)
    yield client
    recorder.flush()
    client.delete(stream.STREAM_KEY)


def queued(client) -> list[dict]:
    """The rows waiting in the call-log stream, oldest first, as the recorder wrote them."""
    return [orjson.loads(f[stream.FIELD]) for _id, f in client.xrange(stream.STREAM_KEY)]


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="weather", name="weather")


@pytest.fixture
def other_server(org):
    return Server.objects.create(organization=org, slug="files", name="files")


@pytest.fixture
def now():
    return datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def make_call(now):
    def make(server, minutes_ago=0, **fields):
        fields.setdefault("method", "tools/call")
        fields.setdefault("tool", "forecast")
        return CallLog.objects.create(
            organization_id=server.organization_id,
            server=server,
            server_slug=server.slug,
            at=now - timedelta(minutes=minutes_ago),
            **fields,
        )

    return make
