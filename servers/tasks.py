"""Scheduled upkeep of the servers app (Celery beat, or the embedded beat thread)."""

from celery import shared_task
from django.conf import settings

from . import invalidation


@shared_task(name="servers.tasks.prune_change_log")
def prune_change_log() -> int:
    """Change-log rows every process has long read (servers/invalidation.py)."""
    return invalidation.prune(settings.CHANGE_LOG_RETENTION_HOURS)


@shared_task(name="servers.tasks.embed_server_tools", ignore_result=True)
def embed_server_tools(server_id: int) -> int:
    """The embeddings of a server's tools for discovery search (servers/embeddings.py)."""
    from .embeddings import embed_server

    return embed_server(server_id)
