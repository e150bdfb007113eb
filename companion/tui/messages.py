"""What the app's workers tell the app: messages up, posted from their threads (Textual queues them safely)."""

from __future__ import annotations

from textual.message import Message

from companion.recall.decay import AccessStats, Decay
from companion.recall.results import RecalledContext
from companion.vault.notes import Note
from widgets.link_graph import Neighbourhood


class Report(Message):
    """A message a worker posts to the app; the app counts those not yet handled as work still under way."""


class IndexStatus(Report):
    """The indexer's mode (who writes the index) or state (what it is doing) changed."""

    def __init__(self, *, mode: str | None = None, state: str | None = None) -> None:
        super().__init__()
        self.mode = mode
        """Who writes the index, when that changed."""
        self.state = state
        """What the indexer is doing, when that changed."""


class IndexChanged(Report):
    """Notes were indexed, changed or deleted under the panes: recall again."""


class Notice(Report):
    """Something for the user to read, from a worker (a failure, a skipped note, a note opened)."""

    def __init__(self, text: str, *, title: str = "", severity: str = "information", timeout: float | None = None):
        super().__init__()
        self.text = text
        """The message."""
        self.title = title
        """Its title."""
        self.severity = severity
        """`information`, `warning` or `error`."""
        self.timeout = timeout
        """Seconds it stays (None: Textual's default)."""


class RecallReady(Report):
    """A recall finished; only the newest question's answer is shown."""

    def __init__(
        self,
        asked: int,
        query: str,
        context: RecalledContext,
        headings: dict[str, str] | None = None,
        latest: tuple[tuple[str, str, str], ...] = (),
    ) -> None:
        super().__init__()
        self.asked = asked
        """The recall's number (see `CompanionApp.refresh_recall`)."""
        self.query = query
        """The question asked (empty: the pushed-out view)."""
        self.context = context
        """What recall found."""
        self.headings = headings or {}
        """Path to the heading its best passage sits under (the warm pane shows it beside the note)."""
        self.latest = latest
        """With no question and nothing pushed out of hot: (path, day changed, type) of the notes changed last."""


class NoteRead(Report):
    """A note was read for the note view (or could not be)."""

    def __init__(self, path: str, note: Note | None, problem: str, refresh: bool) -> None:
        super().__init__()
        self.path = path
        """The note asked for."""
        self.note = note
        """The note, or None when it could not be read."""
        self.problem = problem
        """Why it could not be read."""
        self.refresh = refresh
        """A re-read after a change on disk (keeps the scroll)."""


class GraphRead(Report):
    """The link neighbourhood of a note was read for the graph pane."""

    def __init__(self, hood: Neighbourhood) -> None:
        super().__init__()
        self.hood = hood
        """Its links, backlinks and notes two hops away."""


class Curated(Report):
    """A curation or an undo was applied: show the files as they are now and recall again."""

    def __init__(
        self,
        summary: str,
        written: list[str],
        removed: list[str],
        *,
        undo: bool = False,
        details: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__()
        self.summary = summary
        """What was done."""
        self.undo = undo
        """The change was an undo (its summary says what the next `u` would undo)."""
        self.details = details
        """What the audit entry records besides the change (a review's `("suggestion", id)`, say)."""
        self.written = written
        """Files written."""
        self.removed = removed
        """Files removed."""


class AccessRecorded(Report):
    """A note opened on purpose was counted as used: the lists showing it update its use, not their order."""

    def __init__(self, path: str, stats: AccessStats, decay: Decay) -> None:
        super().__init__()
        self.path = path
        """The note."""
        self.stats = stats
        """Its access statistics now."""
        self.decay = decay
        """The decay they give now."""
