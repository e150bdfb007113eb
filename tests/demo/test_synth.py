"""Synthetic vaults: counts, valid frontmatter, resolvable links, determinism, atomic append."""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from companion.demo.synth import append_paragraph, write_synthetic_vault
from companion.errors import VaultError
from companion.vault.notes import MEMORY_TYPES
from tests.helpers.files import file_tree, split_frontmatter

NOW = datetime(2026, 3, 1, 12, 0, 0)
LINK = re.compile(r"\[\[([^\]|#]*)")
TURN = re.compile(r"^\*\*([a-z]+):\*\* \S")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    root = tmp_path_factory.mktemp("synth") / "vault"
    return root, write_synthetic_vault(root, 400, variant=3, now=NOW)


def notes_of(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.md") if not p.relative_to(root).as_posix().startswith("ops/")]


def test_writes_n_notes_plus_a_tenth_as_session_summaries(vault: tuple[Path, int]) -> None:
    root, written = vault
    sessions = list((root / "ops/sessions").rglob("*.md"))
    assert len(notes_of(root)) == 400
    assert len(sessions) == 40
    assert written == 440
    assert (root / ".obsidian/app.json").is_file()


def test_mix_of_conversations_memory_and_other_notes(vault: tuple[Path, int]) -> None:
    root, _ = vault
    kinds: Counter[str] = Counter()
    types: Counter[str] = Counter()
    for path in notes_of(root):
        fm, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        kind = fm.get("type")
        if kind == "conversation":
            kinds["conversation"] += 1
        elif kind in MEMORY_TYPES:
            kinds["memory"] += 1
            types[kind] += 1
            assert 0 <= fm["confidence"] <= 1
        else:
            kinds["other"] += 1
    assert kinds == {"conversation": 280, "memory": 80, "other": 40}
    assert set(types) == set(MEMORY_TYPES)


def test_conversations_have_fields_and_4_to_20_named_turns(vault: tuple[Path, int]) -> None:
    root, _ = vault
    oldest = NOW
    words: set[str] = set()
    for path in (root / "Conversations").rglob("*.md"):
        fm, body = split_frontmatter(path.read_text(encoding="utf-8"))
        for key in ("date", "time", "user_id", "chat_id", "session", "participants", "tags"):
            assert fm.get(key), f"{path}: {key} missing"
        assert isinstance(fm["time"], str)
        when = datetime.fromisoformat(f"{fm['date']}T{fm['time']}")
        assert when <= NOW
        oldest = min(oldest, when)
        turns = [p for p in body.split("\n\n") if TURN.match(p)]
        assert 4 <= len(turns) <= 20
        speakers = {TURN.match(t).group(1) for t in turns}  # type: ignore[union-attr]
        assert speakers == {fm["user_id"], "sentinel"}
        words.update(body.lower().split())
    assert oldest < NOW - timedelta(days=500)
    # Enough vocabulary for lexical and dense ranking to tell notes apart.
    assert len(words) > 500


def test_sessions_have_every_field(vault: tuple[Path, int]) -> None:
    root, _ = vault
    recent = 0
    for path in (root / "ops/sessions").rglob("*.md"):
        fm, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        for key in ("date", "user_id", "chat_id", "time", "user_msg", "sentinel_msg"):
            assert fm.get(key), f"{path}: {key} missing"
        assert str(fm["date"]) == path.parent.name
        recent += fm["date"] >= NOW.date() - timedelta(days=1)
    assert recent >= 1


def test_every_link_resolves(vault: tuple[Path, int]) -> None:
    root, _ = vault
    names = {p.stem.lower() for p in root.rglob("*.md")}
    links = [m.group(1).strip() for p in root.rglob("*.md") for m in LINK.finditer(p.read_text(encoding="utf-8"))]
    assert len(links) > 400
    assert {t for t in links if t.lower() not in names} == set()


def test_same_variant_same_bytes_other_variant_other_bytes(tmp_path: Path) -> None:
    write_synthetic_vault(tmp_path / "a", 120, variant=1, now=NOW)
    write_synthetic_vault(tmp_path / "b", 120, variant=1, now=NOW)
    write_synthetic_vault(tmp_path / "c", 120, variant=2, now=NOW)
    assert file_tree(tmp_path / "a") == file_tree(tmp_path / "b")
    assert file_tree(tmp_path / "a") != file_tree(tmp_path / "c")


@pytest.mark.parametrize("n", [0, 1, 5, 13])
def test_tiny_vaults(tmp_path: Path, n: int) -> None:
    written = write_synthetic_vault(tmp_path, n, now=NOW)
    assert len(notes_of(tmp_path)) == n
    assert written == n + n // 10


def test_refuses_foreign_folder_and_regenerates_its_own(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "Note.md").write_text("mine", encoding="utf-8")
    with pytest.raises(VaultError, match="not a synthetic vault"):
        write_synthetic_vault(tmp_path / "mine", 10, now=NOW)
    root = tmp_path / "bench"
    write_synthetic_vault(root, 100, now=NOW)
    write_synthetic_vault(root, 30, now=NOW)
    assert len(notes_of(root)) == 30
    with pytest.raises(ValueError):
        write_synthetic_vault(tmp_path / "neg", -1, now=NOW)


def test_append_paragraph_is_atomic_and_keeps_the_note(tmp_path: Path) -> None:
    note = tmp_path / "Note.md"
    note.write_text("---\ntype: fact\n---\n\nFirst.", encoding="utf-8")
    os.chmod(note, 0o640)
    inode = note.stat().st_ino
    append_paragraph(note, "Second.")
    # A new inode: the file was replaced, not written in place.
    assert note.stat().st_ino != inode
    append_paragraph(note, "\nThird.\n")
    assert note.read_text(encoding="utf-8") == "---\ntype: fact\n---\n\nFirst.\n\nSecond.\n\nThird.\n"
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["Note.md"]
