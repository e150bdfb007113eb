"""A folder swapped for a symbolic link while a curation runs: the curation may fail, clearly, but never reads or writes
outside the vault. Also the held folders every vault write goes through, and names cut to the file system's limit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.atomic import HeldFolder, LinkRefused, fit_name
from companion.curation.applying import StepWriter
from companion.curation.curator import CurationError, Curator, Plan
from companion.vault.audit import AuditLog
from tests.helpers.files import file_tree, write

NOTE = "notes/Other.md"
TEXT = "---\ntitle: Other\n---\nThe same bytes inside the vault and outside it.\n"


class Swapper:
    """Swaps the vault's `notes/` folder for a link to a folder outside the vault holding the same note, and back."""

    def __init__(self, vault: Path, outside: Path) -> None:
        self.notes = vault / "notes"
        self.parked = vault / ".parked"
        self.outside = outside
        self.swaps = 0

    def to_link(self) -> None:
        os.rename(self.notes, self.parked)
        os.symlink(self.outside, self.notes)
        self.swaps += 1

    def back(self) -> None:
        os.unlink(self.notes)
        os.rename(self.parked, self.notes)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, NOTE, TEXT)
    write(root, "Plain.md", "plain\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    # Identical bytes: a curation that reads through the link sees no change, which is what makes the swap dangerous.
    folder = tmp_path / "outside"
    write(folder, "Other.md", TEXT)
    return folder


@pytest.fixture
def swapper(vault: Path, outside: Path) -> Iterator[Swapper]:
    swap = Swapper(vault, outside)
    yield swap
    if swap.notes.is_symlink():
        swap.back()


def curator(vault: Path, tmp_path: Path) -> Curator:
    return Curator(vault, AuditLog(tmp_path / "data"), source="test")


@pytest.mark.parametrize("action", ["pin", "archive", "delete"])
def test_a_folder_swapped_between_the_check_and_the_write_is_not_followed(
    vault: Path, outside: Path, swapper: Swapper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    cur = curator(vault, tmp_path)
    makers: dict[str, Callable[[], Plan]] = {
        "pin": lambda: cur.plan_pin(NOTE),
        "archive": lambda: cur.plan_archive(NOTE),
        "delete": lambda: cur.plan_delete(NOTE),
    }
    plan = makers[action]()
    files, before_outside = file_tree(vault), file_tree(outside)

    # The swap happens at the worst moment: while the note is being written or removed, right after the check of
    # where its folder leads (which resolves the folder) and before the file operation itself.
    armed: list[bool] = []
    real_put, real_realpath = StepWriter._put, os.path.realpath

    def put(self: StepWriter, rel: str, *args: Any, **kwargs: Any) -> Any:
        armed[:] = [rel == NOTE]
        try:
            return real_put(self, rel, *args, **kwargs)
        finally:
            armed.clear()

    def realpath(path: Any, *args: Any, **kwargs: Any) -> Any:
        resolved = real_realpath(path, *args, **kwargs)
        if armed == [True] and not swapper.swaps:
            swapper.to_link()
        return resolved

    monkeypatch.setattr(StepWriter, "_put", put)
    monkeypatch.setattr(os.path, "realpath", realpath)
    with pytest.raises(CurationError) as caught:
        cur.apply(plan)
    monkeypatch.undo()

    assert swapper.swaps == 1
    message = str(caught.value)
    assert message.startswith(f"{NOTE}: could not be") and "'notes' is a symbolic link" in message
    assert "put back" in message
    assert file_tree(outside) == before_outside
    assert cur.audit.entries() == []
    swapper.back()
    assert file_tree(vault) == files
    assert not (vault / "archive").exists() and not (vault / ".trash").exists()


# Run as another process (as the attack was), so the swaps come between any two system calls of the curations.
FLIPPER = """
import os, sys, time
notes, parked, outside, stop, pause = sys.argv[1:6]
swaps = 0
while swaps == 0 or not os.path.exists(stop):
    os.rename(notes, parked)
    os.symlink(outside, notes)
    os.unlink(notes)
    os.rename(parked, notes)
    swaps += 1
    if swaps == 1:
        print("ready", flush=True)  # swapping for sure before the curations start
    if swaps % 2:
        time.sleep(float(pause))  # a moment in the real folder's state, so that curations also get through
print(swaps)
"""


def test_curations_racing_a_folder_swapped_in_a_loop_never_leave_the_vault(
    vault: Path, outside: Path, swapper: Swapper, tmp_path: Path
) -> None:
    # Another local process flips `notes/` between the real folder and a link out of the vault as fast as it can,
    # while notes/Other.md is pinned and unpinned: each curation lands inside the vault or is refused clearly.
    stop = tmp_path / "stop"
    argv = [str(swapper.notes), str(swapper.parked), str(outside), str(stop), "0.002"]
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, *argv], stdout=subprocess.PIPE, text=True)
    assert flipper.stdout is not None and flipper.stdout.readline() == "ready\n"
    cur = curator(vault, tmp_path)
    refusals: list[str] = []
    applied = 0
    deadline = time.monotonic() + 3  # a bound on the work, not a measurement
    try:
        for n in range(2000):
            if time.monotonic() > deadline:
                break
            try:
                plan = cur.plan_pin(NOTE, pinned=n % 2 == 0)
                if plan.changes_nothing:
                    continue
                cur.apply(plan)
                applied += 1
            except CurationError as exc:
                refusals.append(str(exc))
    finally:
        stop.touch()
        out, _ = flipper.communicate(timeout=60)

    assert flipper.returncode == 0 and int(out) > 0
    assert file_tree(outside) == {"Other.md": TEXT.encode()}
    assert all(message.startswith(f"{NOTE}: ") for message in refusals), refusals[:3]
    # What was applied is in the vault's own note, and the log knows every change it holds.
    assert len([e for e in cur.audit.entries() if e.action in ("pin", "unpin")]) == applied
    text = (vault / NOTE).read_text(encoding="utf-8")
    assert text.replace("pinned: true\n", "") == TEXT


