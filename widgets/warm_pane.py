"""The warm tier: what recall finds for the search box, or with no query what the policy pushed out of hot."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from companion.recalled import RecallItem
from companion.sessions import SessionSummary

COLUMNS = ("final", "sim", "bm25", "decay", "accessed", "n", "type", "tier", "note")
NUMERIC = frozenset({"final", "sim", "bm25", "decay", "n"})


class WarmPane(DataTable[str]):
    """Scored recall results with every part of their score; posts `WarmPane.NoteSelected`.

    Sortable: `s` moves the sort to the next column, `S` reverses it, and a click on a header sorts by it (a second
    click reverses). The order holds across refills, so a knob change keeps the user's view.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort_next", "sort"),
        Binding("S", "sort_reverse", "reverse", show=False),
    ]

    DEFAULT_CSS = """
    WarmPane { height: 1fr; }
    """

    class NoteSelected(Message):
        """The user moved to a recalled note."""

        def __init__(self, path: str) -> None:
            self.path = path
            """Vault-relative path of the note."""
            super().__init__()

    sort_column: str | None = None
    """The column the rows are sorted by (None: recall's own order, best first)."""
    sort_descending = True
    """Largest (or latest) first."""

    def on_mount(self) -> None:
        """Set up the columns."""
        self.cursor_type = "row"
        for name in COLUMNS:
            self.add_column(name, key=name)

    def action_sort_next(self) -> None:
        """Sort by the next column (after the last one, back to recall's order)."""
        order = [None, *COLUMNS]
        self.sort_by(order[(order.index(self.sort_column) + 1) % len(order)], descending=True)

    def action_sort_reverse(self) -> None:
        """Reverse the current order."""
        self.sort_by(self.sort_column or "final", descending=not self.sort_descending)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """Sort by a clicked header; a second click reverses."""
        event.stop()
        name = str(event.column_key.value)
        same = name == self.sort_column
        self.sort_by(name, descending=not self.sort_descending if same else True)

    def sort_by(self, column: str | None, *, descending: bool = True) -> None:
        """Sort the rows (None: back to recall's order) and show the order in the border."""
        self.sort_column, self.sort_descending = column, descending
        self._apply_sort()

    def _apply_sort(self) -> None:
        column = self.sort_column or "final"
        numeric = column in NUMERIC

        def key(value: str) -> tuple[int, float | str]:
            if numeric:
                try:
                    return (1, float(value))
                except ValueError:
                    return (0, 0.0)  # "-" and blanks: no score, always last
            return (0 if value in ("", "never") else 1, value.casefold())

        if self.sort_column is None:
            self.sort("final", key=key, reverse=True)
            self.border_subtitle = ""
        else:
            self.sort(column, key=key, reverse=self.sort_descending)
            self.border_subtitle = f"sorted by {column} {'↓' if self.sort_descending else '↑'}"

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
        if self.sort_column is not None:
            self._apply_sort()

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
        if self.sort_column is not None:
            self._apply_sort()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the highlighted note upwards."""
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.NoteSelected(event.row_key.value))
