"""The warm tier: what recall finds for the search box, or with no query what the policy pushed out of hot."""

from __future__ import annotations

import re
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

from companion.recall.decay import AccessStats, Decay
from companion.recall.results import RecallItem, final_text, relevance_text
from companion.vault.parse import title_of
from companion.vault.sessions import SessionSummary
from widgets.keyed_table import KeyedTable, marked

ALL_COLUMNS = ("relevance", "final", "sim", "bm25", "decay", "accessed", "n", "type", "tier", "note")
"""Every column, in the order they show. The note comes last so the scores stay in view: a long name is cut at the
pane's edge instead of pushing them out of it."""
DETAILS: dict[str, tuple[str, ...]] = {
    "narrow": ("relevance", "decay", "tier", "note"),
    "medium": ("relevance", "final", "decay", "tier", "note"),
    "wide": ALL_COLUMNS,
}
"""Which columns each terminal width shows (see `detail_for`); the explain view (`e`) has every part of a score."""
WIDTHS = {"relevance": 9, "final": 6, "sim": 5, "bm25": 6, "decay": 5, "accessed": 10, "n": 4, "type": 12, "tier": 6}
"""Each score column's width, set from the start: a width measured from the first rows (done when the app is idle)
cut a longer value that came later (a date under `accessed`, `<0.001` under `final`) until the next render."""
NOTES_HINT = "/ search · Enter opens · ? every key"
"""The first keys, under a list that is not a recall (the first screen of a vault)."""
NUMERIC = frozenset({"final", "relevance", "sim", "bm25", "decay", "n"})
"""Columns sorted as numbers (the others as text)."""


def detail_for(width: int) -> str:
    """The warm pane's layout for a terminal `width` columns wide: from 80 columns the relevance, the decay and the
    tier; from 110 (where both sides show) the final score too; from 160 the last access and every part of the
    score."""
    if width >= 160:
        return "wide"
    return "medium" if width >= 110 else "narrow"


