"""NoteNames: the note a person means by a path, a title or an alias, and what to offer as they type."""

from __future__ import annotations

import pytest

from companion.errors import AmbiguousNoteError, NotFoundError
from companion.vault.naming import NoteNames

PATHS = [
    "Projects/Kitchen Renovation.md",
    "People/Ingrid Olsen.md",
    "a/Ideas.md",
    "b/Ideas.md",
    "Inbox.md",
    "attachments/plan.png",
]
ALIASES = {"People/Ingrid Olsen.md": ["Ingrid", "IO"], "Inbox.md": ["Ideas", "io"]}


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("Projects/Kitchen Renovation.md", "Projects/Kitchen Renovation.md"),
        ("Projects/Kitchen Renovation", "Projects/Kitchen Renovation.md"),
        ("projects/kitchen renovation", "Projects/Kitchen Renovation.md"),
        ("Kitchen Renovation", "Projects/Kitchen Renovation.md"),
        ("kitchen renovation.md", "Projects/Kitchen Renovation.md"),
        ("  Kitchen Renovation ", "Projects/Kitchen Renovation.md"),
        ("a/Ideas", "a/Ideas.md"),
        ("ingrid", "People/Ingrid Olsen.md"),
        ("Inbox", "Inbox.md"),
    ],
)
def test_a_path_a_title_or_an_alias_names_its_note(name: str, path: str) -> None:
    assert NoteNames(PATHS, ALIASES).find(name) == path


def test_a_shared_name_is_refused_naming_the_notes() -> None:
    names = NoteNames(PATHS, ALIASES)
    # A title comes before an alias, as in Obsidian: "Ideas" is two file names (Inbox's alias is never reached).
    with pytest.raises(AmbiguousNoteError) as caught:
        names.find("ideas")
    assert caught.value.paths == ("a/Ideas.md", "b/Ideas.md")
    assert "'a/Ideas.md', 'b/Ideas.md'" in str(caught.value) and "give the path" in str(caught.value)
    with pytest.raises(AmbiguousNoteError, match="2 notes share this alias"):
        names.find("IO")


def test_a_name_that_names_no_note_says_so_with_a_suggestion() -> None:
    names = NoteNames(PATHS, ALIASES)
    with pytest.raises(NotFoundError, match=r"Trips/Inbox\.md: no such note in the vault; did you mean 'Inbox\.md'"):
        names.find("Trips/Inbox")
    with pytest.raises(NotFoundError, match="Nowhere: no such note in the vault; give its path"):
        names.find("Nowhere")
    with pytest.raises(NotFoundError, match="give a note"):
        names.find("  ")
    with pytest.raises(NotFoundError):
        names.find("attachments/plan.png")  # not a note


def test_aliases_are_read_only_when_a_name_is_no_path_or_title() -> None:
    calls: list[int] = []

    def aliases() -> dict[str, list[str]]:
        calls.append(1)
        return ALIASES

    names = NoteNames(PATHS, aliases)
    assert names.find("Kitchen Renovation") == "Projects/Kitchen Renovation.md" and not calls
    assert names.find("Ingrid") == "People/Ingrid Olsen.md"
    assert names.find("Ingrid") == "People/Ingrid Olsen.md"
    assert calls == [1]


def test_completions_offer_titles_and_aliases_before_paths() -> None:
    offered = NoteNames(PATHS, ALIASES).completions(leave_out=["Inbox.md"])
    # Titles and aliases that name one note each; a shared one ("Ideas") only by the notes' paths.
    assert offered[:3] == ["Ingrid Olsen", "Kitchen Renovation", "Ingrid"]
    assert "Ideas" not in offered and "IO" not in offered and "Inbox" not in offered
    assert offered[3:] == ["a/Ideas.md", "b/Ideas.md", "People/Ingrid Olsen.md", "Projects/Kitchen Renovation.md"]
