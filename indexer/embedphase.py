"""The meaning phase of indexing: the titles and chunks the words phase queued are embedded, newest notes first, in
batches that each commit on their own, and the rate it measures gives the time left.

A batch is journalled before the store is written and marked embedded in the same transaction that clears the
journal, so a kill between the two is undone on the next start (`Indexer.recover`) instead of leaving orphans.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from companion.embedding.providers import Embedder
from indexer.derived import TITLE_VECTOR_DTYPE
from indexer.manifest import Manifest
from indexer.owner import SharedStore
from indexer.report import IndexReport
from indexer.store import VectorStore

Progress = Callable[[int, int, float | None], None]
"""Called with (chunks embedded, chunks to embed, seconds left or None) while chunks are embedded."""

EMBED_SLICE = 64
"""Chunks given to the model at once: progress moves between slices."""
TITLE_BATCH = 256
"""Titles embedded and committed together."""
EMBED_BATCH = 1024
"""Chunks embedded and committed together: a kill loses at most these (sorted by length within, so slices pad
little)."""
EMBED_BATCH_BOUNDED = 128
"""Chunks a batch holds when the embedding has a time limit (the time is checked between batches): about 2 s of the
model here."""


class EmbeddingPhase:
    """Embeds what is queued in `manifest` with the model `embedder` gives and writes the vectors to `store`; both
    are asked for only when there is something to embed."""

    def __init__(
        self,
        manifest: Manifest,
        embedder: Callable[[], Embedder],
        store: Callable[[], VectorStore | SharedStore],
    ) -> None:
        self.manifest = manifest
        self._embedder = embedder
        self._store = store
        # The embedding rate measured here (model tokens and the wall time they took, the store's writes included),
        # for time estimates.
        self._rate_tokens = 0
        self._rate_s = 0.0

    def time_left(self, tokens: int) -> float | None:
        """Seconds to embed `tokens` model tokens at the rate measured so far (a chunk of 250 tokens costs about
        ten of 25); None before any measure."""
        if self._rate_tokens <= 0:
            return None
        return max(tokens, 0) * self._rate_s / self._rate_tokens

    def run(
        self,
        progress: Progress | None = None,
        report: IndexReport | None = None,
        *,
        for_s: float | None = None,
        batch: int = EMBED_BATCH,
    ) -> IndexReport:
        """Embed the titles still without a vector (a few words each: seconds for thousands), then the chunks still
        without one, newest notes first, in batches that each commit on their own (a kill loses at most one
        batch); stop after `for_s` seconds when given (what is left waits for the next call). `progress` is told
        the chunks done and to do, and the time left as measured so far."""
        report = report if report is not None else IndexReport()
        if for_s is not None:
            batch = min(batch, EMBED_BATCH_BOUNDED)  # the time is checked between batches
        total, tokens_left = self.manifest.queue.unembedded_totals()
        report.chunks_left, report.left_s = total, self.time_left(tokens_left) if total else None
        titles = report.titles_left = self.manifest.derived.untitled_count()
        if not (total or titles) or (for_s is not None and for_s <= 0):
            return report
        embedder = self._embedder()  # loaded before the clock starts: loading is not embedding
        started = time.perf_counter()
        if titles:
            self._embed_titles(embedder, None if for_s is None else started + for_s, report)
        done = 0
        if progress and total:
            progress(0, total, self.time_left(tokens_left))
        while total and (for_s is None or time.perf_counter() - started < for_s):
            rows = self.manifest.queue.next_unembedded(batch)
            if not rows:
                break
            began = time.perf_counter()
            ids = [r.id for r in rows]
            self.manifest.queue.journal(ids)
            vectors: dict[str, npt.NDArray[np.float32]] = {}
            # Sorted by length so each slice pads little; sliced so progress moves while the model works.
            todo = sorted(rows, key=lambda r: len(r.text))
            for at in range(0, len(todo), EMBED_SLICE):
                part = todo[at : at + EMBED_SLICE]
                slice_began = time.perf_counter()
                embedded = embedder.embed([r.text for r in part])
                now = time.perf_counter()
                report.embed_s += now - slice_began
                for row, vector in zip(part, embedded, strict=True):
                    vectors[row.id] = vector
                done += len(part)
                tokens = sum(r.tokens for r in part)
                tokens_left -= tokens
                self._rate_tokens += tokens
                self._rate_s += now - began
                began = now
                if progress:
                    progress(min(done, total), total, self.time_left(tokens_left))
            matrix = np.stack([vectors[i] for i in ids]).astype(np.float32)
            self._store().upsert(ids, matrix, [r.metadata for r in rows])
            with self.manifest.transaction() as db:
                self.manifest.queue.mark_embedded(db, ids)
                self.manifest.queue.clear_journal(db, ids)
            self._rate_s += time.perf_counter() - began  # the store's write and the commit are part of the cost
            report.chunks_embedded += len(rows)
        left, tokens_left = self.manifest.queue.unembedded_totals()
        report.chunks_left, report.left_s = left, self.time_left(tokens_left) if left else None
        report.titles_left = self.manifest.derived.untitled_count()
        report.elapsed_s += time.perf_counter() - started  # a sync sets its own whole time afterwards
        return report

    def _embed_titles(self, embedder: Embedder, until: float | None, report: IndexReport) -> None:
        """Embed the titles still without a vector (a few words each: a 6,000-note vault's take seconds), in
        batches that commit on their own, until the perf-counter time `until`.

        Vectors made by another model than this one are dropped first: a cosine between two models means nothing.
        """
        if self.manifest.get_meta("title_model") != embedder.model_id:
            self.manifest.derived.forget_title_vectors(embedder.model_id)
        while until is None or time.perf_counter() < until:
            rows = self.manifest.derived.untitled(TITLE_BATCH)
            if not rows:
                break
            began = time.perf_counter()
            vectors = embedder.embed([title for _, title in rows])
            report.embed_s += time.perf_counter() - began
            with self.manifest.transaction() as db:
                self.manifest.derived.set_title_vectors(
                    db,
                    [
                        (path, np.asarray(v, dtype=TITLE_VECTOR_DTYPE).tobytes())
                        for (path, _), v in zip(rows, vectors, strict=True)
                    ],
                )
            report.titles_embedded += len(rows)
