"""The vectors of the questions a searcher is asked: the model opened on first use, each question embedded once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from companion.embedding.providers import Embedder

_KEPT = 4096  # vectors kept before the cache starts again (a batch's questions, a long app session's)
_BATCH = 256  # questions per model call when many are embedded ahead


class QuestionVectors:
    """Embeds questions with the model a factory opens on first use, and keeps their vectors.

    A question's vector is asked for by the dense search and again by the candidates' title cosines, and a batch
    embeds all its questions ahead: each is embedded once. Embedding it on a worker thread while the words are
    searched was measured at 50k notes and gained nothing on two cores: the model's own threads take both.
    """

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        self._factory = factory
        self._embedder: Embedder | None = None
        self._kept: dict[str, npt.NDArray[np.float32]] = {}

    def embedder(self) -> Embedder:
        """The model, opened on first use (an empty question, or words alone, never opens it)."""
        if self._embedder is None:
            self._embedder = self._factory()
        return self._embedder

    def vector(self, query: str) -> npt.NDArray[np.float32]:
        """The vector of `query`: kept, or embedded now."""
        kept = self._kept.get(query)
        if kept is None:
            kept = self.embedder().embed_queries([query])[0]
            self._keep(query, kept)
        return kept

    def embed_many(self, queries: Sequence[str]) -> None:
        """Embed many questions in batches ahead of time (batch recall, evaluation); later searches reuse them."""
        todo = [q for q in dict.fromkeys(queries) if q.strip() and q not in self._kept]
        if not todo:
            return
        embedder = self.embedder()
        if len(self._kept) + len(todo) > _KEPT:
            self._kept.clear()  # once, before: a batch larger than the cache keeps every one of its vectors
        for start in range(0, len(todo), _BATCH):
            part = todo[start : start + _BATCH]
            self._kept.update(zip(part, embedder.embed_queries(part), strict=True))

    def _keep(self, query: str, vector: npt.NDArray[np.float32]) -> None:
        if len(self._kept) > _KEPT:
            self._kept.clear()
        self._kept[query] = vector
