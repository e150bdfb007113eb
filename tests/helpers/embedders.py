"""Embedders for tests that must see what recall asks of the model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from companion.embedding.hashing import HashEmbedder
from companion.embedding.modelbuild import MODEL_ID


class QuestionsAsked(HashEmbedder):
    """The hashing embedder, noting each text it was asked to embed as a question."""

    def __init__(self) -> None:
        super().__init__()
        self.questions: list[str] = []

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Note the questions, then embed them as the hashing embedder does."""
        self.questions.extend(texts)
        return super().embed_queries(texts)


class UnderTheEnglishModelsName(HashEmbedder):
    """The hashing embedder under the English model's name: recall reads its cosines as that model's, as it reads
    no other model's for what the shipped weights' bounds were chosen on."""

    def __init__(self) -> None:
        super().__init__()
        self.model_id = MODEL_ID
