"""What the embedding model costs one process: import, load, resident memory, per-query time.

.venv/bin/python bench/discovery/model_cost.py
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def main() -> None:
    import django

    django.setup()
    import numpy  # noqa: F401  (already there for rank-bm25: not the model's cost)

    base = rss_mb()
    started = time.perf_counter()
    import onnxruntime  # noqa: F401

    imported = time.perf_counter()
    after_import = rss_mb()
    from servers.discovery import embedding

    assert embedding.available()
    loaded = time.perf_counter()
    after_load = rss_mb()
    queries = [f"find the tool that does thing number {i} for me" for i in range(200)]
    times = []
    for query in queries:
        t = time.perf_counter()
        embedding.embed([query], embedding.MAX_QUERY_TOKENS)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    cached = time.perf_counter()
    embedding.embed_query("same query")
    embedding.embed_query("same query")
    print(
        f"import onnxruntime: {(imported - started) * 1000:.0f} ms, +{after_import - base:.0f} MB"
    )
    print(
        f"load the model: {(loaded - imported) * 1000:.0f} ms, +{after_load - after_import:.0f} MB"
    )
    print(f"resident after 200 queries: +{rss_mb() - base:.0f} MB over the process without it")
    print(
        f"query embedding: p50 {times[100]:.1f} ms, p95 {times[190]:.1f} ms, "
        f"max {times[-1]:.1f} ms (one thread)"
    )
    print(f"(two calls of the same query: {(time.perf_counter() - cached) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
