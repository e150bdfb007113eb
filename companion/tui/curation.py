"""The app's curation: pin, tags, type, merge, archive, delete, undo and open in Obsidian, on the note shown, and
the curations the review screen accepts.

A `CurationFlow` belongs to the app, which hands it each key press: every change is planned in a thread worker (it
reads files), confirmed when it is destructive, then applied in a worker. What happened comes back to the app as
messages: `Curated` (the app shows the note as it now is and recalls again) or a `Notice`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from textual.app import App

from companion.curation.curator import Curator, Plan, obsidian_uri
from companion.curation.opener import open_uri
from companion.errors import CompanionError
from companion.review.session import Review
from companion.tui.messages import Curated, Notice
from companion.vault.audit import AuditLog
from companion.vault.links import frontmatter_tags
from companion.vault.naming import NoteNames
from companion.vault.notes import OFFERED_TYPES, Note
from companion.vault.parse import aliases_of
from companion.workspace import Workspace
from widgets.ask import AskDialog
from widgets.confirm import ConfirmDialog

Shown = Callable[[], tuple[str | None, Note | None]]
"""The note the app shows (its path, and the note once read): what curations act on."""


class CurationFlow:
    """Curates the note the app shows, through a `Curator` that records every change in the audit log."""

    def __init__(self, app: App[Any], workspace: Workspace, shown: Shown, lock: Any, *, read_only: bool) -> None:
        """Curate for `app` the note `shown` names; `lock` guards the workspace's shared manifest connection."""
        self.app = app
        """The app: dialogs, workers and messages go through it."""
        self.workspace = workspace
        """The vault."""
        self.read_only = read_only
        """Refuse every change."""
        self.opener: Callable[[str], bool] = open_uri
        """Opens an `obsidian://` link; tests replace it."""
        self._shown = shown
        self._lock = lock
        self._curator: Curator | None = None
        self._made_here: set[str] = set()  # audit ids of curations this session applied (undone without asking)
        self._review: Review | None = None  # the review session: its queue is cached until the index changes
        self._review_lock = threading.Lock()

    def curator(self) -> Curator:
        """The curator of this vault, recording to the audit log as the app (or as the config names it)."""
        if self._curator is None:
            settings = self.workspace.config.curation
            self._curator = Curator(
                self.workspace.root,
                AuditLog(self.workspace.data_dir),
                source=settings.source or "app",
                read_only=self.read_only,
                archive_folder=settings.archive_folder,
            )
        return self._curator

    def review(self) -> Review:
        """The vault's review session, made once (in a worker: its curator looks at the vault's folder)."""
        with self._review_lock:
            if self._review is None:
                self._review = Review(self.workspace, self.curator())
            return self._review

    def _target(self, action: str) -> str | None:
        """The note a curation acts on: the one highlighted and shown, by its path (never a row number, which a
        re-index or a sort gives to another note). None after saying why nothing happens: nothing is highlighted,
        or the note left the vault (then no neighbour is acted on instead)."""
        if self.read_only:
            self.app.notify(f"read-only mode: nothing was changed ({action} refused)", severity="warning")
            return None
        path = self._shown()[0]
        if path is None:
            self.app.notify(f"highlight a note first ({action} refused)", severity="warning")
        elif not (self.workspace.root / path).is_file():
            self.app.notify(
                f"{path} is no longer in the vault (moved or deleted): nothing was changed; highlight a note",
                title=f"{action} refused",
                severity="warning",
            )
            return None
        return path

    def _in_thread(self, work: Callable[[], None], group: str = "curate") -> None:
        self.app.run_worker(work, thread=True, group=group, exit_on_error=False)

    def _notice(self, text: str, **how: Any) -> None:
        self.app.post_message(Notice(text, **how))

    # -- the curations ----------------------------------------------------------------------------

    def pin(self) -> None:
        """Pin the note, or unpin it if it is pinned."""
        if (path := self._target("pin")) is not None:
            self._plan(
                lambda c: c.plan_pin(path, self.workspace.vault.read_note(path).frontmatter.get("pinned") is not True)
            )

    def retag(self) -> None:
        """Ask for the note's tags, then set them."""
        if (path := self._target("tags")) is None:
            return

        def ask(note: Note) -> None:
            current = " ".join(frontmatter_tags(note.frontmatter))
            current += " " if current else ""  # the cursor after a space: what is typed is a new tag

            def answered(text: str | None) -> None:
                if text is not None:
                    tags = [t for t in text.replace(",", " ").split() if t]
                    self._plan(lambda c: c.plan_tags(path, tags))

            hint = "typing adds a tag; delete one to remove it; space- or comma-separated, without #; empty removes all"
            self.app.push_screen(AskDialog(f"Tags of {path}", current, hint, add=True), answered)

        self._with_note(path, ask)

    def retype(self) -> None:
        """Ask for the note's type, then set it."""
        if (path := self._target("type")) is None:
            return

        def ask(note: Note) -> None:
            value = note.frontmatter.get("type")
            current = value if isinstance(value, str) else ""

            def answered(text: str | None) -> None:
                if text is not None:
                    self._plan(lambda c: c.plan_type(path, text))

            hint = "one word, e.g. " + ", ".join(OFFERED_TYPES)
            self.app.push_screen(AskDialog(f"Type of {path}", current, hint, OFFERED_TYPES), answered)

        self._with_note(path, ask)

    def _with_note(self, path: str, then: Callable[[Note], None]) -> None:
        """Call `then` with the note at `path` as it is on disk: the one shown when it is that note and read,
        else read in a worker (the dialog's current value must be this note's, never an empty one while the
        note view is still reading it: typing would then replace every tag)."""
        shown_path, note = self._shown()
        if note is not None and shown_path == path:
            then(note)
            return

        def read() -> None:
            try:
                fresh = self.workspace.vault.read_note(path)
            except CompanionError as exc:
                self._failed(exc)
                return
            self.app.call_from_thread(then, fresh)

        self._in_thread(read)

    def merge(self) -> None:
        """Ask which note this one duplicates, then merge it into that one (after a confirmation)."""
        if (path := self._target("merge")) is None:
            return

        def answered(text: str | None) -> None:
            if text and text.strip():
                # The name is resolved when the plan is made, against the vault's files as they are then.
                self._plan(lambda c: c.plan_merge(c.note_named(text), path))

        def ask() -> None:
            with self._lock:
                records = self.workspace.manifest.notes()
            names = NoteNames([r.path for r in records], {r.path: aliases_of(r.frontmatter) for r in records})
            dialog = AskDialog(
                f"Merge {path} into which note?",
                "",
                "its title, an alias or its vault path; this note's text is appended there",
                names.completions(leave_out=[path]),
            )
            self.app.call_from_thread(self.app.push_screen, dialog, answered)

        self._in_thread(ask)

    def archive(self) -> None:
        """Move the note to the archive folder (after a confirmation)."""
        if (path := self._target("archive")) is not None:
            self._plan(lambda c: c.plan_archive(path))

    def delete(self) -> None:
        """Delete the note to the vault's trash (after a confirmation)."""
        if (path := self._target("delete")) is not None:
            self._plan(lambda c: c.plan_delete(path))

    def curate(self, action: str, make: Callable[[Curator], Plan], *, details: Sequence[tuple[str, str]] = ()) -> None:
        """Apply a curation that is not about the note shown (one a review suggests) the way every other is: planned
        by `make` in a worker, confirmed when destructive, applied, audited with `details`, undoable; `Curated`
        carries the details back. Refused in read-only mode, saying so as `action`."""
        if self.read_only:
            self.app.notify(f"read-only mode: nothing was changed ({action} refused)", severity="warning")
            return
        self._plan(make, tuple(details))

    def undo(self) -> None:
        """Undo the last curation, restoring every file it touched exactly (asking first when this session did not
        make it: the audit log reaches back to other sessions and the command line)."""
        if self.read_only:
            self.app.notify("read-only mode: nothing was changed (undo refused)", severity="warning")
            return
        self._in_thread(self._ask_undo)

    def open_in_obsidian(self) -> None:
        """Open the note in Obsidian (an `obsidian://open` link); without a launcher, copy the link."""
        path = self._shown()[0]
        if path is None:
            self.app.notify("highlight a note first", severity="warning")
            return
        self._in_thread(partial(self._open, path, obsidian_uri(self.workspace.root, path)), group="open")

    # -- in worker threads ------------------------------------------------------------------------

    def _ask_undo(self) -> None:
        try:
            audit = self.curator().audit
            entry = audit.last_undoable()
            nothing = audit.nothing_to_undo() if entry is None else ""
        except CompanionError as exc:
            self._failed(exc)
            return
        if entry is None:
            self._notice(nothing, severity="warning")
        elif entry.id in self._made_here:
            self._undo_now(entry.id)
        else:
            details = [f"{c.path}" for c in entry.changes]
            details.append(f"made by {entry.source} at {entry.at}; undo restores these files exactly")

            def answered(yes: bool | None) -> None:
                if yes:
                    self._in_thread(partial(self._undo_now, entry.id))

            question = f"Undo '{entry.summary}'?"
            self.app.call_from_thread(self.app.push_screen, ConfirmDialog(question, details), answered)

    def _open(self, path: str, uri: str) -> None:
        if self.opener(uri):
            self._notice(f"{path}: {uri}", title="opened in Obsidian")
        else:
            self.app.call_from_thread(self.app.copy_to_clipboard, uri)
            self._notice(f"{path}: {uri}", title="no launcher found: the link was copied")

    def _plan(self, make: Callable[[Curator], Plan], details: tuple[tuple[str, str], ...] = ()) -> None:
        """Plan in a thread (it reads files), then confirm if destructive, then apply."""
        self._in_thread(partial(self._plan_now, make, details))

    def _plan_now(self, make: Callable[[Curator], Plan], details: tuple[tuple[str, str], ...] = ()) -> None:
        try:
            plan = make(self.curator())
        except CompanionError as exc:
            self._failed(exc)
            return
        if not plan.writes:
            self._notice(plan.summary, title="nothing to change")
        elif plan.destructive:

            def answered(yes: bool | None) -> None:
                if yes:
                    self._in_thread(partial(self._apply_now, plan, details))

            files = [f"{'write ' if w.content is not None else 'remove'} {w.path}" for w in plan.writes]
            files.append("Undo (u) restores every file exactly.")
            self.app.call_from_thread(self.app.push_screen, ConfirmDialog(plan.summary + "?", files), answered)
        else:
            self._apply_now(plan, details)

    def _apply_now(self, plan: Plan, details: tuple[tuple[str, str], ...] = ()) -> None:
        try:
            self._made_here.add(self.curator().apply(plan, details=details).id)
        except CompanionError as exc:
            self._failed(exc)
            return
        written = [w.path for w in plan.writes if w.content is not None]
        removed = [w.path for w in plan.writes if w.content is None]
        self.app.post_message(Curated(said(plan), written, removed, details=details))

    def _undo_now(self, entry_id: str) -> None:
        try:
            entry = self.curator().undo(entry_id)
            before = self.curator().audit.last_undoable()
        except CompanionError as exc:
            self._failed(exc)
            return
        undone = entry.summary.removeprefix("Undo: ")  # the undo's own entry names what it undid that way
        next_step = "u undoes the one before" if before is not None else "nothing older is left to undo"
        restored = [c.path for c in entry.changes if c.after is not None]
        removed = [c.path for c in entry.changes if c.after is None]
        self.app.post_message(Curated(f"Undone: {undone}. {next_step}", restored, removed, undo=True))

    def _failed(self, exc: CompanionError) -> None:
        # The message says whether anything was written (a failed write is put back, and says so if it could not be).
        self._notice(str(exc), title="curation failed", severity="error", timeout=10)


_DONE = {"pin": ("Pin ", "Pinned "), "unpin": ("Unpin ", "Unpinned ")}
"""Plans whose summary reads as an order (`Pin X`), and how it reads once done."""


def said(plan: Plan) -> str:
    """What the notification says once `plan` is applied; every plan's line names the note it applied to."""
    order, done = _DONE.get(plan.action, ("", ""))
    if order and not plan.done and plan.summary.startswith(order):
        return done + plan.summary.removeprefix(order)
    return plan.outcome
