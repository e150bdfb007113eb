"""The curations the review queue applies: a supersede and a relink name the note so that the link finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.curation.curator import Curator
from companion.errors import CompanionError
from companion.vault.audit import AuditLog
from tests.helpers.files import write


def curator(root: Path, data: Path) -> Curator:
    return Curator(root, AuditLog(data), source="test")


def test_a_supersede_names_the_replacement_by_path_when_its_title_is_shared(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Memory/Boiler.md", "---\ntype: fact\n---\n1.5 bar.\n")
    write(root, "Memory/Boiler now.md", "---\ntype: fact\n---\n1.2 bar.\n")
    c = curator(root, tmp_path / "data")
    plan = c.plan_supersede("Memory/Boiler.md", "Memory/Boiler now.md")
    assert b'superseded_by: "[[Boiler now]]"' in plan.writes[0].content  # type: ignore[operator]
    write(root, "Garden/Boiler now.md", "A different note of the same name.\n")
    plan = c.plan_supersede("Memory/Boiler.md", "Memory/Boiler now.md")
    assert b'superseded_by: "[[Memory/Boiler now]]"' in plan.writes[0].content  # type: ignore[operator]


def test_a_supersede_or_relink_to_a_note_gone_since_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Memory/Boiler.md", "---\ntype: fact\n---\n1.5 bar, see [[Boilr now]].\n")
    c = curator(root, tmp_path / "data")
    with pytest.raises(CompanionError):
        c.plan_supersede("Memory/Boiler.md", "Memory/Boiler now.md")
    with pytest.raises(CompanionError):
        c.plan_relink("Memory/Boiler.md", "Boilr now", "Memory/Boiler now.md")


def test_a_relink_keeps_each_link_s_heading_and_alias(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Places/Chamonix.md", "A town.\n")
    write(root, "Trip.md", "We stay in [[Chamonxi#Hotels|the town]] and [[Chamonxi]]; `[[Chamonxi]]` is code.\n")
    c = curator(root, tmp_path / "data")
    plan = c.plan_relink("Trip.md", "Chamonxi", "Places/Chamonix.md")
    c.apply(plan)
    assert (root / "Trip.md").read_text(encoding="utf-8") == (
        "We stay in [[Chamonix#Hotels|the town]] and [[Chamonix]]; `[[Chamonxi]]` is code.\n"
    )
