"""A discovery search as the endpoint runs it: the query's embedding off the event loop, then
the snapshot's hybrid index.

The query's vector takes a few milliseconds of CPU (more on a busy machine, and about half a
second the first time a process loads the model), so it runs on one dedicated thread, never the
event loop: onnxruntime releases the GIL while it computes, and other requests go on. One thread
per process bounds what searches can take from it to one core however many arrive; repeated
queries come from embedding.embed_query's cache without waiting at all. When the model is off
or missing, or the snapshot has no tool vectors yet, the search is BM25 alone and its answer
says `ranking: "lexical"`.
"""

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from servers.discovery import embedding
from servers.discovery.ranking import Candidate

log = logging.getLogger(__name__)

HYBRID, LEXICAL = "hybrid", "lexical"
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")


@dataclass(frozen=True, slots=True)
class Found:
    candidates: list[Candidate]
    ranking: str  # HYBRID or LEXICAL: what produced the order


def _vector_or_none(query: str) -> np.ndarray | None:
    try:
        return embedding.embed_query(query) if embedding.available() else None
    except Exception:  # a model failure degrades the search to words; it never fails it
        log.exception("query embedding failed; BM25 alone for this search")
        return None


async def query_vector(query: str) -> np.ndarray | None:
    if not settings.DISCOVERY_SEMANTIC_SEARCH:
        return None
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor, _vector_or_none, query)


def index_of(snapshot):
    return snapshot.search_index.get(snapshot.tool_list, snapshot.tool_vectors)


async def search(snapshot, query: str, limit: int) -> Found:
    index = index_of(snapshot)
    vector = await query_vector(query) if index.semantic else None
    return Found(index.search(query, limit, vector), HYBRID if vector is not None else LEXICAL)


def search_now(snapshot, query: str, limit: int) -> Found:
    """The same, on the calling thread (the dashboard's playground, the evaluation)."""
    index = index_of(snapshot)
    vector = _vector_or_none(query) if index.semantic else None
    return Found(index.search(query, limit, vector), HYBRID if vector is not None else LEXICAL)
