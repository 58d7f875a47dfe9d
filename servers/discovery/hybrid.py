"""Hybrid tool search: BM25 over words (search.py) and embeddings (vectors.py), fused and
ordered safely (ranking.py).

Built once per snapshot (or principal's view) on its first search and kept with it. The
semantic side is a matrix product of the query's vector with the tools' (384 floats each), a
fraction of a millisecond for a thousand tools; the query's vector is computed by the caller,
off the event loop (gateway/agents/retrieval.py). Tools without a vector yet are found by
their words alone.
"""

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from . import ranking
from .search import MAX_QUERY_CHARS, MAX_RESULTS, ToolIndex
from .vectors import NO_VECTORS, ToolVectors

# Each ranking contributes at most its best DEPTH tools: a tool ranked lower by both is no
# answer anyone reads, and the fusion stays bounded by 2 * DEPTH candidates.
DEPTH = 50
# Cosine similarity below which a tool is not a semantic match at all. A query with nothing to
# do with any tool ("zebra") then answers nothing rather than the least unrelated tools.
SEMANTIC_FLOOR = 0.2


def _hints(wire: Mapping) -> tuple[bool, bool]:
    annotations = wire.get("annotations")
    if not isinstance(annotations, Mapping):
        return False, False
    read_only = annotations.get("readOnlyHint") is True
    # The MCP default for destructiveHint is true, but only for tools that write: a tool that
    # says nothing is not called destructive here, or every unannotated tool would sink.
    destructive = not read_only and annotations.get("destructiveHint") is True
    return read_only, destructive


class HybridIndex:
    def __init__(self, tool_list: Sequence[Mapping], vectors: ToolVectors = NO_VECTORS) -> None:
        self.lexical = ToolIndex(tool_list)
        self.hints = {str(wire["name"]): _hints(wire) for wire in tool_list}
        self.vector_names, self.matrix = vectors.rows(self.hints)

    @property
    def semantic(self) -> bool:
        """Some tools have vectors: a query vector is worth computing."""
        return bool(self.vector_names)

    def search(
        self, query: str, limit: int = 5, query_vector: np.ndarray | None = None
    ) -> list[ranking.Candidate]:
        """The best `limit` tools for `query`, best first; `query_vector` None: words alone."""
        query = query[:MAX_QUERY_CHARS]
        limit = max(1, min(limit, MAX_RESULTS))
        lexical = self.lexical.search(query, DEPTH)
        semantic = self._semantic(query_vector)
        candidates = ranking.fuse(lexical, semantic, self.hints, ranking.intent(query))
        return candidates[:limit]

    def _semantic(self, query_vector: np.ndarray | None) -> list[tuple[str, float]]:
        if query_vector is None or not self.vector_names:
            return []
        similarities = self.matrix @ query_vector
        count = min(DEPTH, len(similarities))
        best = np.argpartition(-similarities, count - 1)[:count]
        # Ties on similarity: by name, so the order never depends on the definition's.
        found = sorted(
            ((self.vector_names[i], float(similarities[i])) for i in best),
            key=lambda pair: (-round(pair[1], 6), pair[0]),
        )
        return [(name, score) for name, score in found if score >= SEMANTIC_FLOOR]


class LazyIndex:
    """The index of one snapshot, built by the first search that needs it (a lock keeps two
    threads from building it twice); a snapshot that is never searched never pays for it."""

    __slots__ = ("_index", "_lock")

    def __init__(self) -> None:
        self._index: HybridIndex | None = None
        self._lock = threading.Lock()

    def get(self, tool_list, vectors: ToolVectors = NO_VECTORS) -> HybridIndex:
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = HybridIndex(tool_list, vectors)
                index = self._index
        return index
