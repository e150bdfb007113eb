"""The app's measures: first screen and knob latency, and its responsiveness while notes are being indexed."""

from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from companion.cli.bench.common import SYNTH_NOW, percentile, synthetic_vault, workspace
from companion.embedding.hashing import HashEmbedder


def tui(root: Path, notes: int, embedder_name: str, changes: int = 20) -> dict[str, Any]:
    """The app, headless, on an indexed vault of `notes` notes: time to the first screen with recalled data, and
    from a knob's message to both panes refilled under the new policy."""
    import asyncio

    from companion.tui.app import CompanionApp
    from widgets.policy_knobs import PolicyKnobs

    synthetic_vault(root, notes)
    embedder = HashEmbedder() if embedder_name == "hash" else None
    ws = workspace(root, embedder)
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
        "knob_change_p95_ms": round(percentile(knob, 95) * 1000, 2),
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

    synthetic_vault(root, base)
    shutil.rmtree(root / "vault" / "incoming", ignore_errors=True)  # a previous run's, with --dir
    ws = workspace(root)
    ws.indexer().sync()
    _notes_before, chunks_before = ws.manifest.counts()
    if not (root / "incoming").exists():
        write_synthetic_vault(root / "incoming", incoming, variant=2, now=SYNTH_NOW)
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
        **_latencies(lag, knob, search),
        "targets": {"knob_change_ms": 100},
    }


def _latencies(lag: list[float], knob: list[float], search: list[float]) -> dict[str, Any]:
    """The event loop's lateness, knob presses and searches, in milliseconds."""

    def ms(value: float) -> float:
        return round(value * 1000, 1)

    return {
        "loop_lag_over_100ms": sum(1 for value in lag if value > 0.1),
        "loop_samples": len(lag),
        "loop_lag_p50_ms": ms(statistics.median(lag)),
        "loop_lag_p95_ms": ms(percentile(lag, 95)),
        "loop_lag_max_ms": ms(max(lag)),
        "knob_change_p50_ms": ms(statistics.median(knob)) if knob else None,
        "knob_change_p95_ms": ms(percentile(knob, 95)) if knob else None,
        "knob_changes": len(knob),
        "search_p50_ms": ms(statistics.median(search)) if search else None,
        "search_max_ms": ms(max(search)) if search else None,
        "searches": len(search),
    }
