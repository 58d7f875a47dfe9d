"""Celery tasks keeping upstream tool lists fresh: on a schedule, and when an upstream says its
list changed (sync.schedule_refresh)."""

import logging

from celery import shared_task

import getmcp.celery  # noqa: F401 - the configured app must be current before anything is queued

from ..models import Server

logger = logging.getLogger(__name__)


@shared_task(name="servers.upstream.tasks.refresh_upstream_tools", ignore_result=True)
def refresh_upstream_tools(server_id: int) -> list[dict]:
    from .sync import refresh_server_id

    return refresh_server_id(server_id)


@shared_task(name="servers.upstream.tasks.refresh_all_upstreams", ignore_result=True)
def refresh_all_upstreams() -> int:
    """Refresh every server that has upstream tools; returns how many servers it looked at."""
    from .sync import refresh_server

    servers = Server.objects.filter(tools__kind="upstream").exclude(status=Server.DRAFT).distinct()
    count = 0
    for server in servers.iterator():
        count += 1
        try:
            refresh_server(server)
        except Exception:  # one broken server must not stop the others' refresh
            logger.exception("Refreshing the upstream tools of %s failed", server.slug)
    return count
