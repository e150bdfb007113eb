"""`companion bench`: measure the performance targets of SPEC §6 on synthetic vaults, as JSON.

Each figure comes from running the real code paths: the indexer, the watcher, the searcher. Where a
measurement does not depend on what the vectors mean (a restart's cost, the store's size), the index may be
filled with the hashing embedder (`--embedder hash`) to save hours of model time; the output says which
embedder each figure used.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from companion.cli.output import print_json
from companion.embedding.hashing import HashEmbedder
from companion.embedding.providers import Embedder
from companion.workspace import Workspace

MEASURES = ("cold", "restart", "save", "recall", "batch", "tui", "tui-indexing", "process")

SYNTH_NOW = datetime(2026, 6, 1, 12, 0)
"""The `now` synthetic vaults are written for, and the moment recall is asked at."""


def register(sub: Any) -> None:
    """Add the `bench` subcommand."""
    p = sub.add_parser("bench", help="measure indexing and recall speed on synthetic vaults (JSON)")
    p.add_argument("--only", default=",".join(MEASURES), help=f"comma list of {', '.join(MEASURES)}")
    p.add_argument("--cold-notes", type=int, default=500, help="notes for the cold build (real model)")
    p.add_argument("--restart-notes", type=int, default=10_000, help="notes for the restart check")
    p.add_argument("--recall-notes", type=int, default=10_000, help="notes for recall latency")
    p.add_argument("--saves", type=int, default=50, help="saves for save-to-searchable latency")
    p.add_argument("--queries", type=int, default=200, help="queries for recall latency")
    p.add_argument(
        "--embedder",
        choices=("minilm", "hash"),
        default="hash",
        help="embedder that fills the big restart/recall vaults (the cold build always uses minilm)",
    )
    p.add_argument(
        "--query-embedder",
        choices=("minilm", "hash"),
        default="minilm",
        help="embedder for recall's questions (default minilm: the real per-query model cost is included)",
    )
    p.add_argument("--batch-notes", type=int, default=300, help="notes for the batch run (real model)")
    p.add_argument("--batch-queries", type=int, default=2000, help="questions in the batch run")
    p.add_argument(
        "--incoming-notes", type=int, default=1000, help="notes written into the vault while the app runs (real model)"
    )
    p.add_argument("--history-days", type=int, default=21, help="days of heartbeat history (144 entries a day)")
    p.add_argument("--entry-kb", type=int, default=154, help="size of one heartbeat entry in KB (seed 003: ~154)")
    p.add_argument("--dir", help="work folder (default: a temporary folder, removed afterwards)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the selected measures and print one JSON object."""
    only = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = set(only) - set(MEASURES)
    if unknown:
        raise SystemExit(f"companion bench: unknown measure(s) {', '.join(sorted(unknown))}")
    results: dict[str, Any] = {"machine": {"cpus": _cpus(), "python": sys.version.split()[0]}}
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as tmp:
        work = Path(args.dir) if args.dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if "cold" in only:
            results["cold_build"] = cold_build(work / "cold", args.cold_notes)
        if "restart" in only:
            results["restart"] = restart(work / "restart", args.restart_notes, args.embedder)
        if "save" in only:
            results["save_to_searchable"] = save_to_searchable(work / "save", args.saves)
        if "recall" in only:
            results["recall"] = recall(
                work / "recall", args.recall_notes, args.queries, args.embedder, args.query_embedder
            )
        if "batch" in only:
            results["batch"] = batch(work / "batch", args.batch_notes, args.batch_queries)
        if "tui" in only:
            results["tui"] = tui(work / "recall", args.recall_notes, args.embedder)
        if "tui-indexing" in only:
            results["tui_while_indexing"] = tui_while_indexing(work / "tui-indexing", args.incoming_notes)
        if "process" in only:
            results["process"] = process_history(work / "process", args.history_days, args.entry_kb)
    results["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print_json(results)
    return 0


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


def _workspace(root: Path, embedder: Embedder | None = None) -> Workspace:
    return Workspace.open(root / "vault", data_dir=root / "data", embedder=embedder)


def _vault(root: Path, notes: int) -> Path:
    from companion.demo.synth import write_synthetic_vault

    vault = root / "vault"
    if not vault.exists():
        write_synthetic_vault(vault, notes, seed=1, now=SYNTH_NOW)
    return vault


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def cold_build(root: Path, notes: int) -> dict[str, Any]:
    """Index a fresh vault with the real model, and embed the same chunk texts alone, before and after.

    The model's own speed drifts by several percent between runs here, so the baseline is the mean of two
    runs around the build, and the time spent outside the model is reported on its own as well.
    """
    _vault(root, notes)
    ws = _workspace(root)
    chunker = ws.chunker()
    texts = [c.text for p in sorted(ws.vault.scan()) for c in chunker.chunk(ws.vault.read_note(p))]
    embedder = ws.embedder()
    alone = [_timed(lambda: embedder.embed(texts))]
    report = ws.indexer().sync()
    alone.append(_timed(lambda: embedder.embed(texts)))
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


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def restart(root: Path, notes: int, embedder_name: str) -> dict[str, Any]:
    """Index once, then time a restart with nothing changed: in-process and as a whole CLI run."""
    _vault(root, notes)
    embedder = HashEmbedder() if embedder_name == "hash" else None
    ws = _workspace(root, embedder)
    first = ws.indexer().sync()
    ws.close()
    ws = _workspace(root, embedder)
    started = time.perf_counter()
    again = ws.indexer().sync()
    in_process = time.perf_counter() - started
    ws.close()
    # A whole `companion index` process, interpreter start-up included. With nothing changed it opens
    # neither the model nor the store, so it works on an index filled by either embedder.
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "index",
            "--json",
            "--vault",
            str(root / "vault"),
            "--data-dir",
            str(root / "data"),
        ],
        check=True,
        capture_output=True,
    )
    cli = round(time.perf_counter() - started, 3)
    return {
        "embedder": embedder_name,
        "notes": first.notes_indexed,
        "first_build_s": round(first.elapsed_s, 2),
        "restart_s": round(in_process, 4),
        "restart_cli_s": cli,
        "restart_chunks_embedded": again.chunks_embedded,
        "restart_notes_read": again.notes_indexed + again.notes_unchanged,
        "target_s": 1.0,
    }


