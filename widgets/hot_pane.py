"""The hot tier: the sessions the policy keeps at hand, newest first."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

from companion.sessions import SessionSummary


class HotPane(DataTable[str]):
    """A table of hot sessions; posts `HotPane.SessionSelected` as the cursor moves."""

    DEFAULT_CSS = """
    HotPane { height: 1fr; }
    """

    class SessionSelected(Message):
        """The user moved to a hot session."""

        def __init__(self, path: str) -> None:
            self.path = path
            """Vault-relative path of the session's note."""
            super().__init__()

    def on_mount(self) -> None:
        """Set up the columns."""
        self.cursor_type = "row"
        self.add_columns("when", "who", "said", "")

    def show(self, sessions: tuple[SessionSummary, ...], arrived: frozenset[str]) -> None:
        """Replace the rows; sessions in `arrived` just came into hot after a policy change."""
        self.clear()
        for s in sessions:
            who = f"{s.user_id}/{s.chat_id}" if s.chat_id else s.user_id
            said = " ".join(s.user_msg.split())[:60]
            self.add_row(f"{s.date[:10]} {s.time[:5]}", who, said, "new" if s.path in arrived else "", key=s.path)
        self.border_title = f"Hot ({len(sessions)})"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the highlighted session upwards."""
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.SessionSelected(event.row_key.value))
