"""Tool embeddings for discovery's hybrid search: computed when a server is published or its
tools change, stored by text digest (ToolEmbedding), and read with the compiled snapshot.

Off the request path: a publish, a tool edit or an upstream refresh commits, then
(embedding_jobs.py) `tasks.embed_server_tools` runs on a Celery worker (inline, after the
commit, in embedded mode where Celery is eager). It embeds only the tools whose text has no
vector yet (so republishing an unchanged server computes nothing, and loads no model), and only
for servers whose discovery is on: a small server never lists meta-tools and is never searched.
When it stored something it bumps the server's generation, so every process reloads the snapshot
with the new vectors; until then the new tools are found by their words.

A snapshot load reads the vectors in one query, by digest (servers/snapshot.py); a serving
process never computes a tool's vector.
"""

from collections.abc import Iterable, Mapping

import numpy as np

from .discovery import embedding
from .discovery.config import discovery_active
from .discovery.vectors import NO_VECTORS, ToolVectors, embed_documents, tool_document
from .models import Server, ToolEmbedding
from .outages import best_effort


def _digests(tool_list: Iterable[Mapping]) -> dict[str, tuple[str, str]]:
    """name -> (digest, document) of each tool (vectors.tool_document)."""
    out = {}
    for wire in tool_list:
        text = tool_document(wire)
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
    if not discovery_active(snapshot):
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
    # The model is loaded only when something is missing: a repeated job costs one query.
    if not missing or not embedding.available():
        return 0
    digests = sorted(missing)
    vectors = embed_documents([missing[d] for d in digests])
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
    from .compiled.compile import compile_definition
    from .compiled.snapshot import DefinitionError
    from .publishing import definition_to_serve

    server = Server.objects.filter(pk=server_id).first()
    if server is None:
        return 0
    definition = definition_to_serve(server)
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
    if not discovery_active(snapshot):
        return 0  # never searched: nothing to compute
    new = embed_tool_list(snapshot.tool_list)
    if new:
        best_effort(changes.bump_server, server.slug)
    return new
