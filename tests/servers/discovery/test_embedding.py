"""The packaged model computes all-MiniLM-L6-v2's vectors, offline, on the CPU.

The reference vectors were computed with the float32 weights of sentence-transformers'
all-MiniLM-L6-v2 (a plain numpy forward pass); the product runs the int8 ONNX export."""

import json
from pathlib import Path

import numpy as np
import pytest

from servers.discovery import embedding

REFERENCE = json.loads(Path(__file__).with_name("minilm_reference_vectors.json").read_text())


def test_vectors_match_the_float32_model():
    vectors = embedding.embed([case["text"] for case in REFERENCE])
    for vector, case in zip(vectors, REFERENCE, strict=True):
        assert vector.shape == (embedding.DIMENSIONS,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
        assert float(vector @ np.array(case["vector"], dtype=np.float32)) > 0.99


def test_a_batch_gives_each_text_the_vector_it_gets_alone():
    texts = ["a", "remove a member from a team " * 20, "list invoices"]
    together = embedding.embed(texts)
    for text, vector in zip(texts, together, strict=True):
        assert float(vector @ embedding.embed([text])[0]) > 0.999


def test_meaning_not_words_brings_a_paraphrase_closer():
    kick, remove, create = embedding.embed(
        ["kick someone off the team", "Remove a member from a team.", "Create an invoice."]
    )
    assert float(kick @ remove) > float(kick @ create) + 0.2


def test_the_same_query_is_embedded_once(monkeypatch):
    embedding.embed_query.cache_clear()
    first = embedding.embed_query("how many open tickets")
    monkeypatch.setattr(embedding, "embed", lambda *a, **k: pytest.fail("computed again"))
    assert embedding.embed_query("how many open tickets") is first


def test_turned_off_the_model_is_neither_available_nor_run(settings):
    settings.DISCOVERY_SEMANTIC_SEARCH = False
    assert not embedding.available()
    with pytest.raises(RuntimeError):
        embedding.embed(["anything"])
