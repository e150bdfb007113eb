"""The key help (`?`, F1): the app's own keys first, then those of the pane in focus, then moving around; and the
app's commands in the command palette (ctrl+p).

Textual's help panel lists the focused widget's keys first (a table's page-left and copy before the app's search and
curations, which an 80x24 terminal then hides below the fold) and docks beside the screen, squeezing the note column
to a few letters. This screen covers the app instead, in the order a person needs the keys.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Static

Section = tuple[str, tuple[tuple[str, str], ...]]
"""A heading and its (key, what it does) lines."""

SAYS: dict[str, str] = {
    "keys": "this list of keys",
    "focus_search": "search what the agent remembers",
    "other_side": "switch between the lists and the note (narrow terminals)",
    "explain": "explain the highlighted result's score, part by part",
    "zoom": "give the focused pane the whole screen, and back",
    "undo": "undo the last curation",
    "save_policy": "save the policy knobs to the vault's config",
    "pin": "pin the note (or unpin it): it never fades",
    "merge": "merge the note into another",
    "delete": "move the note to Obsidian's trash",
    "review": "the review queue: suggested curations, one at a time",
    "retag": "set the note's tags",
    "retype": "set the note's type",
    "archive": "archive the note",
    "open_in_obsidian": "open the note in Obsidian",
    "focus_pane('hot')": "go to the hot pane (recent sessions)",
    "focus_pane('warm')": "go to the warm pane (recall's results)",
    "focus_pane('note')": "go to the note",
    "focus_pane('knobs')": "go to the policy knobs",
    "focus_pane('graph')": "go to the wikilink graph",
    "select_cursor": "open the highlighted row",
    "quit": "quit the app",
    "help_quit": "say how to quit",
}
"""What the app's own keys do, said more fully than the footer has room for."""
PANES = {
    "hot": "the hot pane",
    "warm": "the warm pane",
    "note": "the note",
    "knobs": "the policy knobs",
    "graph": "the graph",
    "search": "the search box",
}
"""How the key help names the pane in focus, by its id."""
PALETTE: tuple[tuple[str, str, str], ...] = (
    ("Pin or unpin the note", "pinned notes keep their full score whatever their age (*)", "pin"),
    ("Set the note's tags", "replace the tags property (t)", "retag"),
    ("Set the note's type", "fact, entity, decision, task... (y)", "retype"),
    ("Merge the note into another", "append its text, rewrite links to it, trash it (m)", "merge"),
    ("Archive the note", "move it to the archive folder, out of recall (a)", "archive"),
    ("Delete the note", "to Obsidian's .trash/ unless the vault says otherwise (d)", "delete"),
    ("Undo the last curation", "restore the files exactly as they were (u)", "undo"),
    ("Review the suggested curations", "near-duplicates, changed facts, broken links, missing types... (r)", "review"),
    ("Open the note in Obsidian", "through an obsidian:// link (o)", "open_in_obsidian"),
    ("Explain the score", "every part of the highlighted item's score (e)", "explain"),
    ("Save the policy", "write the knobs to .companion/companion.yaml (ctrl+s)", "save_policy"),
    ("Sort the warm pane by the next column", "s in the warm pane; S reverses", "sort_warm"),
    ("Search", "focus the search box (/)", "focus_search"),
    ("Show every key", "the keys of the app and of the focused pane (? or F1)", "keys"),
)
"""(title, help, action) of the app's commands in Textual's command palette (ctrl+p): every curation is reachable
there too, and each says its key."""
_OWN_MODULES = ("widgets.", "companion.")


def key_sections(app: App[Any], focused: Widget | None) -> list[Section]:
    """The keys `app` answers to with `focused` in focus: the app's own (those it offers at this moment), then the
    focused pane's own, then the keys Textual gives that pane for moving around. A key is listed once, where it
    first applies (the pane's own `end` over the table's, the table's cursor over the scrolling under it)."""
    taken: set[str] = set()
    if isinstance(focused, Input):
        # The search box takes letters as text: the app's letter keys do nothing there, so they are not listed.
        taken.update(chr(c) for c in range(32, 127))
        taken.update(("question_mark", "slash", "asterisk", "plus", "minus"))
    apps = [c for c in type(app).__mro__ if issubclass(c, App)]
    palette = (Binding(app.COMMAND_PALETTE_BINDING, "command_palette", "every command, by name"),)
    sections: list[Section] = [("The app", _lines(app, apps, app, taken, palette))]
    if focused is not None:
        mro = type(focused).__mro__
        own = [c for c in mro if c.__module__.startswith(_OWN_MODULES)]
        textual = [c for c in mro if not c.__module__.startswith(_OWN_MODULES)]
        name = PANES.get(focused.id or "", type(focused).__name__)
        sections.append((f"In {name}", _lines(app, own, focused, taken)))
        sections.append(("Moving around", _lines(app, textual, focused, taken)))
    return [s for s in sections if s[1]]


def _lines(
    app: App[Any], classes: list[type], node: Any, taken: set[str], extra: tuple[Binding, ...] = ()
) -> tuple[tuple[str, str], ...]:
    """The (keys, description) of the bindings these classes declare (and `extra`) that no earlier line took, one
    line per action, in declared order."""
    keys: dict[str, list[str]] = {}
    said: dict[str, str] = {}
    declared = [b for cls in classes for b in Binding.make_bindings(cls.__dict__.get("BINDINGS", ()))]
    for binding in [*declared, *extra]:
        if binding.key in taken or (node is app and app.check_action(binding.action, ()) is False):
            continue
        taken.add(binding.key)
        keys.setdefault(binding.action, []).append(app.get_key_display(binding))
        said.setdefault(binding.action, SAYS.get(binding.action, binding.description or binding.action))
    return tuple((" ".join(dict.fromkeys(k)), said[action]) for action, k in keys.items())


class KeysScreen(ModalScreen[None]):
    """Every key the app answers to at this moment, in sections; Escape, `?`, F1 or `q` close it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,f1,q", "dismiss", "close", show=False),
    ]

    DEFAULT_CSS = """
    KeysScreen { align: center middle; }
    KeysScreen > #keys-box {
        width: 78; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    KeysScreen #keys-list { height: auto; max-height: 90vh; }
    """

    def __init__(self, sections: list[Section]) -> None:
        super().__init__()
        self.sections = sections
        """What the screen lists, in order."""

    def compose(self) -> ComposeResult:
        """A box of sections, scrolling when the terminal is short."""
        with Vertical(id="keys-box") as box:
            box.border_title = "Keys"
            box.border_subtitle = "Esc closes"
            with VerticalScroll(id="keys-list"):
                yield Static(self._table(), id="keys-table")

    def on_mount(self) -> None:
        """The list takes the keys, so the arrows and Page Down scroll it."""
        self.query_one("#keys-list", VerticalScroll).focus()

    def text(self) -> str:
        """What the screen lists, as plain lines (for a test or a copy)."""
        return "\n".join(f"{head}\n" + "\n".join(f"  {k}  {d}" for k, d in lines) for head, lines in self.sections)

    def _table(self) -> Group:
        parts: list[Text | Table] = []
        for number, (heading, lines) in enumerate(self.sections):
            parts.append(Text(("\n" if number else "") + heading, style="bold underline"))
            table = Table.grid(padding=(0, 2))
            table.add_column(style="bold", no_wrap=True, min_width=6)
            table.add_column()
            for key, description in lines:
                table.add_row(key, description)
            parts.append(table)
        return Group(*parts)

    async def action_dismiss(self, result: None = None) -> None:
        """Close the key help."""
        self.dismiss(result)
