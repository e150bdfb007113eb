"""Recall measures: search and engine latency at size, a serving process's memory, and `recall --batch`."""

from __future__ import annotations

import json
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.cli.bench.common import SYNTH_NOW, percentile, synthetic_vault, workspace
from companion.embedding.hashing import HashEmbedder
from companion.embedding.modelbuild import E5_MODEL_ID, MODEL_ID
from companion.embedding.providers import Embedder
from companion.errors import BenchError

QUERY_MODELS: dict[str, str | None] = {"minilm": MODEL_ID, "e5": E5_MODEL_ID, "hash": None}
"""The embedders recall's questions may be asked with (`--query-embedder`), and the local model each names (None:
the embedder that filled the index)."""


def recall(root: Path, notes: int, queries: int, embedder_name: str, query_embedder: str) -> dict[str, Any]:
    """Time hybrid search and the whole recall engine (k=10) over an index of `notes` notes.

    `search` is the index query alone (dense + BM25, fused); `engine` adds the hot and temporal tiers, the
    graph signal, decay and explanations. With `query_embedder=minilm` the questions are embedded by the real
    model even when the index was filled with the hashing one, so the model's per-query cost is included.
    """
    from companion.embedding.providers import MiniLMEmbedder
    from companion.recall.engine import Recall
    from indexer.search import Searcher

    synthetic_vault(root, notes)
    embedder = HashEmbedder() if embedder_name == "hash" else None
    ws = workspace(root, embedder)
    ws.indexer().sync()
    asker: Callable[[], Embedder] = ws.embedder
    query_model = QUERY_MODELS[query_embedder]
    if query_model is not None and embedder_name == "hash":
        model = MiniLMEmbedder(model_id=query_model)
        asker = lambda: model  # noqa: E731
    searcher = Searcher(ws.manifest, asker, ws.store)
    # The questions' model decides which shipped fusion weights rank, as in a vault configured for it.
    engine = Recall(searcher, ws.vault, ws.config.retention, ws.config.recall, None, multilingual=asker().multilingual)
    rng = random.Random(5)
    # Synthetic conversation titles start with their date, which nobody types: questions use the words after it.
    # Questions that do name a day are timed apart, as they take a second, date-scoped search.
    records = ws.manifest.notes()
    topics = [re.sub(r"^\d{4}-\d{2}-\d{2} ", "", n.title) for n in records]
    days = sorted({n.date[:10] for n in records if n.date})
    questions = [f"what did we say about {rng.choice(topics)}" for _ in range(queries)]
    dated = [f"what did we discuss on {rng.choice(days)}" for _ in range(max(queries // 4, 1))] if days else []
    searcher.search("warm up", k=10)
    engine.recall("warm up", k=10, as_of=SYNTH_NOW)
    search_times: list[float] = []
    engine_times: list[float] = []
    dated_times: list[float] = []
    for i, question in enumerate(questions):
        # A different question for each path, so neither reuses the other's cached query vector.
        other = f"{question} please" if i % 2 else f"tell me {question}"
        started = time.perf_counter()
        searcher.search(question, k=10)
        search_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        engine.recall(other, k=10, as_of=SYNTH_NOW)
        engine_times.append(time.perf_counter() - started)
    for question in dated:
        started = time.perf_counter()
        engine.recall(question, k=10, as_of=SYNTH_NOW)
        dated_times.append(time.perf_counter() - started)
    ws.close()
    serving = serving_memory(root, min(queries, 100), query_model or MODEL_ID) if embedder_name == "hash" else None
    return {
        "serving_memory": serving,
        "embedder": ws.embedder().model_id,
        "query_embedder": asker().model_id,
        "notes": notes,
        "queries": queries,
        "search_p50_ms": round(statistics.median(search_times) * 1000, 2),
        "search_p95_ms": round(percentile(search_times, 95) * 1000, 2),
        "engine_p50_ms": round(statistics.median(engine_times) * 1000, 2),
        "engine_p95_ms": round(percentile(engine_times, 95) * 1000, 2),
        "dated_questions": len(dated_times),
        "engine_dated_p50_ms": round(statistics.median(dated_times) * 1000, 2) if dated_times else None,
        "engine_dated_p95_ms": round(percentile(dated_times, 95) * 1000, 2) if dated_times else None,
        "target_p95_ms": 40,
    }


_SERVE = """
import json, sys
from pathlib import Path
from companion.cli.bench.recall import serve
print(json.dumps(serve(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
"""


def serving_memory(root: Path, queries: int, model_id: str = MODEL_ID) -> dict[str, Any]:
    """The memory of a fresh process that opens the built index and answers `queries` recalls with the real model:
    what a user's `recall`, `context` or app process holds, apart from the build (which this bench does in-process,
    and whose peak `max_rss_mb` reports)."""
    out = subprocess.run(
        [sys.executable, "-c", _SERVE, str(root), str(queries), model_id], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise BenchError(f"The serving process failed: {out.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def serve(root: Path, queries: int, model_id: str = MODEL_ID) -> dict[str, Any]:
    """The child of `serving_memory`: open, answer with the model `model_id`, report peak and current resident
    memory in MB."""
    from companion.embedding.providers import MiniLMEmbedder
    from companion.recall.engine import Recall
    from indexer.search import Searcher

    def resident_mb(field: str = "VmRSS:") -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0

    started = time.perf_counter()
    ws = workspace(root, HashEmbedder())
    model = MiniLMEmbedder(model_id=model_id)
    searcher = Searcher(ws.manifest, lambda: model, ws.store)
    engine = Recall(searcher, ws.vault, ws.config.retention, ws.config.recall, None, multilingual=model.multilingual)
    titles = [n.title for n in ws.manifest.notes()]
    rng = random.Random(3)
    after_open = resident_mb()
    for _ in range(queries):
        engine.recall(f"what did we say about {rng.choice(titles)}", k=10, as_of=SYNTH_NOW)
    return {
        "queries": queries,
        "seconds": round(time.perf_counter() - started, 2),
        "rss_opened_mb": after_open,
        "rss_end_mb": resident_mb(),
        # The kernel's high-water mark of this process's own memory (ru_maxrss would count the bench's, at the fork).
        "peak_rss_mb": resident_mb("VmHWM:"),
        "target_mb": 600,
    }


def batch(root: Path, notes: int, queries: int) -> dict[str, Any]:
    """`companion recall --batch` as a user runs it: a real process, the real model, `queries` questions."""
    vault = synthetic_vault(root, notes)
    ws = workspace(root)
    started = time.perf_counter()
    ws.indexer().sync()
    index_s = time.perf_counter() - started
    titles = [n.title for n in ws.manifest.notes()]
    ws.close()
    rng = random.Random(9)
    lines = [
        {"id": str(i), "query": f"what did we say about {rng.choice(titles)}", "as_of": SYNTH_NOW.isoformat()}
        for i in range(queries)
    ]
    batch_file = root / "batch.jsonl"
    batch_file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    started = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "recall",
            "--batch",
            str(batch_file),
            "--vault",
            str(vault),
            "--data-dir",
            str(root / "data"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise BenchError(
            f"`companion recall --batch` failed (exit status {out.returncode}): {out.stderr.strip()[-2000:]}"
        )
    answered = sum(1 for line in out.stdout.splitlines() if json.loads(line)["results"])
    return {
        "notes": notes,
        "queries": queries,
        "answered": answered,
        "index_s": round(index_s, 2),
        "batch_wall_s": round(wall, 2),
        "per_query_ms": round(1000 * wall / queries, 2),
        "target_s": 60,
    }


def nearest(root: Path, notes: int, queries: int) -> dict[str, Any]:
    """The dense side's nearest-neighbour search over `notes` notes (hashing embedder): exact (the default up to
    `EXACT_MAX` vectors: the same answer in every process) against Chroma's approximate index, with the time the
    exact search spends loading the vectors and how far the approximate answers stray from the exact ones."""
    import numpy as np

    from indexer.store import EXACT_MAX

    synthetic_vault(root, notes)
    ws = workspace(root, HashEmbedder())
    ws.indexer().sync()
    local = ws.owner.local()
    rng = random.Random(11)
    topics = [n.title for n in ws.manifest.notes()]
    vectors = ws.embedder().embed([f"what about {rng.choice(topics)}" for _ in range(queries)])
    started = time.perf_counter()
    local.nearest(vectors[0], 150)
    first = time.perf_counter() - started
    exact_times: list[float] = []
    exact: list[list[str]] = []
    for vector in vectors:
        started = time.perf_counter()
        exact.append([i for i, _ in local.nearest(vector, 150)])
        exact_times.append(time.perf_counter() - started)
    local.exact_max = 0
    approx_times: list[float] = []
    overlap: list[float] = []
    for vector, truth in zip(vectors, exact, strict=True):
        started = time.perf_counter()
        got = [i for i, _ in local.nearest(vector, 150)]
        approx_times.append(time.perf_counter() - started)
        overlap.append(len(set(got[:50]) & set(truth[:50])) / 50)
    local.exact_max = EXACT_MAX
    chunks = local.count()
    ws.close()
    return {
        "notes": notes,
        "chunks": chunks,
        "exact_up_to": EXACT_MAX,
        "exact_first_query_s": round(first, 3) if chunks <= EXACT_MAX else None,
        "exact_ms_p50": round(1000 * statistics.median(exact_times), 2),
        "approximate_ms_p50": round(1000 * statistics.median(approx_times), 2),
        "approximate_top50_overlap_mean": round(float(np.mean(overlap)), 4),
        "approximate_top50_overlap_min": round(min(overlap), 4),
        "queries": queries,
    }
