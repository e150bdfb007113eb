"""Fitting the learned fusion's weights from questions with known answers (see `fit`).

Every evaluation set weighs the same, whatever its number of questions: a long-conversation set of 500 questions
must not drown a knowledge vault of 170.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from companion.recall.fusion import FEATURES, QUESTION_FEATURES, FusionModel

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Judged:
    """One question's candidates: their feature vectors and whether each answers it."""

    source: str
    """The evaluation set it comes from."""
    vectors: tuple[tuple[float, ...], ...]
    """One vector per candidate, in `FEATURES` order."""
    answers: tuple[bool, ...]
    """Whether each candidate is one of the question's answers (none for a question the vault cannot answer)."""
    answerable: bool = True
    """False for a question asked of a vault that cannot answer it. An answerable question whose answer is not
    among its candidates teaches nothing and is left out (it would look like a question with no answer)."""


def fit(
    questions: Sequence[Judged],
    *,
    l2: float = 1e-4,
    steps: int = 3000,
    point_share: float = 0.5,
    dense_span: float | None = None,
) -> FusionModel:
    """Weights that rank each question's answers above its other candidates and give a probability of being an
    answer, fitted together:

    - a pairwise logistic loss over every (answer, other candidate) pair of a question, so that a question with
      120 candidates weighs as much as one with 20;
    - a pointwise logistic loss over every candidate, answers and the rest weighing alike within a question, which
      calibrates the output; questions whose candidates hold no answer (asked of a vault that cannot answer them)
      teach it what no match looks like, which the pairwise loss cannot.

    `point_share` is the pointwise loss's share; `dense_span`, the span the features' `dense` was scaled over,
    is recorded with the weights. The features are fitted on a common scale (each less its mean over the
    candidates, divided by its spread), then the weights brought back to theirs: a feature that varies little (a
    multilingual model's cosines, all within 0.7 to 0.9) would otherwise move too slowly to reach its weight in the
    steps given. The question's own features (`QUESTION_FEATURES`) are left out of this fit and fitted after it by
    `calibrate`, which leaves the rest as they are. Raises ValueError when no question has both an answer and
    another candidate.
    """
    ranked = [q for q in questions if any(q.answers) and not all(q.answers)]
    if not ranked:
        raise ValueError("no question has both an answer and another note among its candidates")
    diffs, pair_w = _pairs(ranked)
    rows, labels, point_w = _points(_pointwise(questions))
    centre, spread = rows.mean(axis=0), rows.std(axis=0)
    spread[spread < 1e-9] = 1.0
    diffs, rows = diffs / spread, (rows - centre) / spread
    # The question's own features first stay out: fitted with the rest, they would move the ranking weights too.
    ranking = np.array([0.0 if name in QUESTION_FEATURES else 1.0 for name in FEATURES])
    coef = np.zeros(len(FEATURES))
    intercept = 0.0
    for _ in range(steps):
        zp = np.clip(diffs @ coef, -50.0, 50.0)
        gp = (1.0 / (1.0 + np.exp(-zp)) - 1.0) * pair_w
        zq = np.clip(rows @ coef + intercept, -50.0, 50.0)
        gq = (1.0 / (1.0 + np.exp(-zq)) - labels) * point_w
        coef -= ranking * ((1.0 - point_share) * (diffs.T @ gp) + point_share * (rows.T @ gq) + l2 * coef)
        intercept -= point_share * float(gq.sum())
    sources = tuple(sorted({q.source for q in questions}))
    weights = coef / spread
    bias = intercept - float(weights @ centre)
    ranker = FusionModel(FEATURES, tuple(float(w) for w in weights), bias, sources, dense_span)
    return calibrate(ranker, questions, l2=l2, steps=steps)


