"""A review session: the queue of one vault, what was skipped, and the curation an accepted suggestion applies."""

from __future__ import annotations

import contextlib
import json
import threading
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

from companion.atomic import write_atomic
from companion.curation.curator import Curator
from companion.curation.plans import Plan
from companion.curation.queue import review_queue
from companion.curation.suggestions import KINDS, Suggestion
from companion.errors import CurationError, NotFoundError
from companion.locations import private_folder
from companion.review.gather import VectorCache, gather
from companion.workspace import Workspace


class Review:
    """The review queue of a vault: computed from its index, cached until the index changes, with skips kept in the
    vault's data directory (a skipped suggestion returns once one of its notes changes)."""

    def __init__(self, ws: Workspace, curator: Curator) -> None:
        """Review the workspace's vault, applying accepted suggestions with `curator`."""
        self.ws = ws
        """The vault's workspace (its index, access statistics and data directory)."""
        self.curator = curator
        """Plans and applies the curations suggestions propose."""
        self.notice = ""
        """Said with the queue when the meaning side could not be read (duplicates then found by words only)."""
        self._lock = threading.Lock()
        self._cached: tuple[tuple[int, ...], list[Suggestion]] | None = None
        self._vectors: VectorCache = {}

    def queue(
        self,
        now: datetime,
        *,
        kinds: tuple[str, ...] = KINDS,
        index_lock: AbstractContextManager[object] | None = None,
    ) -> list[Suggestion]:
        """The suggestions not skipped, best first; recomputed only when the index, the access statistics or the
        day have changed since. `index_lock` is held while the index is read (an app shares its connection with
        other threads), not while the suggestions are computed from what was read."""
        held = index_lock if index_lock is not None else contextlib.nullcontext()
        with self._lock:
            # The index, the access statistics (an agent's use makes a stale note live again) and the day (use fades
            # by the day) decide the queue.
            with held:
                generation = (*self.ws.manifest.generation(), _stamp(self.ws.paths.access), now.date().toordinal())
                fresh = self._cached is None or self._cached[0] != generation
                if fresh:
                    inputs, graph, self.notice = gather(self.ws, now, cache=self._vectors)
            if fresh:
                self._cached = (generation, review_queue(inputs, graph.resolver.resolve, now))
            assert self._cached is not None
            skipped = self.skipped()
            return [s for s in self._cached[1] if s.kind in kinds and skipped.get(s.id) != s.fingerprint]

    def find(self, suggestion_id: str, now: datetime) -> Suggestion:
        """The suggestion of this id in the queue; `NotFoundError` when there is none (done, skipped, or the notes
        changed so that it no longer holds)."""
        for suggestion in self.queue(now):
            if suggestion.id == suggestion_id:
                return suggestion
        raise NotFoundError(
            f"no suggestion {suggestion_id!r} in the review queue: it was applied or skipped, or its notes changed; "
            "run `companion review` for the current list"
        )

    def skipped(self) -> dict[str, str]:
        """The skipped suggestions: id to the fingerprint of their notes when skipped."""
        try:
            data = json.loads(self.ws.paths.review.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def skip(self, suggestion: Suggestion) -> None:
        """Leave a suggestion out of the queue until one of its notes changes."""
        with self._lock:  # two skips at once must not each write the file without the other's
            skipped = self.skipped()
            skipped[suggestion.id] = suggestion.fingerprint
            path = self.ws.paths.review
            private_folder(path.parent)
            write_atomic(path, json.dumps(skipped, indent=0, sort_keys=True).encode("utf-8"))

    def plan(self, suggestion: Suggestion) -> Plan:
        """The curation accepting a suggestion applies; `CurationError` for one that only points something out."""
        proposal = suggestion.proposal
        if proposal.action == "merge":
            return self.curator.plan_merge(proposal.other, proposal.path)
        if proposal.action == "supersede":
            return self.curator.plan_supersede(proposal.path, proposal.other)
        if proposal.action == "relink":
            return self.curator.plan_relink(proposal.path, proposal.value, proposal.other)
        if proposal.action == "set_type":
            return self.curator.plan_type(proposal.path, proposal.value)
        if proposal.action == "archive":
            return self.curator.plan_archive(proposal.path)
        raise CurationError(f"{suggestion.summary}: nothing to apply here; open the note and decide, or skip it")


def _stamp(path: Path) -> int:
    """When a SQLite file (with its write-ahead log) last changed, in nanoseconds; 0 when it does not exist."""
    total = 0
    for part in (path, path.with_name(path.name + "-wal")):
        with contextlib.suppress(OSError):  # no such file yet: nothing recorded
            total += part.stat().st_mtime_ns
    return total
