"""The learned fusion: its features, its shipped weights, fitting weights anew, and guessing a text's language."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from companion.config import RecallConfig
from companion.recall.fusion import (
    FEATURES,
    NO_EVIDENCE,
    FusionModel,
    Question,
    default_model,
    features,
    name_rank,
    own_language_names,
)
from companion.recall.fusion_fit import Judged, calibrate, fit, ranking_scores
from companion.recall.language import foreign, language_of, question_language
from tests.helpers.fusion import evidence, named, synthetic_questions

ENGLISH = Question(foreign=False, best_cosine=0.7, best_bm25=10.0, low_bm25=2.0, dense_span=0.3)


def test_features_scale_each_side_against_the_best_candidate() -> None:
    best = named(features(evidence(cosine=0.7, bm25=10.0, coverage=1.0, every_word=True), ENGLISH))
    assert best["dense"] == 1.0 and best["cosine"] == 0.7 and best["dense_missing"] == 0.0
    assert best["bm25"] == 1.0 and best["bm25_ratio"] == 1.0 and best["every_word"] == 1.0
    weaker = named(features(evidence(cosine=0.55, bm25=2.0), ENGLISH))
    assert weaker["dense"] == pytest.approx(0.5) and weaker["bm25"] == 0.0 and weaker["bm25_ratio"] == 0.2
    lexical_only = named(features(evidence(bm25=6.0), ENGLISH))
    assert lexical_only["dense_missing"] == 1.0 and lexical_only["cosine"] == 0.0


def test_a_question_in_another_language_moves_the_sides_to_their_own_features() -> None:
    asked = Question(foreign=True, best_cosine=0.3, best_bm25=10.0, low_bm25=2.0, dense_span=0.3)
    f = named(features(evidence(cosine=0.3, bm25=10.0, other_language=True), asked))
    assert f["foreign_dense"] == f["dense"] == 1.0 and f["foreign_bm25"] == f["bm25"] == 1.0
    assert f["weak_dense"] == pytest.approx(0.3)  # the best cosine is far from a clear match
    assert f["other_language"] == 1.0
    assert named(features(evidence(cosine=0.7), ENGLISH))["foreign_dense"] == 0.0


def test_a_named_note_ranks_by_language_then_title_then_alias() -> None:
    def rank(**kw: object) -> int:
        return name_rank(features(evidence(cosine=0.5, **kw), ENGLISH))

    assert rank() == 0
    assert rank(title=True) > rank(alias=True) > rank(alias=True, other_language=True) > 0
    assert rank(alias=True) > rank(title=True, other_language=True)


def test_translations_sharing_a_name_come_first_only_when_none_is_in_the_question_s_language() -> None:
    def rank(**kw: object) -> int:
        return name_rank(features(evidence(cosine=0.5, **kw), ENGLISH))

    mixed = {
        "en.md": rank(alias=True),
        "de.md": rank(title=True, other_language=True),
        "ro.md": rank(alias=True, other_language=True),
    }
    assert own_language_names(mixed) == {"en.md": mixed["en.md"]}
    foreign = {"de.md": mixed["de.md"], "ro.md": mixed["ro.md"]}
    assert own_language_names(foreign) == foreign
    assert own_language_names({}) == {}


def test_the_shipped_weights_favour_what_makes_a_match() -> None:
    model = default_model()
    w = dict(zip(model.names, model.weights, strict=True))
    assert w["dense"] > 0 and w["bm25"] > 0 and w["cosine"] > 0 and w["title_overlap"] > 0
    assert w["other_language"] < 0 and w["foreign_dense"] < 0  # the model reads English
    # Words the vault never holds, telling ones above all: a question about something it does not hold.
    assert w["rare_unknown"] < 0 and w["unknown_words"] + w["rare_unknown"] < 0
    assert {"helpvault-dev", "locomo-dev", "conversations-dev"} <= set(model.trained_on)
    strong = features(evidence(cosine=0.7, bm25=10.0, coverage=1.0, every_word=True, title_overlap=0.8), ENGLISH)
    vague = Question(foreign=False, best_cosine=0.12, best_bm25=0.0, low_bm25=0.0, dense_span=0.3)
    nothing = features(evidence(cosine=0.12), vague)
    assert model.relevance(strong) > 0.9 > RecallConfig().relevance_floor > model.relevance(nothing)
    parts = dict(model.contributions(strong))
    assert parts["dense"] == pytest.approx(w["dense"]) and "alias" not in parts  # zeros left out


def test_weights_for_other_features_are_refused(tmp_path: Path) -> None:
    data = default_model().to_json()
    assert FusionModel.from_json(data) == default_model()
    with pytest.raises(ValueError, match="fitted for other features"):
        FusionModel.from_json({**data, "features": ["dense"], "weights": [1.0]})
    with pytest.raises(ValueError, match="malformed"):
        FusionModel.from_json({"features": list(FEATURES)})
    bad = tmp_path / "w.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a JSON object"):
        FusionModel.read(bad)


def test_fitting_learns_to_rank_and_what_no_match_looks_like() -> None:
    rng = random.Random(5)
    model = fit(synthetic_questions(rng, "a", 60) + synthetic_questions(rng, "none", 40, answerable=False))
    w = dict(zip(model.names, model.weights, strict=True))
    assert w["dense"] > 1.0 and w["cosine"] > 0.0
    held_out = synthetic_questions(random.Random(9), "a", 30)
    assert ranking_scores(model, held_out)["a"] > 0.8
    best_unanswerable = [
        max(model.relevance(v) for v in q.vectors) for q in synthetic_questions(rng, "none", 20, False)
    ]
    best_answerable = [max(model.relevance(v) for v in q.vectors) for q in held_out]
    assert sum(best_unanswerable) / 20 < sum(best_answerable) / 30
    assert json.loads(json.dumps(model.to_json()))["trained_on"] == ["a", "none"]
    with pytest.raises(ValueError, match="no question has both"):
        fit(synthetic_questions(rng, "none", 5, answerable=False))


DANISH = (
    "Canvas er et kerneplugin, der giver dig mulighed for at organisere noter visuelt på et uendeligt lærred. "
    "Du kan tilføje noter, vedhæftede filer og websider og forbinde dem med linjer. Når du har oprettet et lærred, "
    "kan du gruppere kort, ændre deres farver og zoome ind og ud for at få overblik over dine idéer og projekter."
)
TERSE_ENGLISH = (
    "Vendor contracts: José to draft, Zoë to review, Björn signs. Hiring plan Q3, budget review pending, finance "
    "team sign-off, Friday deadline, invoices overdue, renewals, onboarding checklist, laptops ordered."
)
ENGLISH_NAMES = (
    "Reading list: Kevin Kelly, Out of Control; Brian Eno, A Year with Swollen Appendices; Gabriel García Márquez, "
    "One Hundred Years of Solitude; Italo Calvino, Invisible Cities; Jorge Luis Borges, Labyrinths"
)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("how do I embed an image in a note?", "en"),
        ("canvas export png", "en"),
        ("Wie kann ich eine Tabelle in einer Notiz erstellen?", "de"),
        ("Comment insérer la date du jour dans une note ?", "fr"),
        ("¿Cómo abro un enlace en una pestaña nueva?", "es"),
        ("LinuxにObsidianを入れる方法", "ja"),
        ("买了 Obsidian Sync 不想用了，可以退款吗？", "zh"),
        ("Как вернуть предыдущую версию заметки?", "cyrillic"),
        ("desactivar actualizaciones automáticas", "latin"),
        ("", "en"),
        # A long text holding a few common words of listed languages ("et", "du", "der") is another language...
        (DANISH, "latin"),
        # ... but a long English text of names with an accent or two stays English, and so does a terse note,
        # few of whose words are common ones, naming people with accented names.
        (ENGLISH_NAMES, "en"),
        (TERSE_ENGLISH, "en"),
    ],
)
def test_a_text_s_language_is_guessed_from_its_script_and_common_words(text: str, language: str) -> None:
    assert language_of(text) == language
    assert foreign(text) == (language != "en")


@pytest.mark.parametrize(
    ("text", "holders", "language"),
    [
        # Keywords that name no language take the language of the notes holding them...
        ("Obsidian Sprache umstellen", [("de", 9.0), ("de", 7.5), ("en", 2.0)], "de"),
        ("desactivar actualizaciones automáticas", [("es", 6.0), ("pt", 1.0)], "es"),
        # ... only when one language holds two thirds of their weight...
        ("Obsidian Sync", [("de", 4.0), ("en", 4.0), ("fr", 3.5)], "en"),
        ("File recovery", [("en", 8.0), ("ro", 7.0), ("en", 5.0)], "en"),
        ("Sprache umstellen", [("de", 6.0), ("en", 4.0)], "en"),  # a majority short of two thirds
        ("Sprache umstellen", [("de", 6.6), ("en", 3.3)], "de"),
        ("iPhone", [("ja", 5.0)], "ja"),
        # Languages in Latin letters that are not listed are many, not one: they name none.
        ("evernote enex import", [("latin", 9.0), ("latin", 8.0), ("en", 7.0), ("latin", 6.0)], "en"),
        ("2024", [("de", 9.0)], "en"),  # no word at all: nothing to take
        ("desactivar actualizaciones automáticas", [], "latin"),
        # ... and never overrule a question's own words or script.
        ("how do I change the language", [("de", 9.0)], "en"),
        ("recherche limitée à un dossier", [("de", 9.0)], "fr"),
        ("社区插件怎么安装", [("en", 9.0)], "zh"),
    ],
)
def test_a_question_whose_words_name_no_language_takes_the_language_of_the_notes_holding_them(
    text: str, holders: list[tuple[str, float]], language: str
) -> None:
    assert question_language(text, holders) == language


def test_a_note_with_no_evidence_has_a_feature_vector_of_the_model_s_size() -> None:
    nothing = evidence()
    assert features(nothing, ENGLISH) == NO_EVIDENCE
    assert default_model().relevance(NO_EVIDENCE) < 0.05


def _narrow_cosines(rng: random.Random, n: int) -> list[Judged]:
    """Questions whose answer always has the best cosine, by 0.01 to 0.03 within a band of 0.78 to 0.86 (as a
    multilingual model's cosines crowd), while BM25 points at it only two times in three, by a wide margin."""
    cosine, bm25 = FEATURES.index("cosine"), FEATURES.index("bm25")
    out = []
    for _ in range(n):
        best_other = rng.uniform(0.78, 0.83)
        lexical_right = rng.random() < 0.67
        vectors, answers = [], []
        for i in range(10):
            v = [0.0] * len(FEATURES)
            v[cosine] = best_other + rng.uniform(0.01, 0.03) if i == 0 else best_other - rng.uniform(0.0, 0.04)
            lexical_best = (i == 0) == lexical_right if i < 2 else False
            v[bm25] = rng.uniform(0.8, 1.0) if lexical_best else rng.uniform(0.0, 0.3)
            vectors.append(tuple(v))
            answers.append(i == 0)
        out.append(Judged("narrow", tuple(vectors), tuple(answers)))
    return out


def test_a_feature_that_varies_little_still_earns_the_weight_it_deserves() -> None:
    # Unscaled, the cosine's gradient is a hundredth of BM25's and its weight stays too small to decide the order
    # within the steps given; fitted on a common scale, the cosine leads as the answers say it should.
    model = fit(_narrow_cosines(random.Random(3), 80))
    assert ranking_scores(model, _narrow_cosines(random.Random(4), 40))["narrow"] > 0.85


def test_weights_carry_the_span_their_dense_feature_was_scaled_over(tmp_path: Path) -> None:
    rng = random.Random(5)
    model = fit(
        synthetic_questions(rng, "a", 30) + synthetic_questions(rng, "none", 10, answerable=False), dense_span=0.06
    )
    assert model.dense_span == 0.06
    path = tmp_path / "w.json"
    path.write_text(json.dumps(model.to_json()))
    assert (
        FusionModel.read(path).dense_span == 0.06
        and calibrate(model, synthetic_questions(rng, "b", 10)).dense_span == 0.06
    )
    assert "dense_span" not in fit(synthetic_questions(rng, "a", 30)).to_json()
    with pytest.raises(ValueError, match="dense_span"):
        FusionModel.from_json({**model.to_json(), "dense_span": 0})


def test_the_multilingual_model_has_weights_of_its_own() -> None:
    english, multilingual = default_model(), default_model(multilingual=True)
    assert english.weights != multilingual.weights
    # Its cosines crowd into a narrow band: its weights were fitted with a narrower dense span than MiniLM's.
    assert multilingual.dense_span is not None and multilingual.dense_span < RecallConfig().dense_span
    assert english.dense_span is None
    assert multilingual.relevance(NO_EVIDENCE) < 0.05


def test_every_shipped_weights_file_and_word_table_is_packaged() -> None:
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["companion"]
    shipped = [
        *(root / "companion" / "recall").glob("*.json"),
        *(root / "companion" / "recall" / "frequencies").iterdir(),
    ]
    assert len(shipped) > 3
    for path in shipped:
        inside = path.relative_to(root / "companion").as_posix()
        assert any(fnmatch.fnmatch(inside, g) for g in globs), f"{inside} is not in the package data"


def test_a_keyword_match_tells_less_the_less_of_the_question_the_vault_holds() -> None:
    def question(unknown: float) -> Question:
        return Question(
            foreign=False, best_cosine=0.83, best_bm25=10.0, low_bm25=2.0, dense_span=0.1, unknown_words=unknown
        )

    model = default_model(True)

    def first(unknown: float) -> str:
        # "words": the best keyword match, a little further in meaning; "meaning": the nearest note, few of its words.
        words = model.logit(features(evidence(cosine=0.80, bm25=10.0, coverage=0.4), question(unknown)))
        meaning = model.logit(features(evidence(cosine=0.83, bm25=2.0, coverage=0.1), question(unknown)))
        return "words" if words > meaning else "meaning"

    assert named(features(evidence(cosine=0.8, bm25=10.0), question(0.5)))["unknown_bm25"] == pytest.approx(0.5)
    assert named(features(evidence(cosine=0.8, bm25=10.0), question(0.0)))["unknown_bm25"] == 0.0
    # Asked in the notes' language, the keyword match wins; asked in another (half its words in no note), the
    # words it shares with the notes are loanwords and names, and the note nearest in meaning comes first.
    assert first(0.0) == "words" and first(0.5) == "meaning"
    assert dict(zip(FEATURES, default_model(False).weights, strict=True))["unknown_bm25"] == 0.0


def test_weights_fitted_before_the_keyword_match_was_weighed_by_unknown_words_rank_as_they_did() -> None:
    shipped = default_model(True)
    kept = [n for n in FEATURES if n != "unknown_bm25"]
    given = dict(zip(FEATURES, shipped.weights, strict=True))
    model = FusionModel.from_json({"features": kept, "weights": [given[n] for n in kept], "bias": shipped.bias})
    weights = dict(zip(model.names, model.weights, strict=True))
    assert model.names == FEATURES and weights["unknown_bm25"] == 0.0
    assert all(weights[n] == given[n] for n in kept)
