"""Tool search by words: BM25 (rank-bm25's Okapi variant) over each tool's name, title,
description and argument names. The lexical half of hybrid.py's index, built once per compiled
snapshot and kept with it (hybrid.LazyIndex).

Bounded: a tool contributes at most MAX_TOOL_TEXT characters, a query at most MAX_QUERY_CHARS
and MAX_QUERY_TERMS terms, and an answer at most MAX_RESULTS tools; the index holds one short
token list per tool, so its size follows the (already bounded) definition.
"""

import re

MAX_TOOL_TEXT = 4000
MAX_QUERY_CHARS = 500
MAX_QUERY_TERMS = 32
MAX_RESULTS = 20
# How often each field's words count: a word of the name says more than one of the description.
NAME_WEIGHT, TITLE_WEIGHT, ARGUMENT_WEIGHT = 3, 2, 1

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|\d+")
_STOPWORD_TEXT = (
    "a an and are as at be by can do does for from get give how i in into is it its me my "
    "of on or please show some that the their them then there these this to up use using want "
    "what when where which who will with you your all any"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Longest first: "ies" before "s".
SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ers", "er", "s")
SIBILANTS = ("s", "x", "z", "ch", "sh")


def stem(word: str) -> str:
    """A light suffix stripper, enough for "listing"/"lists"/"list" and "invoices"/"invoice"
    to meet: plural and verb endings go, then a final "e"."""
    for suffix in SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        root = word[: -len(suffix)]
        if suffix == "es" and not root.endswith(SIBILANTS):
            continue  # "invoices" loses only its "s"
        word = root + "y" if suffix in ("ies", "ied") else root
        break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def terms(text: str) -> list[str]:
    """Words of `text` (camelCase, snake_case and kebab-case split), lowercased and stemmed."""
    words = (word.lower() for word in _WORD.findall(text))
    return [stem(word) for word in words if word not in STOPWORDS]


def _argument_names(schema) -> list[str]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return list(properties) if isinstance(properties, dict) else []


def tool_terms(wire) -> list[str]:
    name = str(wire.get("name") or "")
    title = str(wire.get("title") or "")
    description = str(wire.get("description") or "")[:MAX_TOOL_TEXT]
    arguments = " ".join(_argument_names(wire.get("inputSchema")))[:MAX_TOOL_TEXT]
    return (
        terms(name) * NAME_WEIGHT
        + terms(title) * TITLE_WEIGHT
        + terms(description)
        + terms(arguments) * ARGUMENT_WEIGHT
    )


class ToolIndex:
    def __init__(self, tool_list) -> None:
        from rank_bm25 import BM25Okapi

        self.names = [wire["name"] for wire in tool_list]
        corpus = [tool_terms(wire) or ["_"] for wire in tool_list]
        self.bm25 = BM25Okapi(corpus) if corpus else None

    def search(self, query: str, limit: int = 5) -> list[tuple[str, float]]:
        """(tool name, score) of the best `limit` matches, best first; only tools the query
        touches. Equal scores go by name, never by the order tools were defined in."""
        words = terms(query[:MAX_QUERY_CHARS])[:MAX_QUERY_TERMS]
        if not words or self.bm25 is None:
            return []
        scores = self.bm25.get_scores(words)
        ranked = sorted(range(len(self.names)), key=lambda i: (-scores[i], self.names[i]))
        return [(self.names[i], float(scores[i])) for i in ranked[: max(1, limit)] if scores[i] > 0]