class WarmPane(KeyedTable):
    """Scored recall results with the parts of their score that the width allows; posts `WarmPane.NoteSelected`.

    Sortable: `s` moves the sort to the next column shown, `S` reverses it, and a click on a header sorts by it (a
    second click reverses). The order holds across refills, so a knob change keeps the user's view.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort_next", "sort"),
        Binding("S", "sort_reverse", "reverse", show=False),
    ]

    DEFAULT_CSS = """
    WarmPane { height: 1fr; overflow-x: hidden; }
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

    def __init__(self, *, detail: str = "medium", id: str | None = None) -> None:
        super().__init__(id=id)
        self._detail = detail
        self._cells: dict[str, dict[str, str | Text]] = {}  # key -> (column -> cell) of the rows, in recall's order
        self._subtitle = ""  # what the border says under an unsorted list

    @property
    def detail(self) -> str:
        """`narrow`, `medium` or `wide` (see `DETAILS`); the screen sets it from the terminal's width."""
        return self._detail

    @detail.setter
    def detail(self, value: str) -> None:
        if value == self._detail:
            return
        self._detail = value
        if self.sort_column is not None and self.sort_column not in self.columns_shown:
            self.sort_column = None
        if self.is_mounted:
            key = self.place()
            self.clear(columns=True)
            self._add_columns()
            self._add_rows()
            self.border_subtitle = self._subtitle
            if self.sort_column is not None:
                self._apply_sort()
            self.end_refill(key)

    @property
    def columns_shown(self) -> tuple[str, ...]:
        """The columns of the current layout, in order."""
        return DETAILS[self._detail]

    def path_at(self, row: int) -> str:
        """The vault path of a row's note (its cell shows the name first and the folder after)."""
        return str(self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value or "")

    def cell(self, row: int, column: str) -> str:
        """The text of a row's cell in `column` (shown or not)."""
        key = self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
        cells = self._cells.get(key or "")
        return str(cells.get(column, "")) if cells is not None else ""

    def on_mount(self) -> None:
        """Set up the columns."""
        self.cursor_type = "row"
        self._add_columns()

    def _add_columns(self) -> None:
        for name in self.columns_shown:
            self.add_column(name, key=name, width=WIDTHS.get(name))

    def action_sort_next(self) -> None:
        """Sort by the next column shown (after the last one, back to recall's order)."""
        order = [None, *self.columns_shown]
        current = self.sort_column if self.sort_column in order else None
        self.sort_by(order[(order.index(current) + 1) % len(order)], descending=True)

    def action_sort_reverse(self) -> None:
        """Reverse the current order."""
        self.sort_by(self.sort_column or "relevance", descending=not self.sort_descending)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """Sort by a clicked header; a second click reverses."""
        event.stop()
        name = str(event.column_key.value)
        same = name == self.sort_column
        self.sort_by(name, descending=not self.sort_descending if same else True)

    def sort_by(self, column: str | None, *, descending: bool = True) -> None:
        """Sort the rows (None, or a column this width does not show: back to recall's order) and show the order in
        the border."""
        self.sort_column = column if column in self.columns_shown else None
        self.sort_descending = descending
        self._apply_sort()

    def _apply_sort(self) -> None:
        column = self.sort_column or "final"
        numeric = column in NUMERIC

        def key(cell: str | Text) -> tuple[int, float | str]:
            value = str(cell)
            if numeric:
                try:
                    return (1, float(value.lstrip("<")))
                except ValueError:
                    return (0, 0.0)  # "-" and blanks: no score, always last
            return (0 if value in ("", "never") else 1, value.casefold())

        if self.sort_column is None:
            # Back to recall's own order, which unscored rows (hot, temporal, sessions) are part of.
            if [row.key.value for row in self.ordered_rows] != list(self._cells):
                keep = self.place()
                self.clear()
                self._add_rows()
                self.end_refill(keep)
            self.border_subtitle = self._subtitle
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
        notice: str = "",
    ) -> None:
        """Rows for a query's results, best first (the cursor stays on its note while the query is the same); a
        note's cell names the heading its passage sits under, when `headings` has one that is not the note's own
        title. A note that was not in the rows for the same question before is marked `new`. With `no_good_match`
        the rows are only the closest notes, and the title says so. `notice`, what the reader must know of the
        results (the meaning side still being built), goes under them."""
        headings = headings or {}
        before = self._keys_if_showing(f"query {query}")
        rows: list[tuple[str, dict[str, str | Text]]] = []
        for item in items:
            e = item.explanation
            last = e.access.last_accessed_at if e is not None else None
            heading = headings.get(item.path, "")
            note: str | Text
            if item.kind == "session":
                # A summary's file name says nothing: it is named as the pushed-out rows are, by when and what was said.
                note = f"{(item.date or '')[:10]} {item.title}".strip()
            else:
                note = note_cell(item.path, heading)
            arrived = before is not None and item.path not in before
            rows.append(
                (
                    item.path,
                    {
                        "final": final_text(item),
                        "relevance": relevance_text(item),
                        "sim": f"{e.dense:.2f}" if e is not None else "",
                        "bm25": _bm25(e.lexical, e.words > 0) if e is not None else "",
                        "decay": f"{e.decay.value:.2f}" if e is not None else "",
                        "accessed": last.strftime("%Y-%m-%d") if last else "never",
                        "n": str(e.access.access_count) if e is not None else "",
                        "type": item.note_type or item.kind,
                        "tier": _tier(item.tier, arrived=arrived),
                        "note": note,
                    },
                )
            )
        scored = [i.explanation for i in items if i.explanation is not None]
        # The weighted sum's dense share adapts to each question (recall's lexical_trust): say which one these rows
        # used; the learned fusion has no single share.
        weights = (
            f" · dense {scored[0].dense_weight:.2f} / bm25 {1 - scored[0].dense_weight:.2f}"
            if scored and not scored[0].fusion
            else ""
        )
        if no_good_match:
            title = f"Warm: {query!r}: no good match, the closest {len(items)}"
        else:
            title = f"Warm: {query!r} ({len(items)}){weights}"
        self._fill(f"query {query}", rows, title, subtitle=notice)

    def show_pushed_out(self, sessions: tuple[SessionSummary, ...], moved: frozenset[str]) -> None:
        """With no query: the sessions the policy's limit pushed out of hot (those that just moved are marked)."""
        rows: list[tuple[str, dict[str, str | Text]]] = []
        for s in sessions:
            said = " ".join(s.user_msg.split())[:60]
            rows.append(
                (
                    s.path,
                    {
                        "relevance": "-",
                        "final": "-",
                        "type": "session",
                        "tier": marked("moved") if s.path in moved else "pushed",
                        "accessed": "",
                        "note": f"{s.date[:10]} {s.time[:5]} {s.session_key}: {said}",
                    },
                )
            )
        self._fill("pushed out", rows, f"Warm: pushed out of hot ({len(sessions)})")

    def show_notes(self, rows: tuple[tuple[str, str, str], ...], title: str) -> None:
        """Rows that are not a recall: (path, when, what) of notes worth a look, such as the latest changed (their
        day goes in the note's cell: they have no score, and the day is not an access)."""
        cells: list[tuple[str, dict[str, str | Text]]] = [
            (path, {"relevance": "-", "final": "-", "type": what, "note": note_cell(path, when=when)})
            for path, when, what in rows
        ]
        self._fill("notes", cells, title, subtitle=NOTES_HINT)

    def show_use(self, path: str, stats: AccessStats, decay: Decay) -> None:
        """A note's use changed (it was opened): its row shows the new decay, last access and count, where it is."""
        cells = self._cells.get(path)
        if cells is None or not self.showing.startswith("query "):
            return
        last = stats.last_accessed_at
        cells.update(
            decay=f"{decay.value:.2f}",
            accessed=last.strftime("%Y-%m-%d") if last else "never",  # as the rows are filled
            n=str(stats.access_count),
        )
        for column in ("decay", "accessed", "n"):
            if column in self.columns_shown:
                self.update_cell(path, column, cells[column])

    def _keys_if_showing(self, showing: str) -> set[str] | None:
        """The keys shown now when they answer `showing` too (so arrivals can be told), else None."""
        if showing != self.showing or not self._cells:
            return None
        return set(self._cells)

    def _fill(
        self, showing: str, rows: list[tuple[str, dict[str, str | Text]]], title: str, subtitle: str = ""
    ) -> None:
        key = self.start_refill()
        same, self.showing = showing == self.showing, showing
        self._cells = dict(rows)
        self._subtitle = subtitle
        self._add_rows()
        self.border_title = title
        self.border_subtitle = subtitle
        if self.sort_column is not None:
            self._apply_sort()
        self.end_refill(key if same else None)

    def _add_rows(self) -> None:
        shown = self.columns_shown
        for row_key, cells in self._cells.items():
            self.add_row(*(cells.get(name, "") for name in shown), key=row_key)

    def selected(self, path: str) -> Message:
        """`WarmPane.NoteSelected`."""
        return self.NoteSelected(path)


