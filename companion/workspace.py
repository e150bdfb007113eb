"""The composition root shared by every command: which vault, which data directory, which model and store.

Everything heavy (the model, Chroma) is built on first use, so commands that do not need it stay fast.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from companion.config import CompanionConfig, load_config
from companion.embedding.providers import Embedder, embedder_from_config
from companion.errors import IndexLockedError, StoreError
from companion.locations import DataPaths, vault_data_dir
from companion.recall.access import AccessLog
from companion.recall.engine import Recall
from companion.vault.discovery import VaultLocation, locate_vault
from companion.vault.reader import ObsidianVault
from indexer.chunking import CHUNKER_VERSION, Chunker
from indexer.lock import WriterLock
from indexer.manifest import Manifest
from indexer.search import Searcher
from indexer.store import VectorStore, remove_embedded_store
from indexer.sync import Indexer, IndexReport, Progress, Reading


@dataclass
class Workspace:
    """One vault with its config, data directory and (lazily) its model, store and manifest."""

    location: VaultLocation
    config: CompanionConfig
    data_dir: Path
    chroma_url: str | None
    embedder_override: Embedder | None = None
    store_write_batch: int | None = None
    """Vectors per store write, when a caller needs short ones (the app: see `VectorStore.write_batch`)."""
    _vault: ObsidianVault | None = field(default=None, repr=False)
    _manifest: Manifest | None = field(default=None, repr=False)
    _embedder: Embedder | None = field(default=None, repr=False)
    _store: VectorStore | None = field(default=None, repr=False)
    _searcher: Searcher | None = field(default=None, repr=False)
    _access: AccessLog | None = field(default=None, repr=False)
    # The app opens the model and the store from two threads (recall, indexer): each must be opened once.
    _opening: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @classmethod
    def open(
        cls,
        vault: str | Path | None = None,
        *,
        data_dir: str | Path | None = None,
        chroma_url: str | None = None,
        embedder: Embedder | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Workspace:
        """Locate the vault (`vault`, else the environment's, else Obsidian's, else `~/.agent_vault`), read its
        config and pick its data directory; nothing heavy is opened yet.

        `chroma_url` overrides the config's server; `embedder` replaces the configured model (tests, benchmarks).
        """
        location = locate_vault(None if vault is None else str(vault), os.environ if environ is None else environ)
        config = load_config(location.path)
        data = vault_data_dir(location.path, None if data_dir is None else str(data_dir))
        url = chroma_url or config.store.chroma_url
        return cls(location=location, config=config, data_dir=data, chroma_url=url, embedder_override=embedder)

    @property
    def paths(self) -> DataPaths:
        """Where this vault's index, access statistics, audit log and pipeline state live."""
        return DataPaths(self.data_dir)

    @property
    def root(self) -> Path:
        """The vault folder."""
        return self.location.path

    @property
    def vault(self) -> ObsidianVault:
        """The vault reader."""
        if self._vault is None:
            self._vault = ObsidianVault(self.root, self.config)
        return self._vault

    @property
    def manifest(self) -> Manifest:
        """The manifest and lexical index, opened on first use."""
        if self._manifest is None:
            self._manifest = Manifest(self.paths.manifest)
        return self._manifest

    def embedder(self) -> Embedder:
        """The configured embedding model, loaded once."""
        with self._opening:
            return self._open_embedder()

    def _open_embedder(self) -> Embedder:
        if self._embedder is None:
            if self.embedder_override is not None:
                self._embedder = self.embedder_override
            else:
                emb = self.config.embedding
                self._embedder = embedder_from_config(emb.provider, emb.model, emb.url, emb.api_key_env)
        return self._embedder

    def store(self, *, rebuild: bool = False) -> VectorStore:
        """The vector store (embedded in the data directory, or the configured server)."""
        with self._opening:
            return self._open_store(rebuild)

    def _open_store(self, rebuild: bool) -> VectorStore:
        if self._store is None or rebuild:
            embedder = self.embedder()
            path = None if self.chroma_url else self.paths.chroma
            self._store = VectorStore(
                model_id=embedder.model_id,
                dim=embedder.dim,
                path=path,
                url=self.chroma_url,
                namespace=str(self.root),
                rebuild=rebuild,
            )
            if self.store_write_batch:
                self._store.write_batch = self.store_write_batch
        return self._store

    @property
    def store_kind(self) -> str:
        """`server <url>` or `embedded <folder>`, for messages."""
        if self.chroma_url:
            return f"server {self.chroma_url}"
        return f"embedded {self.paths.chroma}"

    def chunker(self) -> Chunker:
        """A chunker that counts tokens with the model's own tokenizer."""
        return Chunker(self.embedder().count_tokens)

    def indexer(self, *, rebuild: bool = False, own_connections: bool = False) -> Indexer:
        """The indexer; with `rebuild`, or when the chunker changed since the last build, it starts empty.

        With `own_connections` it gets its own manifest connection, vault reader and access log, so it can run in
        a thread beside readers of this workspace (SQLite lets one writer and many readers share the file, not
        one connection); the caller closes `indexer.manifest` when done.
        """
        if rebuild:
            self._wipe()
        manifest = self.manifest
        built_by = manifest.get_meta("chunker")
        if built_by is not None and built_by != CHUNKER_VERSION:
            manifest.reset()
            self.store(rebuild=True)
        manifest.set_meta("chunker", CHUNKER_VERSION)
        # Settings that change how a note is read (size limit, which notes are conversations) do not change
        # its file, so the stat check alone would never apply them: re-read everything when they change.
        settings = json.dumps(
            [self.config.max_note_bytes, self.config.sessions.folder, list(self.config.index.conversation_folders)]
        )
        if manifest.get_meta("settings") not in (None, settings):
            manifest.invalidate()
        manifest.set_meta("settings", settings)
        if own_connections:
            access = AccessLog(self.paths.access)
            vault = ObsidianVault(self.root, self.config)
            manifest = Manifest(self.paths.manifest)
            return Indexer(vault, manifest, self.chunker, self.embedder, self.store, on_moved=access.rename)
        return Indexer(self.vault, manifest, self.chunker, self.embedder, self.store, on_moved=self.access_log().rename)

    def _wipe(self) -> None:
        """Delete this vault's index files, even unreadable ones (a rebuild must work on a corrupt index)."""
        self.close()
        self._store = None
        manifest_path, chroma_path = self.paths.manifest, self.paths.chroma
        for suffix in ("", "-wal", "-shm"):
            Path(f"{manifest_path}{suffix}").unlink(missing_ok=True)
        try:
            self.store(rebuild=True)  # drop the collection through Chroma itself
        except StoreError:
            if self.chroma_url:
                raise
            remove_embedded_store(chroma_path)  # unreadable: start from an empty folder

    def searcher(self) -> Searcher:
        """A hybrid searcher over this vault's index."""
        if self._searcher is None:
            self._searcher = Searcher(self.manifest, self.embedder, self.store)
        return self._searcher

    def access_log(self) -> AccessLog:
        """Access statistics of this vault's notes (kept in the data directory, never in notes)."""
        if self._access is None:
            self._access = AccessLog(self.paths.access)
        return self._access

    def recall(self) -> Recall:
        """The recall engine over this vault's index, under the vault's policy."""
        return Recall(self.searcher(), self.vault, self.config.retention, self.config.recall, self.access_log())

    def catch_up(self, progress: Progress | None = None, reading: Reading | None = None) -> IndexReport | None:
        """Bring the index up to date before answering, unless another process is writing it.

        A running `companion index --watch` keeps the index fresh itself, so a reader never waits for it.
        """
        try:
            with WriterLock(self.data_dir):
                return self.indexer().sync(progress=progress, reading=reading)
        except IndexLockedError:
            return None

    def close(self) -> None:
        """Close the manifest."""
        if self._manifest is not None:
            self._manifest.close()
            self._manifest = None
        if self._access is not None:
            self._access.close()
            self._access = None
        self._searcher = None
