"""The question's own features: what no note holds, how far the nearest note stands out or the nearest chunk lies.
They are the same for every candidate of a question, so they decide whether any note is a match, never the order;
they are fitted after the ranking weights, which they leave as they are."""

from __future__ import annotations

import random

import pytest

from companion.recall.fusion import (
    FEATURES,
    NEAR_COSINE,
    NO_EVIDENCE,
    QUESTION_FEATURES,
    FusionModel,
    Question,
    default_model,
    features,
    linked_only,
    standout,
)
from companion.recall.fusion_fit import Judged, calibrate, fit
from tests.helpers.fusion import evidence, named, synthetic_questions, with_unknown_words

ENGLISH = Question(foreign=False, best_cosine=0.7, best_bm25=10.0, low_bm25=2.0, dense_span=0.3)


def test_the_question_s_own_features_calibrate_the_match_and_never_move_the_ranking_weights() -> None:
    rng = random.Random(5)
    plain = synthetic_questions(rng, "a", 60) + synthetic_questions(rng, "none", 40, answerable=False)
    with_words = with_unknown_words(plain, random.Random(7))
    before, after = fit(plain), fit(with_words)
    ranking = [n for n in FEATURES if n not in QUESTION_FEATURES]
    weights = {m: dict(zip(m.names, m.weights, strict=True)) for m in (before, after)}
    assert all(weights[before][n] == pytest.approx(weights[after][n]) for n in ranking)
    assert weights[after]["unknown_words"] < 0 == weights[before]["unknown_words"]
    # Calibrating kept weights fits the same: the ranking weights and the bias stay exactly as they were.
    kept = calibrate(before, with_words)
    tuned = dict(zip(kept.names, kept.weights, strict=True))
    assert kept.bias == before.bias and all(tuned[n] == weights[before][n] for n in ranking)
    assert tuned["unknown_words"] < 0


def test_one_question_feature_fitted_alone_leaves_the_others_as_they_were() -> None:
    rng = random.Random(5)
    before = fit(synthetic_questions(rng, "a", 60) + synthetic_questions(rng, "none", 40, answerable=False))
    far = FEATURES.index("far_nearest")
    # The nearest chunk lies far from a question the vault cannot answer, near one it answers.
    questions = [
        Judged(
            q.source,
            tuple(
                tuple((rng.uniform(0.1, 0.3) if not q.answerable else 0.0) if i == far else x for i, x in enumerate(v))
                for v in q.vectors
            ),
            q.answers,
            q.answerable,
        )
        for q in with_unknown_words(
            synthetic_questions(rng, "b", 60) + synthetic_questions(rng, "none", 40, False), rng
        )
    ]
    alone = calibrate(before, questions, only=("far_nearest",))
    tuned, kept = (dict(zip(m.names, m.weights, strict=True)) for m in (alone, before))
    assert tuned["far_nearest"] < 0 and alone.bias == before.bias
    assert all(tuned[n] == kept[n] for n in FEATURES if n != "far_nearest")  # unknown_words too, though it would move
    assert (
        dict(zip(FEATURES, calibrate(before, questions).weights, strict=True))["unknown_words"] != kept["unknown_words"]
    )
    with pytest.raises(ValueError, match="only the question's own features"):
        calibrate(before, questions, only=("dense",))


def test_the_share_of_words_no_note_holds_is_the_same_for_every_candidate() -> None:
    asked = Question(foreign=False, best_cosine=0.4, best_bm25=3.0, low_bm25=1.0, dense_span=0.3, unknown_words=0.75)
    near = named(features(evidence(cosine=0.4, bm25=3.0, coverage=0.25), asked))
    far = named(features(evidence(cosine=0.1), asked))
    assert near["unknown_words"] == far["unknown_words"] == 0.75
    assert named(features(evidence(cosine=0.4), ENGLISH))["unknown_words"] == 0.0


def test_weights_from_before_the_question_s_own_features_rank_as_they_did() -> None:
    shipped = default_model()
    older = {
        "features": [n for n in FEATURES if n not in QUESTION_FEATURES],
        "weights": [w for n, w in zip(FEATURES, shipped.weights, strict=True) if n not in QUESTION_FEATURES],
        "bias": shipped.bias,
    }
    model = FusionModel.from_json(older)
    weights = dict(zip(model.names, model.weights, strict=True))
    assert model.names == FEATURES and all(weights[n] == 0.0 for n in QUESTION_FEATURES)
    with pytest.raises(ValueError, match="fitted for other features"):
        FusionModel.from_json({**older, "features": older["features"][1:], "weights": older["weights"][1:]})


