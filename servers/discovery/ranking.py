"""How search results are ordered: fusion of the two rankings, then safety, then ties.

1. Fusion (weighted reciprocal rank fusion): a tool scores weight / (RRF_K + rank) summed over
   the lexical (BM25, weight 1) and the semantic (embedding, SEMANTIC_WEIGHT) rankings it
   appears in, rank 1 first, equal scores sharing a rank. Ranks, not raw scores, so BM25's
   unbounded scores and cosine similarities need no common scale. RRF_K = 60 is the constant of
   the original paper (Cormack et al., 2009). When the words match weakly (BM25's best score
   under WEAK_LEXICAL_SCORE, or nothing), the request is most likely said in other words than
   the tools', and the semantic side weighs WEAK_LEXICAL_SEMANTIC_WEIGHT. The three numbers
   were chosen on the development requests (Slack's and Twilio's APIs) and checked on the
   held-out ones (Discord's and Box's), bench/discovery/README.md.
2. Read intent (the request asks to see, find, list or count, and names no change): read-only
   tools get READ_ONLY_BOOST on their score, and every tool marked `destructiveHint` goes after
   every tool that is not, whatever its score. An agent that asked to look never gets "delete"
   as its first suggestions.
3. Ties: scores are compared at SCORE_DECIMALS decimals; among equal scores a tool without
   `destructiveHint` comes before one with it (any intent), then a read-only tool before one
   that writes, then the better lexical rank, then the name in code-point order. The order never
   depends on the order tools were defined in, so the same query on the same tools always
   answers the same list.
"""

import re
from dataclasses import dataclass

RRF_K = 60
SEMANTIC_WEIGHT = 3.0
WEAK_LEXICAL_SCORE = 5.0
WEAK_LEXICAL_SEMANTIC_WEIGHT = 4.0
READ_ONLY_BOOST = 1.2
SCORE_DECIMALS = 9
READ, WRITE, UNKNOWN = "read", "write", "unknown"
_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text))


# Words that ask for a change (a light stem of each: "banned", "bans", "banning" -> "ban").
_WRITE = _words(
    "add addition allow append apply approve archive assign attach ban block bump cancel "
    "change clean clear close commit complete convert copy create deactivate decline delete "
    "demote deny destroy disable disconnect drop edit empty enable end erase execute expire "
    "fix follow give grant hide install invalidate invite join kick leave let lock make mark "
    "merge modify move mute open pin post promote prune publish purge push put reject remind "
    "remove rename reorder replace reset rid resend restore restrict revoke rollback roll "
    "save schedule send set share sign silence start stop strip submit suspend sync tag take "
    "terminate tick transfer trigger unarchive unassign unban undo uninstall unlock unmute "
    "unpin update upgrade upload wipe write"
)
_READ = _words(
    "browse check count display download export fetch find get inspect list look lookup read "
    "retrieve search see show tell view"
)
# A request that starts like a question asks to know, even when it names an action ("who got
# banned", "is Alice online").
_QUESTION_OPENERS = _words(
    "who whom whose what which where when why how is are was were does "
    "do did has have can could show list find search look view see tell display count check"
)
_SUFFIXES = ("ning", "ing", "ned", "led", "ed", "es", "s")


def _light_stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_WRITE_STEMS = frozenset(_light_stem(w) for w in _WRITE) | frozenset(_WRITE)
_READ_STEMS = frozenset(_light_stem(w) for w in _READ) | frozenset(_READ)


def intent(query: str) -> str:
    """READ, WRITE or UNKNOWN, from the request's own words (no model: explainable, and the
    same on every process)."""
    words = _WORD.findall(query.lower())
    if not words:
        return UNKNOWN
    if words[0] in _QUESTION_OPENERS or query.rstrip().endswith("?"):
        return READ
    stems = {_light_stem(word) for word in words} | set(words)
    if stems & _WRITE_STEMS:
        return WRITE
    if stems & _READ_STEMS:
        return READ
    return UNKNOWN


@dataclass(frozen=True, slots=True)
class Candidate:
    """One tool's place in the answer and why: what the playground shows."""

    name: str
    score: float
    lexical_rank: int | None = None  # 1-based; None: BM25 found none of the query's words
    lexical_score: float = 0.0
    semantic_rank: int | None = None  # None: no vector, or below the similarity floor
    semantic_score: float = 0.0
    read_only: bool = False
    destructive: bool = False
    boosted: bool = False  # READ_ONLY_BOOST applied


def fuse(
    lexical: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
    hints: dict[str, tuple[bool, bool]],
    query_intent: str,
) -> list[Candidate]:
    """Every tool either ranking found, in answer order. `hints`: name -> (read_only,
    destructive); lists are best first."""
    lexical_at = _ranks(lexical)
    semantic_at = _ranks(semantic)
    weight = semantic_weight(lexical)
    candidates = []
    for name in lexical_at.keys() | semantic_at.keys():
        l_rank, l_score = lexical_at.get(name, (None, 0.0))
        s_rank, s_score = semantic_at.get(name, (None, 0.0))
        score = 0.0 if l_rank is None else 1.0 / (RRF_K + l_rank)
        if s_rank is not None:
            score += weight / (RRF_K + s_rank)
        read_only, destructive = hints.get(name, (False, False))
        boosted = query_intent == READ and read_only
        candidates.append(
            Candidate(
                name=name,
                score=score * READ_ONLY_BOOST if boosted else score,
                lexical_rank=l_rank,
                lexical_score=l_score,
                semantic_rank=s_rank,
                semantic_score=s_score,
                read_only=read_only,
                destructive=destructive,
                boosted=boosted,
            )
        )
    return order(candidates, query_intent)


def semantic_weight(lexical: list[tuple[str, float]]) -> float:
    """The semantic ranking's weight for a request whose BM25 answer is `lexical` (best
    first): heavier when its words match no tool well."""
    if not lexical or lexical[0][1] < WEAK_LEXICAL_SCORE:
        return WEAK_LEXICAL_SEMANTIC_WEIGHT
    return SEMANTIC_WEIGHT


def _ranks(found: list[tuple[str, float]]) -> dict[str, tuple[int, float]]:
    """name -> (rank, score), equal scores sharing a rank ("1, 2, 2, 4"): two tools that match
    equally well get the same fused score, and rule 3 orders them, not the list's own order."""
    out: dict[str, tuple[int, float]] = {}
    previous, rank = None, 0
    for position, (name, score) in enumerate(found, 1):
        rounded = round(score, SCORE_DECIMALS)
        if rounded != previous:
            previous, rank = rounded, position
        out[name] = (rank, score)
    return out


def order(candidates: list[Candidate], query_intent: str) -> list[Candidate]:
    def key(c: Candidate):
        return (
            query_intent == READ and c.destructive,
            -round(c.score, SCORE_DECIMALS),
            c.destructive,
            not c.read_only,
            c.lexical_rank if c.lexical_rank is not None else float("inf"),
            c.name,
        )

    return sorted(candidates, key=key)
