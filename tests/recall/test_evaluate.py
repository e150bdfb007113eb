"""Retrieval metrics for `companion eval`, checked against hand-computed values."""

from __future__ import annotations

import pytest

from companion.recall.evaluate import CUTOFFS, PAIRED_METRICS, Judged, Scores, by_label, paired, score


def _judged(ranked: str, evidence: str, label: str = "-", id_: str = "q") -> Judged:
    # Paths are single letters: "abc" ranks a, b, c.
    return Judged(id_, label, tuple(ranked), frozenset(evidence))


def test_first_rank() -> None:
    assert _judged("abc", "a").first_rank == 1
    assert _judged("abc", "cb").first_rank == 2
    assert _judged("abc", "x").first_rank is None
    assert _judged("", "a").first_rank is None
    assert _judged("abc", "").first_rank is None


def test_hit_at() -> None:
    third = _judged("abcde", "c")
    assert [third.hit_at(k) for k in (1, 2, 3, 5)] == [False, False, True, True]
    assert not _judged("abc", "x").hit_at(5)
    assert not third.hit_at(0)


def test_all_at() -> None:
    two = _judged("abcdef", "bd")
    assert [two.all_at(k) for k in (1, 2, 3, 4, 5)] == [False, False, False, True, True]
    assert not _judged("abcdef", "bf").all_at(5)
    assert not _judged("abc", "az").all_at(5)  # evidence never returned
    assert _judged("abc", "").all_at(1)  # nothing to find is trivially all found


def test_score_by_hand() -> None:
    judged = [
        _judged("abcde", "a"),  # rank 1, all@5
        _judged("abcde", "cx"),  # rank 3, x never returned
        _judged("abcdef", "ef"),  # rank 5, f at 6
        _judged("abcde", "z"),  # a miss
    ]
    scores = score(judged)
    assert scores.questions == 4
    assert scores.recall == pytest.approx({1: 1 / 4, 3: 2 / 4, 5: 3 / 4})
    assert scores.all_at_5 == pytest.approx(1 / 4)
    assert scores.mrr == pytest.approx((1 + 1 / 3 + 1 / 5 + 0) / 4)


def test_score_of_three_questions_rounds_in_as_dict() -> None:
    scores = score([_judged("ab", "b"), _judged("ab", "a"), _judged("abcd", "d")])
    assert scores.recall == pytest.approx({1: 1 / 3, 3: 2 / 3, 5: 1.0})
    assert scores.mrr == pytest.approx((1 / 2 + 1 + 1 / 4) / 3)
    assert scores.as_dict() == {
        "questions": 3,
        "recall@1": 0.3333,
        "recall@3": 0.6667,
        "recall@5": 1.0,
        "all@5": 1.0,
        "mrr": 0.5833,
    }


def test_score_of_nothing_is_all_zeros() -> None:
    scores = score([])
    assert scores == Scores(0, {1: 0.0, 3: 0.0, 5: 0.0}, 0.0, 0.0)
    assert tuple(scores.recall) == CUTOFFS
    assert scores.as_dict() == {
        "questions": 0,
        "recall@1": 0.0,
        "recall@3": 0.0,
        "recall@5": 0.0,
        "all@5": 0.0,
        "mrr": 0.0,
    }


def test_by_label_groups_and_sorts_labels() -> None:
    judged = [
        _judged("ab", "a", label="temporal", id_="t1"),
        _judged("ab", "z", label="multi-session", id_="m1"),
        _judged("ab", "b", label="temporal", id_="t2"),
        _judged("ab", "a", label="-", id_="n1"),
    ]
    groups = by_label(judged)
    assert list(groups) == ["-", "multi-session", "temporal"]
    assert groups["temporal"].questions == 2
    assert groups["temporal"].recall[1] == pytest.approx(0.5)
    assert groups["temporal"].mrr == pytest.approx(0.75)
    assert groups["multi-session"].mrr == 0.0
    assert groups["-"] == score([judged[3]])
    assert by_label([]) == {}


def _many(hits: list[bool]) -> list[Judged]:
    # One question per entry: its evidence `a` ranked first (a hit) or not returned at all.
    return [_judged("a" if hit else "x", "a", id_=str(i)) for i, hit in enumerate(hits)]


def test_paired_identical_rankings_differ_by_nothing() -> None:
    ranking = _many([True, False] * 20)
    for metric in PAIRED_METRICS:
        p = paired(ranking, ranking, metric)
        assert (p.diff, p.low, p.high, p.wins, p.losses) == (0.0, 0.0, 0.0, 0, 0)
        assert not p.significant


def test_paired_a_ranking_better_on_every_question_is_a_real_difference() -> None:
    p = paired(_many([True] * 50), _many([False] * 50), "any@5")
    assert (p.diff, p.low, p.high, p.wins, p.losses) == (1.0, 1.0, 1.0, 50, 0)
    assert p.significant


def test_paired_one_win_in_forty_is_within_noise() -> None:
    a = _many([True] * 21 + [False] * 19)
    b = _many([True] * 20 + [False] * 20)
    p = paired(a, b, "any@5")
    assert p.diff == pytest.approx(1 / 40) and p.wins == 1 and p.losses == 0
    assert p.low <= 0 < p.high and not p.significant


def test_paired_mrr_counts_the_rank_of_the_first_evidence() -> None:
    a = [_judged("ab", "a", id_="1"), _judged("ab", "a", id_="2")]
    b = [_judged("ba", "a", id_="1"), _judged("ab", "a", id_="2")]
    p = paired(a, b, "mrr")
    assert p.diff == pytest.approx((1 - 0.5) / 2) and (p.wins, p.losses) == (1, 0)


def test_paired_is_repeatable_and_refuses_different_questions() -> None:
    a = _many([True, False, True, True, False] * 8)
    b = _many([False, False, True, False, True] * 8)
    assert paired(a, b, "mrr") == paired(a, b, "mrr")
    with pytest.raises(ValueError, match="same questions"):
        paired(a, b[:-1], "any@5")
    with pytest.raises(ValueError, match="unknown metric"):
        paired(a, b, "ndcg")
