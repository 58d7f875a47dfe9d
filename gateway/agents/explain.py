"""What an agent sees of a server in discovery mode, with the reasons: the dashboard's
playground shows it (dashboard/views/playground.py).

The list it is given (meta-tools and pinned tools, and what that saves against the full list),
and for a request, the ranking `getmcp_search_tools` answers: each tool's fused score, its BM25
and semantic ranks and scores, its read-only and destructive hints, and the detected intent.
"""

import json

from servers.discovery import config, ranking
from servers.discovery.search import MAX_RESULTS

from . import discovery, retrieval


def _tokens(tools) -> int:
    return config.estimate_tokens(len(json.dumps({"tools": list(tools)}, default=str)))


def listing(*, snapshot) -> dict:
    """tools/list as an agent gets it, and as it would be without discovery."""
    full = discovery.listed_tools(snapshot, {"_meta": {discovery.FULL_LIST_META: True}})
    shown = discovery.listed_tools(snapshot, {})
    return {
        "active": discovery.active(snapshot),
        "names": [tool["name"] for tool in shown],
        "shown_count": len(shown),
        "shown_tokens": _tokens(shown),
        "full_count": len(full),
        "full_tokens": _tokens(full),
        "vectors": len(snapshot.tool_vectors),
    }


def ranked(*, snapshot, query: str, limit: int = 10) -> dict:
    """The search an agent would run, with every score that ordered it."""
    limit = max(1, min(limit, MAX_RESULTS))
    found = retrieval.search_now(snapshot, query, limit)
    rows = []
    for position, candidate in enumerate(found.candidates, 1):
        wire = snapshot.tools[candidate.name].wire
        rows.append(
            {
                "position": position,
                "name": candidate.name,
                "title": wire.get("title") or "",
                "score": round(candidate.score, 4),
                "lexical_rank": candidate.lexical_rank,
                "lexical_score": round(candidate.lexical_score, 2),
                "semantic_rank": candidate.semantic_rank,
                "semantic_score": round(candidate.semantic_score, 3),
                "read_only": candidate.read_only,
                "destructive": candidate.destructive,
                "boosted": candidate.boosted,
            }
        )
    return {
        "query": query,
        "intent": ranking.intent(query),
        "ranking": found.ranking,
        "rows": rows,
    }
