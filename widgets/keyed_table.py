"""A table whose rows are keyed by note path and which reports the row the user is on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Self

from rich.text import Text
from textual import events
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

    The cursor follows a note, not a row number: a refill or a sort keeps it on the same key, so the note view is not
    re-rendered for nothing and an action never lands on the note that happens to take the row's place. What is
    reported is always the key under the cursor when the report is handled (the table's own highlight events carry
    the key of the moment they were posted, which a refill or a sort in between makes another note's). When the
    highlighted note leaves the rows, the cursor hides and nothing is reported until the user moves it (`lost`).
    Home and End go to the first and the last row (the DataTable's own scroll the view sideways, which a list of
    notes never needs).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "first row", show=False),
        Binding("end", "last_row", "last row", show=False),
    ]

    lost: str | None = None
    """The key of the highlighted note that left the rows (the cursor is hidden until the user moves it)."""

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
        """The key of the highlighted row, or None when the table is empty or the highlighted note left it."""
        if self.row_count == 0 or self.lost is not None:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def place(self) -> str | None:
        """The note the cursor stands for: the highlighted row's key, or the note that left the rows."""
        return self.lost or self.current_key()

    def start_refill(self) -> str | None:
        """Clear the rows; returns `place()`, for `end_refill`."""
        key = self.place()
        self.clear()
        return key

    def end_refill(self, key: str | None) -> None:
        """Put the cursor back on `key` if it is still there; a `key` that left hides the cursor (no neighbour
        takes its place unseen); None (a new list) puts it on the first row."""
        if key is not None and key not in self.rows:
            self.lost = key
            self.show_cursor = False
            return
        self.lost = None
        self.show_cursor = True
        if key is not None:
            self.move_cursor(row=self.get_row_index(key), animate=False)
        self._report()

    def sort(self, *columns: Any, key: Callable[[Any], Any] | None = None, reverse: bool = False) -> Self:
        """Sort the rows; the cursor stays on the note it was on (a sort moves rows, not the user's place)."""
        keep = self.current_key()
        super().sort(*columns, key=key, reverse=reverse)
        if keep is not None:
            self.move_cursor(row=self.get_row_index(keep), animate=False)
        return self

    def _report(self) -> None:
        """Tell the screen which note is highlighted, while the user is in this table."""
        key = self.current_key()
        # The screen's focus, not `has_focus`: a browser tab opened in the background has the app without focus,
        # and the highlighted row must still show in the note pane.
        if self.is_attached and self.screen.focused is self and key is not None:
            self.post_message(self.selected(key))

    def _found(self) -> bool:
        """Show the hidden cursor where it is and report its note; False when it was not hidden."""
        if self.lost is None:
            return False
        self.lost = None
        self.show_cursor = True
        self._report()
        return True

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Report the highlighted row when the user is in this table."""
        event.stop()
        self._report()

    def on_focus(self) -> None:
        """Entering the table shows its highlighted row (a hidden cursor shows again: the user came to look)."""
        if not self._found():
            self._report()

    def on_resize(self, _: events.Resize) -> None:
        """A table that grew or shrank (zoom, another side, a terminal resize) keeps its highlighted row in view."""
        if self.row_count:
            self.call_after_refresh(self.move_cursor, row=self.cursor_row, animate=False)

    # The first key after the highlighted note left shows the cursor where it is rather than moving it unseen.

    def action_cursor_up(self) -> None:
        """Up one row (the first press after the note left only shows the cursor)."""
        if not self._found():
            super().action_cursor_up()

    def action_cursor_down(self) -> None:
        """Down one row (the first press after the note left only shows the cursor)."""
        if not self._found():
            super().action_cursor_down()

    def action_select_cursor(self) -> None:
        """Open the highlighted row (the first press after the note left only shows the cursor)."""
        if not self._found():
            super().action_select_cursor()

    def action_page_up(self) -> None:
        """Up one page."""
        self._found()
        super().action_page_up()

    def action_page_down(self) -> None:
        """Down one page."""
        self._found()
        super().action_page_down()

    def action_first_row(self) -> None:
        """Put the cursor on the first row."""
        self._found()
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        """Put the cursor on the last row."""
        self._found()
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)

    def on_click(self, _: events.Click) -> None:
        """A click on a row shows the hidden cursor first (the table's own handler, after this one, moves it)."""
        if self.lost is not None:
            self.lost = None
            self.show_cursor = True
