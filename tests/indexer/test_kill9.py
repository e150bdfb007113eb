"""kill -9 during a 2,000-note build, restart: the index equals a clean build's, without a full rebuild.

The real `companion index` process is killed at several moments of its build. The vault selects the hashing
embedder in its config so the build takes seconds; what is under test is the journal between the vector store and
the manifest, which does not depend on the model.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.embedding.hashing import HashEmbedder
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

NOTES = 2000


def _make_vault(root: Path) -> None:
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    for i in range(NOTES):
        turns = "\n\n".join(
            f"**{'alice' if t % 2 else 'sentinel'}:** turn {t} of session {i} on topic {i % 37} with detail {i * 7 + t}"
            for t in range(6)
        )
        write(
            root,
            f"Conversations/{i // 100:02d}/s{i:04d}.md",
            f"---\ntype: conversation\n---\n{turns}\n",
        )


def _index(vault: Path, data: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "companion",
            "index",
            "--json",
            "--vault",
            str(vault),
            "--data-dir",
            str(data),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _indexed(data: Path) -> int:
    files = list(data.glob("vaults/*/manifest.sqlite"))
    if not files:
        return 0
    try:
        with sqlite3.connect(f"file:{files[0]}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM notes").fetchone()[0])
    except sqlite3.Error:
        return 0  # not created yet, or busy: poll again


@pytest.mark.timeout(900)
def test_kill9_mid_build_then_restart_equals_clean_build(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _make_vault(vault)
    data = tmp_path / "data"
    # Kill each run as soon as it has committed past a mark, so every kill lands mid-build.
    for mark in (300, 900, 1500):
        proc = _index(vault, data)
        deadline = time.monotonic() + 300
        while proc.poll() is None and _indexed(data) < mark and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the build finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert mark <= _indexed(data) < NOTES
    final = _index(vault, data)
    out, err = final.communicate(timeout=600)
    assert final.returncode == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["notes_total"] == NOTES
    # Resumed, not rebuilt: the notes committed before the last kill were not indexed again.
    assert report["notes_indexed"] <= NOTES - 1500

    ws = workspace(vault, HashEmbedder(), data_dir=data)
    ids = ws.store().ids()
    assert ids == ws.manifest.chunk_ids()
    assert ws.manifest.queue.pending() == []
    clean = workspace(vault, HashEmbedder(), data_dir=tmp_path / "clean")
    clean.indexer().sync()
    assert ids == clean.store().ids()
    assert ws.store().count() == clean.store().count() == len(ids)
    ws.close()
    clean.close()
