"""Curations name their notes as people do: by path, by title (the file name) or by alias, refused when shared."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.curation.curator import Curator
from companion.errors import AmbiguousNoteError, CurationError, NotFoundError
from companion.vault.audit import AuditLog
from tests.helpers.files import write


@pytest.fixture
def cur(tmp_path: Path) -> Curator:
    root = tmp_path / "vault"
    write(root, "Projects/Kitchen Renovation.md", "---\naliases: [Reno]\n---\n# Kitchen Renovation\n\nTiles.\n")
    write(root, "Memory/Chalet.md", "Chalet notes.\n")
    write(root, "a/Ideas.md", "one\n")
    write(root, "b/Ideas.md", "two\n")
    return Curator(root, AuditLog(tmp_path / "data"), source="test")


@pytest.mark.parametrize(
    "name",
    [
        "Projects/Kitchen Renovation.md",
        "Projects/Kitchen Renovation",
        "Kitchen Renovation",
        "kitchen renovation",
        "reno",
    ],
)
def test_a_note_is_named_by_path_title_or_alias(cur: Curator, name: str) -> None:
    assert cur.note_named(name) == "Projects/Kitchen Renovation.md"


def test_a_merge_into_a_note_named_by_its_title(cur: Curator) -> None:
    cur.apply(cur.plan_merge(cur.note_named("Kitchen Renovation"), cur.note_named("chalet")))
    kept = (cur.root / "Projects" / "Kitchen Renovation.md").read_text(encoding="utf-8")
    assert kept.endswith("## Merged from Chalet\n\nChalet notes.\n")


def test_a_shared_or_unknown_name_is_refused(cur: Curator) -> None:
    with pytest.raises(AmbiguousNoteError, match=r"Ideas: 2 notes share this name \('a/Ideas.md', 'b/Ideas.md'\)"):
        cur.note_named("Ideas")
    with pytest.raises(NotFoundError, match="Kitchen: no such note in the vault"):
        cur.note_named("Kitchen")
    # A hidden path is not looked up: the plan refuses it, saying why.
    with pytest.raises(CurationError, match="hidden"):
        cur.plan_pin(cur.note_named(".trash/Old"))
