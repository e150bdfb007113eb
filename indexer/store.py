"""The vector side of the index: one Chroma collection of chunk vectors per vault.

Only vectors and small metadata go to Chroma; note text stays on disk (the vault) and in the lexical index, which
keeps a 50k-note store about a third of the size. The collection records which embedding model filled it, and a
store opened with another model refuses to answer rather than return meaningless neighbours.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from companion.errors import ConfigError, ModelError, StoreError
from companion.locations import private_folder
from indexer.storefiles import damaged_files

log = logging.getLogger(__name__)

Metadata = Mapping[str, str | int | float | bool]

# Chroma's own batch limit is larger, but smaller batches keep memory flat on big vaults.
_BATCH = 1000
EXACT_MAX = 10_000
"""Up to this many vectors, nearest neighbours are found exactly (one matrix product over vectors kept in memory,
~15 MB); above it Chroma's approximate index answers with a wide search (`SEARCH_EF`)."""
SEARCH_EF = 400
"""The approximate index's search breadth: wide enough that its answers barely vary from process to process."""
SERVER_TIMEOUT_S = 30.0
"""How long any call to a Chroma server may take before it fails with a message naming the server."""
_CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class StoreHealth:
    """What a full check of the vector store found, against the chunk ids the manifest expects."""

    vectors: int
    """How many vectors the store holds."""
    missing: list[str] = field(default_factory=list)
    """Expected ids the store does not hold."""
    orphans: list[str] = field(default_factory=list)
    """Ids the store holds that the manifest does not expect."""
    unreadable: list[str] = field(default_factory=list)
    """Ids the store lists but cannot return a vector for (damaged)."""
    search_error: str | None = None
    """Why a nearest-neighbour search failed, if it did."""

    @property
    def healthy(self) -> bool:
        """Nothing missing, orphaned or unreadable, and a search works."""
        return not (self.missing or self.orphans or self.unreadable or self.search_error)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "vectors": self.vectors,
            "missing": self.missing,
            "orphans": self.orphans,
            "unreadable": self.unreadable,
            "search_error": self.search_error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StoreHealth:
        """The inverse of `as_dict`."""
        return cls(
            vectors=int(data["vectors"]),
            missing=[str(i) for i in data["missing"]],
            orphans=[str(i) for i in data["orphans"]],
            unreadable=[str(i) for i in data["unreadable"]],
            search_error=data.get("search_error"),
        )