def save_to_searchable(root: Path, saves: int) -> dict[str, Any]:
    """With the watcher running, append a unique word to a note and time until recall returns it."""
    from companion.demo.synth import append_paragraph
    from indexer.manifest import Manifest
    from indexer.search import Searcher
    from indexer.sync import index_data_paths
    from indexer.watcher import watch

    _vault(root, 200)
    ws = _workspace(root)
    indexer = ws.indexer()
    indexer.sync()
    store = ws.store()
    reader = Manifest(index_data_paths(ws.data_dir)[0])
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
        found = _wait_for(_finds(searcher, word, rel), 10.0)
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
        "p95_ms": round(_percentile(latencies, 95) * 1000, 1) if latencies else None,
        "max_ms": round(max(latencies) * 1000, 1) if latencies else None,
        "target_p95_ms": 250,
    }


def _finds(searcher: Any, query: str, path: str) -> Callable[[], bool]:
    return lambda: any(h.path == path for h in searcher.search(query, k=3))


def _wait_for(check: Callable[[], bool], timeout: float) -> float | None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if check():
            return time.perf_counter()
        time.sleep(0.002)
    return None


def recall(root: Path, notes: int, queries: int, embedder_name: str, query_embedder: str) -> dict[str, Any]:
    """Time hybrid search and the whole recall engine (k=10) over an index of `notes` notes.

    `search` is the index query alone (dense + BM25, fused); `engine` adds the hot and temporal tiers, the
    graph signal, decay and explanations. With `query_embedder=minilm` the questions are embedded by the real
    model even when the index was filled with the hashing one, so the model's per-query cost is included.
    """
    from companion.embedding.providers import MiniLMEmbedder
    from companion.recall.engine import Recall
    from indexer.search import Searcher

    _vault(root, notes)
    embedder = HashEmbedder() if embedder_name == "hash" else None
    ws = _workspace(root, embedder)
    ws.indexer().sync()
    asker: Callable[[], Embedder] = ws.embedder
    if query_embedder == "minilm" and embedder_name == "hash":
        model = MiniLMEmbedder()
        asker = lambda: model  # noqa: E731
    searcher = Searcher(ws.manifest, asker, ws.store)
    engine = Recall(searcher, ws.vault, ws.config.retention, ws.config.recall, None)
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
    serving = serving_memory(root, min(queries, 100)) if embedder_name == "hash" else None
    return {
        "serving_memory": serving,
        "embedder": ws.embedder().model_id,
        "query_embedder": asker().model_id,
        "notes": notes,
        "queries": queries,
        "search_p50_ms": round(statistics.median(search_times) * 1000, 2),
        "search_p95_ms": round(_percentile(search_times, 95) * 1000, 2),
        "engine_p50_ms": round(statistics.median(engine_times) * 1000, 2),
        "engine_p95_ms": round(_percentile(engine_times, 95) * 1000, 2),
        "dated_questions": len(dated_times),
        "engine_dated_p50_ms": round(statistics.median(dated_times) * 1000, 2) if dated_times else None,
        "engine_dated_p95_ms": round(_percentile(dated_times, 95) * 1000, 2) if dated_times else None,
        "target_p95_ms": 40,
    }


_SERVE = """
import json, sys
from pathlib import Path
from companion.cli.bench import _serve
print(json.dumps(_serve(Path(sys.argv[1]), int(sys.argv[2]))))
"""


