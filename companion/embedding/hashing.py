"""A deterministic feature-hashing embedder: fast and offline, but not semantic.

It exists for benchmarks that must fill a large index quickly (where what is measured does not depend on the
vectors' meaning, such as a restart's cost) and for fast unit tests. It is never the default, and never the only
embedder a test suite uses: the real model has its own suite.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Bag of hashed words (and word pairs), L2-normalised: texts sharing words are close."""

    model_id = "hash-384"
    dim = 384
    max_tokens = 256
    multilingual = False

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.model_id = f"hash-{dim}"
        self.calls = 0
        self.texts_embedded = 0

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Questions are embedded as any text."""
        return self.embed(texts)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit vector per text, in input order."""
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.lower() for w in _WORD.findall(text)]
            for feature in [*words, *(a + " " + b for a, b in itertools.pairwise(words))]:
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += 1.0 if value & (1 << 63) else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Words plus the two special tokens a BERT model would add (an approximation)."""
        return [len(_WORD.findall(t)) + len(re.findall(r"[^\w\s]", t)) + 2 for t in texts]
