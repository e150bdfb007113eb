"""Indexing measures: the cold build against the model alone, a restart with nothing changed, and the time from
a save to the note being searchable."""

from __future__ import annotations

import json
import random
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from companion.cli.bench.common import (
    choose_model,
    finds,
    percentile,
    run_companion,
    synthetic_vault,
    timed,
    wait_for,
    workspace,
)


def cold_build(root: Path, notes: int) -> dict[str, Any]:
    """Index a fresh vault with the real model, and embed the same chunk texts alone, before and after.

    The model's own speed drifts by several percent between runs here, so the baseline is the mean of two
    runs around the build, and the time spent outside the model is reported on its own as well.
    """
    synthetic_vault(root, notes)
    ws = workspace(root)
    chunker = ws.chunker()
    texts = [c.text for p in sorted(ws.vault.scan()) for c in chunker.chunk(ws.vault.read_note(p))]
    embedder = ws.embedder()
    alone = [timed(lambda: embedder.embed(texts))]
    report = ws.indexer().sync()
    alone.append(timed(lambda: embedder.embed(texts)))
    ws.close()
    baseline = statistics.mean(alone)
    return {
        "embedder": embedder.model_id,
        "notes": report.notes_indexed,
        "chunks": len(texts),
        "build_s": round(report.elapsed_s, 3),
        "embed_in_build_s": round(report.embed_s, 3),
        "outside_model_s": round(report.elapsed_s - report.embed_s, 3),
        "embed_alone_s": [round(a, 3) for a in alone],
        "ratio": round(report.elapsed_s / baseline, 3),
        "chunks_per_s": round(len(texts) / report.elapsed_s, 1),
        "target_ratio": 1.15,
    }


def restart(root: Path, notes: int, embedder_name: str) -> dict[str, Any]:
    """Index once, then time a restart with nothing changed: in-process and as a whole CLI run.

    The vault's config names the embedder that fills the index, so the `companion index` run below opens the index
    with the model that built it, as a user's restart does (with another model it would embed every note again).
    """
    vault = synthetic_vault(root, notes)
    choose_model(vault, embedder_name)
    ws = workspace(root)
    first = ws.indexer().sync()
    ws.close()
    ws = workspace(root)
    started = time.perf_counter()
    again = ws.indexer().sync()
    in_process = time.perf_counter() - started
    ws.close()
    # A whole `companion index` process, interpreter start-up included. With nothing changed it opens neither the
    # model nor the store.
    started = time.perf_counter()
    out = run_companion(
        *("index", "--json", "--vault", str(vault), "--data-dir", str(root / "data")), what="`companion index`"
    )
    cli = round(time.perf_counter() - started, 3)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "embedder": embedder_name,
        "notes": first.notes_indexed,
        "first_build_s": round(first.elapsed_s, 2),
        "restart_s": round(in_process, 4),
        "restart_cli_s": cli,
        "restart_chunks_embedded": again.chunks_embedded,
        "restart_notes_read": again.notes_indexed + again.notes_unchanged,
        "restart_cli_chunks_embedded": report["chunks_embedded"],
        "restart_cli_notes_read": report["notes_indexed"] + report["notes_unchanged"],
        "target_s": 1.0,
    }


def save_to_searchable(root: Path, saves: int, notes: int = 200) -> dict[str, Any]:
    """With the watcher running on a vault of `notes` notes, append a unique word to a note and time until recall
    returns it."""
    from companion.demo.synth import append_paragraph
    from indexer.manifest import Manifest
    from indexer.search import Searcher
    from indexer.watcher import watch

    synthetic_vault(root, notes)
    ws = workspace(root)
    indexer = ws.indexer()
    indexer.sync()
    store = ws.store()
    reader = Manifest(ws.paths.manifest)
    searcher = Searcher(reader, ws.embedder, lambda: store)
    stop = threading.Event()
    ready = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(indexer, stop, lambda r, n: None),
        kwargs={"debounce_ms": 1600, "step_ms": 50, "on_ready": ready.set},
        daemon=True,
    )
    thread.start()
    ready.wait(30)
    paths = sorted(ws.vault.scan())
    rng = random.Random(3)
    latencies: list[float] = []
    misses = 0
    for i in range(saves):
        rel = rng.choice(paths)
        word = f"zebraword{i}x{rng.randrange(10**6)}"
        started = time.perf_counter()
        append_paragraph(ws.root / rel, f"**alice:** a new remark about {word} today.")
        found = wait_for(finds(searcher, word, rel), 10.0)
        if found is None:
            misses += 1
        else:
            latencies.append(found - started)
        time.sleep(0.05)
    stop.set()
    thread.join(10)
    reader.close()
    ws.close()
    return {
        "saves": saves,
        "found": len(latencies),
        "missed": misses,
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 95) * 1000, 1) if latencies else None,
        "max_ms": round(max(latencies) * 1000, 1) if latencies else None,
        "target_p95_ms": 250,
    }