def serving_memory(root: Path, queries: int) -> dict[str, Any]:
    """The memory of a fresh process that opens the built index and answers `queries` recalls with the real model:
    what a user's `recall`, `context` or app process holds, apart from the build (which this bench does in-process,
    and whose peak `max_rss_mb` reports)."""
    out = subprocess.run(
        [sys.executable, "-c", _SERVE, str(root), str(queries)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"companion bench: the serving process failed: {out.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _serve(root: Path, queries: int) -> dict[str, Any]:
    """The child of `serving_memory`: open, answer, report peak and current resident memory in MB."""
    from companion.embedding.providers import MiniLMEmbedder
    from companion.recall.engine import Recall
    from indexer.search import Searcher

    def resident_mb(field: str = "VmRSS:") -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0

    started = time.perf_counter()
    ws = _workspace(root, HashEmbedder())
    model = MiniLMEmbedder()
    searcher = Searcher(ws.manifest, lambda: model, ws.store)
    engine = Recall(searcher, ws.vault, ws.config.retention, ws.config.recall, None)
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
    vault = _vault(root, notes)
    ws = _workspace(root)
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
        raise SystemExit(f"companion bench: the batch failed: {out.stderr.strip()}")
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


def tui(root: Path, notes: int, embedder_name: str, changes: int = 20) -> dict[str, Any]:
    """The app, headless, on an indexed vault of `notes` notes: time to the first screen with recalled data, and
    from a knob's message to both panes refilled under the new policy."""
    import asyncio

    from companion.tui.app import CompanionApp
    from widgets.policy_knobs import PolicyKnobs

    _vault(root, notes)
    embedder = HashEmbedder() if embedder_name == "hash" else None
    ws = _workspace(root, embedder)
    ws.indexer().sync()
    app = CompanionApp(ws, as_of=SYNTH_NOW)
    first: list[float] = []
    knob: list[float] = []

    async def drive() -> None:
        started = time.perf_counter()
        async with app.run_test(size=(140, 42)) as pilot:
            while app.context is None:
                await pilot.pause(0.005)
            first.append(time.perf_counter() - started)
            while app.busy:
                await pilot.pause(0.01)
            knobs = app.query_one(PolicyKnobs)
            knobs.focus()
            for i in range(changes):
                seen = app.refreshes
                began = time.perf_counter()
                knobs.action_step(-1 if i % 2 == 0 else 1)  # hot_limit 3 -> 2 -> 3 ...
                while app.refreshes == seen:
                    await asyncio.sleep(0.001)
                knob.append(app.refreshed_at - began)
                await pilot.pause(0.05)
            while app.busy:
                await pilot.pause(0.01)  # let the note view finish before the app closes

    asyncio.run(drive())
    ws.close()
    return {
        "notes": notes,
        "first_screen_s": round(first[0], 3),
        "knob_change_p50_ms": round(statistics.median(knob) * 1000, 2),
        "knob_change_p95_ms": round(_percentile(knob, 95) * 1000, 2),
        "hot_sessions": len(app.context.sessions) if app.context else 0,
        "targets": {"first_screen_s": 1.0, "knob_change_ms": 100},
    }


def tui_while_indexing(root: Path, incoming: int, base: int = 200) -> dict[str, Any]:
    """The app, headless, while its own indexer embeds `incoming` new notes with the real model: how late the event
    loop runs, how long a knob press takes to refill both panes, and how long a search takes to show results."""
    import asyncio

    from companion.demo.synth import write_synthetic_vault
    from companion.tui.app import CompanionApp
    from widgets.policy_knobs import PolicyKnobs

    _vault(root, base)
    shutil.rmtree(root / "vault" / "incoming", ignore_errors=True)  # a previous run's, with --dir
    ws = _workspace(root)
    ws.indexer().sync()
    _notes_before, chunks_before = ws.manifest.counts()
    if not (root / "incoming").exists():
        write_synthetic_vault(root / "incoming", incoming, seed=2, now=SYNTH_NOW)
    questions = [
        "what did we decide about the garden",
        "how much was the ski trip budget",
        "which backup tool do we use",
        "when is the dentist appointment",
        "what did alice say about the kitchen",
    ]
    app = CompanionApp(ws, as_of=SYNTH_NOW)
    lag: list[float] = []
    knob: list[float] = []
    search: list[float] = []
    took: list[float] = []

    async def drive() -> None:
        async with app.run_test(size=(140, 42)) as pilot:
            while app.busy:
                await pilot.pause(0.01)
            batches = app.indexed_batches
            # The notes arrive as an agent writing into the vault would, as one folder of files.
            shutil.copytree(root / "incoming", root / "vault" / "incoming")
            started = time.perf_counter()
            knobs = app.query_one(PolicyKnobs)
            i = 0
            while app.indexed_batches == batches or not app.index_idle:
                tick = time.perf_counter()
                await asyncio.sleep(0.05)
                lag.append(time.perf_counter() - tick - 0.05)  # how late the loop woke: what a key press waits
                i += 1
                if i % 4 == 0:
                    seen, began = app.refreshes, time.perf_counter()
                    if i % 20 == 0:
                        app.query_text = f"{questions[(i // 20) % len(questions)]} ({i})"  # never a cached vector
                        app.refresh_recall()
                    else:
                        knobs.action_step(-1 if (i // 4) % 2 else 1)
                    while app.refreshes == seen:
                        await asyncio.sleep(0.001)
                    (search if i % 20 == 0 else knob).append(app.refreshed_at - began)
                if time.perf_counter() - started > 600:
                    break
            took.append(time.perf_counter() - started)

    asyncio.run(drive())
    notes, chunks = ws.manifest.counts()
    ws.close()
    return {
        "base_notes": base,
        "incoming_notes": incoming,
        "notes_after": notes,
        "chunks_embedded": chunks - chunks_before,
        "indexing_s": round(took[0], 1),
        "chunks_per_s": round((chunks - chunks_before) / took[0], 1),
        "loop_lag_over_100ms": sum(1 for value in lag if value > 0.1),
        "loop_samples": len(lag),
        "loop_lag_p50_ms": round(statistics.median(lag) * 1000, 1),
        "loop_lag_p95_ms": round(_percentile(lag, 95) * 1000, 1),
        "loop_lag_max_ms": round(max(lag) * 1000, 1),
        "knob_change_p50_ms": round(statistics.median(knob) * 1000, 1) if knob else None,
        "knob_change_p95_ms": round(_percentile(knob, 95) * 1000, 1) if knob else None,
        "knob_changes": len(knob),
        "search_p50_ms": round(statistics.median(search) * 1000, 1) if search else None,
        "search_max_ms": round(max(search) * 1000, 1) if search else None,
        "searches": len(search),
        "targets": {"knob_change_ms": 100},
    }


PROCESS_CONFIG = """session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: redact
    - type: archive
      older_than_days: 3
      destination: ./cold-storage
    - type: retain
      max_age_days: 3
    - type: embed
"""


def process_history(root: Path, days: int, entry_kb: int) -> dict[str, Any]:
    """Seed 003's heartbeat agent: `days` of polls every 10 minutes, each `entry_kb` KB (its system prompt), run
    through redact, archive (3 days), retain (3 days) and embed by a real `companion process` (with `--no-index`: the
    notes' embedding is the indexer's, measured by `cold`), timed and its peak memory taken from the kernel."""
    vault = root / "vault"
    log = vault / "agents" / "sentinel" / "history.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    (vault / ".companion").mkdir(exist_ok=True)
    (vault / ".companion" / "companion.yaml").write_text(PROCESS_CONFIG, encoding="utf-8")
    now = datetime(2026, 3, 22, 12).astimezone()
    prompt = (
        "You are sentinel, a monitoring agent; check the services and reply HEARTBEAT_OK when all is well. " * 2000
    )[: entry_kb * 1024]
    count = days * 144
    with log.open("w", encoding="utf-8") as handle:
        for i in range(count):
            ts = now - timedelta(minutes=10 * (count - i))
            poll = {
                "messages": [{"role": "user", "content": "Read HEARTBEAT.md; reply HEARTBEAT_OK if nothing is due."}]
            }
            answer = "HEARTBEAT_OK" if i % 50 else f"Disk on db-{i} is 91% full; I opened a ticket for the on-call."
            entry = {"id": f"s-{i}", "ts": ts.isoformat(), "agent": "sentinel", "system": prompt, "request": poll}
            handle.write(json.dumps({**entry, "response": answer}) + "\n")
    size = log.stat().st_size
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "companion", "process", "--vault", str(vault), "--data-dir", str(root / "data")]
    cmd += ["--as-of", now.isoformat(), "--no-index", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    elapsed = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"companion bench: companion process failed: {err.decode(errors='replace')}")
    (report,) = json.loads(out)["agents"]
    archived = sum(a["entries"] for a in report["archives"])
    return {
        "entries": count,
        "log_mb": round(size / 2**20, 1),
        "kept": report["kept"],
        "archived": archived,
        "archive_mb": round(sum(Path(a["path"]).stat().st_size for a in report["archives"]) / 2**20, 2),
        "log_after_mb": round(log.stat().st_size / 2**20, 1),
        "history_notes": sum(len(e["notes"]) for e in report["embeds"]),
        "seconds": round(elapsed, 2),
        "mb_per_s": round(size / 2**20 / elapsed, 1),
        "peak_rss_mb_of_the_largest_child": round(usage.ru_maxrss / 1024, 1),
    }
