"""The policy knobs: every `RetentionPolicy` field, changed from the keyboard, with a preview of the decay curve."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from companion.recall.decay import AccessStats, decay
from companion.retention import RetentionPolicy

# Step per key press: whole numbers for counts and days, small steps for multipliers.
STEPS: dict[str, float] = {
    "hot_limit": 1,
    "hot_window_days": 1,
    "half_life_days": 5,
    "decay_floor": 0.05,
    "decay_ceiling": 0.05,
    "access_resistance": 0.002,
    "max_resistance": 0.05,
    "never_accessed": 0.05,
    "confidence_lift": 0.05,
    "warm_results": 5,
    "token_budget": 250,
    "session_timeout_minutes": 5,
}


class PolicyKnobs(DataTable[str]):
    """One row per knob; `+`/`-` (or right/left) change the highlighted one and post `PolicyKnobs.Changed`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus,right,equals_sign", "step(1)", "raise", show=True),
        Binding("minus,left", "step(-1)", "lower", show=True),
    ]

    DEFAULT_CSS = """
    PolicyKnobs { height: auto; max-height: 16; }
    """

    class Changed(Message):
        """The user changed a knob; `policy` is the new, valid policy."""

        def __init__(self, policy: RetentionPolicy, knob: str) -> None:
            self.policy = policy
            """The policy after the change."""
            self.knob = knob
            """The knob that changed."""
            super().__init__()

    class KnobHighlighted(Message):
        """The cursor moved to a knob (the screen says what it does), or left the knobs."""

        def __init__(self, knob: str) -> None:
            self.knob = knob
            """The knob's name, a `RetentionPolicy` field; empty when the knobs lost the focus."""
            super().__init__()

    def __init__(self, policy: RetentionPolicy, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row")
        self.policy = policy
        """The policy shown."""

    def on_mount(self) -> None:
        """Fill the rows."""
        self.add_column("knob", key="knob")
        self.add_column("value", key="value")
        for f in fields(RetentionPolicy):
            self.add_row(f.name, _fmt(getattr(self.policy, f.name)), key=f.name)
        self.border_title = "Policy"
        self.border_subtitle = decay_preview(self.policy)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Say which knob the cursor is on, while the user is in the knobs."""
        event.stop()
        if self.has_focus and event.row_key.value is not None:
            self.post_message(self.KnobHighlighted(event.row_key.value))

    def on_blur(self) -> None:
        """Leaving the knobs: the line under them goes back to how to reach them."""
        self.post_message(self.KnobHighlighted(""))

    def on_focus(self) -> None:
        """Entering the knobs shows the highlighted one and says what it does."""
        if self.row_count:
            self._into_view()
            self.post_message(self.KnobHighlighted(self.highlighted))

    def on_resize(self, _: events.Resize) -> None:
        """The pane grew or shrank (zoom, the other side, a short terminal): the highlighted knob stays in view, so
        `+` never changes a knob the user cannot see."""
        if self.row_count:
            self.call_after_refresh(self._into_view)

    def _into_view(self) -> None:
        self.move_cursor(row=self.cursor_row, animate=False)

    @property
    def highlighted(self) -> str:
        """The name of the highlighted knob."""
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def action_step(self, direction: int) -> None:
        """Raise or lower the highlighted knob by its step; an invalid value is refused with a notification."""
        name = self.highlighted
        self._into_view()
        current = getattr(self.policy, name)
        value = current + direction * STEPS[name]
        value = int(value) if isinstance(current, int) else round(float(value), 4)
        try:
            policy = RetentionPolicy(**{**asdict(self.policy), name: value})
        except ValueError as exc:
            self.notify(str(exc), title=f"{name} stays {_fmt(current)}", severity="warning")
            return
        self.policy = policy
        self.update_cell(name, "value", _fmt(value), update_width=True)
        self.border_subtitle = decay_preview(policy)
        # Named with its new value: a knob changed by a key press is never a surprise, whatever the pane shows.
        self.notify(f"{name} {_fmt(current)} → {_fmt(value)} (ctrl+s saves)", title="policy", timeout=3)
        self.post_message(self.Changed(policy, name))


def decay_preview(policy: RetentionPolicy, days: tuple[int, ...] = (0, 7, 30, 90, 180, 365)) -> str:
    """The decay multiplier of a once-accessed item after some days, as a compact sparkline."""
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)
    bars = " ▁▂▃▄▅▆▇█"
    parts = []
    for d in days:
        value = decay(AccessStats(now - timedelta(days=d), 1), policy, now).value
        parts.append(f"{d}d{bars[min(len(bars) - 1, round(value * (len(bars) - 1)))]}")
    return "decay " + " ".join(parts)


def _fmt(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"