def test_reading_through_a_folder_link_is_refused_naming_it(vault: Path, outside: Path, tmp_path: Path) -> None:
    os.symlink(vault / "notes", vault / "inner")  # a link that stays inside the vault is not followed either
    cur = curator(vault, tmp_path)
    with pytest.raises(CurationError) as caught:
        cur.plan_pin("inner/Other.md")
    assert "the folder 'inner' on its way is a symbolic link" in str(caught.value)
    assert file_tree(outside) == {"Other.md": TEXT.encode()}


# -- held folders and names
# -----------------------------------------------------------------------------------------------------------------


def test_a_held_folder_writes_inside_and_refuses_links_on_the_way(vault: Path, outside: Path) -> None:
    os.symlink(outside, vault / "away")
    with pytest.raises(LinkRefused) as caught:
        HeldFolder.inside(vault, "away/deeper", create=True)
    assert caught.value.filename == "away"
    assert not (outside / "deeper").exists()
    with HeldFolder.inside(vault, "new/deeper", create=True) as held:
        assert held.created == ("new", "new/deeper")
        held.write("Note.md", b"text\n", mode=0o600)
        assert held.read("Note.md") == (b"text\n", 0o600)
        assert held.read("Missing.md") is None
    os.symlink(outside / "Other.md", vault / "new/deeper/Link.md")
    with HeldFolder.inside(vault, "new/deeper") as held:
        with pytest.raises(LinkRefused):
            held.read("Link.md")
        # Writing under a link's name replaces the link, never the file it points to.
        held.write("Link.md", b"replaced\n")
    assert not (vault / "new/deeper/Link.md").is_symlink()
    assert file_tree(outside) == {"Other.md": TEXT.encode()}
    assert sorted(p.name for p in (vault / "new/deeper").iterdir()) == ["Link.md", "Note.md"]  # no temp file left


@pytest.mark.parametrize(
    ("stem", "tail", "limit", "expected"),
    [
        ("short", ".md", 255, "short.md"),
        ("漢" * 100, ".md", 200, "漢" * 65 + ".md"),
        ("😀" * 60, " 2.md", 200, "😀" * 48 + " 2.md"),
        ("ab\u0301" * 3, "", 6, "ab\u0301a"),  # a letter whose accent would be cut goes with it
        ("a👩\u200d👩", "", 6, "a"),  # so does an emoji sequence cut at its joiner
        ("a👍\U0001f3fd", "", 5, "a"),  # or at its skin tone
    ],
)
def test_fit_name_cuts_at_a_character_boundary(stem: str, tail: str, limit: int, expected: str) -> None:
    fitted = fit_name(stem, tail, limit)
    assert fitted == expected
    assert len(fitted.encode("utf-8")) <= limit
