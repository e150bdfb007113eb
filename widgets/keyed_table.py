"""A table whose rows are keyed by note path and which reports the row the user is on."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

MOVED_STYLE = "bold black on yellow"
"""How a row that just moved between tiers is marked (it must catch the eye right after a knob press)."""


def marked(label: str) -> Text:
    """A cell that stands out: its row just moved between tiers."""
    return Text(label, style=MOVED_STYLE)


class KeyedTable(DataTable[str | Text]):
    """Rows keyed by vault path. While focused, the highlighted row is reported with `selected(path)`.

    A refill keeps the cursor on the same key when asked to (a knob press re-partitions, and the user's place should
    not jump), so the note view is not re-rendered for nothing. Home and End go to the first and the last row (the
    DataTable's own scroll the view sideways, which a list of notes never needs).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "first row", show=False),
        Binding("end", "last_row", "last row", show=False),
    ]

    def action_first_row(self) -> None:
        """Put the cursor on the first row."""
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        """Put the cursor on the last row."""
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)

    class RowOpened(Message):
        """The user pressed Enter on a row: the note is opened on purpose (not merely passed over)."""

        def __init__(self, path: str) -> None:
            self.path = path
            """Vault-relative path of the note."""
            super().__init__()

    def selected(self, path: str) -> Message:
        """The message that reports `path` upwards; subclasses name their own."""
        raise NotImplementedError

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens its note on purpose."""
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.RowOpened(event.row_key.value))

    def current_key(self) -> str | None:
        """The key of the highlighted row, or None when the table is empty."""
        if self.row_count == 0:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def start_refill(self) -> str | None:
        """Clear the rows; returns the key the cursor was on, for `end_refill`."""
        key = self.current_key()
        self.clear()
        return key

    def end_refill(self, key: str | None) -> None:
        """Put the cursor back on `key` if it is still there (else on the first row)."""
        if key is not None and key in self.rows:
            self.move_cursor(row=self.get_row_index(key), animate=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the highlighted row when the user is in this table."""
        event.stop()
        if self.has_focus and event.row_key.value is not None:
            self.post_message(self.selected(event.row_key.value))

    def on_focus(self) -> None:
        """Entering the table shows its highlighted row."""
        key = self.current_key()
        if key is not None:
            self.post_message(self.selected(key))
