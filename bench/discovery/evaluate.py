"""Discovery search, measured: the requests in requests/*.yaml against Slack's, Discord's and
Box's real API descriptions (specs/, unmodified, gzipped), imported with the product's own
OpenAPI importer and compiled as a server in discovery mode.

    .venv/bin/python bench/discovery/evaluate.py            # the table (Markdown)
    .venv/bin/python bench/discovery/evaluate.py --misses   # and every request the product missed

No database, Redis or network: the importer, the compiler, the indexes and the model run here
as they run in the product. Each ranking is scored on the same requests:

- bm25: the lexical index alone (what discovery searched with before the hybrid);
- bm25+safe: the same candidates in the product's safe order (ranking.py);
- dense: the embeddings alone;
- rrf: BM25 and embeddings fused (weighted RRF), no safety rules;
- hybrid: what the product answers (fusion, then safe ranking).
"""

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")

import django  # noqa: E402

django.setup()

from gateway.agents import discovery  # noqa: E402
from integrations.importers.openapi import parse_openapi  # noqa: E402
from integrations.importers.reimport import imported_values  # noqa: E402
from servers.discovery import config as agent_config  # noqa: E402
from servers.discovery import embedding, ranking  # noqa: E402
from servers.discovery.hybrid import DEPTH, HybridIndex  # noqa: E402
from servers.discovery.search import ToolIndex, terms  # noqa: E402
from servers.discovery.vectors import NO_VECTORS, ToolVectors, embed_documents, tool_document  # noqa: E402
from servers.snapshot import compile_definition  # noqa: E402

APIS = ("slack", "discord", "box")
VARIANTS = ("bm25", "bm25+safe", "dense", "rrf", "hybrid")
CUTOFF = 10  # MRR counts a hit within the first 10 answers
# The requests the ranking's two choices (what text is embedded, the semantic weight) were made
# on; the others are held out: their figures are the ones to trust.
DEV = ("slack",)


def load_server(api: str):
    """The API's document, imported and compiled as a discovery-mode server."""
    document = gzip.decompress((HERE / "specs" / f"{api}.json.gz").read_bytes()).decode()
    preview = parse_openapi(document, base_url="https://api.example.invalid/")
    tools = []
    for op in preview.operations:
        values = imported_values(op, op.name)
        tools.append(
            {
                "name": op.name,
                "title": values["title"],
                "description": values["description"],
                "inputSchema": values["input_schema"],
                "annotations": values["annotations"],
                "kind": "http",
                "config": values["config"],
            }
        )
    definition = {
        "name": api,
        "slug": api,
        "tools": tools,
        "agents": {"discovery": {"mode": "on"}},
    }
    return compile_definition(definition, server_id=0, organization_id=0, generation="bench")


def load_requests(api: str, names: set[str]) -> list[dict]:
    data = yaml.safe_load((HERE / "requests" / f"{api}.yaml").read_text())
    for request in data["requests"]:
        unknown = set(request["want"]) - names
        if unknown:
            raise SystemExit(f"{api}: {request['q']!r} wants unknown tools {sorted(unknown)}")
    return data["requests"]


def shares_no_word(request: dict, snapshot) -> bool:
    """No (stemmed, non-stop) word of the request appears in a wanted tool's name, title or
    description: the strict paraphrase BM25 cannot match at all."""
    query = set(terms(request["q"]))
    for name in request["want"]:
        wire = snapshot.tools[name].wire
        text = " ".join(str(wire.get(k) or "") for k in ("name", "title", "description"))
        if query & set(terms(text)):
            return False
    return True


def plain_rrf(lexical, semantic) -> list[str]:
    found = ranking.fuse(lexical, semantic, {}, ranking.UNKNOWN)
    return [c.name for c in found]


def rank_all(snapshot, vectors: ToolVectors, query: str) -> tuple[dict, dict]:
    """The answers (names, best first) of every variant, and the product's timings in ms."""
    names = [w["name"] for w in snapshot.tool_list]
    lexical_index = ToolIndex(snapshot.tool_list)
    bm25_only = HybridIndex(snapshot.tool_list, NO_VECTORS)
    product = HybridIndex(snapshot.tool_list, vectors)
    started = time.perf_counter()
    vector = embedding.embed([query], embedding.MAX_QUERY_TOKENS)[0]
    embedded = time.perf_counter()
    answer = product.search(query, CUTOFF, vector)
    searched = time.perf_counter()
    lexical = lexical_index.search(query, DEPTH)
    semantic = product._semantic(vector)
    out = {
        "bm25": [n for n, _ in lexical],
        "bm25+safe": [c.name for c in bm25_only.search(query, CUTOFF)],
        "dense": [n for n, _ in semantic],
        "rrf": plain_rrf(lexical, semantic),
        "hybrid": [c.name for c in answer],
    }
    assert set(out["hybrid"]) <= set(names)
    timing = {"embed_ms": (embedded - started) * 1000, "search_ms": (searched - embedded) * 1000}
    return out, timing


