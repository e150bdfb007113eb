"""Learned fusion: a note's relevance to a question as the probability a logistic model gives its features.

Hand-set weights fitted to one kind of vault did not carry over to others (long chat logs against a knowledge vault
in 35 languages): which side to trust depends on the question (a paraphrase, exact words, a rare name, a title, a
language the embedding model does not read). The model sees what decides it: the dense and BM25 evidence, how
much of the question a note holds, whether it is the note's title or alias, and whether the question is in a
language the model reads. Its weights live beside this module (`fusion.json`) and `companion fusion train`
fits them anew from evaluation sets.

The output is a probability, so one threshold (the relevance floor) means the same in every vault: below it a note
is not a match.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

FEATURES: tuple[str, ...] = (
    "dense",
    "cosine",
    "dense_missing",
    "bm25",
    "bm25_ratio",
    "coverage",
    "every_word",
    "title",
    "alias",
    "title_overlap",
    "foreign_dense",
    "foreign_bm25",
    "weak_dense",
    "other_language",
    "title_cosine",
    "unknown_bm25",
    "unknown_words",
    "rare_unknown",
    "unknown_standout",
    "far_nearest",
)
"""The features of one (question, note) pair, in the model's order:

- `dense`: the note's best chunk's cosine scaled against the best candidate's (1 best, 0 at `dense_span` below);
- `cosine`: that cosine itself (0 when no chunk of the note was among the nearest);
- `dense_missing`: 1 when no chunk of the note was among the nearest;
- `bm25`: BM25 min-max scaled over the candidates; `bm25_ratio`: BM25 over the best BM25;
- `coverage`: the share of the question's words (weighted by idf) the note holds; `every_word`: it holds them all;
- `title`, `alias`: the question is the note's title, or one of its aliases;
- `title_overlap`: how far the title's words and the question's coincide (Dice);
- `foreign_dense`, `foreign_bm25`: `dense` and `bm25` when the question is in a language other than the embedding
  model's (0 otherwise), so each side's weight can differ there;
- `weak_dense`: `dense` times how far the best cosine of the question falls short of a clear match, so a question
  whose nearest chunk is far from all of them leans less on the embeddings;
- `other_language`: the note is written in another language than the question (a translation of the answer);
- `title_cosine`: the cosine similarity of the question and the note's title, embedded on its own. A knowledge
  vault's titles name what a note is about ("Multiple cursors", "Status bar") in a few words, which the chunks,
  embedded without the title, never say so plainly. 0 for a conversation, whose title names a session, not the
  many things said in it;
- `unknown_bm25`: `bm25` times `unknown_words`. The less of the question the vault's words hold, the less its best
  keyword match tells: an English question about a vault written in Spanish shares only its loanwords and product
  names with the notes (Supabase, RPC, VAT), which many notes hold, while the words that tell its answer from them
  are in another language; a question asked in the notes' own language holds few unknown words, and its BM25
  counts in full;
- `unknown_words`: the share of the question's words (weighted by idf) that no note of the vault holds, the same
  for every candidate: "best pizza in Naples" asked of a vault that never names pizza or Naples is about something
  it does not hold, however well the best of a few notes scores against the others;
- `rare_unknown`: the same share with each word weighted by how rare it is in its language at large
  (`companion.recall.background`), not in the vault: a vault of fifty notes cannot tell a common word from a
  telling one, and "best", held by one long clipping, would count as much as "pizza";
- `unknown_standout`: `rare_unknown` times how far the nearest note's cosine stands above the next five's mean (in
  dense spans, from `STANDOUT_START` to `STANDOUT_FULL`). A question whose words no note holds is about something
  the vault does not hold, or it is asked in another language than the notes: an English question about a German
  note shares no word with it. In a small vault the two look alike by every other measure; the multilingual
  model's nearest note stands out from the rest for a translated question and crowds with them for an off-topic
  one. Its weight is set by hand (see the evaluation docs); `fusion train --keep-ranking` fits it with the others;
