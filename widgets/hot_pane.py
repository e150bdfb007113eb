"""The hot tier: the sessions the policy keeps at hand, newest first."""

from __future__ import annotations

from textual.message import Message

from companion.vault.sessions import SessionSummary
from widgets.keyed_table import KeyedTable, marked


class HotPane(KeyedTable):
    """A table of hot sessions; posts `HotPane.SessionSelected` as the cursor moves."""

    DEFAULT_CSS = """
    HotPane { height: 1fr; overflow-x: hidden; }
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
        # The mark comes first: after the message, which a narrow pane cuts, it was never in view.
        self.add_column("", key="mark", width=3)
        self.add_columns("when", "who", "said")

    def show(self, sessions: tuple[SessionSummary, ...], arrived: frozenset[str]) -> None:
        """Replace the rows (the cursor stays on its session); sessions in `arrived` just came into hot."""
        key = self.start_refill()
        for s in sessions:
            who = f"{s.user_id}/{s.chat_id}" if s.chat_id else s.user_id
            said = " ".join(s.user_msg.split())[:60]
            self.add_row(
                marked("new") if s.path in arrived else "", f"{s.date[:10]} {s.time[:5]}", who, said, key=s.path
            )
        self.border_title = f"Hot ({len(sessions)})"
        self.border_subtitle = "" if sessions else "no recent session"
        self.end_refill(key)

    def selected(self, path: str) -> Message:
        """`HotPane.SessionSelected`."""
        return self.SessionSelected(path)
