"""Saving changed settings into a hand-written companion.yaml: only their lines change."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from companion.config import load_config
from companion.configedit import changed_keys, edit_section, save_section
from companion.errors import ConfigError
from companion.retention import RetentionPolicy
from tests.helpers.files import write

HAND_WRITTEN = """\
# My settings. Do not lose this comment.
index:
  exclude: ["Private/**"]   # never index my diary

retention:
    hot_limit: 3            # three is plenty
    # the half-life I settled on after a month:
    half_life_days: 45

recall:
  dense_weight: 0.75
"""


def test_a_changed_knob_changes_its_line_and_nothing_else(tmp_path: Path) -> None:
    write(tmp_path, ".companion/companion.yaml", HAND_WRITTEN)
    before = load_config(tmp_path)
    policy = replace(before.retention, hot_limit=5)
    path = save_section(
        tmp_path, "retention", changed_keys("retention", before.retention, policy), replace(before, retention=policy)
    )
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN.replace(
        "    hot_limit: 3            # three is plenty", "    hot_limit: 5            # three is plenty"
    )


def test_a_knob_at_its_default_is_added_under_its_section_in_the_sections_indentation(tmp_path: Path) -> None:
    write(tmp_path, ".companion/companion.yaml", HAND_WRITTEN)
    before = load_config(tmp_path)
    policy = replace(before.retention, decay_floor=0.3, hot_window_days=4)
    wanted = replace(before, retention=policy)
    save_section(tmp_path, "retention", changed_keys("retention", before.retention, policy), wanted)
    text = (tmp_path / ".companion/companion.yaml").read_text(encoding="utf-8")
    assert "    half_life_days: 45\n    hot_window_days: 4\n    decay_floor: 0.3\n\nrecall:" in text
    assert text.startswith("# My settings. Do not lose this comment.\n")
    assert load_config(tmp_path) == wanted


def test_a_missing_file_or_section_gets_only_the_changed_keys(tmp_path: Path) -> None:
    policy = replace(RetentionPolicy(), access_resistance=0.01)
    wanted = replace(load_config(tmp_path), retention=policy)
    save_section(tmp_path, "retention", {"access_resistance": 0.01}, wanted)
    text = (tmp_path / ".companion/companion.yaml").read_text(encoding="utf-8")
    assert text.endswith("retention:\n  access_resistance: 0.01\n") and "hot_limit" not in text
    assert edit_section("recall:\n  graph_weight: 0.1\n", "retention", {"hot_limit": 2}) == (
        "recall:\n  graph_weight: 0.1\nretention:\n  hot_limit: 2\n"
    )


def test_a_section_it_cannot_edit_line_by_line_is_refused_and_left_alone(tmp_path: Path) -> None:
    flow = "retention: {hot_limit: 3}\n"
    write(tmp_path, ".companion/companion.yaml", flow)
    before = load_config(tmp_path)
    policy = replace(before.retention, hot_limit=4)
    with pytest.raises(ConfigError, match="nothing was written"):
        save_section(tmp_path, "retention", {"hot_limit": 4}, replace(before, retention=policy))
    assert (tmp_path / ".companion/companion.yaml").read_text(encoding="utf-8") == flow


def test_a_whole_number_is_written_as_the_app_shows_it(tmp_path: Path) -> None:
    # The knobs show 35 for the float half-life stepped from 30 to 35.0, and a count held as a float (12.0) as 12:
    # the file gets what the app shows, and reads back as the same policy.
    write(tmp_path, ".companion/companion.yaml", "retention:\n  hot_limit: 3\n")
    before = load_config(tmp_path)
    policy = replace(before.retention, half_life_days=35.0, warm_results=12.0)
    changes = changed_keys("retention", before.retention, policy)
    assert changes == {"half_life_days": 35.0, "warm_results": 12} and isinstance(changes["warm_results"], int)
    save_section(tmp_path, "retention", changes, replace(before, retention=policy))
    text = (tmp_path / ".companion/companion.yaml").read_text(encoding="utf-8")
    assert text == "retention:\n  hot_limit: 3\n  half_life_days: 35\n  warm_results: 12\n"
    assert load_config(tmp_path).retention == policy
