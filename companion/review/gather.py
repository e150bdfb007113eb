"""What a review needs of a vault, read from its index: each note's facts, vector, links and use."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from companion.curation.queue import ReviewInputs
from companion.curation.suggestions import NoteFacts, Usage
from companion.errors import CompanionError
from companion.recall.decay import AccessStats, decay
from companion.vault.graph import VaultGraph
from companion.vault.parse import aliases_of
from companion.workspace import Workspace
from indexer.graphs import manifest_graph
from indexer.records import NoteRecord

log = logging.getLogger(__name__)

TEXT_CHARS = 4000
"""How much of each note's body a review compares (a duplicate shows in its first pages)."""


VectorCache = dict[str, tuple[str, "npt.NDArray[np.float32]"]]
"""Note vectors kept between two gatherings, by path, with the content hash they were read for."""


def gather(
    ws: Workspace, now: datetime, *, vectors: bool = True, cache: VectorCache | None = None
) -> tuple[ReviewInputs, VaultGraph, str]:
    """The review's inputs for the vault, its link graph, and a notice when the meaning side could not be read
    (the queue then compares words only). With a `cache`, only the notes changed since are read from the store."""
    records = ws.manifest.notes()
    paths = [r.path for r in records]
    texts = ws.manifest.derived.bodies(paths, TEXT_CHARS)
    notes = {r.path: _facts(r, texts.get(r.path, "")) for r in records}
    graph = manifest_graph(records, ws.vault.scan_all(), ws.vault.session_links())
    backlinks = {p: len([b for b in graph.backlinks(p) if b != p]) for p in paths}
    outlinks = {p: sum(1 for _, target in graph.outlinks(p) if target is not None and target != p) for p in paths}
    notice = ""
    found: dict[str, npt.NDArray[np.float32]] = {}
    if vectors:
        try:
            found = _cached_vectors(ws, records, {} if cache is None else cache)
        except (CompanionError, OSError) as exc:  # the words still decide; the notice says the meaning could not
            log.debug("review: the vectors could not be read", exc_info=exc)
            notice = f"the meaning side of the index could not be read ({exc}): duplicates found by words only"
    stats = ws.access_log().stats(paths)
    policy = ws.config.retention
    aware = now.astimezone()
    usage = {}
    for path, used in stats.items():
        if used.last_accessed_at is None:
            continue
        factor = decay(used, policy, aware, notes[path].confidence if path in notes else None)
        usage[path] = Usage(
            used.last_accessed_at, used.access_count, factor.value, _at_floor(used, factor.value, policy.decay_floor)
        )
    inputs = ReviewInputs(
        notes=notes,
        vectors=found,
        backlinks=backlinks,
        outlinks=outlinks,
        usage=usage,
        memory_folder=ws.config.agent_writes.memory_folder,
    )
    return inputs, graph, notice


def note_vectors(ws: Workspace, paths: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    """Each embedded note's unit vector: the normalised mean of its chunks' stored vectors."""
    owners = ws.manifest.chunk_notes(paths)
    ids = list(owners)
    sums: dict[str, npt.NDArray[np.float32]] = {}
    counts: dict[str, int] = defaultdict(int)
    store = ws.store()
    for start in range(0, len(ids), 2048):
        for chunk_id, vector in store.embeddings(ids[start : start + 2048]).items():
            path = owners[chunk_id]
            sums[path] = sums[path] + vector if path in sums else vector.astype(np.float32, copy=True)
            counts[path] += 1
    out = {}
    for path, total in sums.items():
        norm = float(np.linalg.norm(total))
        if norm > 0:
            out[path] = (total / norm).astype(np.float32)
    return out


def _cached_vectors(ws: Workspace, records: list[NoteRecord], cache: VectorCache) -> dict[str, npt.NDArray[np.float32]]:
    """Each note's vector, read from the store only for notes not in the cache with the same content."""
    # Conversation notes are never compared; a note with chunks still waiting for their vectors is read but not
    # kept, so its vector is whole once they arrive.
    comparable = [r for r in records if r.kind != "conversation"]
    waiting = ws.manifest.queue.unembedded_of([r.path for r in comparable])
    stale = [r.path for r in comparable if r.path in waiting or cache.get(r.path, ("", None))[0] != r.content_hash]
    fresh = note_vectors(ws, stale) if stale else {}
    hashes = {r.path: r.content_hash for r in records}
    for path in [p for p in cache if p not in hashes]:
        del cache[path]
    for path in stale:
        if path in fresh and path not in waiting:
            cache[path] = (hashes[path], fresh[path])
        else:
            cache.pop(path, None)
    found = {path: vector for path, (_, vector) in cache.items()}
    found.update({path: fresh[path] for path in waiting if path in fresh})
    return found


def _facts(record: NoteRecord, text: str) -> NoteFacts:
    front = record.frontmatter
    return NoteFacts(
        path=record.path,
        title=record.title,
        kind=record.kind,
        note_type=record.note_type,
        text=text,
        content_hash=record.content_hash,
        changed=datetime.fromtimestamp(record.mtime_ns / 1e9, tz=UTC),
        frontmatter=front,
        links=tuple(record.link_targets),
        aliases=tuple(aliases_of(front)),
    )


def _at_floor(used: AccessStats, value: float, floor: float) -> bool:
    return used.last_accessed_at is not None and value <= floor + 1e-9
