"""The indexer status line: which mode is on, and what the indexer is doing."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


class StatusLine(Static):
    """One line: the indexer's mode and state, and the last error if any."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; }
    """

    mode: reactive[str] = reactive("")
    """How the index is kept fresh (in-app indexer, another process, read-only)."""
    state: reactive[str] = reactive("starting")
    """What the indexer does now: indexing n of m, idle, an error."""

    def render(self) -> str:
        """The line's text."""
        return f"index: {self.state}  ·  {self.mode}"
