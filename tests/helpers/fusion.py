"""Made-up fusion evidence and training questions for the learned fusion's tests."""

from __future__ import annotations

import random

from companion.recall.fusion import FEATURES, Evidence
from companion.recall.fusion_fit import Judged


def evidence(**kw: object) -> Evidence:
    """What the index found of one note, nothing but what `kw` names."""
    base: dict[str, object] = dict(
        cosine=None, bm25=None, coverage=0.0, every_word=False, title=False, alias=False, title_overlap=0.0
    )
    base.update(kw)
    return Evidence(**base)  # type: ignore[arg-type]


def named(vector: tuple[float, ...]) -> dict[str, float]:
    """A feature vector by feature name."""
    return dict(zip(FEATURES, vector, strict=True))


def synthetic_questions(rng: random.Random, source: str, n: int, answerable: bool = True) -> list[Judged]:
    """`n` questions of twelve candidates: an answerable one's answer (the first) nearest in meaning, an
    unanswerable one's candidates all far from it."""
    out = []
    dense = FEATURES.index("dense")
    cosine = FEATURES.index("cosine")
    for _ in range(n):
        vectors, answers = [], []
        for i in range(12):
            answer = answerable and i == 0
            v = [0.0] * len(FEATURES)
            v[dense] = rng.uniform(0.6, 1.0) if answer else rng.uniform(0.0, 0.7)
            v[cosine] = rng.uniform(0.5, 0.8) if answerable else rng.uniform(0.0, 0.2)
            vectors.append(tuple(v))
            answers.append(answer)
        out.append(Judged(source, tuple(vectors), tuple(answers), answerable))
    return out


def with_unknown_words(questions: list[Judged], rng: random.Random) -> list[Judged]:
    """The questions with a share of unknown words, one per question: high where the vault cannot answer."""
    unknown = FEATURES.index("unknown_words")
    out = []
    for q in questions:
        share = rng.uniform(0.5, 1.0) if not q.answerable else rng.uniform(0.0, 0.4)
        vectors = tuple(tuple(share if i == unknown else x for i, x in enumerate(v)) for v in q.vectors)
        out.append(Judged(q.source, vectors, q.answers, q.answerable))
    return out
