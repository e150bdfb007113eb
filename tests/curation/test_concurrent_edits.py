"""A note edited while a curation writes it: the curation is refused, put back whole, and the edit is never lost.

The edit comes at the worst moments: after the curation checked every file but before it wrote any (while it saves
the copies undo needs), and between the last look at a note and the rename that replaces, moves or removes it. Last,
a real second process appends to both notes in a loop while merges run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.curation import guarded
from companion.curation.curator import CurationError, Curator
from companion.curation.plans import Plan, PlannedWrite
from companion.vault.audit import AuditLog
from tests.helpers.files import file_tree, write

KEEP = "---\ntags: [a]\n---\n# Keep\n\nKeep's text, about [[Drop]].\n"
DROP = "---\ntags: [b]\n---\n# Drop\n\nDrop's text.\n"
OTHER = "See [[Drop]].\n"
LINE = b"A line the editor added.\n"
SAVED = b"# Drop\n\nThe editor's new version, saved by renaming a new file over the note.\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", json.dumps({"trashOption": "local"}))
    write(root, "Keep.md", KEEP)
    write(root, "people/Drop.md", DROP)
    write(root, "Other.md", OTHER)
    (root / "people/Drop.md").chmod(0o600)  # a private note stays private through the refusal
    return root


def curator(vault: Path) -> Curator:
    return Curator(vault, AuditLog(vault.parent / "data"), source="test")


def modes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mode & 0o777 for p in root.rglob("*.md")}


def append(path: Path, data: bytes = LINE) -> None:
    """An editor adding a line: the note's own file, written in place."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def save_by_rename(path: Path, data: bytes = SAVED) -> None:
    """An editor saving as many do: a new file renamed over the note."""
    new = path.with_name(".saving")
    new.write_bytes(data)
    new.chmod(path.stat().st_mode & 0o777)
    os.replace(new, path)


EDITS: dict[str, Callable[[Path], None]] = {"append": append, "save by rename": save_by_rename}


def edited(text: str, edit: str) -> bytes:
    return text.encode() + LINE if edit == "append" else SAVED


def assert_refused_and_whole(vault: Path, cur: Curator, message: str, note: str, edit: str, before: Any) -> None:
    """Refused naming the note, the edited note holds the edit, every other file and mode is as before."""
    tree, mode_before = before
    assert message.startswith(f"{note}: changed while 'Merge "), message
    assert "put back, so nothing was written" in message
    expected = dict(tree)
    expected[note] = edited(tree[note].decode(), edit)
    assert file_tree(vault) == expected
    assert modes(vault) == mode_before
    assert not (vault / ".trash").exists()
    assert cur.audit.entries() == []


@pytest.mark.parametrize("note", ["Keep.md", "people/Drop.md", "Other.md"])
def test_an_edit_after_the_check_but_before_any_write_refuses_the_merge(
    vault: Path, monkeypatch: pytest.MonkeyPatch, note: str
) -> None:
    # The curation has checked every file against its plan and is saving the copies undo needs: the editor appends.
    cur = curator(vault)
    plan = cur.plan_merge("Keep.md", "people/Drop.md")
    before = file_tree(vault), modes(vault)
    real_store = AuditLog.store_blob
    edits: list[str] = []

    def store_blob(self: AuditLog, content: bytes) -> str:
        if not edits:
            edits.append(note)
            append(vault / note)
        return real_store(self, content)

    monkeypatch.setattr(AuditLog, "store_blob", store_blob)
    with pytest.raises(CurationError) as caught:
        cur.apply(plan)
    assert edits == [note]
    assert_refused_and_whole(vault, cur, str(caught.value), note, "append", before)


