"""The hybrid search beats BM25 on the held-out paraphrases of the evaluation (bench/discovery/):
real API descriptions through the product's importer, requests the ranking was not tuned on."""

import importlib.util
import statistics
from pathlib import Path

import pytest

from servers.discovery import embedding
from servers.discovery.hybrid import HybridIndex
from servers.discovery.search import ToolIndex
from servers.discovery.vectors import ToolVectors, tool_text

BENCH = Path(__file__).resolve().parents[3] / "bench" / "discovery" / "evaluate.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("discovery_evaluate", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hybrid_beats_bm25_on_held_out_paraphrases(bench):
    held_out = [api for api in bench.APIS if api not in bench.DEV]
    assert held_out == ["discord", "box"]
    lexical_rr, hybrid_rr, unsafe = [], [], {"bm25": 0, "hybrid": 0}
    for api in held_out:
        snapshot = bench.load_server(api)
        wires = snapshot.tool_list
        matrix = embedding.embed([tool_text(w) for w in wires])
        hybrid = HybridIndex(
            wires, ToolVectors({w["name"]: matrix[i] for i, w in enumerate(wires)})
        )
        lexical = ToolIndex(wires)
        for request in bench.load_requests(api, set(snapshot.tools)):
            query = request["q"]
            bm25 = [name for name, _ in lexical.search(query, 10)]
            fused = [c.name for c in hybrid.search(query, 10, embedding.embed_query(query))]
            if request["intent"] == "read":
                for label, answer in (("bm25", bm25), ("hybrid", fused)):
                    unsafe[label] += any(
                        snapshot.tools[n].wire["annotations"].get("destructiveHint") is True
                        for n in answer[:3]
                    )
            if request["kind"] == "paraphrase":
                lexical_rr.append(bench.reciprocal_rank(bm25, request["want"]))
                hybrid_rr.append(bench.reciprocal_rank(fused, request["want"]))
    assert len(hybrid_rr) >= 60

    def top3(rr):
        return sum(x >= 1 / 3 for x in rr) / len(rr)

    assert top3(hybrid_rr) >= top3(lexical_rr) + 0.2
    assert statistics.mean(hybrid_rr) >= statistics.mean(lexical_rr) + 0.15
    assert unsafe["hybrid"] < unsafe["bm25"]
