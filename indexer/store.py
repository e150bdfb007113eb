"""The vector side of the index: one Chroma collection of chunk vectors per vault.

Only vectors and small metadata go to Chroma; note text stays on disk (the vault) and in the lexical index, which
keeps a 50k-note store about a third of the size. The collection records which embedding model filled it, and a
store opened with another model refuses to answer rather than return meaningless neighbours.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from companion.errors import ModelError, StoreError

log = logging.getLogger(__name__)

Metadata = Mapping[str, str | int | float | bool]

# Chroma's own batch limit is larger, but smaller batches keep memory flat on big vaults.
_BATCH = 1000


class VectorStore:
    """A Chroma collection of chunk vectors: embedded (`PersistentClient`) or a server (`HttpClient`)."""

    def __init__(
        self,
        *,
        model_id: str,
        dim: int,
        path: Path | None = None,
        url: str | None = None,
        namespace: str = "",
        rebuild: bool = False,
    ) -> None:
        if (path is None) == (url is None):
            raise ValueError("give exactly one of path (embedded store) or url (Chroma server)")
        import chromadb  # deferred: importing Chroma costs about a second
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False)
        self.location = str(path) if path is not None else str(url)
        try:
            if path is not None:
                path.mkdir(parents=True, exist_ok=True)
                self._client = chromadb.PersistentClient(path=str(path), settings=settings)
                name = "chunks"
            else:
                parsed = urlparse(str(url))
                self._client = chromadb.HttpClient(
                    host=parsed.hostname or "127.0.0.1",
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=settings,
                )
                # One server may hold many vaults: name the collection after this one.
                digest = hashlib.sha1(namespace.encode("utf-8")).hexdigest()[:16]
                name = f"vault-{digest}"
            if rebuild and name in {c.name for c in self._client.list_collections()}:
                self._client.delete_collection(name)
            self._collection = self._client.get_or_create_collection(
                name,
                metadata={"model_id": model_id, "dim": dim},
                configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None,
            )
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(
                f"Cannot open the vector store at {self.location}: {exc}. "
                + (
                    "Is the Chroma server running (`chroma run --path DIR --port PORT`)?"
                    if url
                    else "If the folder is corrupt, run `companion index --rebuild`."
                )
            ) from exc
        meta = self._collection.metadata or {}
        built_with = meta.get("model_id")
        if built_with != model_id or int(meta.get("dim", dim)) != dim:
            raise ModelError(
                f"The index at {self.location} was built with the model {built_with!r} "
                f"({meta.get('dim')} dimensions), but {model_id!r} ({dim}) is configured. "
                "Configure the same model again, or run `companion index --rebuild` to re-embed."
            )
        self.model_id = model_id
        self.dim = dim
        self.name = name
        self.write_batch = _BATCH
        """Vectors per upsert. Chroma holds Python's GIL for a whole call (~0.23 s for 1,000 vectors here), so a
        process with a UI to keep fluid (the app) writes smaller groups, at a small cost in throughput."""

    def count(self) -> int:
        """How many chunk vectors the collection holds."""
        return int(self._collection.count())

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: npt.NDArray[np.float32],
        metadatas: Sequence[Metadata],
    ) -> None:
        """Insert or replace vectors by id."""
        for start in range(0, len(ids), self.write_batch):
            end = start + self.write_batch
            self._call(
                self._collection.upsert,
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],
                metadatas=[dict(m) for m in metadatas[start:end]],
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id; unknown ids are ignored."""
        for start in range(0, len(ids), _BATCH):
            self._call(self._collection.delete, ids=list(ids[start : start + _BATCH]))

    def embeddings(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of the ids that exist."""
        out: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(ids), _BATCH):
            got = self._call(self._collection.get, ids=list(ids[start : start + _BATCH]), include=["embeddings"])
            for chunk_id, vector in zip(got["ids"], got["embeddings"], strict=True):
                out[str(chunk_id)] = np.asarray(vector, dtype=np.float32)
        return out

    def ids(self) -> set[str]:
        """Every id in the collection (for health checks; reads the whole id list)."""
        got = self._call(self._collection.get, include=[])
        return {str(i) for i in got["ids"]}

    def nearest(self, vector: npt.NDArray[np.float32], n: int) -> list[tuple[str, float]]:
        """Nearest chunk ids to one query vector with their cosine similarity, best first, without metadata.

        Fetching metadata costs Chroma several times the search itself (~12 ms against ~3 ms for 150 results at
        10k notes); a chunk id already names its note and anchor.
        """
        got = self._call(
            self._collection.query, query_embeddings=vector.reshape(1, -1), n_results=n, include=["distances"]
        )
        return [(str(i), 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]

    def reset(self) -> None:
        """Drop every vector (for `--rebuild`)."""
        self._client.delete_collection(self.name)
        self._collection = self._client.get_or_create_collection(
            self.name,
            metadata={"model_id": self.model_id, "dim": self.dim},
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def _call(self, fn: Any, **kwargs: Any) -> Any:
        try:
            return fn(**kwargs)
        except Exception as exc:
            raise StoreError(f"The vector store at {self.location} failed: {exc}") from exc


def remove_embedded_store(path: Path) -> None:
    """Delete an embedded store's folder, and Chroma's in-process cache of it, so it can be created afresh."""
    from chromadb.api.shared_system_client import SharedSystemClient

    # Chroma keeps one system per folder per process; a new client on a deleted folder would reuse it.
    SharedSystemClient.clear_system_cache()
    shutil.rmtree(path, ignore_errors=True)
