"""The wikilink graph of the selected note: what it links to, what links to it, and what lies two hops away."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode


@dataclass(frozen=True)
class Neighbourhood:
    """A note's place in the graph, as the screen hands it to the widget."""

    path: str
    """The note."""
    outlinks: tuple[tuple[str, str | None], ...]
    """(link target as written, resolved path or None when unresolved)."""
    backlinks: tuple[str, ...]
    """Notes that link to it."""
    two_hops: tuple[str, ...]
    """Notes two links away (either direction), not directly linked."""


class LinkGraph(Tree[str]):
    """A tree of the neighbourhood; choosing a note posts `LinkGraph.NoteChosen` (unresolved links are shown, dim)."""

    DEFAULT_CSS = """
    LinkGraph { height: 1fr; }
    """

    class NoteChosen(Message):
        """The user chose a note in the graph."""

        def __init__(self, path: str) -> None:
            self.path = path
            """Vault-relative path of the chosen note."""
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("graph", id=id)
        self.show_root = False

    def show(self, hood: Neighbourhood) -> None:
        """Replace the tree with one note's neighbourhood."""
        self.clear()
        self.border_title = f"Graph: {hood.path.rsplit('/', 1)[-1]}"
        out = self.root.add(f"links to ({len(hood.outlinks)})", expand=True)
        for target, resolved in hood.outlinks:
            if resolved is None:
                out.add_leaf(f"[dim]\\[\\[{target}]] (unresolved)[/dim]")
            else:
                out.add_leaf(resolved, data=resolved)
        _branch(self.root.add(f"linked from ({len(hood.backlinks)})", expand=True), hood.backlinks)
        _branch(self.root.add(f"two hops ({len(hood.two_hops)})", expand=False), hood.two_hops)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        """Report a chosen note upwards (branch labels and unresolved links carry no note)."""
        event.stop()
        if event.node.data:
            self.post_message(self.NoteChosen(event.node.data))


def _branch(node: TreeNode[str], paths: Sequence[str]) -> None:
    for path in paths:
        node.add_leaf(path, data=path)
