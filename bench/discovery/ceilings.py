"""How far the two sides of the hybrid can take the paraphrases, and two query-side variants
tried on them: bench/discovery/README.md's "ceilings" table.

    .venv/bin/python bench/discovery/ceilings.py

Same data, importer, indexes, model and fusion as evaluate.py. The ceilings are not rankings
anyone can ship; they bound what any ranking built from these two sides could do:

- "either side's top 3": a request counts when BM25's top 3 or the embeddings' top 3 holds a
  wanted tool, as if an oracle picked the better side request by request (the best any fusion
  of the two could do at top 3);
- "in the candidates (top 10 / 50)": a wanted tool is among the first 10 (50) tools the
  product's fusion answers, so a perfect reordering of those candidates (a reranker) could lift
  it to the top 3.

The variants change only the query:

- "vocabulary bridge": each word of the request is embedded alone and the server's own words
  (of its tools' names, titles and descriptions) nearest to it are added to BM25's query, so
  "smiley" can meet "emoji" by words;
- "pseudo-relevance feedback": the query's vector is moved towards the mean of its k nearest
  tools' vectors before the semantic search (Rocchio's rule).
"""

import re
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evaluate  # noqa: E402  (sets up Django)

from servers.discovery import embedding, ranking  # noqa: E402
from servers.discovery.hybrid import DEPTH, HybridIndex  # noqa: E402
from servers.discovery.search import STOPWORDS, stem  # noqa: E402
from servers.discovery.vectors import ToolVectors, embed_documents, tool_document  # noqa: E402

_WORD = re.compile(r"[A-Z]?[a-z]+")
# (words added per request word, least cosine) for the bridge; (k, weight) for the feedback
BRIDGES = ((1, 0.5), (2, 0.5), (2, 0.6), (3, 0.5), (5, 0.5))
FEEDBACK = ((1, 0.3), (3, 0.3), (3, 0.5), (3, 1.0), (5, 0.5))


def plain_words(text: str) -> list[str]:
    words = (word.lower() for word in _WORD.findall(text))
    return [word for word in words if len(word) >= 3 and word not in STOPWORDS]


class Vocabulary:
    """The words of a server's tools (name, title, description), each with its own vector."""

    def __init__(self, wires) -> None:
        fields = ("name", "title", "description")
        found = {
            w
            for wire in wires
            for w in plain_words(" ".join(str(wire.get(f) or "") for f in fields))
        }
        self.words = sorted(found)
        self.matrix = embedding.embed(self.words, 8)

    def bridge(self, query: str, per_word: int, floor: float) -> str:
        words = plain_words(query)
        if not words:
            return query
        similarities = embedding.embed(words, 8) @ self.matrix.T
        added = []
        for row, word in zip(similarities, words, strict=True):
            for j in np.argsort(-row)[:per_word]:
                if row[j] >= floor and stem(self.words[j]) != stem(word):
                    added.append(self.words[j])
        return " ".join([query, *added])


def feedback(index: HybridIndex, vector: np.ndarray, k: int, weight: float) -> np.ndarray:
    nearest = np.argsort(-(index.matrix @ vector))[:k]
    moved = vector + weight * index.matrix[nearest].mean(axis=0)
    return moved / np.linalg.norm(moved)


def answer(index: HybridIndex, query: str, lexical_query: str, vector) -> list[str]:
    lexical = index.lexical.search(lexical_query, DEPTH)
    semantic = index._semantic(vector)
    return [c.name for c in ranking.fuse(lexical, semantic, index.hints, ranking.intent(query))]


def main() -> None:
    # row name -> group -> reciprocal ranks (or 1/0 for the ceilings) of the paraphrases
    rows: dict[str, dict[str, list[float]]] = {}
    unsafe: dict[str, int] = {}

    def note(name: str, group: str, value: float) -> None:
        rows.setdefault(name, {"dev": [], "held out": []})[group].append(value)

    for api in evaluate.APIS:
        snapshot = evaluate.load_server(api)
        wires = snapshot.tool_list
        matrix = embed_documents([tool_document(w) for w in wires])
        vectors = ToolVectors({w["name"]: matrix[i] for i, w in enumerate(wires)})
        index = HybridIndex(wires, vectors)
        vocabulary = Vocabulary(wires)
        group = "dev" if api in evaluate.DEV else "held out"
        for request in evaluate.load_requests(api, set(snapshot.tools)):
            query, want = request["q"], request["want"]
            vector = embedding.embed([query], embedding.MAX_QUERY_TOKENS)[0]
            answers = {"product (hybrid)": answer(index, query, query, vector)}
            for per_word, floor in BRIDGES:
                bridged = vocabulary.bridge(query, per_word, floor)
                answers[f"vocabulary bridge, {per_word} a word, cosine >= {floor}"] = answer(
                    index, query, bridged, vector
                )
            for k, weight in FEEDBACK:
                moved = feedback(index, vector, k, weight)
                answers[f"feedback, k {k}, weight {weight}"] = answer(index, query, query, moved)
            for name, found in answers.items():
                risky = request["intent"] == "read" and any(index.hints[n][1] for n in found[:3])
                unsafe[name] = unsafe.get(name, 0) + risky
            if request["kind"] != "paraphrase":
                continue
            for name, found in answers.items():
                note(name, group, evaluate.reciprocal_rank(found, want))
            product = answers["product (hybrid)"]
            lexical = [n for n, _ in index.lexical.search(query, DEPTH)]
            semantic = [n for n, _ in index._semantic(vector)]
            either = max(_hit(lexical, 3, want), _hit(semantic, 3, want))
            note("ceiling: either side's top 3", group, either)
            note("ceiling: in the candidates (top 10)", group, _hit(product, 10, want))
            note("ceiling: in the candidates (top 50)", group, _hit(product, 50, want))

    print("| paraphrases | dev top-3 / MRR | held-out top-3 / MRR | read, destructive in top 3 |")
    print("|---|---|---|---|")
    for name, groups in rows.items():
        cells = [_cell(groups[g], ceiling=name.startswith("ceiling")) for g in ("dev", "held out")]
        print(f"| {name} | {' | '.join(cells)} | {unsafe.get(name, '–')} |")


def _hit(found: list[str], depth: int, want: list[str]) -> float:
    return float(bool(set(found[:depth]) & set(want)))


def _cell(values: list[float], ceiling: bool) -> str:
    if ceiling:
        return f"{statistics.mean(values):.0%}"
    top3 = sum(x >= 1 / 3 for x in values) / len(values)
    return f"{top3:.0%} / {statistics.mean(values):.3f}"


if __name__ == "__main__":
    main()