_DAY_FIRST = re.compile(r"^\d{4}-\d{2}-\d{2}\s+")
"""The day a dated note's name starts with."""
_TIER_LABELS = {"temporal": "recent"}
"""How a tier reads in the pane, where it is not its own name."""


def _tier(tier: str, *, arrived: bool) -> str | Text:
    """The tier cell: the tier's name, or `new` (in colour) when the note was not in the list a moment ago."""
    return marked("new") if arrived else _TIER_LABELS.get(tier, tier)


def note_cell(path: str, heading: str = "", when: str = "") -> Text:
    """A note's cell: its name first (what tells one note from another), the heading its passage sits under (unless
    it only repeats the name), the day it changed, then its folder, dimmed. The pane cuts a long cell at its edge:
    a deep folder went first and hid the name."""
    cell = Text(title_of(path), end="")
    if not _same_name(heading, path):
        cell.append(f" › {heading}")
    if when:
        cell.append(f" ({when})")
    folder = path.rpartition("/")[0]
    if folder:
        cell.append(f"  {folder}/", style="dim")
    return cell


def _same_name(heading: str, path: str) -> bool:
    """Whether a passage's heading only repeats the note's name (no need to show it twice), also the name after
    the day a dated note's name starts with ("2026-08-30 Invoices" under its heading "Invoices")."""
    if not heading:
        return True
    name = title_of(path).casefold()
    return heading.strip().casefold() in (name, _DAY_FIRST.sub("", name, count=1))


def _bm25(score: float, every_word: bool) -> str | Text:
    """The BM25 cell, underlined when the note holds every word of the question (recall's `words` bonus)."""
    text = f"{score:.1f}"
    return Text(text, style="bold underline", end="") if every_word else text
