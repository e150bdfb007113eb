"""Writing a curation's files all together or not at all, each one checked against what the plan read as it is written.

The `Curator` checks every file once before anything is written; that check alone leaves the moment between it and
each write, in which an editor can change a note. So every step here checks again, through the file it writes
(`companion.curation.guarded`), and a step that finds its note changed stops the curation: the steps already
written are undone, and the error names the note. A note the plan moves (to the trash, the archive) is renamed,
never copied and deleted, so an edit that reaches it during the move goes with it.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from companion.atomic import HeldFolder
from companion.curation import guarded
from companion.curation.guarded import NoteChanged
from companion.errors import CurationError
from companion.vault.reader import _unsafe_reason

Snapshot = tuple[bytes, int] | None
"""A file's bytes and permission bits as they are now, or None when there is no file."""


@dataclass(frozen=True)
class Step:
    """One file a curation (or an undo) writes, creates or removes, with what it must hold when it is."""

    path: str
    """Vault-relative POSIX path."""
    content: bytes | None
    """The new bytes; None to remove the file."""
    mode: int | None
    """The permission bits to give it, or None for the usual (an existing file keeps its own)."""
    before: Snapshot
    """What the file holds now, as checked before anything is written: it must hold exactly that when it is written
    (None: it must not exist)."""
    source: str | None = None
    """For a file made by moving another one of the curation here (its bytes, that file's removal), that file."""


class _OutOfScope(OSError):
    """A path refused at the moment of writing (it leads out of the vault, or became a link since the check)."""


