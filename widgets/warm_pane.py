"""The warm tier: what recall finds for the search box, or with no query what the policy pushed out of hot."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from companion.recall.results import RecallItem, score_text
from companion.vault.sessions import SessionSummary
from widgets.keyed_table import KeyedTable, marked

COLUMNS = ("final", "note", "sim", "bm25", "decay", "accessed", "n", "type", "tier")
"""The note comes second: on a narrow terminal the columns past the pane's edge are cut, and the name matters most."""
NUMERIC = frozenset({"final", "sim", "bm25", "decay", "n"})


class WarmPane(KeyedTable):
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

    showing = ""
    """What the rows answer (a query, or the pushed-out list): a new question puts the cursor back on top."""
    sort_column: str | None = None
    """The column the rows are sorted by (None: recall's own order, best first)."""
    sort_descending = True
    """Largest (or latest) first."""

    def on_mount(self) -> None:
        """Set up the columns."""
        self.cursor_type = "row"
        self._rank: dict[str, int] = {}  # recall's order of the rows (note cell -> position), to sort back to it
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

        def key(cell: str | Text) -> tuple[int, float | str]:
            value = str(cell)
            if numeric:
                try:
                    return (1, float(value))
                except ValueError:
                    return (0, 0.0)  # "-" and blanks: no score, always last
            return (0 if value in ("", "never") else 1, value.casefold())

        if self.sort_column is None:
            # Back to recall's own order, which unscored rows (hot, temporal, sessions) are part of.
            self.sort("note", key=lambda cell: self._rank.get(str(cell), len(self._rank)))
            self.border_subtitle = ""
        else:
            self.sort(column, key=key, reverse=self.sort_descending)
            self.border_subtitle = f"sorted by {column} {'↓' if self.sort_descending else '↑'}"

    def show_results(
        self,
        items: tuple[RecallItem, ...],
        query: str,
        headings: dict[str, str] | None = None,
        *,
        no_good_match: bool = False,
    ) -> None:
        """Rows for a query's results, best first (the cursor stays on its note while the query is the same); a
        note's cell names the heading its passage sits under, when `headings` has one. With `no_good_match` the
        rows are only the closest notes, and the title says so."""
        headings = headings or {}
        key = self._refill(f"query {query}")
        for item in items:
            e = item.explanation
            last = e.access.last_accessed_at if e is not None else None
            note = f"{item.path} › {headings[item.path]}" if headings.get(item.path) else item.path
            self.add_row(
                score_text(item.score) if e is not None else "-",
                note,
                f"{e.dense:.2f}" if e is not None else "",
                _bm25(e.lexical, e.words > 0) if e is not None else "",
                f"{e.decay.value:.2f}" if e is not None else "",
                last.strftime("%Y-%m-%d") if last else "never",
                str(e.access.access_count) if e is not None else "",
                item.note_type or item.kind,
                item.tier,
                key=item.path,
            )
            self._rank[note] = len(self._rank)
        scored = [i.explanation for i in items if i.explanation is not None]
        # The weighted sum's dense share adapts to each question (recall's lexical_trust): say which one these rows
        # used; the learned fusion has no single share.
        weights = (
            f" · dense {scored[0].dense_weight:.2f} / bm25 {1 - scored[0].dense_weight:.2f}"
            if scored and not scored[0].fusion
            else ""
        )
        if no_good_match:
            self.border_title = f"Warm: {query!r}: no good match, the closest {len(items)}"
        else:
            self.border_title = f"Warm: {query!r} ({len(items)}){weights}"
        if self.sort_column is not None:
            self._apply_sort()
        self.end_refill(key)

    def show_pushed_out(self, sessions: tuple[SessionSummary, ...], moved: frozenset[str]) -> None:
        """With no query: the sessions the policy's limit pushed out of hot (those that just moved are marked)."""
        key = self._refill("pushed out")
        for s in sessions:
            said = " ".join(s.user_msg.split())[:60]
            label = f"{s.date[:10]} {s.time[:5]} {s.session_key}: {said}"
            self.add_row(
                "-",
                label,
                "",
                "",
                "",
                "",
                "",
                "session",
                marked("moved") if s.path in moved else "pushed out",
                key=s.path,
            )
            self._rank[label] = len(self._rank)
        self.border_title = f"Warm: pushed out of hot ({len(sessions)})"
        if self.sort_column is not None:
            self._apply_sort()
        self.end_refill(key)

    def _refill(self, showing: str) -> str | None:
        key = self.start_refill()
        self._rank = {}
        same, self.showing = showing == self.showing, showing
        return key if same else None

    def selected(self, path: str) -> Message:
        """`WarmPane.NoteSelected`."""
        return self.NoteSelected(path)


def _bm25(score: float, every_word: bool) -> str | Text:
    """The BM25 cell, underlined when the note holds every word of the question (recall's `words` bonus)."""
    text = f"{score:.1f}"
    return Text(text, style="bold underline", end="") if every_word else text
