"""When tool embeddings are computed: after the commit of a publish or of a tool change, as
the Celery job `tasks.embed_server_tools` (servers/embeddings.py says what it does)."""

import logging

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from .models import ServerVersion, Tool
from .tasks import embed_server_tools

log = logging.getLogger(__name__)


def _schedule(server_id: int) -> None:
    try:
        embed_server_tools.delay(server_id)
    except Exception:  # a broker outage must not fail the publish; the next change retries
        log.warning("could not queue the tool embeddings of server %s", server_id, exc_info=True)


def _changed(sender, instance, using: str = "default", **kwargs) -> None:
    """Schedule once per transaction and server, however many of its tools it saves (an
    import of 300 operations queues one job, not 300)."""
    server_id = instance.server_id
    connection = transaction.get_connection(using)
    pending = connection.__dict__.setdefault("_embedding_jobs", {})
    queued = pending.get(server_id)
    if queued is not None and any(entry[1] is queued for entry in connection.run_on_commit):
        return

    def queue() -> None:
        pending.pop(server_id, None)
        _schedule(server_id)

    pending[server_id] = queue
    transaction.on_commit(queue, using=using)


# A published version, and a draft tool (what an unpublished server serves, and what an
# upstream refresh changes), schedule the server's embeddings once their change commits.
for _model in (ServerVersion, Tool):
    post_save.connect(_changed, sender=_model, dispatch_uid=f"embed-{_model.__name__}")
post_delete.connect(_changed, sender=Tool, dispatch_uid="embed-deleted-Tool")
