"""The checks behind `doctor` on real index files: each damaged vector-index file is named before Chroma loads it
(a truncated link list crashes Chroma's native code), and a catch-up mends an emptied full-text index by itself."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer import fulltext
from indexer.storefiles import damaged_files
from tests.helpers.files import FILLER_WORDS, write
from tests.helpers.workspaces import workspace

WORDS = FILLER_WORDS


def _vault(root: Path, notes: int) -> Path:
    for i in range(notes):
        words = " ".join(WORDS[(i * 5 + k) % len(WORDS)] for k in range(25))
        write(root, f"note {i:04d}.md", f"# Topic {i}\n\n{words} marker{i:04d}\n")
    return root


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An embedded store holding 1,100 vectors: past Chroma's 1,000 unsaved ones, so its index files are written."""
    base = tmp_path_factory.mktemp("files")
    ws = workspace(_vault(base / "vault", 1100), data_dir=base / "data")
    try:
        with ws.writing():
            assert ws.indexer().sync().chunks_embedded == 1100
        return ws.paths.chroma
    finally:
        ws.close()


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


DAMAGE: dict[str, tuple[str, Callable[[bytes], bytes] | None, str, bool]] = {
    "link lists truncated": ("link_lists.bin", _half, "ends at element", False),
    "link lists emptied": ("link_lists.bin", lambda data: b"", "is 0 bytes", False),
    "last links cut short": ("link_lists.bin", lambda data: data[:-4], "ends inside the links", False),
    "a link list's length garbled": ("link_lists.bin", lambda data: b"\x07" + data[1:], "is damaged", False),
    "link lists missing": ("link_lists.bin", None, "is missing", False),
    "id map missing": ("index_metadata.pickle", None, "is missing", False),
    "id map truncated": ("index_metadata.pickle", _half, "is unreadable", True),
    "id map of another index": ("index_metadata.pickle", lambda data: b"\x80\x03}q\x00.", "holds no id map", True),
    "lengths truncated": ("length.bin", _half, "expected", False),
    "vectors truncated": ("data_level0.bin", _half, "expected", False),
}
"""Each damaged file: which, what becomes of its bytes (None: deleted), what the check says, and whether only the
deep check (`doctor`, `companion index`) sees it."""


def test_sound_files_pass_both_checks(chroma: Path) -> None:
    assert damaged_files(chroma) == damaged_files(chroma, deep=True) == []


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_each_damaged_vector_index_file_is_named(case: str, chroma: Path, tmp_path: Path) -> None:
    name, change, says, deep_only = DAMAGE[case]
    copy = tmp_path / "chroma"
    shutil.copytree(chroma, copy)
    segment = next(p for p in copy.iterdir() if (p / "header.bin").is_file())
    if change is None:
        (segment / name).unlink()
    else:
        (segment / name).write_bytes(change((segment / name).read_bytes()))
    deep = damaged_files(copy, deep=True)
    assert len(deep) == 1 and deep[0].startswith(f"{segment.name}/{name} ") and says in deep[0], deep
    assert damaged_files(copy) == ([] if deep_only else deep)


def test_a_catch_up_fills_an_emptied_full_text_index_again(tmp_path: Path) -> None:
    ws = workspace(_vault(tmp_path / "vault", 12), data_dir=tmp_path / "data")
    try:
        with ws.writing():
            ws.indexer().sync()
        db = sqlite3.connect(ws.paths.manifest, isolation_level=None)
        db.execute("DELETE FROM fts")
        db.close()
        health = fulltext.file_health(ws.paths.manifest)
        assert (health.rows, health.notes, health.healthy) == (0, 12, False)
        assert ws.manifest.lexical("marker0004", 5) == []  # what a user saw: lexical search found nothing

        report = ws.catch_up()
        assert report is not None and report.notes_indexed == 12 and report.chunks_embedded == 0
        assert [p for p, _ in ws.manifest.lexical("marker0004", 5)] == ["note 0004.md"]
        assert fulltext.file_health(ws.paths.manifest).healthy
    finally:
        ws.close()
