"""Celery tasks keeping upstream tool lists fresh: on a schedule, and when an upstream says its
list changed (schedule_refresh)."""

import asyncio
import logging

from celery import shared_task
from django.db import connections

import getmcp.celery  # noqa: F401 - the configured app must be current before anything is queued
from infra import keys
from infra.redis import sync_client

from ..models import Server
from .sync import refresh_server, refresh_server_id

logger = logging.getLogger(__name__)

REFRESH_DEBOUNCE_SECONDS = 10
_background: set = set()  # running refresh futures, kept so they are not collected mid-flight


@shared_task(name="servers.upstream.tasks.refresh_upstream_tools", ignore_result=True)
def refresh_upstream_tools(server_id: int) -> list[dict]:
    return refresh_server_id(server_id)


@shared_task(name="servers.upstream.tasks.refresh_all_upstreams", ignore_result=True)
def refresh_all_upstreams() -> int:
    """Refresh every server that has upstream tools; returns how many servers it looked at."""
    servers = Server.objects.filter(tools__kind="upstream").exclude(status=Server.DRAFT).distinct()
    count = 0
    for server in servers.iterator():
        count += 1
        try:
            refresh_server(server)
        except Exception:  # one broken server must not stop the others' refresh
            logger.exception("Refreshing the upstream tools of %s failed", server.slug)
    return count


def schedule_refresh(server_id: int | None) -> None:
    """Refresh a server's upstream tools soon (an upstream said its list changed). Debounced:
    a burst of notifications costs one refresh."""
    if server_id is None:
        return
    key = keys.upstream_refresh_scheduled(server_id)

    def enqueue() -> None:
        try:
            if not sync_client().set(key, 1, nx=True, ex=REFRESH_DEBOUNCE_SECONDS):
                return
            # Eager mode (no broker) runs the refresh right here.
            refresh_upstream_tools.delay(server_id)
        except Exception:
            logger.exception("Could not schedule an upstream refresh for server %s", server_id)

    def enqueue_in_thread() -> None:
        try:
            enqueue()
        finally:
            # An executor thread: its connections would otherwise stay open.
            connections.close_all()

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        enqueue()
        return
    future = loop.run_in_executor(None, enqueue_in_thread)
    _background.add(future)
    future.add_done_callback(_background.discard)
