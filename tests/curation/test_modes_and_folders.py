"""What a curation keeps and leaves: permission bits through delete, archive, merge and their undo; the folders a
curation made, gone again after its undo; trash names that stay within the file system's limit."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from companion.curation.curator import Curator, Plan
from companion.vault.audit import AuditLog
from tests.helpers.files import file_tree, write

# Neither is what a new file gets under the usual umasks (022: 644, 077: 600, 002: 664), so a copy that took the
# default would show.
PRIVATE = 0o640
SHARED_READ = 0o604


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def folder_tree(root: Path) -> set[str]:
    """Every folder under `root` (empty ones included, which `file_tree` cannot show)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", json.dumps({"trashOption": "local"}))
    write(root, "Keep.md", "---\ntags: [a]\n---\nKeep's text about [[Drop]].\n")
    write(root, "people/Drop.md", "---\ntags: [b]\n---\nDrop's text.\n")
    write(root, "Other.md", "See [[Drop]].\n")
    (root / "Keep.md").chmod(SHARED_READ)
    (root / "people/Drop.md").chmod(PRIVATE)
    return root


@pytest.fixture
def cur(vault: Path, tmp_path: Path) -> Curator:
    return Curator(vault, AuditLog(tmp_path / "data"), source="test")


# -- permission bits
# -----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("private", [0o600, PRIVATE])
def test_delete_keeps_the_mode_in_the_trash_and_undo_gives_it_back(vault: Path, cur: Curator, private: int) -> None:
    (vault / "people/Drop.md").chmod(private)
    entry = cur.apply(cur.plan_delete("people/Drop.md"))
    assert mode(vault / ".trash/Drop.md") == private
    assert next(c.mode for c in entry.changes if c.path == "people/Drop.md") == private
    cur.undo()
    assert mode(vault / "people/Drop.md") == private


def test_delete_for_good_is_undone_with_the_mode(vault: Path, cur: Curator) -> None:
    (vault / ".obsidian/app.json").write_text(json.dumps({"trashOption": "none"}), encoding="utf-8")
    cur.apply(cur.plan_delete("people/Drop.md"))
    assert not (vault / "people/Drop.md").exists()
    cur.undo()
    assert mode(vault / "people/Drop.md") == PRIVATE


def test_archive_keeps_the_mode_and_undo_gives_it_back(vault: Path, cur: Curator) -> None:
    cur.apply(cur.plan_archive("people/Drop.md"))
    assert mode(vault / "archive/people/Drop.md") == PRIVATE
    cur.undo()
    assert mode(vault / "people/Drop.md") == PRIVATE


def test_merge_keeps_both_modes_and_undo_gives_them_back(vault: Path, cur: Curator) -> None:
    (vault / "Other.md").chmod(0o600)
    cur.apply(cur.plan_merge("Keep.md", "people/Drop.md"))
    assert "Drop's text." in (vault / "Keep.md").read_text(encoding="utf-8")
    assert mode(vault / "Keep.md") == SHARED_READ
    assert mode(vault / ".trash/Drop.md") == PRIVATE
    assert mode(vault / "Other.md") == 0o600  # relinked in place
    cur.undo()
    assert (mode(vault / "Keep.md"), mode(vault / "people/Drop.md"), mode(vault / "Other.md")) == (
        SHARED_READ,
        PRIVATE,
        0o600,
    )


# -- folders a curation made
# -----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "made"),
    [
        (lambda c: c.plan_delete("people/Drop.md"), (".trash",)),
        (lambda c: c.plan_archive("people/Drop.md"), ("archive", "archive/people")),
        (lambda c: c.plan_merge("Keep.md", "people/Drop.md"), (".trash",)),
    ],
    ids=["delete", "archive", "merge"],
)
def test_undo_removes_the_folders_its_curation_made(
    vault: Path, cur: Curator, make: Callable[[Curator], Plan], made: tuple[str, ...]
) -> None:
    files, folders = file_tree(vault), folder_tree(vault)
    entry = cur.apply(make(cur))
    assert entry.folders == made
    assert set(made) <= folder_tree(vault)
    cur.undo()
    assert file_tree(vault) == files
    assert folder_tree(vault) == folders


def test_undo_leaves_folders_it_did_not_make_or_that_hold_something(vault: Path, cur: Curator) -> None:
    (vault / ".trash").mkdir()
    first = cur.apply(cur.plan_archive("people/Drop.md"))
    cur.apply(cur.plan_delete("Other.md"))
    write(vault, "archive/people/Mine.md", "the user's own note, filed meanwhile\n")
    cur.undo()  # the delete: `.trash/` was there before it
    assert (vault / ".trash").is_dir()
    cur.undo(first.id)  # the archive: `archive/people/` holds the user's note now
    assert (vault / "archive/people/Mine.md").exists()
    assert (vault / "people/Drop.md").exists()


# -- names within the file system's limit
# -----------------------------------------------------------------------------------------------------------------


def test_a_numbered_trash_copy_of_a_long_name_stays_within_255_bytes(vault: Path, cur: Curator) -> None:
    stem = "漢" * 84  # 252 bytes: with `.md` the longest name the file system takes
    write(vault, f"{stem}.md", "first\n")
    write(vault, f"elsewhere/{stem}.md", "second\n")
    cur.apply(cur.plan_delete(f"{stem}.md"))
    entry = cur.apply(cur.plan_delete(f"elsewhere/{stem}.md"))
    moved = next(c.path for c in entry.changes if c.after is not None)
    name = moved.rsplit("/", 1)[-1]
    assert name == "漢" * 83 + " 1.md" and len(name.encode("utf-8")) <= 255
    assert (vault / moved).read_text(encoding="utf-8") == "second\n"
    cur.undo()
    assert (vault / f"elsewhere/{stem}.md").read_text(encoding="utf-8") == "second\n"
