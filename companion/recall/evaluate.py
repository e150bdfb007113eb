"""Retrieval metrics for `companion eval`: pure functions over ranked paths and the evidence each question names.

- recall@k: the share of questions with at least one evidence note among the first k results;
- all@k: the share with every evidence note among the first k;
- MRR: the mean of 1 / rank of the first evidence note (0 when none was returned).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
