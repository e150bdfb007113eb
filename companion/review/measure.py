"""How well a review queue finds what was planted in a vault: precision and recall of each kind."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from companion.curation.suggestions import KINDS, Suggestion
from companion.demo.planted import Planted
from companion.workspace import Workspace


@dataclass(frozen=True)
class KindScore:
    """One kind's counts against the planted truth."""

    found: int
    """Suggestions of the kind that match a planted problem."""
    wrong: int
    """Suggestions of the kind that match none."""
    missed: int
    """Planted problems of the kind no suggestion names."""

    @property
    def precision(self) -> float:
        """The share of the kind's suggestions that are right (1 when there are none)."""
        return self.found / (self.found + self.wrong) if self.found + self.wrong else 1.0

    @property
    def recall(self) -> float:
        """The share of the planted problems found (1 when none were planted)."""
        return self.found / (self.found + self.missed) if self.found + self.missed else 1.0


def record_planted_uses(ws: Workspace, planted: Planted) -> None:
    """Record the stale notes' old uses in the vault's access statistics."""
    for path, when in planted.stale_uses.items():
        ws.access_log().record([path], datetime.fromisoformat(when))


def score(queue: Iterable[Suggestion], planted: Planted) -> dict[str, KindScore]:
    """Each kind's precision and recall: a suggestion is right when it names a planted problem's notes (a changed
    fact's in the right order: older, then newer)."""
    # A changed fact counts only the right way round (the older note superseded by the newer); a duplicate either
    # way, as either note may be the one kept.
    truth: dict[str, set[frozenset[str] | tuple[str, ...]]] = {
        "duplicate": {frozenset(p) for p in planted.duplicates},
        "changed_fact": {tuple(p) for p in planted.changed},
        "stale": {frozenset([p]) for p in planted.stale},
        "orphan": {frozenset([p]) for p in planted.orphans},
        "broken_link": {frozenset([p]) for p, _ in planted.broken},
        "missing_type": {frozenset([p]) for p in planted.untyped},
    }
    named: dict[str, set[frozenset[str] | tuple[str, ...]]] = {kind: set() for kind in KINDS}
    for s in queue:
        if s.kind == "changed_fact":
            named[s.kind].add(s.paths)
        else:
            named[s.kind].add(frozenset(s.paths[:1] if s.kind == "broken_link" else s.paths))
    return {
        kind: KindScore(len(named[kind] & truth[kind]), len(named[kind] - truth[kind]), len(truth[kind] - named[kind]))
        for kind in KINDS
    }
