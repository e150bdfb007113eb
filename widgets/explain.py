"""Why an item has its score: every part of it, in words."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class ExplainDialog(ModalScreen[None]):
    """A read-only panel; escape, q or e closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,e", "close", "close")]

    DEFAULT_CSS = """
    ExplainDialog { align: center middle; }
    ExplainDialog > VerticalScroll {
        width: 90%; max-width: 100; height: auto; max-height: 80%;
        border: round $accent; background: $surface; padding: 1 2;
    }
    """

    def __init__(self, title: str, lines: list[str]) -> None:
        super().__init__()
        self.title_text = title
        """What is explained (the note's path)."""
        self.lines = lines
        """The explanation, one part per line."""

    def compose(self) -> ComposeResult:
        """The lines in a scrollable box."""
        with VerticalScroll() as box:
            box.border_title = self.title_text
            yield Static("\n".join(self.lines), markup=False)

    def action_close(self) -> None:
        """Close the panel."""
        self.dismiss(None)