class StepWriter:
    """Writes steps into one vault through held folders, checking each file as it is written."""

    def __init__(self, root: Path, scope_problem: Callable[[str], str | None]) -> None:
        """Write under `root`; `scope_problem(path)` says why a path may not be written (a link, outside), or None."""
        self.root = root
        """The vault's absolute, symlink-free root."""
        self.scope_problem = scope_problem
        """Why a vault path may not be written as it is now, or None."""

    def write_all(self, steps: Sequence[Step], what: str) -> tuple[list[Step], list[str]]:
        """Write every step, new and changed files first and moves and removals last (a crash part way leaves a note
        in two places rather than in none); returns the steps as written and the folders made for them.

        A step whose file changed since `steps` were made, or that fails, stops it: what was already written is put
        back, and `CurationError` says which file and how the putting back went. `what` names the curation.
        """
        ordered = _paired(steps)
        done: list[Step] = []
        created: list[str] = []
        for step in ordered:
            main = step.source or step.path
            try:
                self._put(main, step, created)
            except NoteChanged as exc:
                rel = step.path if exc.how == "appeared" else main
                kept = "" if exc.kept is None else f"; its text with that edit is kept in {_beside(rel, exc.kept)}"
                raise CurationError(
                    f"{rel}: {exc.how} while '{what}' was being applied{kept}, so it was not applied; "
                    f"{self.roll_back(done, created)}. Look at the note again and retry"
                ) from exc
            except OSError as exc:
                verb = "written" if step.content is not None else "removed"
                verb = "moved" if step.source is not None else verb
                raise CurationError(
                    f"{main}: could not be {verb} ({exc.strerror or exc}); {self.roll_back(done, created)}"
                ) from exc
            done.append(step)
        return done, created

    def roll_back(self, done: Sequence[Step], created: Sequence[str]) -> str:
        """Undo the steps written (the last first) and remove the folders made for them; say how that went.

        Each file is put back only while it still holds what the step wrote. A note that received an edit after
        the step, added at its end, gets its earlier text back with that edit still at its end; a note changed
        otherwise is left as it is and named.
        """
        failed: list[str] = []
        for step in reversed(done):
            try:
                self._undo_step(step)
            except (OSError, CurationError):
                failed.append(step.path if step.source is None else f"{step.source} (now at {step.path})")
        self.remove_folders(created)
        if failed:
            return (
                f"these files could not be put back (changed again, or unreachable) and need a look: "
                f"{', '.join(failed)}; nothing was recorded"
            )
        return "the files already changed were put back, so nothing was written"

    def remove_folders(self, folders: Sequence[str]) -> None:
        """Remove these vault folders, deepest first, where they are empty; the others stay as they are."""
        for folder in reversed(folders):
            if _unsafe_reason(folder) is not None:
                continue  # a damaged log entry: it names nothing this curator made
            parent, _, name = folder.rpartition("/")
            # An empty folder left behind (gone meanwhile, now a link, unreachable) is harmless: no error for it.
            with contextlib.suppress(OSError), HeldFolder.inside(self.root, parent) as held:
                held.remove_folder(name)

    def _put(self, rel: str, step: Step, created: list[str]) -> None:
        """Carry out one step; `rel` is the file it starts from (the moved file for a move).

        The paths are checked first, for a clear refusal; what makes the check hold is that the file operations go
        through held folders, never following a link, so a folder swapped after the check cannot redirect them.
        A new file's missing folders are made and added to `created`; a file rewritten in place whose folder is gone
        meanwhile is refused, not written anew elsewhere.
        """
        for path in dict.fromkeys((rel, step.path)):
            problem = self.scope_problem(path)
            if problem is not None:
                raise _OutOfScope(errno.EPERM, problem, path)
        folder, _, name = rel.rpartition("/")
        try:
            held = HeldFolder.inside(self.root, folder)
        except FileNotFoundError as exc:
            if step.before is not None or step.source is not None:
                raise NoteChanged(name, "was moved or deleted") from exc
            held = None  # a new file: its folder is made below
        try:
            if step.source is not None:
                self._move(held, name, step, created)
            elif step.content is None:
                assert held is not None and step.before is not None
                guarded.remove(held, name, expected=step.before[0])
            elif step.before is not None:
                assert held is not None
                guarded.replace(held, name, step.content, expected=step.before[0], mode=step.mode)
            else:
                with self._folder(step.path, created) as into:
                    guarded.replace(into, name, step.content, expected=None, mode=step.mode)
        finally:
            if held is not None:
                held.close()

    def _move(self, held: HeldFolder | None, name: str, step: Step, created: list[str]) -> None:
        assert held is not None and step.content is not None
        with self._folder(step.path, created) as into:
            target = step.path.rpartition("/")[2]
            guarded.move(held, name, into, target, expected=step.content, mode=step.mode)

    def _folder(self, rel: str, created: list[str]) -> HeldFolder:
        """The folder of a new file, made (and added to `created`) when missing."""
        held = HeldFolder.inside(self.root, rel.rpartition("/")[0], create=True)
        created.extend(held.created)
        return held

    def _undo_step(self, step: Step) -> None:
        """Put back what one written step changed, while its file still holds what the step wrote."""
        if step.source is not None:
            assert step.content is not None
            back = Step(step.source, step.content, None, None, step.path)
            self._put(step.path, back, [])
            return
        if step.content is None:
            assert step.before is not None
            self._put(step.path, Step(step.path, step.before[0], step.before[1], None), [])
            return
        if step.before is None:
            self._put(step.path, Step(step.path, None, None, (step.content, 0)), [])
            return
        try:
            self._put(step.path, Step(step.path, step.before[0], step.before[1], (step.content, 0)), [])
        except NoteChanged:
            # An edit made after the step, added at the note's end (a line appended), stays at the end.
            folder, _, name = step.path.rpartition("/")
            with HeldFolder.inside(self.root, folder) as held:
                now = held.read(name)
            if now is None or not now[0].startswith(step.content):
                raise
            edit = now[0][len(step.content) :]
            self._put(step.path, Step(step.path, step.before[0] + edit, step.before[1], now), [])


def _paired(steps: Sequence[Step]) -> list[Step]:
    """The steps in the order they are written, each new file holding the bytes of a file the steps remove made a
    move of that file (its removal folded in)."""
    # Removing a file that is not there (an undo's, say) is nothing to do.
    steps = [s for s in steps if s.content is not None or s.before is not None]
    removals = {s.path: s for s in steps if s.content is None}
    writes: list[Step] = []
    moves: dict[str, Step] = {}
    for step in steps:
        if step.content is None:
            continue
        if step.before is None:
            moved = (p for p, r in removals.items() if p not in moves and r.before and r.before[0] == step.content)
            source = next(moved, None)
            if source is not None:
                moves[source] = Step(step.path, step.content, step.mode, None, source)
                continue
        writes.append(step)
    # Moves and removals last, in the order the steps gave them.
    last = [moves.get(s.path, s) for s in steps if s.content is None]
    return writes + last


def _beside(rel: str, name: str) -> str:
    folder = rel.rpartition("/")[0]
    return f"{folder}/{name}" if folder else name
