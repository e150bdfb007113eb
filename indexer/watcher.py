"""Keep the index fresh while the vault changes, with `watchfiles`.

Events are batched with a short quiet period, so an editor's atomic save (write a temp file, rename it over the
note: an add and a delete) arrives as one batch and becomes one update. Folder events are passed on as folders:
the indexer scans a folder that appeared and drops the notes of one that vanished, which turns a folder rename
into per-note renames without re-embedding.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from indexer.embedphase import Progress
from indexer.report import IndexReport
from indexer.sync import Indexer

log = logging.getLogger(__name__)

EMBED_BETWEEN_EVENTS_S = 2.0
"""How long the watcher embeds queued chunks before it looks at file events again."""
EMBED_BATCH_WATCHING = 128
"""Chunks embedded and committed together while watching: about two seconds of the model here, so a file event
never waits long behind a large catch-up."""


class VaultFilter(watchfiles.BaseFilter):
    """Drops events under dot-folders (`.obsidian/` churn, `.trash/`, `.git/`) and for non-note files.

    Paths without a `.md` suffix pass when they may be folders, since a vanished folder can no longer be
    told from a vanished file.
    """

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return False
        if any(part.startswith(".") for part in rel.parts):
            return False
        if path.endswith(".md"):
            return True
        full = Path(path)
        try:
            return full.is_dir() or not full.exists()
        except OSError:  # unreadable: let the indexer look and report it
            return True


def watch(
    indexer: Indexer,
    stop: threading.Event,
    on_batch: Callable[[IndexReport, int], None],
    *,
    debounce_ms: int = 1600,
    step_ms: int = 50,
    on_ready: Callable[[], None] | None = None,
    progress: Progress | None = None,
    on_paths: Callable[[frozenset[str]], None] | None = None,
    embed_for_s: float = EMBED_BETWEEN_EVENTS_S,
) -> None:
    """Run until `stop` is set: each batch of file events becomes one `Indexer.update`.

    `on_ready` is called once the OS watch is in place, after a catch-up sync of whatever changed between
    the caller's initial sync and that moment. The catch-up writes words only; the chunks it leaves without a vector
    (and those a large batch leaves) are embedded while the vault is quiet, `embed_for_s` seconds at a time, so a
    file event waits at most that long to be indexed; `on_batch` reports each such stretch with 0 events.
    `progress` sees the chunks embedded. `on_paths` is told the vault-relative paths of each batch before
    `on_batch`, the ones the index leaves out included (session summaries, say, which the hot tier reads straight
    from the vault).
    """
    root = indexer.vault.root
    ready = False
    waiting = 0  # chunks and titles still without a vector
    for changes in watchfiles.watch(
        root,
        watch_filter=VaultFilter(root),
        debounce=debounce_ms,
        step=step_ms,
        stop_event=stop,
        yield_on_timeout=True,
        rust_timeout=200,
        raise_interrupt=False,
    ):
        if not ready:
            # The first (possibly empty) yield means the OS watch is live: catch up once, then report.
            ready = True
            catch_up = indexer.sync(progress=progress, embed_for_s=0.0)
            waiting = catch_up.waiting
            if catch_up.notes_indexed or catch_up.notes_deleted or catch_up.notes_skipped:
                on_batch(catch_up, 0)
            if on_ready:
                on_ready()
        if not changes:
            if waiting:
                report = indexer.embed(progress, for_s=embed_for_s, batch=EMBED_BATCH_WATCHING)
                waiting = report.waiting
                if report.chunks_embedded or report.titles_embedded:
                    on_batch(report, 0)
            continue
        rels = set()
        for _change, path in changes:
            try:
                rels.add(Path(path).relative_to(root).as_posix())
            except ValueError:
                continue
        if on_paths is not None:
            on_paths(frozenset(rels))
        report = indexer.update(rels, progress=progress, embed_for_s=embed_for_s)
        waiting = report.waiting
        on_batch(report, len(changes))
