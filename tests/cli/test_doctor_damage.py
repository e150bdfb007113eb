"""Damage no vector read-back sees: `companion doctor` names it (text and `--json`), `companion index` mends it, and
lexical recall finds the notes again.

The full-text cases run the command in this process on a small vault; the vector-index cases run it in subprocesses
(a damaged vector-index file can crash Chroma's native code) on a vault big enough for Chroma to write those files.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from companion.cli import main
from companion.locations import vault_data_dir
from companion.workspace import Workspace
from tests.helpers.cli import run_companion
from tests.helpers.files import FILLER_WORDS, write

WORDS = FILLER_WORDS
CHROMA_WRITES_AT = 1000
"""Chroma keeps up to this many new vectors unsaved (its sync threshold); only then are the index files written."""


def _vault(root: Path, notes: int) -> Path:
    """`notes` notes, each with a word of its own (`markerNNNN`) that only lexical search matches exactly."""
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    for i in range(notes):
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(30))
        write(root, f"Notes/note {i:04d}.md", f"# Topic {i}\n\n{words} marker{i:04d}\n")
    return root


def _built(factory: pytest.TempPathFactory, notes: int) -> tuple[Path, Path]:
    base = factory.mktemp(f"built{notes}")
    vault = _vault(base / "vault", notes)
    done = run_companion("index", "--vault", str(vault), "--data-dir", str(base / "data"))
    assert done.returncode == 0, done.stderr
    return vault, base / "data"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built(tmp_path_factory, 30)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built(tmp_path_factory, CHROMA_WRITES_AT + 100)


def _copy(built: tuple[Path, Path], tmp_path: Path) -> tuple[Path, list[str]]:
    """A copy of a built index (the same vault) and the arguments that name it."""
    vault, data = built
    shutil.copytree(data, tmp_path / "data")
    return vault_data_dir(vault, str(tmp_path / "data")), ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]


FULLTEXT_DAMAGE = {
    "emptied": ("DELETE FROM fts", "is empty while the index holds 30 notes"),
    "dropped": ("DROP TABLE fts", "is missing (its table was dropped)"),
    "rows deleted": ("DELETE FROM fts WHERE rowid IN (SELECT id FROM notes ORDER BY id LIMIT 7)", "7 notes of 30"),
    "its word index dropped": ("DROP TABLE fts_data", "is unreadable"),
    "its word index emptied": ("DELETE FROM fts_data WHERE id > 10", "full-text index"),
    "its text changed under its index": ("UPDATE fts_content SET c1 = 'nothing' WHERE id < 5", "fails its own check"),
}
"""Each way of damaging the full-text index (SQL on the manifest) and what doctor must say of it."""


@pytest.mark.parametrize("case", sorted(FULLTEXT_DAMAGE))
def test_doctor_names_full_text_damage_and_index_mends_it(
    case: str, small: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, where = _copy(small, tmp_path)
    sql, expected = FULLTEXT_DAMAGE[case]
    db = sqlite3.connect(root / "manifest.sqlite", isolation_level=None)
    db.execute(sql)
    db.close()

    assert main(["doctor", *where]) == 1
    out = capsys.readouterr().out
    assert "NOT healthy" in out and expected in out and "run `companion index`" in out, out
    assert main(["doctor", "--json", *where]) == 1
    report = json.loads(capsys.readouterr().out)
    # (Opening the manifest, the first doctor created a dropped table again, empty: this one finds it empty.)
    problems = report["fulltext"]["problems"]
    assert not report["healthy"] and problems and set(problems) <= set(report["errors"]), report
    assert all("run `companion index`" in p for p in problems)

    assert main(["index", *where]) == 0
    assert "repaired" in capsys.readouterr().out
    assert main(["doctor", "--json", *where]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["healthy"] and after["fulltext"]["rows"] == after["fulltext"]["notes"] == 30, after["errors"]
    assert after["fulltext"]["index_checked"]
    assert after["index"]["to_embed"] == 0 and after["store"]["vectors"] == 30  # no vector lost on the way
    ws = Workspace.open(small[0], data_dir=tmp_path / "data")
    try:
        for i in (0, 3, 29):  # among the deleted rows, and not
            assert [p for p, _ in ws.manifest.lexical(f"marker{i:04d}", 5)] == [f"Notes/note {i:04d}.md"]
    finally:
        ws.close()
    assert main(["recall", "marker0003", "--no-sync", *where]) == 0
    assert "note 0003.md" in capsys.readouterr().out


VECTOR_FILE_DAMAGE = {
    "link lists truncated": ("link_lists.bin", lambda data: data[: len(data) // 3]),
    "id map missing": ("index_metadata.pickle", None),
}
"""Each damaged vector-index file: which, and what becomes of its bytes (None: the file is deleted); the other ways
are checked on the files alone in tests/indexer/test_damage_checks.py."""


@pytest.mark.parametrize("case", sorted(VECTOR_FILE_DAMAGE))
def test_doctor_names_a_damaged_vector_index_file_and_index_mends_it(
    case: str, big: tuple[Path, Path], tmp_path: Path
) -> None:
    root, where = _copy(big, tmp_path)
    name, change = VECTOR_FILE_DAMAGE[case]
    segment = next(p for p in (root / "chroma").iterdir() if (p / "header.bin").is_file())
    assert (segment / name).stat().st_size > 0  # Chroma wrote its index files: the vault is big enough
    if change is None:
        (segment / name).unlink()
    else:
        (segment / name).write_bytes(change((segment / name).read_bytes()))

    doctor = run_companion("doctor", *where, timeout=120)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr  # not a crash of Chroma's native code (-11)
    assert "NOT healthy" in doctor.stdout and f"{segment.name}/{name}" in doctor.stdout, doctor.stdout
    as_json = run_companion("doctor", "--json", *where, timeout=120)
    report = json.loads(as_json.stdout)
    assert not report["healthy"] and any(name in e and "companion index" in e for e in report["errors"])

    repair = run_companion("index", *where, timeout=300)
    assert repair.returncode == 0, repair.stderr
    assert "repaired" in repair.stdout and name in repair.stdout
    after = run_companion("doctor", "--json", *where, timeout=120)
    healthy = json.loads(after.stdout)
    assert after.returncode == 0 and healthy["healthy"], healthy["errors"]
    assert healthy["store"]["vectors"] == CHROMA_WRITES_AT + 100
    recall = run_companion("recall", "marker0042", "--no-sync", *where, timeout=120)
    assert recall.returncode == 0 and "note 0042.md" in recall.stdout, recall.stdout + recall.stderr
