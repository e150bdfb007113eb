"""The composition root shared by every command: which vault, which data directory, which model and store.

Everything heavy (the model, Chroma) is built on first use, so commands that do not need it stay fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from companion.config import CompanionConfig, load_config
from companion.embedding.providers import (
    Embedder,
    chooses_model,
    embedder_from_config,
    model_id_of,
    reads_every_language,
)
from companion.errors import ConfigError, IndexLockedError, ModelError, StaleModelError, StoreError
from companion.locations import DataPaths, keep_private, private_file, private_folder, vault_data_dir
from companion.recall.access import AccessLog
from companion.recall.engine import Recall
from companion.secrets import RULES_VERSION
from companion.vault.discovery import VaultLocation, locate_vault
from companion.vault.reader import ObsidianVault
from indexer.chunking import CHUNKER_VERSION, Chunker
from indexer.embedphase import Progress
from indexer.manifest import Manifest
from indexer.model_choice import ModelChoice, model_in_use, wanted_model
from indexer.owner import WAIT_FOR_SHORT_S, SharedStore, StoreOwner
from indexer.repair import Mended, mend
from indexer.report import IndexReport
from indexer.search import Searcher
from indexer.store import VectorStore, remove_embedded_store
from indexer.sync import Indexer, Reading

CATCH_UP_EMBED_S = 10.0
"""How long a command that answers (recall, a search, an agent's tool call) embeds before answering: enough for
what an edit or a new session changes, never the minutes a whole new vault takes."""


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
    long_lived: bool = False
    """This process runs until stopped (the app, `index --watch`, the MCP server): a writer that needs the embedded
    store does not wait for it to finish, it asks it to hand the store over."""
    purpose: str | None = None
    """What this process is, as other processes are told (`companion index --watch`); the command line if None."""
    _vault: ObsidianVault | None = field(default=None, repr=False)
    _manifest: Manifest | None = field(default=None, repr=False)
    _embedder: Embedder | None = field(default=None, repr=False)
    _choice: ModelChoice | None = field(default=None, repr=False)
    _store: VectorStore | SharedStore | None = field(default=None, repr=False)
    _owner: StoreOwner | None = field(default=None, repr=False)
    _fresh_store: bool = field(default=False, repr=False)  # the vectors were dropped on purpose: a new store is due
    model_change: tuple[str, str] | None = field(default=None, repr=False)
    """(the model the vectors were made with, the configured one) when this process found them different and began
    to embed every note again; None otherwise."""
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
        # The index holds every note's text: a data directory left open to other users is closed again here.
        keep_private(data.parent)  # `vaults`, the companion's own folder of every vault's data
        keep_private(data)
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
                choice = self.model_choice()
                model = choice.model_id if choice is not None else emb.model
                self._embedder = embedder_from_config(emb.provider, model, emb.url, emb.api_key_env)
        return self._embedder

    def store(self, *, rebuild: bool = False) -> VectorStore | SharedStore:
        """The vector store: a Chroma server's collection, or the embedded store, opened in this process if no other
        holds it and asked of the process that does otherwise (see `indexer.owner`)."""
        with self._opening:
            return self._open_store(rebuild)

    @property
    def owner(self) -> StoreOwner:
        """This process's claim on the embedded store (the writer lock, the open store, the socket serving it)."""
        with self._opening:
            if self._owner is None:
                self._owner = StoreOwner(
                    self.data_dir, self._open_local_store, purpose=self.purpose, long_lived=self.long_lived
                )
            return self._owner

    @contextlib.contextmanager
    def writing(self, *, wait: bool = True, ask: bool = True) -> Iterator[None]:
        """Hold this vault's index for writing for the block (raises `IndexLockedError` naming the holder).

        With `ask`, a process that only reads the store is asked to hand it over; with `wait`, a short-lived one
        that is busy (a recall catching up) is waited for, up to two minutes.
        """
        with self.owner.writing(wait_s=WAIT_FOR_SHORT_S if wait else 0.0, ask_release=ask):
            yield

    def _open_local_store(self) -> VectorStore:
        if not self.paths.chroma.exists() and not self._fresh_store and _lists_chunks(self.paths.manifest):
            # Chroma would create an empty store and every recall would silently lose its meaning side.
            raise StoreError(
                f"The vector store folder {self.paths.chroma} is missing while the index lists chunks: "
                "run `companion index` to embed them again."
            )
        private_folder(self.paths.chroma)  # Chroma's own files take the umask's mode: the folder keeps others out
        embedder = self.embedder()
        store = VectorStore(model_id=embedder.model_id, dim=embedder.dim, path=self.paths.chroma)
        if self.store_write_batch:
            store.write_batch = self.store_write_batch
        return store

    def _open_store(self, rebuild: bool) -> VectorStore | SharedStore:
        if self.chroma_url:
            if self._store is None or rebuild:
                embedder = self.embedder()
                self._store = VectorStore(
                    model_id=embedder.model_id,
                    dim=embedder.dim,
                    url=self.chroma_url,
                    namespace=str(self.root),
                    rebuild=rebuild,
                )
                if self.store_write_batch:
                    self._store.write_batch = self.store_write_batch
            return self._store
        if rebuild:
            self.reset_vectors()
        if self._store is None:
            embedder = self.embedder()
            self._store = SharedStore(self.owner, embedder.model_id, embedder.dim)
        return self._store

    def reset_vectors(self) -> None:
        """Drop every vector (a rebuild or a repair of damaged files); this process must hold the index."""
        if self.chroma_url:
            self.store(rebuild=True)
            return
        owner = self.owner
        owner.take()  # only the holder may drop the vectors (raises `IndexLockedError` naming it otherwise)
        # The folder goes whole: a store built with another model, or damaged, may not even open.
        owner.reset_local()
        remove_embedded_store(self.paths.chroma)
        self._fresh_store = True

    @property
    def store_kind(self) -> str:
        """`server <url>` or `embedded <folder>`, for messages."""
        if self.chroma_url:
            return f"server {self.chroma_url}"
        return f"embedded {self.paths.chroma}"

    def chunker(self) -> Chunker:
        """A chunker that counts tokens with the model's own tokenizer."""
        return Chunker(self.embedder().count_tokens)

    def indexer(self, *, rebuild: bool = False, own_connections: bool = False, move_model: bool = False) -> Indexer:
        """The indexer; with `rebuild`, or when the chunker changed since the last build, it starts empty.
        `move_model` lets it move the vault to the model its languages want (see `follow_model`).

        With `own_connections` it gets its own manifest connection, vault reader and access log, so it can run in
        a thread beside readers of this workspace (SQLite lets one writer and many readers share the file, not
        one connection); the caller closes `indexer.manifest` when done.
        """
        if rebuild:
            if self.model_choice() is not None and self._embedder is None:
                # Every note is embedded anew: with the model the languages want, chosen before the index that
                # says which one its vectors were made with is deleted.
                self._choice = self._chosen(move=True)
            self._wipe()
        manifest = self.manifest
        built_by = manifest.get_meta("chunker")
        if built_by is not None and built_by != CHUNKER_VERSION:
            manifest.reset()
            self.reset_vectors()
        manifest.set_meta("chunker", CHUNKER_VERSION)
        # Settings that change how a note is read (size limit, which notes are conversations) do not change
        # its file, so the stat check alone would never apply them: re-read everything when they change.
        settings = json.dumps(
            [self.config.max_note_bytes, self.config.sessions.folder, list(self.config.index.conversation_folders)]
        )
        if manifest.get_meta("settings") not in (None, settings):
            manifest.invalidate()
        manifest.set_meta("settings", settings)
        # What the index holds of a note's text is redacted: new rules must reach the lexical index too.
        if manifest.get_meta("redaction") != RULES_VERSION and manifest.note_count():
            manifest.reread()
        manifest.set_meta("redaction", RULES_VERSION)
        self.follow_model(move=move_model)
        if own_connections:
            access = AccessLog(self._private(self.paths.access))
            vault = ObsidianVault(self.root, self.config)
            manifest = Manifest(self.paths.manifest)
            return Indexer(vault, manifest, self.chunker, self.embedder, self.store, on_moved=access.rename)
        return Indexer(self.vault, manifest, self.chunker, self.embedder, self.store, on_moved=self.access_log().rename)

    def configured_model_id(self) -> str:
        """The id of the model this workspace embeds with, without loading it."""
        if self.embedder_override is not None:
            return self.embedder_override.model_id
        if self._embedder is not None:
            return self._embedder.model_id
        choice = self.model_choice()
        if choice is not None:
            return choice.model_id
        return model_id_of(self.config.embedding.provider, self.config.embedding.model)

    def model_choice(self) -> ModelChoice | None:
        """The local model this process embeds with and why, when the config leaves it to the companion (the local
        provider, no model named): the one the index's vectors were made with, else the one the vault's languages
        want (see `indexer.model_choice`). None when the config names a model or a test gives the embedder. Chosen
        once per process; `companion index` may move the vault to another (`follow_model`)."""
        if self.embedder_override is not None or not chooses_model(self.config.embedding):
            return None
        choice = self._choice
        if choice is None:
            with self._opening:
                if self._choice is None:
                    self._choice = self._chosen(move=False)
                choice = self._choice
        return choice

    def _chosen(self, *, move: bool) -> ModelChoice:
        # A connection and a vault reader of its own: the app may first ask from its recall or its indexer thread.
        manifest = Manifest(self.paths.manifest)
        try:
            decide = wanted_model if move else model_in_use
            return decide(ObsidianVault(self.root, self.config), manifest, _made_with(manifest))
        finally:
            manifest.close()

    def follow_model(self, *, move: bool = False) -> None:
        """When the configured model is not the one the vectors were made with, drop the vectors and embed every
        note again, keeping the words index: a cosine between two models' vectors means nothing, and a vault must
        stay searchable by its words meanwhile (the caller holds the index for writing).

        With `move`, a vault whose config leaves the model to the companion moves to the one its languages want,
        provided this process has loaded no model yet (`companion index`); no other process ever moves it, since
        every note is then embedded again."""
        manifest = self.manifest
        made_with = _made_with(manifest)
        moving = False
        if move and made_with is not None and self.model_choice() is not None and self._embedder is None:
            wanted = self._chosen(move=True)
            if wanted.model_id != made_with:
                self._choice, moving = wanted, True
        configured = self.configured_model_id()
        if made_with is not None and made_with != configured and manifest.note_count():
            if self.embedder_override is None and not moving:
                on_disk = load_config(self.root).embedding
                # With the choice left to the companion, the index says which model is in use.
                if chooses_model(on_disk):
                    now = self._chosen(move=False).model_id
                else:
                    now = model_id_of(on_disk.provider, on_disk.model)
                if now != configured:
                    # A process started before the config or the vault's model changed (the app, an MCP server)
                    # must not undo the change: the one that reads the new state makes it.
                    raise StaleModelError(
                        f"This process was started with the embedding model {configured}, and the vault now uses "
                        f"{now}: restart it to use the index ({made_with})."
                    )
            # Loaded (and so checked) before anything is dropped: a misspelt model or missing weights cost nothing.
            if self.embedder().model_id != configured:
                raise ModelError(f"The embedding model {configured} loaded as {self.embedder().model_id}.")
            self.reset_vectors()
            manifest.reembed(configured, made_with)
            self.model_change = (made_with, configured)
        elif made_with != configured:
            manifest.set_meta("vectors_model", configured)

    def _private(self, path: Path) -> Path:
        """`path`, a database file of the data directory, created private (mode 600 in a folder of mode 700) when
        missing."""
        private_folder(self.data_dir)
        private_file(path)
        return path

    def _wipe(self) -> None:
        """Delete this vault's index files, even unreadable ones (a rebuild must work on a corrupt index)."""
        self._close_files()
        manifest_path = self.paths.manifest
        for suffix in ("", "-wal", "-shm"):
            Path(f"{manifest_path}{suffix}").unlink(missing_ok=True)
        if self.chroma_url:
            self._store = None
        self.reset_vectors()

    def mend(self, *, full: bool = False, move_model: bool = False) -> Mended:
        """Mend a damaged index before a sync (see `indexer.repair.mend`; `full` compares every id, not only the
        counts; `move_model` as `follow_model`'s `move`); the caller holds it for writing."""

        def let_go_of_access() -> None:  # a damaged access store is moved aside: no connection may stay on it
            if self._access is not None:
                self._access.close()
                self._access = None

        self.follow_model(move=move_model)  # a store of another model's vectors is no damage to mend
        return mend(
            self.paths,
            self.manifest,
            self.store,
            self.reset_vectors,
            embedded=not self.chroma_url,
            full=full,
            before_set_aside=let_go_of_access,
        )

    def searcher(self) -> Searcher:
        """A hybrid searcher over this vault's index."""
        if self._searcher is None:
            self._searcher = Searcher(self.manifest, self.embedder, self.store)
        return self._searcher

    def access_log(self) -> AccessLog:
        """Access statistics of this vault's notes (kept in the data directory, never in notes)."""
        if self._access is None:
            self._access = AccessLog(self._private(self.paths.access))
        return self._access

    def recall(self) -> Recall:
        """The recall engine over this vault's index, under the vault's policy."""
        return Recall(
            self.searcher(),
            self.vault,
            self.config.retention,
            self.config.recall,
            self.access_log(),
            multilingual=self._multilingual(),
        )

    def _multilingual(self) -> bool:
        """Whether the configured model reads every language; a model the config misspells is named by whatever
        embeds, not by an engine that may only list sessions."""
        try:
            return reads_every_language(self.configured_model_id())
        except ConfigError:
            return False

    def catch_up(
        self,
        progress: Progress | None = None,
        reading: Reading | None = None,
        *,
        embed_for_s: float | None = CATCH_UP_EMBED_S,
        on_start: Callable[[], None] | None = None,
    ) -> IndexReport | None:
        """Bring the index up to date before answering, unless another process is writing it: every changed note's
        words, and its meaning for at most `embed_for_s` seconds (the rest waits for `companion index`, the app or
        the next catch-up; recall answers meanwhile from words where the vectors are missing). `on_start` is called
        once the index is held, before the work.

        A running `companion index --watch` keeps the index fresh itself, so a reader never waits for it.
        """
        try:
            with self.writing(wait=False):
                self.mend()
                if on_start is not None:
                    on_start()
                return self.indexer().sync(progress=progress, reading=reading, embed_for_s=embed_for_s)
        except (IndexLockedError, StaleModelError):
            # Another process writes, or moved the vault to another model: answer from what the index holds (the
            # meaning side says why it is unavailable until this process restarts).
            return None

    def close(self) -> None:
        """Close the manifest and the access log, and let go of the index (closing the store if it was opened
        here)."""
        self._close_files()
        if self._owner is not None:
            self._owner.release()
        if not self.chroma_url:
            self._store = None

    def _close_files(self) -> None:
        if self._manifest is not None:
            self._manifest.close()
            self._manifest = None
        if self._access is not None:
            self._access.close()
            self._access = None
        self._searcher = None


def _made_with(manifest: Manifest) -> str | None:
    """The model the index's vectors were made with (None for an index with none yet)."""
    return manifest.get_meta("vectors_model") or manifest.get_meta("title_model")


def _lists_chunks(manifest: Path) -> bool:
    """Whether the manifest lists any chunk with a vector (one still queued for embedding has none), read on a
    connection of its own (any thread may ask)."""
    if not manifest.exists():
        return False
    try:
        db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=5)
        try:
            try:
                sql = "SELECT 1 FROM chunks WHERE id NOT IN (SELECT id FROM unembedded) LIMIT 1"
                return db.execute(sql).fetchone() is not None
            except sqlite3.OperationalError:  # written before chunks could wait for their vectors
                return db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return False
