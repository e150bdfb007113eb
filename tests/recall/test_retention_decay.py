"""RetentionPolicy validation and storage, and the spaced-repetition decay at every boundary, with a frozen clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.config import CompanionConfig, load_config, save_config
from companion.errors import ConfigError
from companion.recall.decay import AccessStats, decay
from companion.recall.results import relative_odds
from companion.retention import RetentionPolicy
from tests.helpers.files import write

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
POLICY = RetentionPolicy()


def _accessed(days_ago: float, count: int) -> AccessStats:
    return AccessStats(NOW - timedelta(days=days_ago), count)


def test_default_policy_values() -> None:
    assert (POLICY.hot_limit, POLICY.hot_window_days) == (3, 2)
    assert (POLICY.half_life_days, POLICY.decay_floor, POLICY.decay_ceiling) == (30.0, 0.25, 1.0)
    assert (POLICY.access_resistance, POLICY.max_resistance, POLICY.never_accessed) == (0.008, 0.4, 0.55)


def test_never_accessed_starts_near_055_plus_confidence_lift() -> None:
    assert decay(AccessStats(), POLICY, NOW).value == pytest.approx(0.55)
    assert decay(AccessStats(), POLICY, NOW, confidence=1.0).value == pytest.approx(0.65)
    assert decay(AccessStats(), POLICY, NOW, confidence=0.5).lift == pytest.approx(0.05)
    assert decay(AccessStats(), POLICY, NOW, confidence=7).value == pytest.approx(0.65)  # clamped to 0..1
    assert decay(AccessStats(), POLICY, NOW).days_since_access is None


def test_one_access_follows_the_half_life_curve_plus_resistance() -> None:
    assert decay(_accessed(0, 1), POLICY, NOW).value == pytest.approx(1.0)  # ceiling: 1 + 0.008
    assert decay(_accessed(30, 1), POLICY, NOW).value == pytest.approx(0.5 + 0.008)
    assert decay(_accessed(60, 1), POLICY, NOW).value == pytest.approx(0.25 + 0.008)
    explained = decay(_accessed(15, 1), POLICY, NOW)
    assert explained.curve == pytest.approx(0.5**0.5)
    assert explained.resistance == pytest.approx(0.008)
    assert explained.days_since_access == pytest.approx(15)


def test_resistance_caps_at_fifty_accesses() -> None:
    assert decay(_accessed(90, 49), POLICY, NOW).resistance == pytest.approx(0.392)
    assert decay(_accessed(90, 50), POLICY, NOW).resistance == pytest.approx(0.4)
    assert decay(_accessed(90, 500), POLICY, NOW).resistance == pytest.approx(0.4)
    assert decay(_accessed(90, 500), POLICY, NOW).value == pytest.approx(0.125 + 0.4)


def test_a_pinned_item_keeps_the_ceiling_and_still_shows_its_curve() -> None:
    old = decay(_accessed(3650, 1), POLICY, NOW, pinned=True)
    assert (old.value, old.pinned) == (pytest.approx(1.0), True)
    assert old.curve == pytest.approx(0.5 ** (3650 / 30))
    fresh = decay(AccessStats(), POLICY, NOW, pinned=True)
    assert fresh.value == pytest.approx(1.0) and fresh.days_since_access is None
    assert not decay(_accessed(3650, 1), POLICY, NOW).pinned


def test_floor_and_ceiling() -> None:
    assert decay(_accessed(3650, 1), POLICY, NOW).value == pytest.approx(0.25)  # floor
    assert decay(_accessed(1, 50), POLICY, NOW).value == pytest.approx(1.0)  # ceiling
    skewed = AccessStats(NOW + timedelta(minutes=2), 1)  # a clock skew never boosts past the ceiling
    assert decay(skewed, POLICY, NOW).value == pytest.approx(1.0)
    assert decay(skewed, POLICY, NOW).days_since_access == 0.0


def test_an_access_after_now_has_not_happened_yet() -> None:
    # Replaying the past with --as-of must not see what was recalled later.
    later = AccessStats(NOW + timedelta(days=3), 7)
    assert decay(later, POLICY, NOW).days_since_access is None
    assert decay(later, POLICY, NOW).value == pytest.approx(0.55)


def test_score_is_raw_times_decay() -> None:
    assert decay(_accessed(30, 0), POLICY, NOW).apply(0.8) == pytest.approx(0.8 * 0.55)
    assert decay(_accessed(30, 1), POLICY, NOW).apply(0.8) == pytest.approx(0.8 * 0.508)


def test_a_different_half_life_moves_the_curve() -> None:
    fast = replace(POLICY, half_life_days=7)
    assert decay(_accessed(7, 1), fast, NOW).curve == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hot_limit": 0}, "hot_limit must be at least 1"),
        ({"half_life_days": 0}, "half_life_days must be more than 0"),
        ({"decay_floor": 0.9, "decay_ceiling": 0.5}, "floor <= ceiling"),
        ({"never_accessed": 1.5}, "never_accessed must be within 0 and 1"),
    ],
)
def test_invalid_policies_are_refused(changes: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(POLICY, **changes)


def test_policy_round_trips_through_the_vault_config(tmp_path: Path) -> None:
    policy = replace(POLICY, hot_limit=1, half_life_days=14.5, warm_results=20)
    save_config(tmp_path, CompanionConfig(retention=policy))
    assert load_config(tmp_path).retention == policy


def test_a_bad_knob_in_the_config_names_file_line_and_rule(tmp_path: Path) -> None:
    write(tmp_path, ".companion/companion.yaml", "index: {}\nretention:\n  hot_limit: 0\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert "companion.yaml" in message and "line 3" in message and "hot_limit must be at least 1" in message


def test_an_explanation_counts_one_access_in_the_singular() -> None:
    from datetime import UTC, datetime

    from companion.recall.decay import AccessStats, Decay
    from companion.recall.results import Explanation

    def lines(count: int) -> str:
        access = AccessStats(datetime(2026, 11, 1, tzinfo=UTC), count)
        decay = Decay(value=0.9, days_since_access=2.0, curve=0.95, resistance=0.008 * count, lift=0.0)
        explanation = Explanation(0.5, 3.0, 1.0, 1.0, 0.5, 1.0, 0.0, "", 0.0, decay, access, 0.9)
        return "\n".join(explanation.lines())

    assert "(1 access)" in lines(1) and "accesses" not in lines(1)
    assert "(2 accesses)" in lines(2)


def test_use_decides_only_between_notes_of_all_but_equal_relevance() -> None:
    now = datetime(2026, 5, 1, tzinfo=UTC)
    used = decay(AccessStats(now, 1), RetentionPolicy(), now).value
    unused = decay(AccessStats(), RetentionPolicy(), now).value
    assert (used, unused) == (1.0, 0.55)
    best = 2.0

    def order(gap: float) -> str:
        """Which note ranks first when the unused one is `gap` ahead in log-odds."""
        better = relative_odds(best, best) * unused
        worn = relative_odds(best - gap, best) * used
        return "used" if worn > better else "better"

    assert order(0.05) == "used"  # a near tie: use breaks it
    assert order(0.15) == "better"  # a clearly better answer stays first, however often the other was used