def reciprocal_rank(answer: list[str], want: list[str]) -> float:
    for position, name in enumerate(answer[:CUTOFF], 1):
        if name in want:
            return 1.0 / position
    return 0.0


def tools_list_tokens(snapshot) -> tuple[int, int]:
    full = discovery.listed_tools(snapshot, {"_meta": {discovery.FULL_LIST_META: True}})
    meta = discovery.listed_tools(snapshot, {})
    size = lambda tools: agent_config.estimate_tokens(len(json.dumps({"tools": tools})))  # noqa: E731
    return size(full), size(meta)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--misses", action="store_true", help="list the product's misses")
    parser.add_argument("--json", type=Path, help="also write every ranking to this file")
    args = parser.parse_args()
    rows, timings, sizes, misses, dumps = [], [], {}, [], []
    for api in APIS:
        snapshot = load_server(api)
        wires = snapshot.tool_list
        started = time.perf_counter()
        matrix = embed_documents([tool_document(w) for w in wires])
        embed_seconds = time.perf_counter() - started
        vectors = ToolVectors({w["name"]: matrix[i] for i, w in enumerate(wires)})
        sizes[api] = (len(wires), *tools_list_tokens(snapshot), embed_seconds, vectors.nbytes)
        requests = load_requests(api, set(snapshot.tools))
        for request in requests:
            answers, timing = rank_all(snapshot, vectors, request["q"])
            timings.append(timing)
            strict = shares_no_word(request, snapshot)
            row = {"api": api, **request, "strict": strict}
            for variant in VARIANTS:
                answer = answers[variant]
                row[variant] = reciprocal_rank(answer, request["want"])
                top3 = [snapshot.tools[n].wire for n in answer[:3]]
                row[f"{variant}:unsafe"] = request["intent"] == "read" and any(
                    (w.get("annotations") or {}).get("destructiveHint") is True for w in top3
                )
            rows.append(row)
            dumps.append({**row, "answers": {v: answers[v][:5] for v in VARIANTS}})
            if row["hybrid"] < 1 / 3:
                misses.append((api, request, answers["hybrid"][:3]))
    print_report(rows, timings, sizes)
    if args.misses:
        print("\n## Requests the product missed (not in its top 3)\n")
        for api, request, top in misses:
            print(f"- {api}: {request['q']!r} wants {request['want']}; got {top}")
    if args.json:
        args.json.write_text(json.dumps(dumps, indent=1))


def _metrics(rows: list[dict], variant: str) -> str:
    if not rows:
        return "| – | – | – |"
    rr = [r[variant] for r in rows]
    top1 = sum(x == 1.0 for x in rr) / len(rr)
    top3 = sum(x >= 1 / 3 for x in rr) / len(rr)
    return f"{top1:.0%} | {top3:.0%} | {statistics.mean(rr):.3f}"


def print_report(rows, timings, sizes) -> None:
    groups = [
        ("all", rows),
        ("direct", [r for r in rows if r["kind"] == "direct"]),
        ("paraphrase", [r for r in rows if r["kind"] == "paraphrase"]),
        ("no shared word", [r for r in rows if r["strict"]]),
        (
            "paraphrase, dev (slack)",
            [r for r in rows if r["kind"] == "paraphrase" and r["api"] in DEV],
        ),
        (
            "paraphrase, held out",
            [r for r in rows if r["kind"] == "paraphrase" and r["api"] not in DEV],
        ),
    ]
    print(f"# Discovery search on {len(rows)} requests\n")
    print("| requests | n | ranking | top-1 | top-3 | MRR@10 |")
    print("|---|---|---|---|---|---|")
    for label, group in groups:
        for variant in VARIANTS:
            print(f"| {label} | {len(group)} | {variant} | {_metrics(group, variant)} |")
    reads = [r for r in rows if r["intent"] == "read"]
    print(f"\nRead-only requests with a destructive tool in the top 3 (of {len(reads)}):")
    for variant in VARIANTS:
        print(f"- {variant}: {sum(r[f'{variant}:unsafe'] for r in reads)}")
    print(
        "\n| API | requests | tools | tools/list, all tools (tokens) | tools/list, discovery "
        "(tokens) | tool vectors (KB) | embedding all tools at publish (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for api, (count, full, meta, seconds, nbytes) in sizes.items():
        n = sum(r["api"] == api for r in rows)
        print(f"| {api} | {n} | {count} | {full:,} | {meta:,} | {nbytes // 1024} | {seconds:.1f} |")
    embed_ms = sorted(t["embed_ms"] for t in timings)
    search_ms = sorted(t["search_ms"] for t in timings)

    def pct(values, p):
        return values[min(len(values) - 1, int(p * len(values)))]

    print(
        f"\nPer query (ms, p50 / p95): query embedding {pct(embed_ms, 0.5):.1f} / "
        f"{pct(embed_ms, 0.95):.1f}; fused search and ranking {pct(search_ms, 0.5):.2f} / "
        f"{pct(search_ms, 0.95):.2f}"
    )


if __name__ == "__main__":
    main()
