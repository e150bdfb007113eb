"""The warm tier: what recall finds for the search box, or with no query what the policy pushed out of hot."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

from companion.recalled import RecallItem
from companion.sessions import SessionSummary


class WarmPane(DataTable[str]):
    """Scored recall results with every part of their score; posts `WarmPane.NoteSelected`."""

    DEFAULT_CSS = """
    WarmPane { height: 1fr; }
    """

    class NoteSelected(Message):
        """The user moved to a recalled note."""

        def __init__(self, path: str) -> None:
            self.path = path
            """Vault-relative path of the note."""
            super().__init__()

    def on_mount(self) -> None:
        """Set up the columns."""
        self.cursor_type = "row"
        self.add_columns("final", "sim", "bm25", "decay", "accessed", "n", "type", "tier", "note")

    def show_results(self, items: tuple[RecallItem, ...], query: str) -> None:
        """Rows for a query's results, best first."""
        self.clear()
        for item in items:
            e = item.explanation
            last = e.access.last_accessed_at if e is not None else None
            self.add_row(
                f"{item.score:.3f}" if e is not None else "-",
                f"{e.dense:.2f}" if e is not None else "",
                f"{e.lexical:.1f}" if e is not None else "",
                f"{e.decay.value:.2f}" if e is not None else "",
                last.strftime("%Y-%m-%d") if last else "never",
                str(e.access.access_count) if e is not None else "",
                item.note_type or item.kind,
                item.tier,
                item.path,
                key=item.path,
            )
        self.border_title = f"Warm: {query!r} ({len(items)})"

    def show_pushed_out(self, sessions: tuple[SessionSummary, ...], moved: frozenset[str]) -> None:
        """With no query: the sessions the policy's limit pushed out of hot (those that just moved are marked)."""
        self.clear()
        for s in sessions:
            said = " ".join(s.user_msg.split())[:60]
            label = f"{s.date[:10]} {s.time[:5]} {s.session_key}: {said}"
            self.add_row(
                "-", "", "", "", "", "", "session", "moved" if s.path in moved else "pushed out", label, key=s.path
            )
        self.border_title = f"Warm: pushed out of hot ({len(sessions)})"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the highlighted note upwards."""
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.NoteSelected(event.row_key.value))
