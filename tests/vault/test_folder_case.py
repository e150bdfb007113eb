"""A folder named in one case is the vault's folder of that name in whatever case the vault spells it."""

from __future__ import annotations

import os
from pathlib import Path

from companion.vault.paths import existing_folder


def test_a_folder_is_spelled_as_the_vault_has_it(tmp_path: Path) -> None:
    (tmp_path / "memory" / "Facts").mkdir(parents=True)
    (tmp_path / "Notes").mkdir()
    assert existing_folder(tmp_path, "Memory") == "memory"
    assert existing_folder(tmp_path, "MEMORY/facts") == "memory/Facts"
    assert existing_folder(tmp_path, "Memory/facts/New/deeper") == "memory/Facts/New/deeper"
    assert existing_folder(tmp_path, "notes/") == "Notes"
    assert existing_folder(tmp_path, "Elsewhere/memory") == "Elsewhere/memory"


def test_the_exact_name_wins_and_a_link_or_file_is_not_taken_for_a_folder(tmp_path: Path) -> None:
    (tmp_path / "Memory").mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "linked")
    (tmp_path / "notes").write_text("a file, not a folder\n")
    if (tmp_path / "memory").exists():  # a file system that does not tell cases apart has one folder only
        assert existing_folder(tmp_path, "memory") == "Memory"
    else:
        (tmp_path / "memory").mkdir()
        assert existing_folder(tmp_path, "memory") == "memory"
        assert existing_folder(tmp_path, "MEMORY") == "Memory"  # the first by name of the two
    assert existing_folder(tmp_path, "Linked") == "Linked"
    assert existing_folder(tmp_path, "linked") == "linked"  # as written: the write refuses the link
    assert existing_folder(tmp_path, "Notes") == "Notes"
