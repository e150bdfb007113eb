"""A one-line question (new tags, a type, the note to merge into), with completion from known values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Static


class AskDialog(ModalScreen[str | None]):
    """Dismisses with the text entered on Enter, or None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]
    AUTO_FOCUS = "#answer"

    DEFAULT_CSS = """
    AskDialog { align: center middle; }
    AskDialog > Vertical {
        width: 90%; max-width: 100; height: auto; border: round $accent; background: $surface; padding: 1 2;
    }
    AskDialog #hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(
        self,
        question: str,
        value: str = "",
        hint: str = "",
        suggestions: Iterable[str] = (),
        *,
        add: bool = False,
    ) -> None:
        super().__init__()
        self.question = question
        """The prompt."""
        self.value = value
        """The text the box starts with (the current value, to edit)."""
        self.hint = hint
        """A line under the box: the format expected."""
        self.suggestions = list(suggestions)
        """Values offered as completions (right arrow accepts one)."""
        self.add = add
        """The value is a list to add to (tags): the box opens with the cursor after it, nothing selected, so
        typing adds; otherwise it opens selected, so typing replaces it (a type, a note to merge into)."""

    def compose(self) -> ComposeResult:
        """Prompt, box, hint."""
        with Vertical():
            yield Static(self.question, markup=False)
            suggester = SuggestFromList(self.suggestions, case_sensitive=False) if self.suggestions else None
            yield Input(value=self.value, suggester=suggester, id="answer", select_on_focus=not self.add)
            yield Static(self.hint + "  ·  Enter to apply, Escape to cancel", id="hint", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Answer with the text."""
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Answer nothing."""
        self.dismiss(None)
