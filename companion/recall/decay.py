"""The spaced-repetition decay formula, unchanged, as a pure function of (stats, policy, now).

    decay = clamp(0.5 ** (days_since_access / half_life) + resistance, floor, ceiling)
    resistance = min(access_count * 0.008, 0.4)
    never accessed: clamp(0.55 + confidence_lift * confidence, floor, ceiling)
    score = raw_score * decay

The clock is an argument, so tests freeze time instead of sleeping, and `--as-of` can replay the past.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from companion.retention import RetentionPolicy

SECONDS_PER_DAY = 86_400.0
CLOCK_SKEW = timedelta(minutes=5)
"""How far in the future an access may lie and still count as just now."""


@dataclass(frozen=True)
class AccessStats:
    """What the companion remembers of an item's use; kept by the companion, never written into notes."""

    last_accessed_at: datetime | None = None
    """When the item was last surfaced or opened (timezone-aware), or None if never."""
    access_count: int = 0
    """How many times it was surfaced or opened."""


@dataclass(frozen=True)
class Decay:
    """A decay multiplier with every part it was computed from, so each score can be explained."""

    value: float
    """The multiplier applied to the raw score, within [floor, ceiling]."""
    days_since_access: float | None
    """Days between the last access and `now` (0 within the clock skew), None if never accessed (or accessed only
    after `now`, as in a replay of the past)."""
    curve: float
    """`0.5 ** (days / half_life)`, or the never-accessed base."""
    resistance: float
    """What past accesses added."""
    lift: float
    """What the note's confidence added (never-accessed items only)."""
    pinned: bool = False
    """The user pinned the item: its multiplier is the ceiling, whatever the curve says."""

    def apply(self, raw_score: float) -> float:
        """`score = raw_score * decay`."""
        return raw_score * self.value


def decay(
    stats: AccessStats,
    policy: RetentionPolicy,
    now: datetime,
    confidence: float | None = None,
    *,
    pinned: bool = False,
) -> Decay:
    """The decay multiplier of one item at `now`; a pinned item keeps the ceiling (its parts are still given)."""
    found = _decay(stats, policy, now, confidence)
    if pinned:
        # Pinning is the user's word over the formula: the curve is shown, but the ceiling is applied.
        return Decay(policy.decay_ceiling, found.days_since_access, found.curve, found.resistance, found.lift, True)
    return found


def _decay(stats: AccessStats, policy: RetentionPolicy, now: datetime, confidence: float | None) -> Decay:
    # An access after `now` (a replay with `--as-of`) had not happened yet: the item was, as far as we know, unused.
    # A few minutes ahead is clock skew between machines, and counts as now.
    future = stats.last_accessed_at is not None and stats.last_accessed_at > now + CLOCK_SKEW
    if stats.last_accessed_at is None or stats.access_count <= 0 or future:
        lift = policy.confidence_lift * min(max(confidence or 0.0, 0.0), 1.0)
        value = _clamp(policy.never_accessed + lift, policy)
        return Decay(value, None, policy.never_accessed, 0.0, lift)
    assert stats.last_accessed_at is not None
    days = max((now - stats.last_accessed_at).total_seconds() / SECONDS_PER_DAY, 0.0)
    curve = 0.5 ** (days / policy.half_life_days)
    resistance = min(stats.access_count * policy.access_resistance, policy.max_resistance)
    return Decay(_clamp(curve + resistance, policy), days, curve, resistance, 0.0)


def _clamp(value: float, policy: RetentionPolicy) -> float:
    return min(max(value, policy.decay_floor), policy.decay_ceiling)
