"""Score fusion and the lexical query: pure functions."""

from __future__ import annotations

import pytest

from companion.recall.candidates import fuse, min_max
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
