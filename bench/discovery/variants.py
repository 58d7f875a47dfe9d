"""The variants of the semantic side that were tried on the development requests, each scored
on the development (Slack) and held-out (Discord, Box) paraphrases: bench/discovery/README.md's
"what was tried" table (all but wordllama's rows, measured in a separate environment).

    .venv/bin/python bench/discovery/variants.py

Same data, importer, indexes, model and fusion as evaluate.py; only what a tool's vector is made
of, how its texts' similarities are combined, and the fusion's parameters change.
"""

import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evaluate  # noqa: E402  (sets up Django)

from servers.discovery import embedding, ranking  # noqa: E402
from servers.discovery.hybrid import DEPTH, SEMANTIC_FLOOR, _hints  # noqa: E402
from servers.discovery.search import ToolIndex  # noqa: E402
from servers.discovery.vectors import (  # noqa: E402
    action_phrase,
    name_words,
    tool_text,
    tool_texts,
)

SYNONYMS = {
    "get": "show",
    "list": "show all",
    "create": "add",
    "delete": "remove",
    "update": "edit",
}
METHOD_PATH = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) (/\S*)$")


def one_text(wire):
    return [". ".join(t for t in (action_phrase(wire["name"]), *tool_texts(wire)[2:]) if t)]


def with_synonym(wire):
    phrase = action_phrase(wire["name"]).split()
    extra = (
        [" ".join([SYNONYMS[phrase[0]], *phrase[1:]])]
        if phrase[:1] in ([v] for v in SYNONYMS)
        else []
    )
    return [*tool_texts(wire), *extra]


def with_method_path(wire):
    match = METHOD_PATH.match(str(wire.get("description") or ""))
    if not match:
        return list(tool_texts(wire))
    segments = [s for s in match.group(2).split("/") if s and not s.startswith("{")]
    verb = {"get": "get", "post": "create", "delete": "delete"}.get(
        match.group(1).lower(), "update"
    )
    return [*tool_texts(wire), " ".join([verb, *(name_words(s) for s in segments)])]


def with_arguments(wire):
    properties = list((wire.get("inputSchema") or {}).get("properties") or {})
    words = ", ".join(name_words(p) for p in properties[:8])
    return [*tool_texts(wire), *([f"{action_phrase(wire['name'])} by {words}"] if words else [])]


# name: (texts of a tool, how they combine, semantic weight, RRF k, write boost, adaptive)
VARIANTS = {
    "summary alone (before)": (lambda w: [tool_text(w)], "vector", 2, 60, 1, None),
    "action + title + summary in one text": (one_text, "vector", 2, 60, 1, None),
    "several texts, maximum similarity": (tool_texts, "max", 2, 60, 1, None),
    "several texts, mean similarity": (tool_texts, "mean", 2, 60, 1, None),
    "several texts, renormalised mean vector (taken)": (tool_texts, "vector", 2, 60, 1, None),
    "+ verb synonym text": (with_synonym, "vector", 2, 60, 1, None),
    "+ method and path text": (with_method_path, "vector", 2, 60, 1, None),
    "taken, weight 3": (tool_texts, "vector", 3, 60, 1, None),
    "taken, weight 4": (tool_texts, "vector", 4, 60, 1, None),
    "taken, weight 4, k 10": (tool_texts, "vector", 4, 10, 1, None),
    "taken, write boost 1.2": (tool_texts, "vector", 2, 60, 1.2, None),
    "+ action by argument names text": (with_arguments, "vector", 2, 60, 1, None),
    "taken, weight 4 when BM25 best < 7": (tool_texts, "vector", 2, 60, 1, (7, 4)),
    "taken, weight 8 when BM25 best < 9": (tool_texts, "vector", 2, 60, 1, (9, 8)),
}


def similarities(texts_of, combine, wires, query_vector):
    texts = [list(texts_of(w)) for w in wires]
    if combine == "vector":
        matrix = np.stack([_unit(_embed(t).mean(axis=0)) for t in texts])
        return matrix @ query_vector
    per_text = [_embed(t) @ query_vector for t in texts]
    return np.array([s.max() if combine == "max" else s.mean() for s in per_text])


_CACHE: dict[str, np.ndarray] = {}


def _embed(texts):
    missing = [t for t in dict.fromkeys(texts) if t not in _CACHE]
    if missing:
        _CACHE.update(zip(missing, embedding.embed(missing), strict=True))
    return np.stack([_CACHE[t] for t in texts])


def _unit(vector):
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def answer(lexical, scores, names, hints, query, weight, k, boost, adaptive):
    best = sorted(range(len(names)), key=lambda i: (-round(float(scores[i]), 6), names[i]))
    semantic = [(names[i], float(scores[i])) for i in best[:DEPTH] if scores[i] >= SEMANTIC_FLOOR]
    if adaptive and (not lexical or lexical[0][1] < adaptive[0]):
        weight = adaptive[1]
    ranking.SEMANTIC_WEIGHT, ranking.RRF_K = weight, k
    try:
        intent = ranking.intent(query)
        found = ranking.fuse(lexical, semantic, hints, intent)
        if boost != 1 and intent == ranking.WRITE:
            found = [c if c.read_only else replace(c, score=c.score * boost) for c in found]
            found = ranking.order(found, intent)
    finally:
        ranking.SEMANTIC_WEIGHT, ranking.RRF_K = 2.0, 60
    return [c.name for c in found]


def main() -> None:
    scores = {name: {"dev": [], "held out": []} for name in VARIANTS}
    for api in evaluate.APIS:
        snapshot = evaluate.load_server(api)
        wires = snapshot.tool_list
        names = [w["name"] for w in wires]
        hints = {w["name"]: _hints(w) for w in wires}
        lexical_index = ToolIndex(wires)
        requests = [
            r for r in evaluate.load_requests(api, set(snapshot.tools)) if r["kind"] == "paraphrase"
        ]
        group = "dev" if api in evaluate.DEV else "held out"
        for request in requests:
            query_vector = embedding.embed([request["q"]], embedding.MAX_QUERY_TOKENS)[0]
            lexical = lexical_index.search(request["q"], DEPTH)
            for name, (texts_of, combine, weight, k, boost, adaptive) in VARIANTS.items():
                sims = similarities(texts_of, combine, wires, query_vector)
                found = answer(
                    lexical, sims, names, hints, request["q"], weight, k, boost, adaptive
                )
                scores[name][group].append(evaluate.reciprocal_rank(found, request["want"]))
    print("| variant | dev top-3 / MRR | held-out top-3 / MRR |\n|---|---|---|")
    for name, groups in scores.items():
        cells = [
            f"{sum(x >= 1 / 3 for x in rr) / len(rr):.0%} / {statistics.mean(rr):.2f}"
            for rr in groups.values()
        ]
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
