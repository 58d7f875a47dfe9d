"""Tool embeddings for discovery's hybrid search: computed when a server is published or its
tools change, stored by text digest (ToolEmbedding), and read with the compiled snapshot.

Off the request path: a publish, a tool edit or an upstream refresh commits, then
`tasks.embed_server_tools` runs on a Celery worker (inline, after the commit, in embedded mode
where Celery is eager). It embeds only the tools whose text has no vector yet (so republishing
an unchanged server computes nothing), and only for servers whose discovery is on: a small
server never lists meta-tools and is never searched. When it stored something it bumps the
server's generation, so every process reloads the snapshot with the new vectors; until then
the new tools are found by their words.

A snapshot load reads the vectors in one query, by digest (servers/snapshot.py); a serving
process never computes a tool's vector.
"""

import logging
from collections.abc import Iterable, Mapping

import numpy as np
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from gateway.agents import discovery, embedding
from gateway.agents.vectors import NO_VECTORS, ToolVectors, tool_text

from .models import Server, ServerVersion, Tool, ToolEmbedding
from .outages import best_effort

log = logging.getLogger(__name__)


def _digests(tool_list: Iterable[Mapping]) -> dict[str, tuple[str, str]]:
    """name -> (digest, text) of each tool."""
    out = {}
    for wire in tool_list:
        text = tool_text(wire)
        out[str(wire["name"])] = (embedding.digest(text), text)
    return out


def stored_vectors(tool_list: Iterable[Mapping]) -> ToolVectors:
    """The stored vectors of these tools (one query); tools without one are left out."""
    wanted = _digests(tool_list)
    if not wanted:
        return NO_VECTORS
    rows = dict(
        ToolEmbedding.objects.filter(digest__in={d for d, _ in wanted.values()}).values_list(
            "digest", "vector"
        )
    )
    vectors = {}
    for name, (digest, _) in wanted.items():
        raw = rows.get(digest)
        if raw is not None and len(raw) == embedding.DIMENSIONS * 4:
            vectors[name] = np.frombuffer(bytes(raw), dtype="<f4")
    return ToolVectors(vectors) if vectors else NO_VECTORS


def vectors_for(snapshot) -> ToolVectors:
    """What a loaded snapshot carries: its tools' vectors when its discovery is on (only then
    is it searched), else none."""
    if not discovery.active(snapshot):
        return NO_VECTORS
    return stored_vectors(snapshot.tool_list)


def embed_tool_list(tool_list: Iterable[Mapping]) -> int:
    """Compute and store the vectors these tools lack; how many were new."""
    wanted = _digests(tool_list)
    known = set(
        ToolEmbedding.objects.filter(digest__in={d for d, _ in wanted.values()}).values_list(
            "digest", flat=True
        )
    )
    missing = {digest: text for digest, text in wanted.values() if digest not in known}
    if not missing:
        return 0
    digests = sorted(missing)
    vectors = embedding.embed([missing[d] for d in digests])
    ToolEmbedding.objects.bulk_create(
        [
            ToolEmbedding(digest=d, vector=v.astype("<f4").tobytes())
            for d, v in zip(digests, vectors, strict=True)
        ],
        ignore_conflicts=True,  # another worker embedding the same text: same vector
    )
    return len(digests)


def embed_server(server_id: int) -> int:
    """The vectors of what the server serves now (its latest version, or its draft while it
    has none); bumps its generation when any were new. Returns how many were new."""
    from . import changes
    from .snapshot import DefinitionError, compile_definition, definition_for

    server = Server.objects.filter(pk=server_id).first()
    if server is None:
        return 0
    definition = definition_for(server)
    if definition is None:
        return 0
    try:
        snapshot = compile_definition(
            definition,
            server_id=server.pk,
            organization_id=server.organization_id,
            generation="embedding",
        )
    except DefinitionError:
        return 0  # a definition that cannot be served is never searched either
    if not discovery.active(snapshot) or not embedding.available():
        return 0  # (the model is loaded only for a server that will be searched)
    new = embed_tool_list(snapshot.tool_list)
    if new:
        best_effort(changes.bump_server, server.slug)
    return new


def _schedule(server_id: int) -> None:
    from .tasks import embed_server_tools

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