def test_weights_fitted_before_the_rarity_of_unknown_words_keep_their_unknown_words_weight() -> None:
    shipped = default_model()
    kept = [n for n in FEATURES if n != "rare_unknown"]
    given = dict(zip(FEATURES, shipped.weights, strict=True))
    model = FusionModel.from_json({"features": kept, "weights": [given[n] for n in kept], "bias": shipped.bias})
    weights = dict(zip(model.names, model.weights, strict=True))
    assert weights["rare_unknown"] == 0.0 and weights["unknown_words"] == given["unknown_words"]


def test_standout_is_how_far_the_nearest_note_stands_above_the_next_five_in_spans() -> None:
    assert standout([0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.1], 0.1) == pytest.approx(1.0)  # the seventh is not counted
    assert standout([0.8, 0.8], 0.1) == pytest.approx(0.0)
    assert standout([0.8], 0.1) == 0.0 and standout([], 0.1) == 0.0


def test_the_standout_counts_from_a_quarter_of_the_span_to_a_half_and_only_with_unknown_words() -> None:
    at = FEATURES.index("unknown_standout")

    def value(standout_: float, rare_unknown: float = 1.0) -> float:
        question = Question(
            foreign=False,
            best_cosine=0.85,
            best_bm25=0.0,
            low_bm25=0.0,
            dense_span=0.1,
            rare_unknown=rare_unknown,
            standout=standout_,
        )
        return features(evidence(cosine=0.85), question)[at]

    assert value(0.2) == 0.0
    assert value(0.4) == pytest.approx(0.15)
    assert value(3.0) == pytest.approx(0.25)  # bounded: the whole question's candidates are lifted alike
    assert value(3.0, rare_unknown=0.0) == 0.0  # every word known: nothing to make up for
    # Only the multilingual model's weights lift such questions; the English model's cosines are not crowded.
    assert dict(zip(FEATURES, default_model(False).weights, strict=True))["unknown_standout"] == 0.0
    assert dict(zip(FEATURES, default_model(True).weights, strict=True))["unknown_standout"] > 0.0


def test_how_far_the_nearest_chunk_lies_counts_below_the_near_cosine_and_only_when_read() -> None:
    def vector(best: float, read: bool = True) -> tuple[float, ...]:
        question = Question(
            foreign=False, best_cosine=best, best_bm25=4.0, low_bm25=1.0, dense_span=0.3, nearest_read=read
        )
        return features(evidence(cosine=best, bm25=4.0, coverage=0.3), question)

    assert named(vector(NEAR_COSINE - 0.15))["far_nearest"] == pytest.approx(0.15)
    assert named(vector(NEAR_COSINE + 0.2))["far_nearest"] == 0.0
    # A question in a language the model does not read, or named by a date.
    assert named(vector(0.1, read=False))["far_nearest"] == 0.0
    # The English model's weights hold a question whose nearest chunk is far from it under the match it would be.
    english = default_model(False)
    assert english.relevance(vector(0.15, read=True)) < english.relevance(vector(0.15, read=False))
    # The multilingual model's cosines never fall that low: its weights give the feature nothing.
    assert named(default_model(True).weights)["far_nearest"] == 0.0


def test_a_note_only_a_link_brought_in_holds_the_question_s_own_features_and_no_more() -> None:
    asked = Question(
        foreign=False,
        best_cosine=0.12,
        best_bm25=1.0,
        low_bm25=1.0,
        dense_span=0.3,
        unknown_words=0.5,
        rare_unknown=0.6,
        nearest_read=True,
    )
    # The weakest note a search found: a little nearer than the others in meaning, none of the question's words.
    searched = features(evidence(cosine=0.05), asked)
    linked = linked_only(searched)
    own = {n: v for n, v in named(linked).items() if n in QUESTION_FEATURES}
    assert own == {n: v for n, v in named(searched).items() if n in QUESTION_FEATURES} and own["far_nearest"] > 0
    assert {n: v for n, v in named(linked).items() if n not in QUESTION_FEATURES} == {
        n: v for n, v in named(NO_EVIDENCE).items() if n not in QUESTION_FEATURES
    }
    assert linked_only(None) == NO_EVIDENCE
    # Had it none of them, a page linked from the best note would come before what the search found.
    model = default_model(False)
    assert model.relevance(linked) < model.relevance(searched) < model.relevance(NO_EVIDENCE)