- `far_nearest`: how far the nearest chunk (of the vault, or of the search's scope) falls short of `NEAR_COSINE`,
  when the embedding model reads the question's language. A question about something the vault does not hold can
  share an everyday word with a note ("file" in "how do I file my tax return", "wine" in a recipe), so a keyword
  match and some words held say little; but no chunk of the vault is then near it in meaning, where a question the
  vault answers has some chunk near it, whatever its wording. 0 when the model does not read the question's language
  (its cosines then say nothing), when the meaning side found no chunk (nothing embedded yet, or no weight given to
  it), for a question naming a date (what that day holds answers it), and with a model the package does not ship:
  the bound is all-MiniLM-L6-v2's, whose cosines the English weights were fitted on, and a server model's cosines
  spread otherwise.
"""
QUESTION_FEATURES: tuple[str, ...] = ("unknown_words", "rare_unknown", "unknown_standout", "far_nearest")
"""Features the same for every candidate of a question: they move every candidate's log-odds alike, so they never
change an order, only what counts as a match. They are fitted after the others, which they leave as they are
(`companion.recall.fusion_fit.calibrate`)."""
ADDED_FEATURES: tuple[str, ...] = ("unknown_bm25", *QUESTION_FEATURES)
"""Features added after weights were first fitted: weights fitted before one of them was added (a user's own
`fusion train` file) rank and judge as they did, with it counting nothing, until they are fitted anew."""


@dataclass(frozen=True)
class Evidence:
    """What the index found of one note for one question, before fusion."""

    cosine: float | None
    """Best chunk's cosine similarity, None when none of its chunks was among the nearest."""
    bm25: float | None
    """BM25 of the whole note (higher is better), None when it did not match."""
    coverage: float
    """Share of the question's words (idf-weighted) the note holds."""
    every_word: bool
    """The note holds every word of a question of two words or more."""
    title: bool
    """The question is the note's title."""
    alias: bool
    """The question is one of the note's aliases."""
    title_overlap: float
    """Dice overlap of the title's words and the question's."""
    other_language: bool = False
    """The note is written in another language than the question."""
    title_cosine: float = 0.0
    """Cosine similarity of the question and the note's title."""


@dataclass(frozen=True)
class Question:
    """What is known of the question as a whole."""

    foreign: bool
    """Written in a language other than the embedding model's."""
    best_cosine: float
    """The best cosine over the candidates (0 when the dense side is absent)."""
    best_bm25: float
    """The best BM25 over the candidates (0 when none matched)."""
    low_bm25: float
    """The lowest BM25 over the candidates that matched."""
    dense_span: float
    """Cosine below the best one at which `dense` reaches 0."""
    unknown_words: float = 0.0
    """The share of the question's words (weighted by idf) no note holds."""
    rare_unknown: float = 0.0
    """The share of the question's words, weighted by their rarity in the language at large, no note holds."""
    standout: float = 0.0
    """How far the best cosine stands above the mean of the next five, in dense spans (0 with fewer than two)."""
    nearest_read: bool = False
    """The best cosine tells how near the vault comes to the question in meaning: the model reads the question's
    language, the meaning side found some chunk, and the question names no date (see `far_nearest`)."""


DEFAULT_SPAN = 0.3
"""The span `dense` is scaled over when the settings give none (the weighted sum's min-max has no place here)."""
NO_EVIDENCE = tuple(1.0 if name == "dense_missing" else 0.0 for name in FEATURES)
"""The features of a note found by no search, only through a link from a candidate (see `linked_only`)."""
_QUESTION_AT = tuple(FEATURES.index(name) for name in QUESTION_FEATURES)


def linked_only(candidate: Sequence[float] | None) -> tuple[float, ...]:
    """The features of a note only a link brought in, given any searched candidate's (`candidate`, None when there
    is none): no evidence of its own, but the question's own features, which every candidate of a question holds
    alike. With them at 0 instead, a question the vault knows little of would lower every searched note and not
    the linked ones, and a category page linked from the best of them would come first with no evidence at all."""
    if candidate is None:
        return NO_EVIDENCE
    out = list(NO_EVIDENCE)
    for at in _QUESTION_AT:
        out[at] = candidate[at]
    return tuple(out)


STANDOUT_START = 0.25
"""The standout (in dense spans) up to which a nearest note counts as no closer than its neighbours: a quarter of
the span (0.025 of the multilingual model's cosine). The off-topic questions asked of kepano's vault stand out at
most 0.022; chosen on half of the small five-language vault's questions, checked on the other half."""
STANDOUT_FULL = 0.5
"""The standout past which a note counts as standing out no further: the lift is the same for every candidate of
the question, so a bounded one lifts the nearest note over the floor without lifting its neighbours with it."""
CLEAR_COSINE = 0.6
"""A best cosine at or above this is a clear match for the English model; `weak_dense` grows below it."""
NEAR_COSINE = 0.4
"""The best cosine below which a question's nearest chunk counts as far from it (`far_nearest`). With the English
model, the nearest chunk of an answerable question of the development sets lies at 0.21 to 0.72 (a twentieth
below 0.35), of a question asked where nothing answers it at 0.04 to 0.56 (three in four below 0.36). The
multilingual model's cosines sit above 0.7, so the feature is 0 with it. Chosen among 0.35 to 0.5 on the training
sets alone (see the evaluation docs): the most of their unanswerable questions said to have no good match with
none of their answerable ones."""


def standout(cosines: Iterable[float], span: float) -> float:
    """How far the best of `cosines` stands above the mean of the next five, in spans of `span` (see
    `Question.standout`)."""
    ranked = sorted(cosines, reverse=True)
    if len(ranked) < 2:
        return 0.0
    nearest = ranked[1:6]
    return (ranked[0] - sum(nearest) / len(nearest)) / (span if span > 0 else DEFAULT_SPAN)


def features(e: Evidence, q: Question) -> tuple[float, ...]:
    """The feature vector of one note for one question, in `FEATURES` order."""
    if e.cosine is None:
        dense, cosine, missing = 0.0, 0.0, 1.0
    else:
        span = q.dense_span if q.dense_span > 0 else DEFAULT_SPAN
        dense = max(0.0, 1.0 - (q.best_cosine - e.cosine) / span)
        cosine, missing = e.cosine, 0.0
    if e.bm25 is None or q.best_bm25 <= 0:
        bm25 = ratio = 0.0
    else:
        spread = q.best_bm25 - q.low_bm25
        bm25 = 1.0 if spread < 1e-12 else (e.bm25 - q.low_bm25) / spread
        ratio = e.bm25 / q.best_bm25
    foreign = 1.0 if q.foreign else 0.0
    weak = max(0.0, CLEAR_COSINE - q.best_cosine)
    return (
        dense,
        cosine,
        missing,
        bm25,
        ratio,
        e.coverage,
        1.0 if e.every_word else 0.0,
        1.0 if e.title else 0.0,
        1.0 if e.alias else 0.0,
        e.title_overlap,
        foreign * dense,
        foreign * bm25,
        weak * dense,
        1.0 if e.other_language else 0.0,
        e.title_cosine,
        q.unknown_words * bm25,
        q.unknown_words,
        q.rare_unknown,
        q.rare_unknown * max(0.0, min(q.standout, STANDOUT_FULL) - STANDOUT_START),
        max(0.0, NEAR_COSINE - q.best_cosine) if q.nearest_read else 0.0,
    )


_TITLE, _ALIAS, _OTHER_LANGUAGE = FEATURES.index("title"), FEATURES.index("alias"), FEATURES.index("other_language")


def name_rank(vector: Sequence[float]) -> int:
    """How strongly the question names the note (0 when it is neither its title nor an alias): among translations
    sharing a name, the one in the question's language comes first, then a title before an alias."""
    if not (vector[_TITLE] or vector[_ALIAS]):
        return 0
    return 1 + (0 if vector[_OTHER_LANGUAGE] else 2) + (1 if vector[_TITLE] else 0)


OWN_LANGUAGE_RANK = 3
"""The lowest `name_rank` of a note named in the question's own language."""


def own_language_names(ranks: Mapping[str, int]) -> dict[str, int]:
    """The named notes that come first, by path: when the question names a note in its own language, its
    translations that share the name are not put before everything else (a help vault's "File recovery" names
    the English note and, through their aliases, its translations in a dozen languages, which would fill the
    list before the English notes about it); they keep the place their relevance gives them. When no named note
    is in the question's language, every named note comes first."""
    if not any(rank >= OWN_LANGUAGE_RANK for rank in ranks.values()):
        return dict(ranks)
    return {path: rank for path, rank in ranks.items() if rank >= OWN_LANGUAGE_RANK}


@dataclass(frozen=True)
class FusionModel:
    """A logistic model over `FEATURES`: `relevance = 1 / (1 + exp(-(bias + sum(weight * feature))))`."""

    names: tuple[str, ...]
    """The feature names the weights belong to (must be `FEATURES`)."""
    weights: tuple[float, ...]
    """One weight per feature."""
    bias: float
    """The intercept."""
    trained_on: tuple[str, ...] = ()
    """The evaluation sets it was fitted on (names only, for `companion fusion show`)."""
    dense_span: float | None = None
    """The span `dense` was scaled over when the weights were fitted (it then replaces the `recall.dense_span`
    setting: weights fitted on one scale mean nothing on another), or None to follow the setting. A model whose
    cosines crowd into a narrow band (the multilingual one's between 0.7 and 0.9) needs a narrower span than
    MiniLM's 0.3, or every candidate's `dense` sits near 1."""

    def __post_init__(self) -> None:
        if self.names != FEATURES:
            raise ValueError(
                "the fusion weights were fitted for other features; `companion fusion train` fits them anew"
            )
        if len(self.weights) != len(self.names):
            raise ValueError("the fusion weights must hold one weight per feature")
        if not all(math.isfinite(w) for w in (*self.weights, self.bias)):
            raise ValueError("the fusion weights must be finite numbers")
        if self.dense_span is not None and not 0.0 < self.dense_span <= 2.0:
            raise ValueError("the fusion weights' dense_span must be above 0 and at most 2")

    def logit(self, vector: Sequence[float]) -> float:
        """The model's log-odds for one feature vector."""
        if len(vector) != len(self.weights):
            raise ValueError(f"a feature vector of {len(vector)} numbers for {len(self.weights)} weights")
        # `map` over `operator.mul` rather than a generator: a search scores a couple of hundred candidates.
        return self.bias + float(sum(map(operator.mul, self.weights, vector)))

    def relevance(self, vector: Sequence[float]) -> float:
        """The probability that the note is a match, in (0, 1)."""
        z = self.logit(vector)
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0

    def contributions(self, vector: Sequence[float]) -> list[tuple[str, float]]:
        """Each feature's share of the log-odds (weight x value), largest first, zeros left out."""
        parts = [(n, w * x) for n, w, x in zip(self.names, self.weights, vector, strict=True) if w * x != 0.0]
        return sorted(parts, key=lambda p: -abs(p[1]))

    def to_json(self) -> dict[str, object]:
        """The model as JSON (what `fusion.json` holds)."""
        return {
            "features": list(self.names),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "trained_on": list(self.trained_on),
            **({"dense_span": self.dense_span} if self.dense_span is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> FusionModel:
        """Read a model written by `to_json`; a ValueError names what is wrong."""
        try:
            names = tuple(str(n) for n in data["features"])  # type: ignore[attr-defined]
            weights = tuple(float(w) for w in data["weights"])  # type: ignore[attr-defined]
            bias = float(data["bias"])  # type: ignore[arg-type]
            trained = tuple(str(t) for t in data.get("trained_on", ()))  # type: ignore[attr-defined]
            span = data.get("dense_span")
            dense_span = None if span is None else float(span)  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"the fusion weights are malformed ({exc})") from exc
        if (
            names != FEATURES
            and set(names) <= set(FEATURES)
            and tuple(n for n in names if n not in ADDED_FEATURES)
            == tuple(n for n in FEATURES if n not in ADDED_FEATURES)
            and len(weights) == len(names)
        ):
            # Fitted before some features were added: they rank as they did and those count nothing (`companion
            # fusion train` fits them; `--keep-ranking` the question's own alone).
            given = dict(zip(names, weights, strict=True))
            names, weights = FEATURES, tuple(given.get(n, 0.0) for n in FEATURES)
        return cls(names, weights, bias, trained, dense_span)

    @classmethod
    def read(cls, path: Path) -> FusionModel:
        """Read a model from a JSON file."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read the fusion weights in {path.name}: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"the fusion weights in {path.name} are not a JSON object")
        return cls.from_json(data)


SHIPPED_WEIGHTS = {False: "fusion.json", True: "fusion-multilingual.json"}
"""The shipped weights' files, by whether the embedding model reads every language. Each model family gets its own
fit: the multilingual model's cosines crowd into a narrower band (0.7 to 0.9 where MiniLM's spread over 0.1 to 0.8),
and a question in German is no foreign one to it, so weights fitted for one mislead the other."""


@cache
def default_model(multilingual: bool = False) -> FusionModel:
    """The weights shipped with the package for the English model (`fusion.json`) or the multilingual one."""
    name = SHIPPED_WEIGHTS[multilingual]
    text = resources.files("companion.recall").joinpath(name).read_text(encoding="utf-8")
    return FusionModel.from_json(json.loads(text))
