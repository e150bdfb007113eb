"""What the measures share: synthetic vaults, workspaces on them, and timing helpers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.embedding.providers import Embedder
from companion.errors import BenchError
from companion.workspace import Workspace

SYNTH_NOW = datetime(2026, 6, 1, 12, 0)
"""The `now` synthetic vaults are written for, and the moment recall is asked at."""


def cpus() -> int:
    """Cores this machine has."""
    return os.cpu_count() or 1


def workspace(root: Path, embedder: Embedder | None = None) -> Workspace:
    """The workspace of the synthetic vault under `root` (its data beside it), with `embedder` if given."""
    return Workspace.open(root / "vault", data_dir=root / "data", embedder=embedder)


def synthetic_vault(root: Path, notes: int) -> Path:
    """A synthetic vault of `notes` notes under `root`, written once and reused by later measures."""
    from companion.demo.synth import write_synthetic_vault

    vault = root / "vault"
    if not vault.exists():
        write_synthetic_vault(vault, notes, variant=1, now=SYNTH_NOW)
    return vault


def percentile(values: list[float], pct: float) -> float:
    """The `pct` percentile of `values` (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def timed(work: Callable[[], object]) -> float:
    """Seconds `work` takes."""
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def finds(searcher: Any, query: str, path: str) -> Callable[[], bool]:
    """A check that `query` finds `path` in the top 3."""
    return lambda: any(h.path == path for h in searcher.search(query, k=3))


def wait_for(check: Callable[[], bool], timeout: float) -> float | None:
    """The moment `check` first holds, or None when `timeout` seconds pass first."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if check():
            return time.perf_counter()
        time.sleep(0.002)
    return None


def chunk_texts(ws: Workspace) -> list[str]:
    """The text of every chunk of the workspace's vault, as a build would embed them (unreadable notes skipped, as a
    build skips them)."""
    from companion.errors import NoteError
    from indexer.chunking import redact_note

    chunker = ws.chunker()
    texts: list[str] = []
    for path in sorted(ws.vault.scan()):
        try:
            texts.extend(c.text for c in chunker.chunk(redact_note(ws.vault.read_note(path))))
        except NoteError:
            continue
    return texts


def run_companion(*args: str, what: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """Run `companion ARGS` as a user would, in a new process; raise `BenchError` naming `what` with the end of its
    error output when it fails."""
    out = subprocess.run(
        [sys.executable, "-m", "companion", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if out.returncode != 0:
        raise BenchError(f"{what} failed (exit status {out.returncode}): {out.stderr.strip()[-2000:]}")
    return out


def choose_model(vault: Path, provider: str, model: str | None = None) -> None:
    """Write the vault's config so that every process on it, the bench's and the `companion` commands it runs, embeds
    with `provider` (and `model`): an index is only reused by the model that built it."""
    from companion.locations import config_path

    path = config_path(vault)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["embedding:", f"  provider: {provider}"] + ([f"  model: {model}"] if model else [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def folder_mb(folder: Path) -> float:
    """Size on disk of every file under `folder`, in MB."""
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 2)
