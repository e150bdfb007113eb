"""Words as people read them: one line of a text, cut where a word ends."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from companion.words import one_line, significant


def test_a_short_text_is_only_flattened() -> None:
    assert one_line("  The budget\n\nis  18,500 euros. ", 40) == "The budget is 18,500 euros."


def test_a_long_text_is_cut_after_the_last_whole_word_with_an_ellipsis() -> None:
    assert one_line("The kitchen budget is 18,500 euros, worktop included.", 30) == "The kitchen budget is 18,500…"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"


@given(st.text(max_size=400), st.integers(min_value=2, max_value=200))
def test_the_line_is_one_line_within_the_width_and_starts_as_the_text_does(text: str, width: int) -> None:
    line = one_line(text, width)
    flat = " ".join(text.split())
    assert len(line) <= width and not any(ch in line for ch in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")
    if len(flat) <= width:
        assert line == flat
    else:
        assert line.endswith("…") and flat.startswith(line[:-1])


def test_a_tiny_score_keeps_its_significant_digits() -> None:
    assert significant(3.14159265e-9) == 3.14159e-9  # rounding to six places would print 0.0
    assert significant(0.55) == 0.55 and significant(1234567.0) == 1234570.0
