"""The review screen: the vault's review queue (`companion.review`), one suggestion at a time.

Each suggestion shows with its kind, its place in the queue, its evidence, the curation accepting it applies, and
the notes it is about side by side (a near-duplicate's or a changed fact's two texts with what only one of them
says marked). Accepting goes through the app's `CurationFlow`, like every other curation: planned in a worker,
confirmed when it moves or removes notes, audited (with the suggestion's kind and id) and undoable with `u`.
Skipping hides a suggestion until one of its notes changes. The queue and the notes are read in thread workers,
which post their results to the screen; the app hands the screen what it hears of curations and index changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from companion.curation.suggestions import KIND_NAMES, Suggestion
from companion.errors import NoteError
from companion.review.session import Review
from companion.tui.curation import CurationFlow
from companion.tui.messages import Curated
from companion.vault.notes import Note
from widgets.note_diff import NotePane, diff_texts, plain_text
from widgets.note_view import properties_text

NOTHING = (
    "Nothing to review: no near-duplicates, changed facts, broken links, missing types, stale notes or orphans "
    "were found (skipped suggestions come back when one of their notes changes)."
)
"""What the screen says over an empty queue."""
COMPARED = frozenset({"duplicate", "changed_fact"})
"""The kinds whose two notes are compared line by line."""


@dataclass(frozen=True)
class Pane:
    """One note as a pane shows it, built in a worker."""

    title: str
    """The border's title: the note's role and path."""
    properties: Text
    """Its properties, folded into a line or two."""
    text: Text
    """Its body (marked), or why it could not be read."""


def panes_of(suggestion: Suggestion) -> list[tuple[str, str]]:
    """The notes a suggestion shows, left first, each with its pane's title: the note the curation changes, and
    the other one for a kind about two notes."""
    first = suggestion.paths[0]
    second = suggestion.paths[1] if len(suggestion.paths) > 1 else None
    roles = {
        "duplicate": ("merged away", "kept"),
        "changed_fact": ("older", "newer"),
        "broken_link": ("the link", "meant"),
    }.get(suggestion.kind)
    if roles is None or second is None:
        return [(first, first)]
    # The names only: the paths are in the proposal, and two titles share a narrow terminal's width.
    return [(first, f"{roles[0]}: {_name(first)}"), (second, f"{roles[1]}: {_name(second)}")]


def note_panes(suggestion: Suggestion, read: Callable[[str], Note], width: int) -> tuple[Pane, ...]:
    """Read a suggestion's notes and build their panes (in a worker thread: it reads files and compares texts);
    `width` is a pane's width, for the properties' line."""
    wanted = panes_of(suggestion)
    notes: list[Note | None] = []
    problems: list[str] = []
    for path, _ in wanted:
        try:
            notes.append(read(path))
            problems.append("")
        except NoteError as exc:
            notes.append(None)
            problems.append(f"{path} could not be read: {exc.reason}")
    first, *rest = notes
    if suggestion.kind in COMPARED and first is not None and rest and rest[0] is not None:
        texts = list(diff_texts(first.body, rest[0].body))
    else:
        link = rf"\[\[{re.escape(suggestion.proposal.value)}(?=[\]|#^])" if suggestion.kind == "broken_link" else ""
        texts = [plain_text(note.body, link if i == 0 else "") if note else Text("") for i, note in enumerate(notes)]
    out = []
    for (_, title), note, text, problem in zip(wanted, notes, texts, problems, strict=True):
        if note is None:
            out.append(Pane(title, Text(""), Text(problem, style="italic")))
        else:
            folded = properties_text(note, folded_chars=2 * width - 12, value_chars=max(width // 2, 12))
            out.append(Pane(title, folded, text))
    return tuple(out)


class ReviewScreen(ModalScreen[str | None]):
    """One suggestion of the review queue at a time; dismisses with the path of a note to open (`o`), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a,enter", "accept", "accept"),
        Binding("s", "skip", "skip"),
        Binding("n", "step(1)", "next"),
        Binding("p", "step(-1)", "previous"),
        # Before the panes' own keys: left and right move in the queue, not sideways in a note.
        Binding("right", "step(1)", "next", show=False, priority=True),
        Binding("left", "step(-1)", "previous", show=False, priority=True),
        Binding("o", "open_note", "open note"),
        Binding("u", "undo", "undo"),
        Binding("escape", "close", "close"),
    ]

    class QueueRead(Message):
        """The review queue was read (or could not be)."""

        def __init__(self, asked: int, queue: list[Suggestion] | None, notice: str) -> None:
            super().__init__()
            self.asked = asked
            """The read's number: only the newest is shown."""
            self.queue = queue
            """The suggestions, best first; None when the queue could not be read."""
            self.notice = notice
            """Why duplicates were found by words only, or why the queue could not be read."""

    class NotesRead(Message):
        """A suggestion's notes were read and compared."""

        def __init__(self, key: tuple[str, str], panes: tuple[Pane, ...]) -> None:
            super().__init__()
            self.key = key
            """The suggestion's id and fingerprint."""
            self.panes = panes
            """Its notes, left first."""

    class Skipped(Message):
        """A skip was written, or could not be."""

        def __init__(self, suggestion: Suggestion, problem: str) -> None:
            super().__init__()
            self.suggestion = suggestion
            """The suggestion skipped."""
            self.problem = problem
            """Why the skip could not be kept (empty when it was)."""

    def __init__(
        self,
        review: Callable[[], Review],
        flow: CurationFlow,
        lock: AbstractContextManager[Any],
        *,
        as_of: datetime | None = None,
    ) -> None:
        """Review the queue `review()` gives (called in workers only), accepting through the app's `flow`; `lock`
        guards the workspace's shared index connection; `as_of` fixes the moment the queue is computed at."""
        super().__init__()
        self.flow = flow
        """The app's curation flow: accepting and undoing go through it."""
        self.suggestions: list[Suggestion] | None = None
        """The queue as shown (None until it is read), accepted and skipped suggestions left out."""
        self.position = 0
        """The shown suggestion's index in `suggestions`."""
        self.reads = 0
        """How many queue reads the screen has shown (for tests)."""
        self._review = review
        self._lock = lock
        self._as_of = as_of
        self._asked = 0
        self._reading = False  # a queue read is under way
        self._again = False  # and another is due when it ends
        self._gone: dict[str, str] = {}  # accepted or skipped here: id to fingerprint (the index may lag behind)
        self._shown_key: tuple[str, str] | None = None  # the suggestion whose notes the panes show or will
        self._told_notice = False

    @property
    def current(self) -> Suggestion | None:
        """The suggestion shown, or None (the queue is empty or not read yet)."""
        if not self.suggestions:
            return None
        return self.suggestions[min(self.position, len(self.suggestions) - 1)]

    def compose(self) -> ComposeResult:
        """The heading, the suggestion, the curation it proposes, its notes side by side, the keys."""
        yield Static("Review", id="review-heading", markup=False)
        with Vertical(id="review-about"):
            yield Static("reading the review queue…", id="review-summary", markup=False)
            yield Static("", id="review-evidence", markup=False)
            yield Static("", id="review-proposal", markup=False)
        with Horizontal(id="review-notes"):
            yield NotePane(id="review-left")
            yield NotePane(id="review-right")
        yield Footer()

    def on_mount(self) -> None:
        """Read the queue."""
        self.set_class(True, "-empty")
        self.reload()

    # -- what the app says ------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the queue again, in a worker (cached by the session until the index changes); while a read runs,
        one more follows it, however many times this is called meanwhile (an agent writing note after note)."""
        if self._reading:
            self._again = True
            return
        self._reading, self._again = True, False
        self._asked += 1
        self._read_queue(self._asked)

    def curated(self, message: Curated) -> None:
        """A curation or an undo landed: an accepted suggestion leaves the queue at once (the index follows the
        files within a second), an undone one may come back; the queue is read again."""
        if message.undo:
            self._gone.clear()
        else:
            accepted = dict(message.details).get("suggestion")
            if accepted is not None:
                self._drop(accepted)
        self.reload()

    # -- the workers ------------------------------------------------------------------------------

    @work(thread=True, group="review-queue", exit_on_error=False)
    def _read_queue(self, asked: int) -> None:
        now = (self._as_of or datetime.now()).astimezone()
        try:
            review = self._review()
            # The index is read through the app's shared connection, under its lock; the finders run without it.
            queue = review.queue(now, index_lock=self._lock)
            notice = review.notice
        except Exception as exc:  # noqa: BLE001 - a read that died must say so, or the screen waits for it
            self.post_message(self.QueueRead(asked, None, f"the review queue could not be read: {exc}"))
            return
        self.post_message(self.QueueRead(asked, queue, notice))

    @work(thread=True, exclusive=True, group="review-notes", exit_on_error=False)
    def _read_notes(self, suggestion: Suggestion, width: int) -> None:
        vault = self._review().ws.vault
        self.post_message(self.NotesRead(_key(suggestion), note_panes(suggestion, vault.read_note, width)))

    @work(thread=True, group="review-skip", exit_on_error=False)
    def _skip(self, suggestion: Suggestion) -> None:
        try:
            self._review().skip(suggestion)
        except OSError as exc:
            self.post_message(self.Skipped(suggestion, f"{exc.strerror or exc}"))
            return
        self.post_message(self.Skipped(suggestion, ""))

    def on_review_screen_queue_read(self, message: QueueRead) -> None:
        """Show the newest queue, staying on the suggestion shown when it is still there."""
        if message.asked != self._asked:
            return
        self._reading = False
        if self._again:
            self.reload()
        self.reads += 1
        if message.queue is None:
            self.suggestions = []
            self._show(problem=message.notice)
            return
        if message.notice and not self._told_notice:
            self._told_notice = True
            self.notify(message.notice, severity="warning")
        shown = self.current
        self.suggestions = [s for s in message.queue if self._gone.get(s.id) != s.fingerprint]
        ids = [s.id for s in self.suggestions]
        if shown is not None and shown.id in ids:
            self.position = ids.index(shown.id)
        self._show()

    def on_review_screen_notes_read(self, message: NotesRead) -> None:
        """Show a suggestion's notes, unless the user has moved on."""
        if message.key != self._shown_key:
            return
        for pane, view in zip(message.panes, self.query(NotePane), strict=False):
            view.show(pane.title, pane.properties, pane.text)

    def on_review_screen_skipped(self, message: Skipped) -> None:
        """Say when a skip could not be kept: the suggestion comes back."""
        if message.problem:
            self._gone.pop(message.suggestion.id, None)
            self.notify(f"the skip was not kept: {message.problem}", title="skip failed", severity="error")
            self.reload()

    # -- showing ----------------------------------------------------------------------------------

    def _show(self, problem: str = "") -> None:
        heading = self.query_one("#review-heading", Static)
        summary = self.query_one("#review-summary", Static)
        suggestion = self.current
        read_only = " · read-only: accept and skip are refused" if self.flow.read_only else ""
        self.set_class(suggestion is None, "-empty")
        if suggestion is None or self.suggestions is None:
            self._shown_key = None
            heading.update(f"Review{read_only}")
            summary.update(problem or NOTHING)
            self.query_one("#review-evidence", Static).update("")
            self.query_one("#review-proposal", Static).update("")
            return
        self.position = self.suggestions.index(suggestion)
        place = f"{self.position + 1} of {len(self.suggestions)}"
        heading.update(f"Review · {place} · {KIND_NAMES.get(suggestion.kind, suggestion.kind)}{read_only}")
        summary.update(suggestion.summary)
        self.query_one("#review-evidence", Static).update("\n".join(f"· {line}" for line in suggestion.evidence))
        proposal = suggestion.proposal
        if proposal.action == "none":
            said = "nothing to apply: open the note (o) and decide, or skip it (s)"
        else:
            said = f"accept (a): {proposal.describe()}"
        self.query_one("#review-proposal", Static).update(f"→ {said}")
        wanted = panes_of(suggestion)
        self.query_one("#review-notes").set_class(len(wanted) == 1, "-single")
        if _key(suggestion) != self._shown_key:
            self._shown_key = _key(suggestion)
            for (_, title), view in zip(wanted, self.query(NotePane), strict=False):
                view.show_message(title, "reading…")
            width = self.query_one("#review-left", NotePane).scrollable_content_region.width
            self._read_notes(suggestion, max(width, 30))

    def _drop(self, suggestion_id: str) -> None:
        """Take a suggestion out of the queue shown (accepted or skipped): the next one takes its place."""
        if not self.suggestions:
            return
        for i, suggestion in enumerate(self.suggestions):
            if suggestion.id == suggestion_id:
                self._gone[suggestion.id] = suggestion.fingerprint
                del self.suggestions[i]
                if i < self.position:
                    self.position -= 1
                self.position = min(self.position, max(len(self.suggestions) - 1, 0))
                self._show()
                return

    # -- the keys ---------------------------------------------------------------------------------

    def action_accept(self) -> None:
        """Apply the curation the suggestion proposes (asking first when it moves or removes notes)."""
        suggestion = self.current
        if suggestion is None:
            self._nothing()
            return
        if suggestion.proposal.action == "none":
            self.notify("nothing to apply: open the note (o) and decide, or skip it (s)", severity="warning")
            return
        self.flow.curate(
            "accept",
            lambda _: self._review().plan(suggestion),
            details=(("review", suggestion.kind), ("suggestion", suggestion.id)),
        )

    def action_skip(self) -> None:
        """Hide the suggestion until one of its notes changes, and show the next."""
        suggestion = self.current
        if suggestion is None:
            self._nothing()
            return
        if self.flow.read_only:  # a skip is kept in the data directory, like the audit log
            self.notify("read-only mode: nothing was changed (skip refused)", severity="warning")
            return
        self._drop(suggestion.id)
        self._skip(suggestion)
        self.notify("skipped: it comes back if one of its notes changes", timeout=3)

    def action_step(self, step: int) -> None:
        """Show the next (1) or the previous (-1) suggestion, round the queue."""
        if self.suggestions:
            self.position = (self.position + step) % len(self.suggestions)
            self._show()

    def action_open_note(self) -> None:
        """Close the review and show the suggestion's first note in the app's note view."""
        suggestion = self.current
        if suggestion is None:
            self._nothing()
            return
        self.dismiss(suggestion.paths[0])

    def _nothing(self) -> None:
        read = self.suggestions is not None
        self.notify("nothing to review" if read else "the review queue is still being read", severity="warning")

    def action_undo(self) -> None:
        """Undo the last curation, as the app's `u` does."""
        self.flow.undo()

    def action_close(self) -> None:
        """Close the review."""
        self.dismiss(None)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _key(suggestion: Suggestion) -> tuple[str, str]:
    return suggestion.id, suggestion.fingerprint
