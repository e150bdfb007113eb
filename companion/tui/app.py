"""The terminal app: hot and warm panes with decay scores, the note view, live policy knobs and the indexer status.

The app receives its services (a `Workspace`) as an argument, so tests hand it a small real vault. Everything that
reads files, SQLite, Chroma or the model runs in thread workers, which post their results to the app as messages
(`companion.tui.messages`); widgets get data as attributes and answer with messages too. The app is composed of
parts that live in their own modules: the `IndexKeeper` (its indexer worker), the `RecallFlow` (its recalls), the
`ShownNote` (the note beside the lists) and the `CurationFlow`; `layout` builds and fits the panes, `policy` says
and saves the knobs, `keys` holds the key help and the palette. The review screen (`r`) is a screen of its own,
told of curations and index changes. One lock keeps the index's single connection to one thread at a time.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static

from companion.recall.explain import explain_lines
from companion.recall.results import RecalledContext
from companion.retention import RetentionPolicy
from companion.tui.curation import CurationFlow
from companion.tui.indexing import IndexKeeper
from companion.tui.keys import PALETTE, KeysScreen, key_sections
from companion.tui.layout import fit, panes
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
from companion.tui.policy import knob_help, save_policy
from companion.tui.recalling import RecallFlow, fill_warm
from companion.tui.review import ReviewScreen
from companion.tui.shown import ShownNote
from companion.vault.notes import Note
from companion.workspace import Workspace
from widgets.explain import ExplainDialog
from widgets.hot_pane import HotPane
from widgets.keyed_table import KeyedTable
from widgets.link_graph import LinkGraph
from widgets.note_view import NoteView
from widgets.policy_knobs import PolicyKnobs
from widgets.status_line import StatusLine
from widgets.warm_pane import WarmPane


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

    def __init__(self, workspace: Workspace, *, as_of: dt.datetime | None = None, read_only: bool = False) -> None:
        super().__init__()
        self.workspace = workspace
        """The vault, its config and its index."""
        self.read_only = read_only
        """Refuse every write (notes, the policy file, the index)."""
        self.indexing = IndexKeeper(workspace, self.post_message, read_only=read_only)
        """The indexer worker's state (caught up? how many batches?) and its stop."""
        self._index_lock = self.indexing.lock
        self.recalls = RecallFlow(self, workspace, self._index_lock, as_of=as_of, read_only=read_only)
        """Recalls in workers, only the newest shown; counts the accesses of notes opened on purpose."""
        self.shown = ShownNote(self, workspace, self._index_lock, self.recalls.record_access)
        """The note shown beside the lists, read in a worker with its link neighbourhood."""
        self.curation = CurationFlow(self, workspace, self.shown.current, self._index_lock, read_only=read_only)
        """Plans, confirms, applies and undoes curations of the note shown."""
        self.curations = 0
        """How many curations and undos the app has applied (for tests)."""
        self._reports = 0  # worker reports posted and not yet handled: `busy` until the panes show them
        self._reports_lock = threading.Lock()
        self.as_of = as_of
        """The moment the app shows (None: now); tests and replays fix it."""
        self.policy: RetentionPolicy = workspace.config.retention
        """The policy as the knobs set it (saved only on request)."""
        self.query_text = ""
        """The search box's text."""
        self.context: RecalledContext | None = None
        """The last recall shown."""
        self.refreshes = 0
        """How many recalls the panes have shown (for tests and `companion bench`)."""
        self.refreshed_at = 0.0
        """`time.perf_counter()` when the panes last finished filling (the paint follows in the next frame)."""

    def compose(self) -> ComposeResult:
        """Search box on top, hot and warm panes on the left, note view and knobs on the right."""
        yield from panes(self.policy, self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        """Lay the panes out for the terminal's size (see `layout.fit`): side by side on a wide one, else one side at
        a time (`v` switches)."""
        fit(self, event.size)

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
        self.query_one("#knob-help", Static).update(knob_help(event.knob))

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
        self.shown.reread()
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
        self.shown.curated(message, self.query_one(NoteView))
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
    def _shown_note(self) -> Note | None:
        """The note shown, once read; tests clear it to stand for a read still under way."""
        return self.shown.note

    @_shown_note.setter
    def _shown_note(self, note: Note | None) -> None:
        self.shown.note = note

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
        self.recalls.ask(self.query_text, self.policy)

    def on_access_recorded(self, message: AccessRecorded) -> None:
        """Show a note's new use in the warm pane's row (its place stays: scores never move under the user's eyes)."""
        if self._handled():
            self.query_one(WarmPane).show_use(message.path, message.stats, message.decay)

    def on_note_read(self, message: NoteRead) -> None:
        """Show a note just read, unless the user has moved on (reads of older highlights can finish late)."""
        if self._handled():
            self.shown.arrived(message, self.query_one(NoteView))

    def on_graph_read(self, message: GraphRead) -> None:
        """Show a note's link neighbourhood, unless the user has moved on."""
        if self._handled():
            self.shown.graph_arrived(message, self.query_one(LinkGraph))

    # -- showing --------------------------------------------------------------------------------

    def on_recall_ready(self, message: RecallReady) -> None:
        """Fill the panes with the newest recall."""
        if not self._handled():
            return
        if not self.recalls.is_newest(message):
            return  # a thread worker cannot be stopped mid-way: a newer question's answer is on its way
        self.indexing.first_shown.set()
        self.context = message.context
        self.refreshes += 1
        arrived, left = self.recalls.hot_moves(message.context)
        hot = self.query_one(HotPane)
        hot.show(message.context.sessions, arrived)
        if self.shown.path is None and self.focused is None and (first := hot.current_key()) is not None:
            # No pane has the focus yet (a browser tab opened in the background): the note view shows the
            # highlighted session rather than a placeholder beside it.
            self.shown.select(first)
        fill_warm(self.query_one(WarmPane), message, left)
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
        self.shown.select(event.path)

    def on_warm_pane_note_selected(self, event: WarmPane.NoteSelected) -> None:
        """Show the selected note."""
        self.shown.select(event.path)

    def on_link_graph_note_chosen(self, event: LinkGraph.NoteChosen) -> None:
        """Follow a link: show the chosen note and its own neighbourhood (a deliberate open: an access)."""
        self.shown.select(event.path)
        self.shown.opened(event.path)

    def on_keyed_table_row_opened(self, event: KeyedTable.RowOpened) -> None:
        """Enter on a row: the note is opened on purpose, which counts as an access at once."""
        self.shown.select(event.path)
        self.shown.opened(event.path)

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
        self.post_message(save_policy(self.workspace, policy))

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
        for title, help_text, action in PALETTE:
            yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))

    # -- explain --------------------------------------------------------------------------------

    def action_explain(self) -> None:
        """Show why the highlighted item has its score (or why a session is hot)."""
        path = self.shown.path
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
            ReviewScreen(self.curation.review, self.curation, self._index_lock, as_of=self.as_of), self._reviewed
        )

    def _reviewed(self, path: str | None) -> None:
        """The review closed; `o` names a note to show (looking at it counts no access: a stale note stays stale)."""
        if path is not None:
            self.shown.select(path)
            self.action_focus_pane("note")

    def action_open_in_obsidian(self) -> None:
        """Open the note in Obsidian; without a launcher, copy the link."""
        self.curation.open_in_obsidian()
