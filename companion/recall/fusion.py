"""Fusing dense and lexical rankings: pure functions, no I/O.

Measured on long multi-session conversations, equal-weight reciprocal-rank fusion of BM25 and dense scores did
worse than BM25 alone, while a weighted sum of min-max normalised scores beat it; so scores, not ranks, are fused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Fused:
    """One candidate's fused score with the parts it came from."""

    key: str
    """What was ranked (a note path)."""
    score: float
    """`dense_weight * dense_norm + (1 - dense_weight) * lexical_norm`, in [0, 1]."""
    dense: float
    """Raw dense score (cosine similarity), 0 when the dense ranking did not return it."""
    lexical: float
    """Raw lexical score (BM25, higher is better), 0 when the lexical ranking did not return it."""
    dense_norm: float
    """Dense score min-max normalised over the candidates."""
    lexical_norm: float
    """Lexical score min-max normalised over the candidates."""


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scale scores to [0, 1]; a single candidate (or all equal) scores 1."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low < 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def fuse(dense: Mapping[str, float], lexical: Mapping[str, float], dense_weight: float = 0.5) -> list[Fused]:
    """Weighted sum of min-max normalised scores, best first (ties broken by key for stable output)."""
    if not 0.0 <= dense_weight <= 1.0:
        raise ValueError(f"dense_weight must be within [0, 1], got {dense_weight}")
    dn, ln = min_max(dense), min_max(lexical)
    out = [
        Fused(
            key=key,
            score=dense_weight * dn.get(key, 0.0) + (1.0 - dense_weight) * ln.get(key, 0.0),
            dense=dense.get(key, 0.0),
            lexical=lexical.get(key, 0.0),
            dense_norm=dn.get(key, 0.0),
            lexical_norm=ln.get(key, 0.0),
        )
        for key in set(dense) | set(lexical)
    ]
    out.sort(key=lambda f: (-f.score, f.key))
    return out
