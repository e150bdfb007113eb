"""Retrieval metrics for `companion eval`: pure functions over ranked paths and the evidence each question names.

- recall@k: the share of questions with at least one evidence note among the first k results;
- all@k: the share with every evidence note among the first k;
- MRR: the mean of 1 / rank of the first evidence note (0 when none was returned);
- a paired comparison of two rankings of the same questions: the mean per-question difference with a bootstrap
  confidence interval, so a gain can be told from noise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

CUTOFFS = (1, 3, 5)
"""The k of every reported recall@k."""


@dataclass(frozen=True)
class Judged:
    """One question's ranking, judged against its evidence."""

    id: str
    """The question's id."""
    label: str
    """Its label (`multi-session`, `temporal`...), `-` when it has none."""
    ranked: tuple[str, ...]
    """Paths returned, best first."""
    evidence: frozenset[str]
    """Paths that hold the answer."""

    @property
    def first_rank(self) -> int | None:
        """1-based rank of the first evidence note, None when none was returned."""
        for rank, path in enumerate(self.ranked, 1):
            if path in self.evidence:
                return rank
        return None

    def hit_at(self, k: int) -> bool:
        """At least one evidence note in the first k."""
        rank = self.first_rank
        return rank is not None and rank <= k

    def all_at(self, k: int) -> bool:
        """Every evidence note in the first k."""
        return self.evidence <= set(self.ranked[:k])


@dataclass(frozen=True)
class Scores:
    """Aggregate metrics over a set of questions."""

    questions: int
    """How many questions."""
    recall: dict[int, float]
    """k to recall@k."""
    all_at_5: float
    """all@5."""
    mrr: float
    """Mean reciprocal rank."""

    def as_dict(self) -> dict[str, float | int]:
        """Flat JSON-ready form."""
        out: dict[str, float | int] = {"questions": self.questions}
        out.update({f"recall@{k}": round(v, 4) for k, v in self.recall.items()})
        out["all@5"] = round(self.all_at_5, 4)
        out["mrr"] = round(self.mrr, 4)
        return out


def score(judged: Sequence[Judged]) -> Scores:
    """Metrics over the given questions (all zeros for none)."""
    n = len(judged)
    if n == 0:
        return Scores(0, dict.fromkeys(CUTOFFS, 0.0), 0.0, 0.0)
    recall = {k: sum(j.hit_at(k) for j in judged) / n for k in CUTOFFS}
    mrr = sum(1.0 / r for j in judged if (r := j.first_rank) is not None) / n
    return Scores(n, recall, sum(j.all_at(5) for j in judged) / n, mrr)


def by_label(judged: Iterable[Judged]) -> dict[str, Scores]:
    """Metrics per label, labels sorted."""
    groups: dict[str, list[Judged]] = {}
    for j in judged:
        groups.setdefault(j.label, []).append(j)
    return {label: score(items) for label, items in sorted(groups.items())}


PAIRED_METRICS = ("any@5", "all@5", "mrr")
"""The metrics a paired comparison reports."""


def per_question(j: Judged, metric: str) -> float:
    """One question's value of `metric`: any@5 and all@5 are 1 or 0, mrr is 1 / rank of the first evidence note."""
    if metric == "any@5":
        return 1.0 if j.hit_at(5) else 0.0
    if metric == "all@5":
        return 1.0 if j.all_at(5) else 0.0
    if metric == "mrr":
        rank = j.first_rank
        return 0.0 if rank is None else 1.0 / rank
    raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(PAIRED_METRICS)}")


@dataclass(frozen=True)
class Paired:
    """How much better ranking A does than ranking B on the same questions, with a bootstrap confidence interval."""

    metric: str
    """`any@5`, `all@5` or `mrr`."""
    diff: float
    """Mean of A minus B over the questions."""
    low: float
    """Lower end of the 95% interval of that mean (percentile bootstrap over questions)."""
    high: float
    """Upper end of the interval."""
    wins: int
    """Questions where A scored higher than B."""
    losses: int
    """Questions where B scored higher than A."""

    @property
    def significant(self) -> bool:
        """Whether the interval leaves out zero: a real difference rather than noise at this many questions."""
        return self.low > 0 or self.high < 0

    def as_dict(self) -> dict[str, float | int | bool]:
        """Flat JSON-ready form."""
        return {
            "diff": round(self.diff, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "wins": self.wins,
            "losses": self.losses,
            "significant": self.significant,
        }


def paired(a: Sequence[Judged], b: Sequence[Judged], metric: str, *, resamples: int = 2000, variant: int = 7) -> Paired:
    """Compare two rankings of the same questions (in the same order) on `metric`.

    The questions are resampled with replacement `resamples` times and the mean difference taken each time; the
    2.5th and 97.5th percentiles of those means bound the interval. The draws depend only on `variant`, so a run
    repeats exactly.
    """
    if len(a) != len(b) or any(x.id != y.id for x, y in zip(a, b, strict=True)):
        raise ValueError("a paired comparison needs the same questions in the same order")
    diffs = [per_question(x, metric) - per_question(y, metric) for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    if n == 0:
        return Paired(metric, 0.0, 0.0, 0.0, 0, 0)
    values = np.asarray(diffs, dtype=np.float64)
    picks = np.random.default_rng(variant).integers(0, n, size=(max(resamples, 1), n))
    means = values[picks].mean(axis=1)
    low, high = (float(v) for v in np.percentile(means, [2.5, 97.5]))
    wins = sum(1 for d in diffs if d > 0)
    losses = sum(1 for d in diffs if d < 0)
    return Paired(metric, sum(diffs) / n, low, high, wins, losses)
