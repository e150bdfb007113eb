"""`companion bench --only summaries`, small, through the real command: a year of session summaries indexed words
first, embedded, restarted, joined by one more exchange and one more heartbeat, and asked questions."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from tests.helpers.cli import run_companion

pytestmark = pytest.mark.model


def test_the_summaries_bench_leaves_the_heartbeats_out_and_restarts_without_reading(tmp_path: Path) -> None:
    out = run_companion(
        "bench",
        *("--only", "summaries", "--summaries", "60", "--summaries-heartbeats", "50", "--queries", "5"),
        *("--dir", str(tmp_path)),
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    figures = json.loads(out.stdout.splitlines()[-1])["summaries"]
    written = figures["written"]
    assert figures["summaries"] == 60 == sum(written.values())
    assert written["heartbeat"] == 30 and written["exchange"] > 0

    vault = tmp_path / "summaries" / "vault"
    days = sorted(p.name for p in (vault / "ops" / "sessions").iterdir())
    assert (date.fromisoformat(days[-1]) - date.fromisoformat(days[0])).days >= 360  # spread over a year
    assert len(list(vault.rglob("*.md"))) == 62  # with the exchange and the heartbeat that arrived afterwards

    words = figures["words_first"]
    assert words["s"] > 0 and words["summaries_per_s"] > 0
    # Every heartbeat is left out; acknowledgements only once they repeat often enough, which 60 summaries may not.
    assert written["heartbeat"] <= words["sessions_left_out"] <= written["heartbeat"] + written["acknowledgement"]
    assert words["notes_indexed"] + words["sessions_left_out"] == 60
    assert words["chunks_queued"] >= written["exchange"]

    embedding = figures["embedding"]
    assert embedding["embedder"] == "all-MiniLM-L6-v2" and "measured" in embedding["how"]
    assert embedding["chunks"] == embedding["chunks_embedded"] == words["chunks_queued"]
    assert embedding["tokens"] > embedding["chunks"] and embedding["s"] > 0 and embedding["tokens_per_s"] > 0
    assert embedding["model_alone_sample"]["chunks"] == embedding["chunks"]  # fewer than the sample's 512
    assert embedding["model_alone_sample"]["tokens_per_s"] > 0

    restart = figures["restart"]
    assert restart["s"] > 0
    assert restart["notes_indexed"] == restart["notes_unchanged"] == restart["sessions_left_out"] == 0

    arriving = figures["one_more_summary"]
    assert arriving["exchange"]["notes_indexed"] == 1 and arriving["exchange"]["chunks_embedded"] >= 1
    assert arriving["heartbeat"]["notes_indexed"] == 0 and arriving["heartbeat"]["sessions_left_out"] == 1
    assert arriving["exchange"]["s"] > 0 and arriving["heartbeat"]["s"] > 0

    recall = figures["recall"]
    assert recall["queries"] == 5 and 0 < recall["p50_ms"] <= recall["p95_ms"]
    assert recall["heartbeats_listed"] == 0 and recall["asked_summary_listed"] > 0
