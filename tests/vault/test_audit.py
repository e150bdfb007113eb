"""AuditLog on real files: nothing until the first record, blobs by digest, entries that survive a torn line."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from companion.errors import CurationError
from companion.vault.audit import AuditEntry, AuditLog, FileChange, sha256_hex


def change(path: str, before: bytes | None, after: bytes | None) -> FileChange:
    def digest(content: bytes | None) -> str | None:
        return None if content is None else sha256_hex(content)

    return FileChange(path, digest(before), digest(after))


def test_opening_creates_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    log = AuditLog(data)
    assert log.entries() == []
    assert log.undone_ids() == set()
    assert log.last_undoable() is None
    assert log.find("x") is None
    assert not data.exists()


def test_blobs_are_stored_by_digest(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    sha = log.store_blob(b"hello\n")
    assert sha == hashlib.sha256(b"hello\n").hexdigest()
    assert (tmp_path / "audit" / "blobs" / sha).read_bytes() == b"hello\n"
    assert log.store_blob(b"hello\n") == sha
    assert log.blob(sha) == b"hello\n"
    assert log.has_blob(sha)
    assert log.store_blob(b"") == sha256_hex(b"")
    assert log.blob(sha256_hex(b"")) == b""
    # Only the blobs: no temporary files left behind.
    assert sorted(p.name for p in (tmp_path / "audit" / "blobs").iterdir()) == sorted([sha, sha256_hex(b"")])


def test_missing_damaged_or_invalid_blobs_are_clear_errors(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    with pytest.raises(CurationError, match="missing"):
        log.blob("0" * 64)
    sha = log.store_blob(b"original")
    (tmp_path / "audit" / "blobs" / sha).write_bytes(b"tampered")
    with pytest.raises(CurationError, match="damaged"):
        log.blob(sha)
    with pytest.raises(CurationError, match="not a SHA-256"):
        log.blob("../../etc/passwd")
    assert not log.has_blob("../x")


def test_record_and_read_back(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    changes = [change("a.md", b"1", b"2"), change(".trash/b.md", None, b"3"), change("b.md", b"3", None)]
    first = log.record(source="cli", action="pin", summary="Pin a.md", changes=changes)
    second = log.record(source="app", action="delete", summary="Delete b.md", changes=changes[1:])
    assert log.entries() == [first, second]
    assert first.changes == tuple(changes)
    assert first.undoes is None
    assert first.id != second.id
    assert first.id < second.id
    when = datetime.fromisoformat(first.at)
    assert when.tzinfo is not None and when.utcoffset() == UTC.utcoffset(None)
    lines = (tmp_path / "audit" / "log.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["summary"] == "Pin a.md"
    assert log.find(second.id) == second


def test_unicode_summaries_survive(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    entry = log.record(source="app", action="tag", summary="Tags of Über/Café 🧠.md", changes=[])
    assert log.entries() == [entry]


def test_a_torn_last_line_is_skipped_and_the_next_record_is_readable(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    first = log.record(source="cli", action="pin", summary="one", changes=[change("a.md", b"1", b"2")])
    with (tmp_path / "audit" / "log.jsonl").open("ab") as handle:
        handle.write(b'{"v":1,"id":"2099","at":"x","sour')  # a crash mid-write
    assert log.entries() == [first]
    second = log.record(source="cli", action="type", summary="two", changes=[])
    assert log.entries() == [first, second]


def test_malformed_lines_are_skipped(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    first = log.record(source="cli", action="pin", summary="one", changes=[])
    path = tmp_path / "audit" / "log.jsonl"
    with path.open("ab") as handle:
        handle.write(b"[1, 2]\n")
        handle.write(b'{"id": 3}\n')
        handle.write(b"\xff\xfe\n")
        bad_change = {**json.loads(path.read_text().splitlines()[0]), "changes": [{"path": "a", "before": "zz"}]}
        handle.write(json.dumps(bad_change).encode() + b"\n")
    second = log.record(source="cli", action="pin", summary="two", changes=[])
    assert log.entries() == [first, second]


def test_undone_ids_and_last_undoable(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    a = log.record(source="cli", action="pin", summary="a", changes=[])
    b = log.record(source="cli", action="tag", summary="b", changes=[])
    assert log.last_undoable() == b
    undo_b = log.record(source="cli", action="undo", summary="Undo: b", changes=[], undoes=b.id)
    assert isinstance(undo_b, AuditEntry)
    assert log.undone_ids() == {b.id}
    assert log.last_undoable() == a
    log.record(source="cli", action="undo", summary="Undo: a", changes=[], undoes=a.id)
    assert log.undone_ids() == {a.id, b.id}
    assert log.last_undoable() is None
    c = log.record(source="app", action="archive", summary="c", changes=[])
    assert log.last_undoable() == c


def test_a_plain_undo_passes_over_forward_records(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    pin = log.record(source="cli", action="pin", summary="pin", changes=[])
    log.record(source="process", action="forward", summary="Forwarded 3 entries", changes=[])
    assert log.last_undoable() == pin


def test_modes_and_created_folders_are_recorded_and_read_back(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    moved = FileChange("people/Drop.md", sha256_hex(b"x"), None, mode=0o600)
    entry = log.record(
        source="cli",
        action="archive",
        summary="Archive",
        changes=[change("archive/people/Drop.md", None, b"x"), moved],
        folders=["archive", "archive/people"],
    )
    assert log.entries() == [entry]
    assert entry.changes[1].mode == 0o600 and entry.changes[0].mode is None
    assert entry.folders == ("archive", "archive/people")
    line = json.loads((tmp_path / "audit" / "log.jsonl").read_text(encoding="utf-8"))
    # Octal, as `chmod` takes it; left out where there is nothing to say.
    assert line["changes"][1]["mode"] == "600" and "mode" not in line["changes"][0]
    assert line["folders"] == ["archive", "archive/people"]


def test_entries_without_modes_or_folders_still_read(tmp_path: Path) -> None:
    path = tmp_path / "audit" / "log.jsonl"
    path.parent.mkdir(parents=True)
    old = {
        "v": 1,
        "id": "20260101T000000000000Z-abcd",
        "at": "2026-01-01T00:00:00.000000Z",
        "source": "cli",
        "action": "delete",
        "summary": "Delete a.md",
        "changes": [{"path": "a.md", "before": sha256_hex(b"a"), "after": None, "mode": "rw"}],
        "undoes": None,
    }
    path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    (entry,) = AuditLog(tmp_path).entries()
    # An unreadable mode is dropped, not the entry: the undo still brings the file back, with the usual mode.
    assert entry.changes[0].mode is None and entry.folders == ()
