"""A frontmatter block that is not valid YAML: the note is read all the same, its properties line by line, and says
where the YAML broke; an edit of its properties is refused and changes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from companion.errors import CurationError, NoteError
from companion.vault.frontmatter_edit import properties, remove_field, rewrite_field, set_field
from companion.vault.parse import parse_note
from companion.vault.reader import ObsidianVault

AGENT_NOTE = """---
title: TuCRMIA
updated: 2026-08-17 iteraciones 33-35 (Storage desbloqueado · `meta` 193 · siguiente: las TRES unidades)
tags: [hub, tucrmia, crm]
---
# TuCRMIA

El CRM de la casa: clientes, facturas y la agenda del taller.
"""


def test_an_unquoted_colon_costs_the_note_nothing(tmp_path: Path) -> None:
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "x.md").write_text(AGENT_NOTE, encoding="utf-8")
    note = ObsidianVault(tmp_path).read_note("knowledge/x.md")
    assert note.frontmatter == {
        "title": "TuCRMIA",
        "updated": "2026-08-17 iteraciones 33-35 (Storage desbloqueado · `meta` 193 · siguiente: las TRES unidades)",
        "tags": ["hub", "tucrmia", "crm"],
    }
    assert note.tags == ("hub", "tucrmia", "crm")
    assert "facturas y la agenda" in note.body and note.body_line == 5
    problem = note.frontmatter_problem or ""
    assert "line 3" in problem and "mapping values are not allowed" in problem and "read line by line" in problem


def test_each_property_keeps_what_yaml_gives_it_alone() -> None:
    raw = b"""---
date: 2026-03-02
count: 12
pinned: true
broken: a: b
aliases:
  - 'Tu''s CRM'
  - "Quoted \\u00e9"
related: ["[[A, B]]", 'c', d]
folded: first part
  second: part
words: "verificar" en la UI; di "confirmar"
empty:
---
body
"""
    note = parse_note("n.md", raw)
    assert note.frontmatter == {
        "date": "2026-03-02",
        "count": 12,
        "pinned": True,
        "broken": "a: b",
        "aliases": ["Tu's CRM", "Quoted \u00e9"],
        "related": ["[[A, B]]", "c", "d"],
        "folded": "first part second: part",
        "words": '"verificar" en la UI; di "confirmar"',  # two quoted words, not one quoted string: as written
        "empty": None,
    }
    assert note.aliases == ("Tu's CRM", "Quoted \u00e9")
    assert [link.target for link in note.links if link.property] == ["A, B"]


def test_lines_naming_no_property_are_left_out_and_named() -> None:
    raw = b"---\ntitle: a: b\njust some words\n  - stray item\ntags:\n- x\n- y z\n---\nThe body stays.\n"
    note = parse_note("n.md", raw)
    assert note.frontmatter == {"title": "a: b", "tags": ["x", "y z"]}
    assert note.body == "The body stays.\n"
    assert "lines 3, 4 could not be read and were left out" in (note.frontmatter_problem or "")


@pytest.mark.parametrize(
    ("block", "line"),
    [
        (b"just text", 2),
        (b"title: x\n\x01\x02\x7f junk \x03", 3),
        (b"- a\n- b", None),
        (b"a: [\n{{{: }}}: ]", None),
    ],
)
def test_garbage_beyond_reading_still_gives_the_body(block: bytes, line: int | None) -> None:
    note = parse_note("g.md", b"---\n" + block + b"\n---\nBody words here.\n")
    assert note.body == "Body words here.\n"
    assert note.frontmatter_problem is not None
    if line is not None:
        assert f"line {line}" in note.frontmatter_problem


def test_a_valid_note_has_no_problem() -> None:
    assert parse_note("ok.md", b"---\ntitle: fine\n---\nbody\n").frontmatter_problem is None


def test_strict_reading_refuses_it_naming_the_line() -> None:
    with pytest.raises(NoteError, match="malformed YAML frontmatter at line 3: mapping values"):
        parse_note("knowledge/x.md", AGENT_NOTE.encode("utf-8"), strict=True)


def test_the_other_refusals_stay() -> None:
    with pytest.raises(NoteError, match="over the 256 KiB limit"):
        parse_note("big.md", ("---\n" + "k: v\n" * 60_000 + "---\n").encode())
    refs = ", ".join(["*a"] * 101)
    with pytest.raises(NoteError, match="alias bomb"):
        parse_note("bomb.md", f"---\nbase: &a x\nmany: [{refs}]\nbad: a: b\n---\n".encode())
    with pytest.raises(NoteError, match="not valid UTF-8"):
        parse_note("latin.md", "---\ntitle: caf\xe9: x\n---\n".encode("latin-1"))


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: set_field(text, "pinned", True, path="knowledge/x.md"),
        lambda text: set_field(text, "title", "TuCRMIA", path="knowledge/x.md"),
        lambda text: remove_field(text, "tags", path="knowledge/x.md"),
        lambda text: rewrite_field(text, "title", str.upper, "TUCRMIA", path="knowledge/x.md"),
        lambda text: properties(text, "knowledge/x.md"),
    ],
)
def test_no_property_edit_is_made_from_the_lines_read(edit: object) -> None:
    assert callable(edit)
    with pytest.raises(CurationError) as caught:
        edit(AGENT_NOTE)
    message = str(caught.value)
    assert message.startswith("knowledge/x.md: the frontmatter does not parse as YAML (line 3: mapping values")
    assert re.search(r"nothing was written", message)
