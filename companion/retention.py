"""The `RetentionPolicy`: what stays hot, how fast the rest decays, how much recall may return.

"Three" used to be a literal; here it is a knob, with every other knob the app lets the user tune beside it.
The policy is a value: loaded from and saved to the vault's `.companion/companion.yaml` (section `retention`),
passed to pure functions, never mutated.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class RetentionPolicy:
    """Hot-window size, spaced-repetition decay and recall budgets, with their defaults."""

    hot_limit: int = 3
    """Sessions kept hot per conversation (per user and chat)."""
    hot_window_days: int = 2
    """Days that count as recent: 2 means today and yesterday."""
    half_life_days: float = 30.0
    """Days after which an unused note's decay multiplier halves."""
    decay_floor: float = 0.25
    """The multiplier never goes below this: old but valid notes are never fully suppressed."""
    decay_ceiling: float = 1.0
    """The multiplier never goes above this: recent access does not boost past the raw score."""
    access_resistance: float = 0.008
    """Added to the multiplier for each past access, up to `max_resistance`."""
    max_resistance: float = 0.4
    """The most that past accesses can add (0.4 = 50 accesses at 0.008)."""
    never_accessed: float = 0.55
    """The multiplier of a note nobody has used yet (see what counts as an access in the recall docs)."""
    confidence_lift: float = 0.1
    """Added to `never_accessed` in proportion to a memory note's `confidence` (0..1)."""
    warm_results: int = 10
    """How many notes the warm tier (and `companion recall`) returns by default."""
    token_budget: int = 2000
    """Hard token budget of an assembled context."""
    session_timeout_minutes: int = 30
    """Inactivity after which a new message starts a new session window."""

    def __post_init__(self) -> None:
        problems = []
        for name in ("hot_limit", "warm_results", "token_budget", "session_timeout_minutes"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1")
        if self.hot_window_days < 0:
            problems.append("hot_window_days must be 0 or more")
        if self.half_life_days <= 0:
            problems.append("half_life_days must be more than 0")
        if not 0.0 <= self.decay_floor <= self.decay_ceiling <= 1.0:
            problems.append("decay_floor and decay_ceiling must satisfy 0 <= floor <= ceiling <= 1")
        for name in ("access_resistance", "max_resistance", "never_accessed", "confidence_lift"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must be within 0 and 1")
        if problems:
            raise ValueError("; ".join(problems))

    @staticmethod
    def explain(knob: str) -> str:
        """One line saying what a knob does and the values it takes (the app shows it beside the focused knob)."""
        return KNOB_HELP.get(knob, "")

    @classmethod
    def knobs(cls) -> tuple[str, ...]:
        """The names of every field, in declaration order (for the app's knob panel and the CLI)."""
        return tuple(f.name for f in fields(cls))


KNOB_HELP: dict[str, str] = {
    "hot_limit": "(1 or more): sessions kept hot per conversation (user and chat).",
    "hot_window_days": "(0 or more): days counted as recent; 2 is today and yesterday.",
    "half_life_days": "(over 0): days after which an unused note's decay halves.",
    "decay_floor": "(0 to the ceiling): an old note's decay never drops below it.",
    "decay_ceiling": "(the floor to 1): recent use never lifts a note's decay past it.",
    "access_resistance": "(0 to 1): added to the decay per past use, up to the max.",
    "max_resistance": "(0 to 1): the most that past uses add to the decay.",
    "never_accessed": "(0 to 1): the decay of a note nobody has used yet.",
    "confidence_lift": "(0 to 1): added to never_accessed by a memory's confidence.",
    "warm_results": "(1 or more): how many notes the warm pane and recall return.",
    "token_budget": "(1 or more): hard token budget of a context made for an agent.",
    "session_timeout_minutes": "(1 or more): quiet minutes that end a session.",
}
"""What each `RetentionPolicy` knob does and the values it takes, one line each."""