def calibrate(
    model: FusionModel,
    questions: Sequence[Judged],
    *,
    only: Collection[str] = QUESTION_FEATURES,
    l2: float = 1e-4,
    steps: int = 3000,
) -> FusionModel:
    """`model` with the weights of `QUESTION_FEATURES` (or the part of them `only` names) fitted anew on the
    pointwise loss, every other weight and the bias left as they are: the order of every question's candidates
    stays, and so does what counts as a match for a question whose features are all 0 (every word held by some
    note, a chunk near it); only the others move. Questions asked of a vault that cannot answer them teach it
    most. Raises ValueError without a candidate to learn from, or when `only` names a feature that is not the
    question's own."""
    strangers = sorted(set(only) - set(QUESTION_FEATURES))
    if strangers or not only:
        raise ValueError(
            f"only the question's own features can be fitted alone ({', '.join(QUESTION_FEATURES)}), "
            f"not {', '.join(strangers) or 'none'}"
        )
    points = _pointwise(questions)
    if not points:
        raise ValueError("no question has a candidate")
    rows, labels, point_w = _points(points)
    tuned = np.array([name in only for name in FEATURES])
    weights = np.asarray(model.weights, dtype=np.float64)
    base = rows[:, ~tuned] @ weights[~tuned]
    own = rows[:, tuned]
    coef = weights[tuned].copy()
    for _ in range(steps):
        zq = np.clip(base + own @ coef + model.bias, -50.0, 50.0)
        gq = (1.0 / (1.0 + np.exp(-zq)) - labels) * point_w
        coef -= own.T @ gq + l2 * coef
    weights[tuned] = coef
    sources = tuple(sorted({*model.trained_on, *(q.source for q in questions)}))
    return FusionModel(FEATURES, tuple(float(w) for w in weights), model.bias, sources, model.dense_span)


def _pointwise(questions: Sequence[Judged]) -> list[Judged]:
    """The questions the pointwise loss reads: those with candidates and an answer among them, or no answer at all."""
    return [q for q in questions if q.vectors and (any(q.answers) or not q.answerable)]


def _set_shares(questions: Sequence[Judged]) -> dict[str, float]:
    """Each question's share of a loss: every evaluation set weighs the same."""
    sizes: dict[str, int] = {}
    for q in questions:
        sizes[q.source] = sizes.get(q.source, 0) + 1
    return {s: 1.0 / (n * len(sizes)) for s, n in sizes.items()}


def _pairs(questions: Sequence[Judged]) -> tuple[Array, Array]:
    """Every (answer - other candidate) difference, weighted so each question's pairs share its weight."""
    share = _set_shares(questions)
    diffs: list[Array] = []
    weights: list[Array] = []
    for q in questions:
        x = np.asarray(q.vectors, dtype=np.float64)
        y = np.asarray(q.answers, dtype=bool)
        d = (x[y][:, None, :] - x[~y][None, :, :]).reshape(-1, x.shape[1])
        diffs.append(d)
        weights.append(np.full(len(d), share[q.source] / len(d)))
    return np.vstack(diffs), np.concatenate(weights)


def _points(questions: Sequence[Judged]) -> tuple[Array, Array, Array]:
    """Every candidate with its label, answers and the rest sharing a question's weight in halves."""
    share = _set_shares(questions)
    rows: list[Array] = []
    labels: list[Array] = []
    weights: list[Array] = []
    for q in questions:
        y = np.asarray(q.answers, dtype=np.float64)
        rows.append(np.asarray(q.vectors, dtype=np.float64))
        labels.append(y)
        held = float(y.sum())
        if held == 0:
            weights.append(np.full(len(y), share[q.source] / len(y)))
        else:
            half = share[q.source] / 2
            weights.append(np.where(y > 0, half / held, half / max(len(y) - held, 1.0)))
    return np.vstack(rows), np.concatenate(labels), np.concatenate(weights)


def ranking_scores(model: FusionModel, questions: Sequence[Judged]) -> dict[str, float]:
    """Per evaluation set, the share of answerable questions whose best-scored candidate is an answer (a quick
    check that a fit learned something)."""
    out: dict[str, list[bool]] = {}
    for q in questions:
        if not q.vectors or not any(q.answers):
            continue
        best = max(range(len(q.vectors)), key=lambda i: model.logit(q.vectors[i]))
        out.setdefault(q.source, []).append(q.answers[best])
    return {s: sum(v) / len(v) for s, v in out.items()}
