"""The terminal app: hot and warm panes with decay scores, the note view, live policy knobs and the indexer status.

The app receives its services (a `Workspace`) as an argument, so tests hand it a small real vault. Everything that
reads files, SQLite, Chroma or the model runs in thread workers, which post their results to the app as messages
(`companion.tui.messages`); widgets get data as attributes and answer with messages too. The app is composed of
two parts that live in their own modules: the `IndexKeeper` (its indexer worker) and the `CurationFlow`; the review
screen (`r`) is a screen of its own, told of curations and index changes. One lock keeps the index's single
connection to one thread at a time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, ClassVar

from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from companion.config import load_config
from companion.configedit import changed_keys, save_section
from companion.errors import CompanionError, NoteError
from companion.recall.engine import Recall
from companion.recall.explain import explain_lines
from companion.recall.results import RecalledContext
from companion.retention import RetentionPolicy
from companion.review.session import Review
from companion.tui.curation import CurationFlow
from companion.tui.indexing import IndexKeeper
from companion.tui.keys import KeysScreen, key_sections
from companion.tui.messages import (
    AccessRecorded,
    Curated,
    GraphRead,
    IndexChanged,
    IndexStatus,
    NoteRead,
    Notice,
    RecallReady,
    Report,
)
from companion.tui.review import ReviewScreen
from companion.vault.graph import VaultGraph
from companion.vault.notes import Note
from companion.workspace import Workspace
from indexer.graphs import manifest_graph
from widgets.explain import ExplainDialog
from widgets.hot_pane import HotPane
from widgets.keyed_table import KeyedTable
from widgets.link_graph import LinkGraph, Neighbourhood
from widgets.note_view import NoteView
from widgets.policy_knobs import PolicyKnobs
from widgets.status_line import StatusLine
from widgets.warm_pane import WarmPane, detail_for

WIDE = 110
"""From this many columns the lists and the note sit side by side; below, one side shows at a time."""
TALL = 32
"""Below this many rows the graph and knobs get less room (the note and the lists come first)."""
KNOBS_HINT = "p: the policy knobs (+/- change the highlighted one, ctrl+s saves them)"
"""The line under the knobs while none is highlighted."""


class CompanionApp(App[int]):
    """See, tune and curate what an agent will remember."""

    TITLE = "Vault Companion"
    CSS_PATH = "app.tcss"
    AUTO_FOCUS = "#hot"  # keys work at once; `/` goes to the search box
    BINDINGS: ClassVar[list[BindingType]] = [
        # In the footer's order, the keys that matter first: what a narrow footer cuts is still under `?`.
        Binding("question_mark,f1", "keys", "keys"),
        # Textual's own quit key, shown: at 80 columns the footer has room for it only near its start.
        Binding("ctrl+q", "quit", "quit", priority=True),
        Binding("slash", "focus_search", "search"),
        Binding("v", "other_side", "note/lists"),
        Binding("e", "explain", "explain"),
        Binding("z", "zoom", "zoom"),
        Binding("u", "undo", "undo"),
        Binding("ctrl+s", "save_policy", "save policy"),
        Binding("asterisk", "pin", "pin"),
        Binding("m", "merge", "merge"),
        Binding("d", "delete", "delete"),
        Binding("r", "review", "review", show=False),
        Binding("t", "retag", "tags", show=False),
        Binding("y", "retype", "type", show=False),
        Binding("a", "archive", "archive", show=False),
        Binding("o", "open_in_obsidian", "Obsidian", show=False),
        Binding("h", "focus_pane('hot')", "hot", show=False),
        Binding("w", "focus_pane('warm')", "warm", show=False),
        Binding("n", "focus_pane('note')", "note", show=False),
        Binding("p", "focus_pane('knobs')", "policy", show=False),
        Binding("g", "focus_pane('graph')", "graph", show=False),
    ]

    # (title, help, action) for Textual's command palette (ctrl+p); every curation is reachable there too.
    PALETTE: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("Pin or unpin the note", "pinned notes keep their full score whatever their age (*)", "pin"),
        ("Set the note's tags", "replace the tags property (t)", "retag"),
        ("Set the note's type", "fact, entity, decision, task... (y)", "retype"),
        ("Merge the note into another", "append its text, rewrite links to it, trash it (m)", "merge"),
        ("Archive the note", "move it to the archive folder, out of recall (a)", "archive"),
        ("Delete the note", "to Obsidian's .trash/ unless the vault says otherwise (d)", "delete"),
        ("Undo the last curation", "restore the files exactly as they were (u)", "undo"),
        (
            "Review the suggested curations",
            "near-duplicates, changed facts, broken links, missing types... (r)",
            "review",
        ),
        ("Open the note in Obsidian", "through an obsidian:// link (o)", "open_in_obsidian"),
        ("Explain the score", "every part of the highlighted item's score (e)", "explain"),
        ("Save the policy", "write the knobs to .companion/companion.yaml (ctrl+s)", "save_policy"),
        ("Sort the warm pane by the next column", "s in the warm pane; S reverses", "sort_warm"),
        ("Search", "focus the search box (/)", "focus_search"),
        ("Show every key", "the keys of the app and of the focused pane (? or F1)", "keys"),
    )

    def __init__(self, workspace: Workspace, *, as_of: dt.datetime | None = None, read_only: bool = False) -> None:
        super().__init__()
        self.workspace = workspace
        """The vault, its config and its index."""
        self.read_only = read_only
        """Refuse every write (notes, the policy file, the index)."""
        self.indexing = IndexKeeper(workspace, self.post_message, read_only=read_only)
        """The indexer worker's state (caught up? how many batches?) and its stop."""
        self._index_lock = self.indexing.lock
        self._shown_path: str | None = None  # the note shown: what curations act on
        self._counted: str | None = None  # the shown note's access is counted already
        self._located: dict[tuple[str, str], str] = {}  # (path, anchor) to the heading of that passage
        self._located_generation: object = None  # the index state `_located` was read at
        self._shown_note: Note | None = None
        self.curation = CurationFlow(
            self, workspace, lambda: (self._shown_path, self._shown_note), self._index_lock, read_only=read_only
        )
        """Plans, confirms, applies and undoes curations of the note shown."""
        self.curations = 0
        """How many curations and undos the app has applied (for tests)."""
        self._review: Review | None = None  # the review session: its queue is cached until the index changes
        self._review_lock = threading.Lock()
        self._reports = 0  # worker reports posted and not yet handled: `busy` until the panes show them
        self._reports_lock = threading.Lock()
        self.as_of = as_of
        """The moment the app shows (None: now); tests and replays fix it."""
        self.policy: RetentionPolicy = workspace.config.retention
        """The policy as the knobs set it (saved only on request)."""
        self.query_text = ""
        """The search box's text."""
        self._engine: Recall | None = None
        self._hot_paths: frozenset[str] = frozenset()
        self._asked = 0  # numbers each recall, so only the newest is shown
        self._graph_cache: tuple[object, VaultGraph] | None = None
        self._latest_cache: tuple[tuple[object, int], tuple[tuple[str, str, str], ...]] | None = None  # `_latest`
        self.context: RecalledContext | None = None
        """The last recall shown."""
        self.refreshes = 0
        """How many recalls the panes have shown (for tests and `companion bench`)."""
        self.refreshed_at = 0.0
        """`time.perf_counter()` when the panes last finished filling (the paint follows in the next frame)."""

    def compose(self) -> ComposeResult:
        """Search box on top, hot and warm panes on the left, note view and knobs on the right."""
        # A glyph every terminal font and the browser's have (Textual's own icon shows as a missing-glyph box there).
        yield Header(icon="●")
        yield Input(
            placeholder="search what the agent remembers (empty: what left hot, or the notes changed last)", id="search"
        )
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield HotPane(id="hot")
                yield WarmPane(id="warm", detail=detail_for(self.size.width))
            with Vertical(id="right"):
                yield NoteView(id="note")
                yield LinkGraph(id="graph")
                yield PolicyKnobs(self.policy, id="knobs")
                yield Static(KNOBS_HINT, id="knob-help")
        yield StatusLine(id="status")
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        """Lay the panes out for the terminal's size (see `app.tcss`): side by side from `WIDE` columns, else one
        side at a time (`v` switches); the knobs' and graph's share shrinks below `TALL` rows."""
        narrow = event.size.width < WIDE
        changed = narrow != self.has_class("-narrow")
        self.set_class(narrow, "-narrow")
        if changed:
            self.refresh_bindings()  # `v` comes and goes with the width
        self.set_class(event.size.height < TALL, "-short")
        with contextlib.suppress(NoMatches):  # not composed yet: compose reads the size itself
            self.query_one(WarmPane).detail = detail_for(event.size.width)

    def action_zoom(self) -> None:
        """Give the focused pane the whole screen, or give the others back."""
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is not None:
            self.screen.maximize(self.focused)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`v` only means something when one side shows at a time: elsewhere it leaves the footer."""
        return action != "other_side" or self.has_class("-narrow")

    def action_keys(self) -> None:
        """Show the key help over the app: its own keys first, then the focused pane's, then moving around."""
        if not isinstance(self.screen, KeysScreen):
            self.push_screen(KeysScreen(key_sections(self, self.focused)))

    def on_policy_knobs_knob_highlighted(self, event: PolicyKnobs.KnobHighlighted) -> None:
        """Say what the highlighted knob does and the values it takes."""
        text = RetentionPolicy.explain(event.knob) if event.knob else ""
        self.query_one("#knob-help", Static).update(f"{event.knob} {text}" if text else KNOBS_HINT)

    def action_other_side(self) -> None:
        """On a narrow terminal: show the note, graph and knobs instead of the lists, or the lists again."""
        self._show_side(details=not self.has_class("-details"))

    def _show_side(self, *, details: bool) -> None:
        self.set_class(details, "-details")
        if self.has_class("-narrow"):
            self.query_one("#note" if details else "#warm").focus()

    def on_mount(self) -> None:
        """Start the indexer's catch-up, then show the tiers."""
        self.sub_title = self.workspace.root.name
        status = self.query_one(StatusLine)
        status.mode = "read-only: the index is not written" if self.read_only else "indexer in the app"
        # The first screen comes from the index as it is; the catch-up runs after it and refreshes what changed.
        self.refresh_recall()
        self.run_worker(self.indexing.run, thread=True, exclusive=True, group="index", exit_on_error=False)

    # -- what the workers say ---------------------------------------------------------------------

    def post_message(self, message: Message) -> bool:
        """Queue a message (from any thread); a worker's `Report` counts as work under way until it is handled."""
        queued = super().post_message(message)
        if queued and isinstance(message, Report):
            with self._reports_lock:
                self._reports += 1
        return queued

    def _handled(self) -> bool:
        """Count a report as handled; False when the panes are gone (a worker's report can land while the app
        closes), so the handler leaves it."""
        with self._reports_lock:
            self._reports -= 1
        try:
            self.query_one(StatusLine)
        except NoMatches:
            return False
        return True

    def on_index_changed(self, _: IndexChanged) -> None:
        """The index changed under the panes: recall again, and show the open note as it is now."""
        if not self._handled():
            return
        self.refresh_recall()
        if self._shown_path is not None:
            self.open_note(self._shown_path, refresh=True)
        for screen in self.screen_stack:
            if isinstance(screen, ReviewScreen):
                screen.reload()

    def on_index_status(self, message: IndexStatus) -> None:
        """Show who writes the index and what it is doing."""
        if not self._handled():
            return
        status = self.query_one(StatusLine)
        if message.mode is not None:
            status.mode = message.mode
        if message.state is not None:
            status.state = message.state

    def on_notice(self, message: Notice) -> None:
        """Show a worker's message as a notification."""
        if not self._handled():
            return
        severity: Any = message.severity
        if message.timeout is None:
            self.notify(message.text, title=message.title, severity=severity)
        else:
            self.notify(message.text, title=message.title, severity=severity, timeout=message.timeout)

    def on_curated(self, message: Curated) -> None:
        """A curation landed: show the note as it is on disk now and recall again (the watcher re-indexes the files
        within a second)."""
        if not self._handled():
            return
        self.curations += 1
        self.notify(message.summary, title="undone" if message.undo else "done: u undoes it")
        shown = self._shown_path
        if shown in message.written:
            self.open_note(shown, refresh=True)
        elif shown in message.removed:
            self._shown_path = self._shown_note = None
            self.query_one(NoteView).show_message(str(shown), message.summary)
        self.refresh_recall()
        for screen in self.screen_stack:
            if isinstance(screen, ReviewScreen):
                screen.curated(message)

    @property
    def index_idle(self) -> bool:
        """The in-app indexer has caught up and waits for file events (or the app only follows another writer)."""
        return self.indexing.idle

    @property
    def indexed_batches(self) -> int:
        """How many syncs and watch batches the in-app indexer has finished (for tests)."""
        return self.indexing.batches

    @property
    def busy(self) -> bool:
        """Whether a recall, a note read or an index batch is still running (tests and the bench wait on this)."""
        working = any(w.is_running for w in self.workers if w.group != "index")
        return working or self._reports > 0 or not self.indexing.idle

    @property
    def opener(self) -> Callable[[str], bool]:
        """Opens an `obsidian://` link; tests replace it."""
        return self.curation.opener

    @opener.setter
    def opener(self, value: Callable[[str], bool]) -> None:
        self.curation.opener = value

    async def action_quit(self) -> None:
        """Quit: tell the indexer worker first, so the process does not wait for its batch."""
        self.indexing.stop()
        await super().action_quit()

    def on_unmount(self) -> None:
        """Stop the indexer worker (it checks between chunks and file events, within a fraction of a second)."""
        self.indexing.stop()

    # -- recall and notes -------------------------------------------------------------------------

    def refresh_recall(self) -> None:
        """Recall for the search box under the current policy and show it (no re-indexing)."""
        self._asked += 1
        self._recall(self._asked, self.query_text, self.policy)

    @work(thread=True, exclusive=True, group="recall", exit_on_error=False)
    def _recall(self, asked: int, query: str, policy: RetentionPolicy) -> None:
        with self._index_lock:
            engine = self._recall_engine()
            engine.policy = policy
            try:
                context = engine.recall(query, k=policy.warm_results, as_of=self.as_of)
            except CompanionError as exc:
                self.post_message(Notice(str(exc), title="recall failed", severity="error"))
                return
            # Under the lock too: finding a passage's heading asks the manifest (the readers' shared connection).
            headings = self._headings(engine, context, self.workspace.manifest.generation())
            latest = () if query.strip() or context.pushed_out else self._latest(policy.warm_results)
        self.post_message(RecallReady(asked, query, context, headings, latest))

    def _latest(self, limit: int) -> tuple[tuple[str, str, str], ...]:
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

    @work(thread=True, exclusive=True, group="note", exit_on_error=False)
    def open_note(self, path: str, *, refresh: bool = False) -> None:
        """Read and show one note (a `refresh` after a change on disk keeps the scroll and records no access)."""
        try:
            note: Note | None = self.workspace.vault.read_note(path)
            problem = ""
        except NoteError as exc:
            note, problem = None, exc.reason
        self.post_message(NoteRead(path, note, problem, refresh))
        # The session summaries' links (a stat per session, a read per changed one) are read outside the lock: the
        # reader keeps them apart from the hot tier's sessions, so recalls and knob presses never wait for them.
        sessions = self.workspace.vault.session_links()
        with self._index_lock:
            key = (self.workspace.manifest.generation(), sessions)
            stale = self._graph_cache is None or self._graph_cache[0] != key
            records = self.workspace.manifest.notes() if stale else []
        if stale:
            # The vault walk (for attachments) runs outside the lock: recalls and knob presses never wait for it.
            self._graph_cache = (key, manifest_graph(records, self.workspace.vault.scan_all(), key[1]))
        assert self._graph_cache is not None
        graph = self._graph_cache[1]
        hood = Neighbourhood(
            path=path,
            outlinks=tuple((link.target, resolved) for link, resolved in graph.outlinks(path)),
            backlinks=tuple(graph.backlinks(path)),
            two_hops=tuple(sorted(p for p, hops in graph.neighbours(path, 2).items() if hops == 2)),
        )
        self.post_message(GraphRead(hood))

    @work(thread=True, group="access", exit_on_error=False)
    def record_access(self, path: str) -> None:
        """Count one access of a note the user opened on purpose (Enter, or following a link)."""
        if self.read_only or self.as_of is not None:
            return  # a replay of the past or a read-only session records none
        with self._index_lock:
            engine = self._recall_engine()
            engine.record([path])
            stats, factor = engine.use_of(path)
        self.post_message(AccessRecorded(path, stats, factor))

    def on_access_recorded(self, message: AccessRecorded) -> None:
        """Show a note's new use in the warm pane's row (its place stays: scores never move under the user's eyes)."""
        if self._handled():
            self.query_one(WarmPane).show_use(message.path, message.stats, message.decay)

    def on_note_read(self, message: NoteRead) -> None:
        """Show a note just read, unless the user has moved on (reads of older highlights can finish late)."""
        if not self._handled():
            return
        path, note = message.path, message.note
        if path != self._shown_path:
            return
        view = self.query_one(NoteView)
        if note is None:
            self._shown_note = None
            view.show_problem(path, message.problem)
        elif not (
            message.refresh and self._shown_note is not None and self._shown_note.content_hash == note.content_hash
        ):
            self._shown_note = note
            view.show(note, keep_scroll=message.refresh)

    def on_graph_read(self, message: GraphRead) -> None:
        """Show a note's link neighbourhood, unless the user has moved on."""
        if not self._handled():
            return
        if message.hood.path == self._shown_path:
            self.query_one(LinkGraph).show(message.hood)

    def _recall_engine(self) -> Recall:
        if self._engine is None:
            self._engine = self.workspace.recall()
        return self._engine

    # -- showing --------------------------------------------------------------------------------

    def on_recall_ready(self, message: RecallReady) -> None:
        """Fill the panes with the newest recall."""
        if not self._handled():
            return
        asked, query, context = message.asked, message.query, message.context
        if asked != self._asked:
            return  # a thread worker cannot be stopped mid-way: a newer question's answer is on its way
        self.indexing.first_shown.set()
        self.context = context
        self.refreshes += 1
        hot_now = frozenset(s.path for s in context.sessions)
        arrived = hot_now - self._hot_paths if self._hot_paths else frozenset()
        left = self._hot_paths - hot_now
        self._hot_paths = hot_now
        hot = self.query_one(HotPane)
        hot.show(context.sessions, arrived)
        if self._shown_path is None and self.focused is None and (first := hot.current_key()) is not None:
            # No pane has the focus yet (a browser tab opened in the background): the note view shows the
            # highlighted session rather than a placeholder beside it.
            self._select(first)
        warm = self.query_one(WarmPane)
        if query.strip():
            shown = context.shown(len(context.results))
            warm.show_results(
                shown, query, message.headings, no_good_match=context.no_good_match, notice=context.short_notice
            )
        elif context.pushed_out or not message.latest:
            warm.show_pushed_out(context.pushed_out, left)
        else:
            warm.show_notes(
                message.latest, f"Warm: nothing pushed out of hot; the notes changed last ({len(message.latest)})"
            )
        self.refreshed_at = time.perf_counter()

    # -- events ---------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Search on Enter, then move to the results."""
        self.query_text = event.value
        self.refresh_recall()
        self.query_one(WarmPane).focus()

    def on_policy_knobs_changed(self, event: PolicyKnobs.Changed) -> None:
        """Re-partition and re-score at once under the new policy."""
        self.policy = event.policy
        self.refresh_recall()

    def on_hot_pane_session_selected(self, event: HotPane.SessionSelected) -> None:
        """Show the selected session."""
        self._select(event.path)

    def on_warm_pane_note_selected(self, event: WarmPane.NoteSelected) -> None:
        """Show the selected note."""
        self._select(event.path)

    def on_link_graph_note_chosen(self, event: LinkGraph.NoteChosen) -> None:
        """Follow a link: show the chosen note and its own neighbourhood (a deliberate open: an access)."""
        self._select(event.path)
        self._opened(event.path)

    def on_keyed_table_row_opened(self, event: KeyedTable.RowOpened) -> None:
        """Enter on a row: the note is opened on purpose, which counts as an access at once."""
        self._select(event.path)
        self._opened(event.path)

    def _select(self, path: str) -> None:
        # Refilled panes highlight their first row again; re-rendering the same note on every knob press would
        # cost more than the whole re-partition.
        if path != self._shown_path:
            self._shown_path, self._shown_note = path, None
            self._counted = None
            self.open_note(path)
            # Passing over a row, or resting on it, is not using the note: only opening it on purpose counts,
            # so browsing the warm pane never changes the scores under the user's eyes.

    def _opened(self, path: str) -> None:
        """Count the access once per showing of a note (a second Enter adds nothing)."""
        if path == self._shown_path and path != self._counted:
            self._counted = path
            self.record_access(path)

    # -- actions --------------------------------------------------------------------------------

    def action_focus_search(self) -> None:
        """Focus the search box."""
        self.query_one("#search", Input).focus()

    def action_focus_pane(self, widget_id: str) -> None:
        """Focus a pane (on a narrow terminal, showing its side first)."""
        self.set_class(widget_id in ("note", "graph", "knobs"), "-details")
        self.query_one(f"#{widget_id}").focus()

    def action_save_policy(self) -> None:
        """Write the policy to the vault's config (atomically, off the event loop); refused in read-only mode."""
        if self.read_only:
            self.notify("read-only mode: the policy was not saved", severity="warning")
            return
        self._save_policy(self.policy)

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def _save_policy(self, policy: RetentionPolicy) -> None:
        # Only the knobs whose values differ from the file's are written, on their own lines: the user's comments,
        # order and unset keys stay. An fsync of the file and its folder: seconds on a slow disk, so never on the
        # event loop.
        try:
            on_disk = load_config(self.workspace.root)
            wanted = replace(on_disk, retention=policy)
            changes = changed_keys("retention", on_disk.retention, policy)
            path = save_section(self.workspace.root, "retention", changes, wanted)
        except (OSError, CompanionError) as exc:
            self.post_message(Notice(str(exc), title="the policy was not saved", severity="error"))
            return
        self.workspace.config = replace(self.workspace.config, retention=policy)
        said = ", ".join(f"{k} {v}" for k, v in changes.items()) or "nothing had changed"
        self.post_message(Notice(f"{said} — saved to {path}", title="policy saved"))

    def action_sort_warm(self) -> None:
        """Sort the warm pane by its next column."""
        self.query_one(WarmPane).action_sort_next()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own commands, then every action of the app (ctrl+p)."""
        # Textual's own key panel is replaced by the app's key help (`?`, and "Keys" below).
        yield from (c for c in super().get_system_commands(screen) if c.title != "Keys")
        yield SystemCommand("Keys", "every key the app answers to, its own first (?)", self.action_keys)
        if isinstance(screen, ReviewScreen):
            return  # the app's actions act on the note of the main screen, which the review covers
        for title, help_text, action in self.PALETTE:
            yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))

    # -- explain --------------------------------------------------------------------------------

    def action_explain(self) -> None:
        """Show why the highlighted item has its score (or why a session is hot)."""
        path = self._shown_path
        if path is None or self.context is None:
            self.notify("highlight a session or a note first", severity="warning")
            return
        self.push_screen(ExplainDialog(path, explain_lines(self.context, path, self.policy)))

    # -- curation (the flow plans in workers, confirms, applies; `Curated` comes back) ---------------

    def action_pin(self) -> None:
        """Pin the note, or unpin it if it is pinned."""
        self.curation.pin()

    def action_retag(self) -> None:
        """Ask for the note's tags, then set them."""
        self.curation.retag()

    def action_retype(self) -> None:
        """Ask for the note's type, then set it."""
        self.curation.retype()

    def action_merge(self) -> None:
        """Ask which note this one duplicates, then merge it into that one (after a confirmation)."""
        self.curation.merge()

    def action_archive(self) -> None:
        """Move the note to the archive folder (after a confirmation)."""
        self.curation.archive()

    def action_delete(self) -> None:
        """Delete the note to the vault's trash (after a confirmation)."""
        self.curation.delete()

    def action_undo(self) -> None:
        """Undo the last curation (asking first when another session made it)."""
        self.curation.undo()

    # -- review ---------------------------------------------------------------------------------

    def action_review(self) -> None:
        """Open the review screen: the vault's suggested curations, one at a time."""
        self.push_screen(
            ReviewScreen(self._review_session, self.curation, self._index_lock, as_of=self.as_of), self._reviewed
        )

    def _review_session(self) -> Review:
        """The vault's review session, made once (in a worker: its curator looks at the vault's folder)."""
        with self._review_lock:
            if self._review is None:
                self._review = Review(self.workspace, self.curation.curator())
            return self._review

    def _reviewed(self, path: str | None) -> None:
        """The review closed; `o` names a note to show (looking at it counts no access: a stale note stays stale)."""
        if path is not None:
            self._select(path)
            self.action_focus_pane("note")

    def action_open_in_obsidian(self) -> None:
        """Open the note in Obsidian; without a launcher, copy the link."""
        self.curation.open_in_obsidian()
