"""The app's recalls: the search box's question (or none) under the knobs' policy, answered in a thread worker.

A `RecallFlow` belongs to the app, which asks it again whenever the question, the policy or the index changes. Each
recall is numbered and posts a `RecallReady`; the app shows only the newest one (a thread worker cannot be stopped
mid-way, so an older answer can arrive after a newer question). The flow also counts a note opened on purpose as
used (`AccessRecorded`). What a knob press would otherwise read again (the passages' headings, the notes changed
last) is kept per index state, so re-scoring stays within the knob's latency. `fill_warm` shows an answer in the
warm pane.
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from typing import Any

from textual.app import App

from companion.errors import CompanionError
from companion.recall.engine import Recall
from companion.recall.results import RecalledContext
from companion.retention import RetentionPolicy
from companion.tui.messages import AccessRecorded, Notice, RecallReady
from companion.workspace import Workspace
from widgets.warm_pane import WarmPane

Latest = tuple[tuple[str, str, str], ...]
"""(path, day changed, type) of the notes changed last."""


class RecallFlow:
    """Recalls for the app and records the accesses of the notes it opens, through one recall engine."""

    def __init__(
        self, app: App[Any], workspace: Workspace, lock: Any, *, as_of: dt.datetime | None, read_only: bool
    ) -> None:
        """Recall for `app` as of `as_of` (None: now); `lock` guards the workspace's shared manifest connection."""
        self.app = app
        """The app: workers and messages go through it."""
        self.workspace = workspace
        """The vault and its index."""
        self.as_of = as_of
        """The moment recalled (None: now); a replay of the past records no access."""
        self.read_only = read_only
        """Record no access."""
        self.asked = 0
        """The newest recall's number: only its answer is shown."""
        self._lock = lock
        self._engine: Recall | None = None
        self._hot_paths: frozenset[str] = frozenset()
        self._located: dict[tuple[str, str], str] = {}  # (path, anchor) to the heading of that passage
        self._located_generation: object = None  # the index state `_located` was read at
        self._latest_cache: tuple[tuple[object, int], Latest] | None = None  # see `_latest`

    def ask(self, query: str, policy: RetentionPolicy) -> None:
        """Recall `query` under `policy` in a worker (a newer question cancels what has not started)."""
        self.asked += 1
        work = partial(self._recall, self.asked, query, policy)
        self.app.run_worker(work, name="_recall", group="recall", exclusive=True, thread=True, exit_on_error=False)

    def is_newest(self, message: RecallReady) -> bool:
        """Whether `message` answers the newest question (an older one's answer is dropped)."""
        return message.asked == self.asked

    def hot_moves(self, context: RecalledContext) -> tuple[frozenset[str], frozenset[str]]:
        """The sessions that came into hot since the last recall shown (none on the first), and those that left."""
        hot_now = frozenset(s.path for s in context.sessions)
        arrived = hot_now - self._hot_paths if self._hot_paths else frozenset()
        left = self._hot_paths - hot_now
        self._hot_paths = hot_now
        return arrived, left

    def record_access(self, path: str) -> None:
        """Count one access of a note the user opened on purpose (Enter, or following a link), in a worker."""
        work = partial(self._record, path)
        self.app.run_worker(work, name="record_access", group="access", thread=True, exit_on_error=False)

    def engine(self) -> Recall:
        """The workspace's recall engine, made on first use (hold the lock around its use)."""
        if self._engine is None:
            self._engine = self.workspace.recall()
        return self._engine

    def _recall(self, asked: int, query: str, policy: RetentionPolicy) -> None:
        with self._lock:
            engine = self.engine()
            engine.policy = policy
            try:
                context = engine.recall(query, k=policy.warm_results, as_of=self.as_of)
            except CompanionError as exc:
                self.app.post_message(Notice(str(exc), title="recall failed", severity="error"))
                return
            # Under the lock too: finding a passage's heading asks the manifest (the readers' shared connection).
            headings = self._headings(engine, context, self.workspace.manifest.generation())
            latest = () if query.strip() or context.pushed_out else self._latest(policy.warm_results)
        self.app.post_message(RecallReady(asked, query, context, headings, latest))

    def _record(self, path: str) -> None:
        if self.read_only or self.as_of is not None:
            return  # a replay of the past or a read-only session records none
        with self._lock:
            engine = self.engine()
            engine.record([path])
            stats, factor = engine.use_of(path)
        self.app.post_message(AccessRecorded(path, stats, factor))

    def _latest(self, limit: int) -> Latest:
        """The notes changed last, conversations left out (hot and pushed out list those by time): the first
        screen of a vault where the policy pushed nothing out of hot (a knowledge vault with no sessions, say) still
        has something to open."""
        # Kept per index state: a knob press recalls again, and the notes changed last have not changed.
        key = (self.workspace.manifest.generation(), limit)
        if self._latest_cache is None or self._latest_cache[0] != key:
            records = self.workspace.manifest.latest_changed(limit, kinds=("memory", "note"))
            rows = tuple(
                (r.path, dt.datetime.fromtimestamp(r.mtime_ns / 1e9).strftime("%Y-%m-%d"), r.note_type or r.kind)
                for r in records
            )
            self._latest_cache = (key, rows)
        return self._latest_cache[1]

    def _headings(self, engine: Recall, context: RecalledContext, generation: object) -> dict[str, str]:
        """The heading of each scored result's best passage, read once per note and index state (a knob press
        re-scores the same notes: reading them again would cost the knob's latency)."""
        if self._located_generation != generation:
            self._located, self._located_generation = {}, generation
        out: dict[str, str] = {}
        for item in context.results:
            if item.explanation is None or not item.anchor:
                continue
            key = (item.path, item.anchor)
            if key not in self._located:
                self._located[key] = engine.locate(item).heading
            out[item.path] = self._located[key]
        return out


def fill_warm(warm: WarmPane, ready: RecallReady, left: frozenset[str]) -> None:
    """Show a recall in the warm pane: the results of a question; with none, the sessions pushed out of hot (`left`
    just did), or the notes changed last when nothing was pushed out."""
    query, context = ready.query, ready.context
    if query.strip():
        shown = context.shown(len(context.results))
        warm.show_results(
            shown, query, ready.headings, no_good_match=context.no_good_match, notice=context.short_notice
        )
    elif context.pushed_out or not ready.latest:
        warm.show_pushed_out(context.pushed_out, left)
    else:
        warm.show_notes(ready.latest, f"Warm: nothing pushed out of hot; the notes changed last ({len(ready.latest)})")
