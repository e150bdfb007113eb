"""The review queue: every suggestion about a vault, ranked by what acting on it is worth, skipped ones left out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from companion.curation.hygiene import Resolve, broken_links, missing_types, stale_and_orphans
from companion.curation.similar import duplicates_and_changes, similar_pairs
from companion.curation.suggestions import KINDS, NoteFacts, Suggestion, Usage


@dataclass(frozen=True)
class ReviewInputs:
    """What the index knows of a vault, gathered once for a queue."""

    notes: Mapping[str, NoteFacts]
    """Every indexed note, by path."""
    vectors: Mapping[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    """Each embedded note's unit vector (the mean of its chunks'), by path."""
    backlinks: Mapping[str, int] = field(default_factory=dict)
    """How many other notes link to each note."""
    outlinks: Mapping[str, int] = field(default_factory=dict)
    """How many of each note's links reach another note."""
    usage: Mapping[str, Usage] = field(default_factory=dict)
    """How each used note has been used."""
    memory_folder: str = "Memory"
    """Where typed memory notes live."""


def review_queue(
    inputs: ReviewInputs, resolve: Resolve, now: datetime, skipped: Mapping[str, str] | None = None
) -> list[Suggestion]:
    """Every suggestion, best first; those in `skipped` (id to fingerprint) are left out while their notes are as
    they were when skipped."""
    found = [
        *duplicates_and_changes(inputs.notes, similar_pairs(inputs.notes, inputs.vectors), inputs.backlinks),
        *broken_links(inputs.notes, resolve),
        *missing_types(inputs.notes, inputs.memory_folder, inputs.vectors),
        *stale_and_orphans(inputs.notes, inputs.backlinks, inputs.outlinks, inputs.usage, now),
    ]
    skipped = skipped or {}
    kept = [s for s in found if skipped.get(s.id) != s.fingerprint]
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(kept, key=lambda s: (-s.value, order[s.kind], s.paths))
