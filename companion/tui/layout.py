"""The main screen's layout: the search box on top, the lists on the left, the note, graph and knobs on the right,
fitted to the terminal's size.

`app.tcss` lays the panes out by the classes `fit` sets on the app: `-narrow` shows one side at a time (`v` switches,
and sets `-details` for the note's side), `-short` gives the graph and knobs less room.
"""

from __future__ import annotations

import contextlib
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.widgets import Footer, Header, Input, Static

from companion.retention import RetentionPolicy
from companion.tui.policy import KNOBS_HINT
from widgets.hot_pane import HotPane
from widgets.link_graph import LinkGraph
from widgets.note_view import NoteView
from widgets.policy_knobs import PolicyKnobs
from widgets.status_line import StatusLine
from widgets.warm_pane import WarmPane, detail_for

WIDE = 110
"""From this many columns the lists and the note sit side by side; below, one side shows at a time."""
TALL = 32
"""Below this many rows the graph and knobs get less room (the note and the lists come first)."""


def panes(policy: RetentionPolicy, width: int) -> ComposeResult:
    """The main screen's widgets (for the app's `compose`), the knobs set to `policy`, in a terminal `width` wide."""
    # A glyph every terminal font and the browser's have (Textual's own icon shows as a missing-glyph box there).
    yield Header(icon="●")
    yield Input(
        placeholder="search what the agent remembers (empty: what left hot, or the notes changed last)", id="search"
    )
    with Horizontal(id="main"):
        with Vertical(id="left"):
            yield HotPane(id="hot")
            yield WarmPane(id="warm", detail=detail_for(width))
        with Vertical(id="right"):
            yield NoteView(id="note")
            yield LinkGraph(id="graph")
            yield PolicyKnobs(policy, id="knobs")
            yield Static(KNOBS_HINT, id="knob-help")
    yield StatusLine(id="status")
    yield Footer()


def fit(app: App[Any], size: Size) -> None:
    """Lay `app`'s panes out for the terminal's `size`: side by side from `WIDE` columns, else one side at a time;
    the knobs' and graph's share shrinks below `TALL` rows."""
    narrow = size.width < WIDE
    changed = narrow != app.has_class("-narrow")
    app.set_class(narrow, "-narrow")
    if changed:
        app.refresh_bindings()  # `v` comes and goes with the width
    app.set_class(size.height < TALL, "-short")
    with contextlib.suppress(NoMatches):  # not composed yet: compose reads the size itself
        app.query_one(WarmPane).detail = detail_for(size.width)