@pytest.fixture(params=["swap", "rename"])
def renames(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Both ways a note is replaced: swapped with the new file (where the system can), or a plain rename over it."""
    if request.param == "swap":
        if guarded._rename_call() is None:
            pytest.skip("no system call that swaps two names here")
    else:
        monkeypatch.setattr(guarded, "_rename_call", lambda: None)
    yield request.param


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("note", ["Keep.md", "people/Drop.md", "Other.md"])
def test_an_edit_between_the_last_look_and_the_rename_is_put_back(
    vault: Path, monkeypatch: pytest.MonkeyPatch, renames: str, note: str, edit: str
) -> None:
    # The note was read through the descriptor the curation writes with and found as planned; the editor strikes
    # before the rename. Keep.md and Other.md are replaced, people/Drop.md is moved to the trash.
    if renames == "rename" and edit == "save by rename" and note != "people/Drop.md":
        pytest.skip(
            "without a swap, a file renamed over the note in that moment is not seen (the plain rename's limit)"
        )
    cur = curator(vault)
    plan = cur.plan_merge("Keep.md", "people/Drop.md")
    before = file_tree(vault), modes(vault)
    real_check = guarded._check
    name = note.rpartition("/")[2]
    edits: list[str] = []

    def check(held: Any, checked: str, *args: Any) -> None:
        real_check(held, checked, *args)
        if checked == name and not edits:
            edits.append(note)
            EDITS[edit](vault / note)

    monkeypatch.setattr(guarded, "_check", check)
    with pytest.raises(CurationError) as caught:
        cur.apply(plan)
    assert edits == [note]
    assert_refused_and_whole(vault, cur, str(caught.value), note, edit, before)


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_deletion_for_good_is_refused_when_the_note_changes_as_it_is_removed(
    vault: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    write(vault, ".obsidian/app.json", json.dumps({"trashOption": "none"}))
    cur = curator(vault)
    plan = cur.plan_delete("people/Drop.md")
    before = file_tree(vault)
    real_check = guarded._check

    def check(held: Any, checked: str, *args: Any) -> None:
        real_check(held, checked, *args)
        EDITS[edit](vault / "people/Drop.md")

    monkeypatch.setattr(guarded, "_check", check)
    with pytest.raises(CurationError, match=r"^people/Drop\.md: changed while 'Delete"):
        cur.apply(plan)
    assert file_tree(vault) == {**before, "people/Drop.md": edited(DROP, edit)}
    assert cur.audit.entries() == []


def test_an_edit_to_a_note_already_written_is_kept_when_the_merge_is_put_back(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Keep.md is written; before people/Drop.md moves, the editor appends to both. The merge is refused, and Keep.md
    # gets its own text back with the line still at its end, not the merged text and not without the line.
    cur = curator(vault)
    plan = cur.plan_merge("Keep.md", "people/Drop.md")
    real_check = guarded._check

    def check(held: Any, checked: str, *args: Any) -> None:
        if checked == "Drop.md":
            append(vault / "Keep.md")
            append(vault / "people/Drop.md")
        real_check(held, checked, *args)

    monkeypatch.setattr(guarded, "_check", check)
    with pytest.raises(CurationError, match=r"^people/Drop\.md: changed while"):
        cur.apply(plan)
    assert (vault / "Keep.md").read_bytes() == KEEP.encode() + LINE
    assert (vault / "people/Drop.md").read_bytes() == DROP.encode() + LINE
    assert (vault / "Other.md").read_text(encoding="utf-8") == OTHER


def test_undo_is_refused_when_a_note_changes_as_it_is_put_back(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cur = curator(vault)
    cur.apply(cur.plan_merge("Keep.md", "people/Drop.md"))
    after = file_tree(vault)
    real_check = guarded._check

    def check(held: Any, checked: str, *args: Any) -> None:
        real_check(held, checked, *args)
        if checked == "Keep.md":
            append(vault / "Keep.md")

    monkeypatch.setattr(guarded, "_check", check)
    with pytest.raises(CurationError, match=r"^Keep\.md: changed while 'Undo: Merged"):
        cur.undo()
    assert file_tree(vault) == {**after, "Keep.md": after["Keep.md"] + LINE}
    assert [e.action for e in cur.audit.entries()] == ["merge"]


@pytest.mark.parametrize("renames", ["no replace", "look first"])
def test_a_new_note_is_not_written_over_one_that_appeared(
    vault: Path, monkeypatch: pytest.MonkeyPatch, renames: str
) -> None:
    # An agent's new note: between the check that the name is free and the write, the user creates that note.
    cur = curator(vault)
    plan = Plan("write", "Agent write of Notes/New.md", False, (PlannedWrite("Notes/New.md", None, b"The agent's.\n"),))
    real_staged = guarded._staged

    def staged(held: Any, data: bytes, mode: Any) -> Any:
        write(vault, "Notes/New.md", "The user's own note.\n")
        return real_staged(held, data, mode)

    monkeypatch.setattr(guarded, "_staged", staged)
    if renames == "look first":
        monkeypatch.setattr(guarded, "_rename_call", lambda: None)
    with pytest.raises(CurationError, match=r"^Notes/New\.md: appeared while 'Agent write"):
        cur.apply(plan)
    assert file_tree(vault / "Notes") == {"New.md": b"The user's own note.\n"}
    assert cur.audit.entries() == []


# -- a real editor beside the merges
# -----------------------------------------------------------------------------------------------------------------

APPENDER = r"""
import json, os, random, sys, time
keep, drop, stop, low, high = sys.argv[1:6]
pick = random.Random(int(sys.argv[6]))
written = []
n = 0
print("ready", flush=True)
while not os.path.exists(stop):
    n += 1
    for path, tag in ((keep, "K"), (drop, "D")):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # an editor adds to the note, never makes it anew
        except FileNotFoundError:
            continue
        line = f"appended {tag} {n}\n"
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        written.append(line)
    time.sleep(pick.uniform(float(low), float(high)))
print(json.dumps(written))
"""


def test_merges_beside_a_process_appending_to_both_notes_never_lose_a_line(tmp_path: Path) -> None:
    outcomes: list[str] = []
    deadline = time.monotonic() + 6  # a bound on the work, not a measurement
    for trial in range(12):
        if time.monotonic() > deadline and len(outcomes) >= 3:
            break
        root = tmp_path / f"vault{trial}"
        write(root, ".obsidian/app.json", json.dumps({"trashOption": "local"}))
        write(root, "Keep.md", KEEP)
        write(root, "Drop.md", DROP)
        write(root, "Other.md", OTHER)
        stop = tmp_path / f"stop{trial}"
        pauses = ("0.001", "0.03") if trial % 2 else ("0.02", "0.2")
        argv = [str(root / "Keep.md"), str(root / "Drop.md"), str(stop), *pauses, str(trial)]
        child = subprocess.Popen([sys.executable, "-c", APPENDER, *argv], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        time.sleep(0.01 * (trial % 5))
        cur = Curator(root, AuditLog(tmp_path / f"data{trial}"), source="test")
        try:
            cur.apply(cur.plan_merge("Keep.md", "Drop.md"))
            outcomes.append("applied")
        except CurationError as exc:
            assert str(exc).startswith(("Keep.md: ", "Drop.md: ", "Other.md: ")), str(exc)
            outcomes.append("refused")
        time.sleep(0.05)
        stop.touch()
        out, _ = child.communicate(timeout=60)
        written = json.loads(out.strip().splitlines()[-1])
        assert child.returncode == 0 and written
        keep = (root / "Keep.md").read_text(encoding="utf-8")
        trash = "".join(p.read_text(encoding="utf-8") for p in sorted((root / ".trash").glob("*")))
        drop = (root / "Drop.md").read_text(encoding="utf-8") if (root / "Drop.md").exists() else ""
        for line in written:
            if outcomes[-1] == "applied":
                assert line in keep or line in trash, (trial, line)
            else:
                assert line in (keep if " K " in line else drop), (trial, line)
    assert len(outcomes) >= 3
