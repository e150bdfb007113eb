"""A yes/no question before a destructive change, showing exactly what will change."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmDialog(ModalScreen[bool]):
    """Dismisses with True on `y` or the Yes button, False on `n`, escape or No."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n,escape", "answer(False)", "no"),
    ]

    AUTO_FOCUS = "#no"  # a stray Enter never confirms

    DEFAULT_CSS = """
    ConfirmDialog { align: center middle; }
    ConfirmDialog > Vertical {
        width: 90%; max-width: 100; height: auto; max-height: 80%;
        border: round $error; background: $surface; padding: 1 2;
    }
    ConfirmDialog #question { text-style: bold; margin-bottom: 1; }
    ConfirmDialog #details { color: $text-muted; }
    ConfirmDialog Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmDialog Button { margin-left: 2; }
    """

    def __init__(self, question: str, details: list[str]) -> None:
        super().__init__()
        self.question = question
        """What will happen, in one line."""
        self.details = details
        """One line per file the change touches."""

    def compose(self) -> ComposeResult:
        """The question, the files, and two buttons."""
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            yield Static("\n".join(self.details), id="details", markup=False)
            with Horizontal():
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer with the button pressed."""
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Answer from the keyboard."""
        self.dismiss(yes)
