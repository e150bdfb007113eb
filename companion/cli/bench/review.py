"""The review queue's cost at scale: a planted vault of N ordinary notes plus known problems, indexed with the
hashing embedder (the queue reads stored vectors, so the model's speed does not enter), then the queue computed."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.curation.curator import Curator
from companion.curation.queue import review_queue
from companion.demo.planted import write_planted_vault
from companion.embedding.hashing import HashEmbedder
from companion.errors import BenchError
from companion.review.gather import gather
from companion.review.measure import record_planted_uses, score
from companion.review.session import Review
from companion.vault.audit import AuditLog
from companion.workspace import Workspace

PER_KIND = 20
"""Problems of each kind planted among the ordinary notes."""


def review(work: Path, notes: int) -> dict[str, Any]:
    """Time the queue of a planted vault of `notes` ordinary notes: gathering, computing, and a cached read."""
    if notes < PER_KIND:
        # Each planted problem links to an ordinary note of its own.
        raise BenchError(f"The review measure needs at least {PER_KIND} ordinary notes (--review-notes), not {notes}.")
    now = datetime.now(UTC)
    planted = write_planted_vault(work / "vault", ordinary=notes, per_kind=PER_KIND, now=now)
    ws = Workspace.open(work / "vault", data_dir=work / "data", embedder=HashEmbedder())
    try:
        started = time.perf_counter()
        ws.catch_up()
        indexed = time.perf_counter() - started
        record_planted_uses(ws, planted)
        started = time.perf_counter()
        inputs, graph, _ = gather(ws, now)
        gathered = time.perf_counter() - started
        started = time.perf_counter()
        queue = review_queue(inputs, graph.resolver.resolve, now)
        computed = time.perf_counter() - started
        session = Review(ws, Curator(ws.root, AuditLog(ws.data_dir), source="bench"))
        started = time.perf_counter()
        session.queue(now)
        first = time.perf_counter() - started
        started = time.perf_counter()
        session.queue(now)
        cached = time.perf_counter() - started
        # What a landed curation costs: one note changes, the index syncs, the queue is computed again (the note
        # vectors of unchanged notes are kept).
        changed = work / "vault" / planted.untyped[0]
        changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        ws.catch_up()
        started = time.perf_counter()
        session.queue(now)
        after_change = time.perf_counter() - started
    finally:
        ws.close()
    scores = score(queue, planted)
    return {
        "notes": len(inputs.notes),
        "vectors": len(inputs.vectors),
        "index_s": round(indexed, 2),
        "gather_s": round(gathered, 3),
        "compute_s": round(computed, 3),
        "queue_s": round(first, 3),
        "cached_queue_s": round(cached, 4),
        "queue_after_one_change_s": round(after_change, 3),
        "suggestions": len(queue),
        "precision_recall": {
            kind: {"precision": round(s.precision, 3), "recall": round(s.recall, 3), "found": s.found, "wrong": s.wrong}
            for kind, s in scores.items()
        },
    }
