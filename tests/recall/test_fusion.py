"""Score fusion and the lexical query: pure functions."""

from __future__ import annotations

import pytest

from companion.recall.candidates import fuse, lexical_dense_weight, min_max, span_scaled
from indexer.search import fts_query


def test_min_max_scales_and_handles_ties() -> None:
    assert min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert min_max({"a": 5.0, "b": 5.0}) == {"a": 1.0, "b": 1.0}
    assert min_max({}) == {}


def test_fuse_weights_normalised_scores() -> None:
    dense = {"a": 0.9, "b": 0.5, "c": 0.1}
    lexical = {"b": 12.0, "d": 2.0}
    fused = {f.key: f for f in fuse(dense, lexical, dense_weight=0.5)}
    assert fused["a"].score == pytest.approx(0.5)  # best dense, absent from lexical
    assert fused["b"].score == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused["d"].score == pytest.approx(0.0) and fused["d"].lexical == 2.0
    assert [f.key for f in fuse(dense, lexical, 0.5)][:2] == ["b", "a"]
    assert fuse(dense, lexical, 1.0)[0].key == "a"
    assert fuse(dense, lexical, 0.0)[0].key == "b"


def test_span_scaling_is_relative_to_the_best_candidate_not_the_weakest() -> None:
    close = {"a": 0.50, "b": 0.48, "c": 0.45}
    assert span_scaled(close, 0.3) == pytest.approx({"a": 1.0, "b": 1 - 0.02 / 0.3, "c": 1 - 0.05 / 0.3})
    # min-max stretches the same three over the whole range: 0.05 of cosine becomes 1.0 of relevance.
    assert min_max(close)["c"] == 0.0
    # A weak candidate joining the list changes nothing for the others (it would under min-max).
    wider = span_scaled({**close, "d": 0.05}, 0.3)
    assert wider["d"] == 0.0 and wider["b"] == pytest.approx(span_scaled(close, 0.3)["b"])
    assert span_scaled({}, 0.3) == {}
    with pytest.raises(ValueError, match="span"):
        span_scaled(close, 0.0)


def test_fuse_scales_the_dense_side_with_a_span_when_given() -> None:
    dense = {"a": 0.50, "b": 0.45}
    lexical = {"b": 10.0, "a": 2.0}
    # Min-max: the 0.05 cosine gap outweighs BM25's 5x; a span of 0.3 shrinks it to what it is.
    assert fuse(dense, lexical, 0.6)[0].key == "a"
    fused = fuse(dense, lexical, 0.6, dense_span=0.3)
    assert fused[0].key == "b"
    assert {f.key: f.dense_norm for f in fused} == pytest.approx({"a": 1.0, "b": 1 - 0.05 / 0.3})


def test_the_dense_share_falls_as_the_best_bm25_note_holds_more_of_the_question() -> None:
    assert lexical_dense_weight(0.75, 0.6, 0.0) == 0.75
    assert lexical_dense_weight(0.75, 0.6, 1.0) == pytest.approx(0.3)
    # The cube: holding half the words is common and moves the share little.
    assert lexical_dense_weight(0.75, 0.6, 0.5) == pytest.approx(0.75 * (1 - 0.6 / 8))
    assert lexical_dense_weight(0.75, 0.0, 1.0) == 0.75
    assert lexical_dense_weight(0.75, 0.6, 1.7) == pytest.approx(0.3)  # clamped


def test_a_tie_goes_to_the_note_holding_every_word() -> None:
    # "x" tops both sides (fused 1.0); "y" is last on both (0.0) but holds every word (+1.0).
    fused = fuse({"x": 0.9, "y": 0.1}, {"x": 9.0, "y": 1.0}, 0.7, every_word=["y"], every_word_weight=1.0)
    assert [f.key for f in fused] == ["y", "x"]


def test_fuse_rejects_a_weight_outside_the_unit_interval() -> None:
    with pytest.raises(ValueError, match="dense_weight"):
        fuse({}, {}, 1.5)


def test_fts_query_quotes_words_and_drops_stopwords() -> None:
    assert fts_query('what did we say about "Chamonix" OR NEAR(x)?') == '"chamonix" OR "near" OR "x"'
    assert fts_query("what was it") == '"what" OR "was" OR "it"'
    assert fts_query("   ") == ""


def test_fuse_adds_the_every_word_bonus_to_the_notes_holding_every_word() -> None:
    dense = {"a": 0.9, "b": 0.5}
    lexical = {"a": 10.0, "b": 4.0, "c": 5.0}
    plain = {f.key: f for f in fuse(dense, lexical, 0.5)}
    boosted = {f.key: f for f in fuse(dense, lexical, 0.5, every_word=["c", "z"], every_word_weight=0.8)}
    assert boosted["c"].score == pytest.approx(plain["c"].score + 0.8) and boosted["c"].words == 0.8
    assert boosted["a"].score == pytest.approx(plain["a"].score) and boosted["a"].words == 0.0
    # A note holding every word but outside both candidate lists still gets in.
    assert boosted["z"].score == pytest.approx(0.8) and boosted["z"].lexical == 0.0
    assert fuse(dense, lexical, 0.5, every_word=["c"], every_word_weight=1.0)[0].key == "c"
