"""The session summaries' links, read from the sessions folder the index leaves out, kept by file stat."""

from __future__ import annotations

import os
from pathlib import Path

from companion.vault.reader import ObsidianVault
from tests.helpers.files import write
from tests.helpers.sessionlinks import EARLIER, SESSION, session_text, write_session_links_vault


def test_every_sessions_link_targets_are_read_once_each_on_every_day(tmp_path: Path) -> None:
    vault = ObsidianVault(write_session_links_vault(tmp_path / "vault"))
    assert vault.session_links() == {SESSION: ("Lonely Idea", "Garden"), EARLIER: ("Garden",)}


def test_a_changed_session_is_read_again_and_a_removed_one_forgotten(tmp_path: Path) -> None:
    root = write_session_links_vault(tmp_path / "vault")
    vault = ObsidianVault(root)
    first = vault.session_links()
    again = vault.session_links()
    assert again[SESSION] is first[SESSION]  # unchanged stat: not parsed again
    write(
        root, SESSION, session_text("2026-11-22", "09:00:00", "Water?", "Only [[Forgotten]] now, twice: [[Forgotten]].")
    )
    info = (root / SESSION).stat()
    os.utime(root / SESSION, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    (root / EARLIER).unlink()
    assert vault.session_links() == {SESSION: ("Forgotten",)}


def test_a_session_that_cannot_be_read_is_named_in_problems_and_left_out(tmp_path: Path) -> None:
    root = write_session_links_vault(tmp_path / "vault")
    odd = "ops/sessions/2026-11-20/odd.md"
    (root / odd).mkdir()
    vault = ObsidianVault(root)
    assert set(vault.session_links()) == {SESSION, EARLIER}
    assert [reason for path, reason in vault.problems if path == odd] == [
        "is not a regular file (a folder, FIFO, socket or device)"
    ]