def check_server(url: str, timeout: float = _CONNECT_TIMEOUT_S) -> None:
    """Fail fast, naming the URL, when a Chroma server does not answer its heartbeat within `timeout`.

    Chroma's own client waits forever for a server that accepts the connection and never answers.
    """
    import httpx

    parsed = urlparse(url)
    try:
        port_ok = parsed.port is None or 0 < parsed.port < 65536
    except ValueError:
        port_ok = False
    if parsed.scheme not in ("http", "https") or not parsed.hostname or not port_ok:
        raise ConfigError(f"{url!r} is not a Chroma server's address: give one like http://127.0.0.1:8000")
    try:
        response = httpx.get(url.rstrip("/") + "/api/v2/heartbeat", timeout=timeout)
    except httpx.TimeoutException as exc:
        raise StoreError(
            f"The Chroma server at {url} did not answer within {timeout:.0f} s. Is it running and not overloaded?"
        ) from exc
    except httpx.HTTPError as exc:
        raise StoreError(
            f"Cannot reach the Chroma server at {url}: {_reason(exc)}. "
            "Is it running (`chroma run --path DIR --port PORT`)?"
        ) from exc
    if response.status_code >= 400:
        raise StoreError(f"The Chroma server at {url} answered its heartbeat with HTTP {response.status_code}.")


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
        if path is not None and not rebuild:
            problems = damaged_files(path)
            if problems:
                raise StoreError(
                    f"The vector index files in {path} are damaged ({'; '.join(problems)}). "
                    "Run `companion index` to repair them (every chunk is embedded again)."
                )
        if url is not None:
            check_server(str(url))
        try:
            if path is not None:
                private_folder(path)
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
                _set_timeout(self._client, SERVER_TIMEOUT_S)
            if rebuild and name in {c.name for c in self._client.list_collections()}:
                self._client.delete_collection(name)
            self._collection = self._client.get_or_create_collection(
                name,
                metadata={"model_id": model_id, "dim": dim},
                configuration={"hnsw": {"space": "cosine", "ef_search": SEARCH_EF}},
                embedding_function=None,
            )
        except StoreError:
            self._close_client()
            raise
        except Exception as exc:
            self._close_client()
            reason = _reason(exc)
            if url:
                hint = (
                    ""
                    if "running" in reason
                    else " Is the Chroma server running (`chroma run --path DIR --port PORT`)?"
                )
            else:
                hint = " If the folder is damaged, `companion index` repairs it (`--rebuild` starts afresh)."
            raise StoreError(f"Cannot open the vector store at {self.location}: {reason}.{hint}") from exc
        meta = self._collection.metadata or {}
        built_with = meta.get("model_id")
        if built_with != model_id or int(meta.get("dim", dim)) != dim:
            self._close_client()  # a refused store must not stay open in this process
            raise ModelError(
                f"The index at {self.location} was built with the model {built_with!r} "
                f"({meta.get('dim')} dimensions), but {model_id!r} ({dim}) is configured. "
                "Restart a process started before the change, configure that model again, or run `companion index` to "
                "embed every note again with this one (the words index is kept)."
            )
        self.model_id = model_id
        self.dim = dim
        self.name = name
        self.write_batch = _BATCH
        """Vectors per upsert. Chroma holds Python's GIL for a whole call (~0.23 s for 1,000 vectors here), so a
        process with a UI to keep fluid (the app) writes smaller groups, at a small cost in throughput."""
        self.exact_max = EXACT_MAX
        """Up to this many vectors, searches are exact (see `EXACT_MAX`); 0 always asks the approximate index."""
        self._widen_search()
        # Vectors kept in memory for exact search while the store is small (see `EXACT_MAX`); None until asked.
        self._exact: dict[str, npt.NDArray[np.float32]] | None = None
        self._too_large = False
        self._matrix: tuple[list[str], npt.NDArray[np.float32]] | None = None
        self._exact_lock = threading.Lock()

    def _widen_search(self) -> None:
        """Give a store built before searches were widened the same search breadth."""
        try:
            current = (self._collection.configuration_json or {}).get("hnsw", {}).get("ef_search")
            if current is not None and int(current) < SEARCH_EF:
                self._collection.modify(configuration={"hnsw": {"ef_search": SEARCH_EF}})
        except Exception:  # an older server may not let it change: searches stay as they were
            log.debug("could not widen the search of %s", self.location, exc_info=True)

    def close(self) -> None:
        """Release Chroma's files (embedded) or connections; the store must not be used afterwards."""
        self._exact = self._matrix = None
        self._close_client()

    def _close_client(self) -> None:
        client = getattr(self, "_client", None)
        if client is None:
            return
        try:
            getattr(client, "close", lambda: None)()
        except Exception:  # closing is best effort: the process may be exiting anyway
            log.debug("closing %s failed", self.location, exc_info=True)

    def count(self) -> int:
        """How many chunk vectors the collection holds."""
        return int(self._call(self._collection.count))

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: npt.NDArray[np.float32],
        metadatas: Sequence[Metadata],
    ) -> None:
        """Insert or replace vectors by id."""
        for start in range(0, len(ids), self.write_batch):
            end = start + self.write_batch
            self._write(
                self._collection.upsert,
                ids=list(ids[start:end]),
                embeddings=embeddings[start:end],
                metadatas=[dict(m) for m in metadatas[start:end]],
            )
            with self._exact_lock:
                if self._exact is not None:
                    for chunk_id, vector in zip(ids[start:end], embeddings[start:end], strict=True):
                        self._exact[str(chunk_id)] = _unit(np.asarray(vector, dtype=np.float32))
                    self._matrix = None

    def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id; unknown ids are ignored."""
        for start in range(0, len(ids), _BATCH):
            self._write(self._collection.delete, ids=list(ids[start : start + _BATCH]))
        with self._exact_lock:
            self._too_large = False  # fewer vectors now: exact search may be cheap again
            if self._exact is not None:
                for chunk_id in ids:
                    self._exact.pop(str(chunk_id), None)
                self._matrix = None

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

        The same question on the same index gets the same answer in every process: a small store is searched
        exactly (ties go to the smaller id); a large one by Chroma's approximate index with a wide search.
        Fetching metadata costs Chroma several times the search itself; a chunk id already names its note.
        """
        matrix = self._exact_matrix()
        if matrix is not None:
            names, rows = matrix
            if not names:
                return []
            sims = rows @ _unit(np.asarray(vector, dtype=np.float32))
            top = np.argsort(-sims, kind="stable")[: max(n, 0)]
            # Rounded so float noise in the last bits cannot reorder near-equal neighbours between processes.
            order = sorted(top.tolist(), key=lambda i: (-round(float(sims[i]), 6), names[i]))
            return [(names[i], float(sims[i])) for i in order]
        got = self._call(
            self._collection.query, query_embeddings=vector.reshape(1, -1), n_results=n, include=["distances"]
        )
        return [(str(i), 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]

    def _exact_matrix(self) -> tuple[list[str], npt.NDArray[np.float32]] | None:
        """The ids and unit vectors for exact search, loaded on first use; None when the store is too large."""
        with self._exact_lock:
            if self._exact is None:
                if self.exact_max <= 0 or self._too_large:
                    return None
                if self.count() > self.exact_max:
                    self._too_large = True  # asked again only after a write: counting costs ms at 200k vectors
                    return None
                got = self._call(self._collection.get, include=["embeddings"])
                self._exact = {
                    str(i): _unit(np.asarray(v, dtype=np.float32))
                    for i, v in zip(got["ids"], got["embeddings"], strict=True)
                }
            if len(self._exact) > self.exact_max:
                self._exact = self._matrix = None  # grew past the limit: the approximate index takes over
                return None
            if self._matrix is None:
                names = sorted(self._exact)
                rows = np.stack([self._exact[i] for i in names]) if names else np.zeros((0, self.dim), dtype=np.float32)
                self._matrix = (names, rows)
            return self._matrix

    def health(self, expected: Sequence[str]) -> StoreHealth:
        """Read every vector back and compare the ids with `expected` (the manifest's): a full check.

        A group of ids Chroma cannot return is split until the damaged ids are found, so a repair re-embeds
        only those.
        """
        held = self.ids()
        want = set(expected)
        unreadable: list[str] = []
        ordered = sorted(held & want)
        for start in range(0, len(ordered), _BATCH):
            unreadable += self._unreadable(ordered[start : start + _BATCH])
        search_error = None
        if held:
            try:
                self._call(
                    self._collection.query,
                    query_embeddings=np.ones((1, self.dim), dtype=np.float32),
                    n_results=1,
                    include=["distances"],
                )
            except StoreError as exc:
                search_error = str(exc)
        return StoreHealth(
            vectors=len(held),
            missing=sorted(want - held),
            orphans=sorted(held - want),
            unreadable=unreadable,
            search_error=search_error,
        )

    def _unreadable(self, ids: list[str]) -> list[str]:
        import httpx

        try:
            got = self._collection.get(ids=ids, include=["embeddings"])
        except httpx.HTTPError as exc:  # the server, not the vectors: splitting would only ask it again and again
            raise StoreError(f"The vector store at {self.location} failed: {_reason(exc)}") from exc
        except Exception:  # noqa: BLE001 - Chroma's errors for damaged vectors have no type of their own
            if len(ids) == 1:
                return ids
            half = len(ids) // 2
            return self._unreadable(ids[:half]) + self._unreadable(ids[half:])
        returned = {str(i) for i in got["ids"]}
        return [i for i in ids if i not in returned]

    def reset(self) -> None:
        """Drop every vector (for `--rebuild`)."""
        with self._exact_lock:
            self._exact = self._matrix = None
        self._call(self._client.delete_collection, name=self.name)
        self._collection = self._call(
            self._client.get_or_create_collection,
            name=self.name,
            metadata={"model_id": self.model_id, "dim": self.dim},
            configuration={"hnsw": {"space": "cosine", "ef_search": SEARCH_EF}},
            embedding_function=None,
        )

    def _write(self, fn: Any, **kwargs: Any) -> Any:
        try:
            return self._call(fn, **kwargs)
        except StoreError:
            with self._exact_lock:  # part of the write may have landed: load the vectors afresh when next asked
                self._exact = self._matrix = None
            raise

    def _call(self, fn: Any, **kwargs: Any) -> Any:
        try:
            return fn(**kwargs)
        except Exception as exc:
            raise StoreError(f"The vector store at {self.location} failed: {_reason(exc)}") from exc


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _reason(exc: Exception) -> str:
    """Chroma's message, with a timeout said in words (httpx's own message is often empty)."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {SERVER_TIMEOUT_S:.0f} s"
    text = str(exc).strip().rstrip(".?!")
    return text or type(exc).__name__


def _set_timeout(client: Any, seconds: float) -> None:
    """Bound every later request of a Chroma HTTP client (it waits forever by default)."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(seconds, connect=_CONNECT_TIMEOUT_S)


def remove_embedded_store(path: Path) -> None:
    """Delete an embedded store's folder, and Chroma's in-process cache of it, so it can be created afresh."""
    from chromadb.api.shared_system_client import SharedSystemClient

    # Chroma keeps one system per folder per process; a new client on a deleted folder would reuse it.
    SharedSystemClient.clear_system_cache()
    shutil.rmtree(path, ignore_errors=True)
