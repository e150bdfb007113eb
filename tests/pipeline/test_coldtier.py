"""The cold tier on archives the real pipeline wrote: listing, search, dedup across files, a truncated archive, xz."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.cli import main
from companion.config import parse_config
from companion.pipeline.coldtier import ColdQuery, archive_roots, list_archives, search_archives
from companion.pipeline.history import serialize
from companion.pipeline.run import process_vault

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)

CONFIG = """
session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: retain
      max_age_days: 5
    - type: archive
      destination: ./cold-storage
"""


def write_log(vault: Path, agent: str, days: range, now: datetime = NOW) -> None:
    """One entry a day, `days` ago each, with a searchable word."""
    lines = [
        serialize(
            {
                "id": f"{agent}-{d}",
                "ts": (now - timedelta(days=d)).isoformat(),
                "agent": agent,
                "text": f"{agent} day {d} WORD{d}",
            }
        )
        for d in sorted(days, reverse=True)
    ]
    path = vault / "agents" / agent / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".companion").mkdir(parents=True)
    (root / ".companion" / "companion.yaml").write_text(CONFIG, encoding="utf-8")
    write_log(root, "sentinel", range(10))  # days 6..9 archived (an entry exactly 5 days old stays)
    write_log(root, "helper", range(8))  # days 6..7 archived
    process_vault(root, parse_config(CONFIG), NOW)
    return root


def roots(vault: Path) -> tuple[Path, ...]:
    return archive_roots(vault, parse_config(CONFIG))


def test_lists_archives_with_counts_and_ranges(vault: Path) -> None:
    listing = list_archives(roots(vault))
    assert listing.problems == ()
    by_agent = {f.agent: f for f in listing.files}
    assert sorted(by_agent) == ["helper", "sentinel"]
    sentinel = by_agent["sentinel"]
    assert sentinel.entries == 4
    assert sentinel.first_ts == NOW - timedelta(days=9) and sentinel.last_ts == NOW - timedelta(days=6)
    assert sentinel.path.parent == (vault / "cold-storage" / "sentinel").resolve()
    assert sentinel.compressed_bytes > 0 and sentinel.uncompressed_bytes > 4 * 50
    assert by_agent["helper"].entries == 2
    assert [f.agent for f in list_archives(roots(vault), agent="helper").files] == ["helper"]


def test_search_by_text_date_and_agent(vault: Path) -> None:
    hit = search_archives(roots(vault), ColdQuery(text="word8")).hits
    assert [(h.entry.id, h.line) for h in hit] == [("sentinel-8", 2)]  # lines 9, 8, 7, 6: day 8 is the second
    assert search_archives(roots(vault), ColdQuery(text="word2")).hits == ()  # still in the log, not archived
    since, until = NOW - timedelta(days=7, hours=1), NOW - timedelta(days=6, hours=1)
    dated = search_archives(roots(vault), ColdQuery(since=since, until=until)).hits
    assert sorted(h.entry.id for h in dated) == ["helper-7", "sentinel-7"]
    everything = search_archives(roots(vault), ColdQuery(limit=3))
    assert everything.matched == 6 and [h.entry.ts for h in everything.hits] == sorted(
        (h.entry.ts for h in everything.hits), reverse=True
    )
    assert everything.hits[0].entry.ts == NOW - timedelta(days=6)
    only = search_archives(roots(vault), ColdQuery(text="day", agent="helper", limit=None)).hits
    assert {h.agent for h in only} == {"helper"} and len(only) == 2


def test_duplicates_across_files_are_shown_once(vault: Path) -> None:
    # A crash after the archive was written but before the log was rewritten: the next run archives them again.
    folder = vault / "cold-storage" / "sentinel"
    (first,) = folder.glob("*.jsonl.xz")
    shutil.copy(first, folder / first.name.replace(".jsonl.xz", "-2.jsonl.xz"))
    result = search_archives(roots(vault), ColdQuery(text="sentinel day", limit=None))
    assert sorted(h.entry.id for h in result.hits) == [f"sentinel-{d}" for d in range(6, 10)]
    assert result.duplicates == 4 and {h.archive for h in result.hits} == {first.resolve()}


def test_truncated_archive_is_reported_and_skipped(vault: Path) -> None:
    (broken,) = (vault / "cold-storage" / "sentinel").glob("*.jsonl.xz")
    broken.write_bytes(broken.read_bytes()[:-20])
    listing = list_archives(roots(vault))
    assert [f.agent for f in listing.files] == ["helper"]
    assert len(listing.problems) == 1 and str(broken) in listing.problems[0] and "truncated" in listing.problems[0]
    result = search_archives(roots(vault), ColdQuery(text="day", limit=None))
    assert {h.agent for h in result.hits} == {"helper"} and len(result.problems) == 1


def test_bad_json_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    import lzma

    folder = tmp_path / "cold" / "x"
    folder.mkdir(parents=True)
    good = serialize({"id": "a", "ts": NOW.isoformat(), "agent": "x", "t": "hello"})
    (folder / "x-20260322T120000Z.jsonl.xz").write_bytes(lzma.compress(b"{oops\n" + good + b"\n"))
    result = search_archives([tmp_path / "cold"], ColdQuery(text="HELLO"))
    assert [(h.entry.id, h.line) for h in result.hits] == [("a", 2)]
    assert len(result.problems) == 1 and "x-20260322T120000Z.jsonl.xz, line 1: not JSON" in result.problems[0]


@pytest.mark.skipif(shutil.which("xz") is None, reason="the xz command is not installed")
def test_archives_are_readable_with_xz(vault: Path) -> None:
    (archive,) = (vault / "cold-storage" / "sentinel").glob("*.jsonl.xz")
    out = subprocess.run(["xz", "-dc", str(archive)], check=True, capture_output=True, timeout=10).stdout
    assert [json.loads(line)["id"] for line in out.splitlines()] == [f"sentinel-{d}" for d in range(9, 5, -1)]


def test_cli_list_and_search(vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # a bare --until date is local time
    time.tzset()
    try:
        assert main(["archives", "--vault", str(vault)]) == 0
        out = capsys.readouterr().out
        assert "cold-storage/sentinel/sentinel-" in out and "4 entries" in out and "2 archive files, 6 entries" in out

        assert main(["archives", "search", "word6", "--vault", str(vault), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert sorted(h["id"] for h in data["hits"]) == ["helper-6", "sentinel-6"] and data["problems"] == []

        # Options before the action are kept; a bare --until date includes that day.
        args = ["archives", "--json", "--vault", str(vault), "search", "day", "--agent", "sentinel"]
        assert main([*args, "--until", "2026-03-14"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert [h["id"] for h in data["hits"]] == ["sentinel-8", "sentinel-9"]

        assert main(["archives", "search", "day", "--vault", str(vault), "--since", "nope"]) == 2
        assert "--since 'nope'" in capsys.readouterr().err
    finally:
        monkeypatch.undo()
        time.tzset()


def test_cli_folder(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["archives", "list", "--folder", str(vault / "cold-storage" / "helper"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["entries"] for a in data["archives"]] == [2]
