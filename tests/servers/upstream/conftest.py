import pytest

from servers.models import Server

from .fixtures import guarded_upstream, loopback_allowed, sse_upstream, upstream  # noqa: F401


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="relay", name="relay")


@pytest.fixture
def eager_celery():
    from getmcp.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before
