"""Access statistics: kept in the data directory, counted, carried over renames, never in the vault."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.errors import StoreError
from companion.recall.access import AccessLog
from companion.recall.decay import AccessStats

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_record_counts_and_keeps_the_latest_time(tmp_path: Path) -> None:
    log = AccessLog(tmp_path / "access.sqlite")
    assert log.stats(["a.md"]) == {"a.md": AccessStats()}
    log.record(["a.md", "b.md", "a.md"], T0)  # one access each per surfacing
    log.record(["a.md"], T0 + timedelta(days=2))
    log.record(["a.md"], T0 - timedelta(days=5))  # an older replay never moves the time back
    stats = log.stats(["a.md", "b.md", "c.md"])
    assert stats["a.md"] == AccessStats(T0 + timedelta(days=2), 3)
    assert stats["b.md"] == AccessStats(T0, 1)
    assert stats["c.md"] == AccessStats()
    log.close()
    assert AccessLog(tmp_path / "access.sqlite").stats(["b.md"])["b.md"].access_count == 1  # persisted


def test_rename_and_forget(tmp_path: Path) -> None:
    log = AccessLog(tmp_path / "access.sqlite")
    log.record(["old.md", "gone.md"], T0)
    log.rename("old.md", "new.md")
    log.forget(["gone.md"])
    stats = log.stats(["old.md", "new.md", "gone.md"])
    assert stats["new.md"].access_count == 1
    assert stats["old.md"] == stats["gone.md"] == AccessStats()


def test_naive_times_are_utc(tmp_path: Path) -> None:
    log = AccessLog(tmp_path / "access.sqlite")
    log.record(["a.md"], datetime(2026, 6, 1, 12, 0))
    assert log.stats(["a.md"])["a.md"].last_accessed_at == T0


def test_a_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "access.sqlite"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match="sets the file aside"):
        AccessLog(bad)
