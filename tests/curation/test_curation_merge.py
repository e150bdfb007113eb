"""Curator merges on real vaults: the kept note gains the text, aliases and tags, every link follows it, and a
merge that fails part way puts back what it wrote."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from companion.atomic import HeldFolder
from companion.curation import guarded
from companion.curation.curator import CurationError
from tests.helpers.curationvault import DROP, OTHER, PROP, curator, folder_tree, set_trash, write
from tests.helpers.files import file_tree


def test_merge_appends_unions_and_relinks(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_merge("Keep.md", "people/Drop.md")
    assert plan.destructive
    assert plan.action == "merge"
    cur.apply(plan)

    keep = (vault / "Keep.md").read_text(encoding="utf-8")
    assert keep == (
        "---\n"
        "tags:\n  - project\n  - idea\n"
        "aliases: [K, Drop, Dropped one]\n"  # the flow style Keep's aliases were written in
        "---\n"
        "# Keep\n\n"
        "Keep's text, about [[#Merged from Drop|Drop]] too.\n\n"  # to the merged text, not to Keep itself
        "## Merged from Drop\n\n"
        "#### Heading\n\n"  # under the section; the title heading only repeated the section's name
        "Drop's text, see [[#Heading]] and `[[Drop]]` in code.\n"
    )
    assert not (vault / "people" / "Drop.md").exists()
    assert (vault / ".trash" / "Drop.md").read_text(encoding="utf-8") == DROP
    assert (vault / "notes" / "Other.md").read_text(encoding="utf-8") == OTHER.replace(
        "[[Drop]], [[drop|shown text]], [[Drop#Heading]], ![[Drop]], [[people/Drop]], [[people/Drop.md|p]]",
        "[[Keep]], [[Keep|shown text]], [[Keep#Heading]], ![[Keep]], [[Keep]], [[Keep|p]]",
    )
    assert (vault / "notes" / "Prop.md").read_text(encoding="utf-8") == PROP.replace(
        'up: "[[Drop]]"', 'up: "[[Keep]]"'
    ).replace("[[people/Drop|the drop]]", "[[Keep|the drop]]")
    assert (vault / "Unrelated.md").read_text(encoding="utf-8") == "No links to the drop here. [[Keep]]\n"
    assert "3 notes" in plan.summary and "[[Keep]]" in plan.summary


def test_merge_into_a_root_note_whose_name_is_shared(vault: Path, data: Path) -> None:
    # A root note's path without `.md` is its name, and Obsidian's shortest-path rule picks it: `[[Keep]]` it is.
    write(vault, "elsewhere/Keep.md", "another note called Keep\n")
    cur = curator(vault, data)
    cur.apply(cur.plan_merge("Keep.md", "people/Drop.md"))
    other = (vault / "notes" / "Other.md").read_text(encoding="utf-8")
    assert other.startswith("Links: [[Keep]], [[Keep|shown text]], [[Keep#Heading]], ![[Keep]], [[Keep]], [[Keep|p]].")
    assert (vault / "elsewhere" / "Keep.md").read_text(encoding="utf-8") == "another note called Keep\n"


def test_merge_into_a_nested_note_with_a_shared_name(vault: Path, data: Path) -> None:
    write(vault, "a/Topic.md", "# A topic\n")
    write(vault, "b/Topic.md", "# B topic\n")
    write(vault, "Drop2.md", "text\n")
    write(vault, "Linker.md", "See [[Drop2]] and [[Drop2#x|y]].\n")
    cur = curator(vault, data)
    cur.apply(cur.plan_merge("b/Topic.md", "Drop2.md"))
    assert (vault / "Linker.md").read_text(encoding="utf-8") == "See [[b/Topic]] and [[b/Topic#x|y]].\n"


def test_merge_of_two_notes_sharing_a_name(vault: Path, data: Path) -> None:
    write(vault, "x/Same.md", "kept\n")
    write(vault, "y/Same.md", "dropped\n")
    write(vault, "Linker.md", "[[y/Same]] and [[x/Same]]\n")
    original = file_tree(vault)
    cur = curator(vault, data)
    cur.apply(cur.plan_merge("x/Same.md", "y/Same.md"))
    assert (vault / "Linker.md").read_text(encoding="utf-8") == "[[Same]] and [[x/Same]]\n"
    assert (vault / "x" / "Same.md").read_text(encoding="utf-8") == ("kept\n\n## Merged from Same\n\ndropped\n")
    cur.undo()
    assert file_tree(vault) == original


def test_merge_with_crlf_keep_converts_the_appended_text(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    cur.apply(cur.plan_merge("Windows.md", "Plain.md"))
    assert (vault / "Windows.md").read_bytes() == (
        b"---\r\ntitle: CRLF note\r\naliases:\r\n  - Plain\r\n---\r\nline one\r\nline two\r\n"
        b"\r\n## Merged from Plain\r\n\r\nA note without frontmatter.\r\n"
    )


def test_merge_into_itself_is_refused(vault: Path, data: Path) -> None:
    with pytest.raises(CurationError, match="itself"):
        curator(vault, data).plan_merge("Keep.md", "Keep.md")


def test_merge_with_a_delete_setting_of_none(vault: Path, data: Path) -> None:
    set_trash(vault, "none")
    original = file_tree(vault)
    cur = curator(vault, data)
    cur.apply(cur.plan_merge("Keep.md", "people/Drop.md"))
    assert not (vault / ".trash").exists()
    cur.undo()
    assert file_tree(vault) == original


def test_a_failed_write_puts_back_what_was_written(vault: Path, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The move into the trash fails (the disk gives an error) after Keep.md and the relinked notes were written: they
    # are put back and `.trash/`, made for the move, is removed.
    def failing_disk(src: HeldFolder, name: str, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "Input/output error", name)

    monkeypatch.setattr(guarded, "move", failing_disk)
    original, folders = file_tree(vault), folder_tree(vault)
    cur = curator(vault, data)
    plan = cur.plan_merge("Keep.md", "people/Drop.md")
    with pytest.raises(CurationError, match=r"^people/Drop\.md: could not be moved \(Input/output error\); .*put back"):
        cur.apply(plan)
    assert file_tree(vault) == original
    assert folder_tree(vault) == folders
    assert cur.audit.entries() == []


def test_merge_keeps_table_escapes_spacing_and_block_links(vault: Path, data: Path) -> None:
    write(vault, "Table.md", "| a | b |\n| - | - |\n| [[Drop\\|x]] | [[ Drop ]] |\n\nSee [[Drop#^block1]].\n")
    cur = curator(vault, data)
    cur.apply(cur.plan_merge("Keep.md", "people/Drop.md"))
    assert (vault / "Table.md").read_text(encoding="utf-8") == (
        "| a | b |\n| - | - |\n| [[Keep\\|x]] | [[ Keep ]] |\n\nSee [[Keep#^block1]].\n"
    )


def test_merge_refuses_a_link_in_a_nested_property(vault: Path, data: Path) -> None:
    write(vault, "Nested.md", '---\nsource:\n  from: "[[Drop]]"\n---\nbody\n')
    original = file_tree(vault)
    with pytest.raises(CurationError, match=r"Nested\.md: the property 'source'"):
        curator(vault, data).plan_merge("Keep.md", "people/Drop.md")
    assert file_tree(vault) == original


def test_a_failed_record_puts_back_what_was_written(vault: Path, data: Path) -> None:
    # The log's name is taken by a folder: the files are written, then the record fails.
    (data / "audit" / "log.jsonl").mkdir(parents=True)
    original = file_tree(vault)
    cur = curator(vault, data)
    with pytest.raises(CurationError, match="cannot record the change"):
        cur.apply(cur.plan_merge("Keep.md", "people/Drop.md"))
    assert file_tree(vault) == original
