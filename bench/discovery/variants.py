"""The variants of the semantic side that were tried on the development requests, each scored
on the development (Slack, Twilio) and held-out (Discord, Box) requests: bench/discovery/README.md's
"what was tried" tables (all but wordllama's rows, measured in a separate environment).

    .venv/bin/python bench/discovery/variants.py            # every variant
    .venv/bin/python bench/discovery/variants.py --fusion   # the fusion settings only

Same data, importer, indexes, model and fusion as evaluate.py; only what a tool's vector is made
of, how its texts' similarities are combined, and the fusion's parameters change.
"""

import argparse
import math
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
    # the two text variants the second development API prefers, with the fusion chosen on it
    "+ verb synonym text, weight 3, 4 when BM25 best < 5": (
        with_synonym,
        "vector",
        3,
        60,
        1,
        (5, 4),
    ),
    "+ action by argument names text, weight 3, 4 when BM25 best < 5": (
        with_arguments,
        "vector",
        3,
        60,
        1,
        (5, 4),
    ),
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
    # The variant's weight replaces the product's, adaptive rule included.
    saved = ranking.SEMANTIC_WEIGHT, ranking.WEAK_LEXICAL_SEMANTIC_WEIGHT, ranking.RRF_K
    ranking.SEMANTIC_WEIGHT, ranking.WEAK_LEXICAL_SEMANTIC_WEIGHT, ranking.RRF_K = weight, weight, k
    try:
        intent = ranking.intent(query)
        found = ranking.fuse(lexical, semantic, hints, intent)
        if boost != 1 and intent == ranking.WRITE:
            found = [c if c.read_only else replace(c, score=c.score * boost) for c in found]
            found = ranking.order(found, intent)
    finally:
        ranking.SEMANTIC_WEIGHT, ranking.WEAK_LEXICAL_SEMANTIC_WEIGHT, ranking.RRF_K = saved
    return [c.name for c in found]


# The fusion's settings, on the taken texts: semantic weight and RRF k, then adaptive rules (a
# heavier semantic weight when BM25's best score is under a threshold: its words match weakly).
FUSION = {
    **{
        f"weight {w:g}, k {k}": (tool_texts, "vector", w, k, 1, None)
        for k in (60, 30, 10)
        for w in (1, 2, 3, 4, 6, 8)
    },
    **{
        f"weight {base:g}, k {k}, weight {heavy} when BM25 best < {threshold}": (
            tool_texts,
            "vector",
            base,
            k,
            1,
            (threshold, heavy),
        )
        for base, k in ((2, 60), (3, 60), (2, 30))
        for threshold in (5, 7, 9)
        for heavy in (4, 8)
    },
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fusion", action="store_true", help="the fusion settings only")
    args = parser.parse_args()
    variants = FUSION if args.fusion else {**VARIANTS, **FUSION}
    # variant -> group ("dev", "held out") -> api -> kind -> reciprocal ranks; and read requests
    # with a destructive tool in the top 3
    scores: dict = {name: {} for name in variants}
    # variant -> group -> every request's reciprocal rank, in one order: compared request by
    # request with the product's own setting (how many it answers better, how many worse)
    paired: dict = {name: {"dev": [], "held out": []} for name in variants}
    unsafe: dict = {name: {"dev": 0, "held out": 0} for name in variants}
    for api in evaluate.APIS:
        snapshot = evaluate.load_server(api)
        wires = snapshot.tool_list
        names = [w["name"] for w in wires]
        hints = {w["name"]: _hints(w) for w in wires}
        lexical_index = ToolIndex(wires)
        group = "dev" if api in evaluate.DEV else "held out"
        for request in evaluate.load_requests(api, set(snapshot.tools)):
            query_vector = embedding.embed([request["q"]], embedding.MAX_QUERY_TOKENS)[0]
            lexical = lexical_index.search(request["q"], DEPTH)
            sims_of: dict = {}
            for name, (texts_of, combine, weight, k, boost, adaptive) in variants.items():
                if (texts_of, combine) not in sims_of:
                    sims_of[texts_of, combine] = similarities(
                        texts_of, combine, wires, query_vector
                    )
                sims = sims_of[texts_of, combine]
                found = answer(
                    lexical, sims, names, hints, request["q"], weight, k, boost, adaptive
                )
                rr = evaluate.reciprocal_rank(found, request["want"])
                paired[name][group].append(rr)
                by_api = scores[name].setdefault(group, {}).setdefault(api, {})
                by_api.setdefault(request["kind"], []).append(rr)
                if request["intent"] == "read" and any(hints[n][1] for n in found[:3]):
                    unsafe[name][group] += 1
    print(
        "| variant | Slack para. | Twilio para. | dev para. top-3 / MRR | dev direct top-3 "
        "| held-out para. top-3 / MRR | held-out direct top-3 | read, destructive in top 3 "
        "(dev / held out) | vs weight 2, k 60, dev: better / worse | held out: better / worse |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    before = "weight 2, k 60"  # the product's setting before the second development API
    for name, groups in scores.items():
        dev, held = groups["dev"], groups["held out"]
        cells = [
            _cell(dev["slack"]["paraphrase"]),
            _cell(dev["twilio"]["paraphrase"]),
            _cell([x for a in dev.values() for x in a["paraphrase"]], digits=3),
            _cell([x for a in dev.values() for x in a["direct"]], mrr=False),
            _cell([x for a in held.values() for x in a["paraphrase"]]),
            _cell([x for a in held.values() for x in a["direct"]], mrr=False),
            f"{unsafe[name]['dev']} / {unsafe[name]['held out']}",
            *(_versus(paired[name][g], paired[before][g]) for g in ("dev", "held out")),
        ]
        print(f"| {name} | {' | '.join(cells)} |")


def _versus(rr: list[float], base: list[float]) -> str:
    better = sum(x > y for x, y in zip(rr, base, strict=True))
    worse = sum(x < y for x, y in zip(rr, base, strict=True))
    return f"{better} / {worse} (p {_sign_test(better, worse):.2f})"


def _sign_test(better: int, worse: int) -> float:
    """Two-sided exact sign test: how likely a split at least this uneven is when the variant
    is no better than the product (each changed request a fair coin)."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(max(better, worse), n + 1)) / 2**n
    return min(1.0, 2 * tail)


def _cell(rr: list[float], mrr: bool = True, digits: int = 2) -> str:
    top3 = f"{sum(x >= 1 / 3 for x in rr) / len(rr):.0%}"
    return f"{top3} / {statistics.mean(rr):.{digits}f}" if mrr else top3


if __name__ == "__main__":
    main()
