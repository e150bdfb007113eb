"""Curator on real vaults: every curation applies, undoes byte for byte, and refuses rather than guess."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from companion.curation.curator import CurationError, Curator, Plan, obsidian_uri
from companion.errors import CompanionError
from companion.vault.audit import AuditLog
from companion.vault.parse import parse_note
from tests.helpers import curationvault
from tests.helpers.curationvault import DROP, KEEP, curator, set_trash
from tests.helpers.files import file_tree

# Bound by assignment, not by import: a loop below names its variable `write` too, which would shadow an import.
write = curationvault.write


# -- every action applies and undoes byte for byte
# -----------------------------------------------------------------------------------------------------------------

ACTIONS: dict[str, Callable[[Curator], Plan]] = {
    "pin-plain": lambda c: c.plan_pin("Plain.md"),
    "pin-frontmatter": lambda c: c.plan_pin("Keep.md"),
    "pin-crlf": lambda c: c.plan_pin("Windows.md"),
    "pin-bom": lambda c: c.plan_pin("Bom.md"),
    "unpin": lambda c: c.plan_pin("Pinned.md", pinned=False),
    "tags": lambda c: c.plan_tags("Keep.md", ["alpha", "nested/beta"]),
    "tags-new": lambda c: c.plan_tags("Plain.md", ["alpha"]),
    "tags-clear": lambda c: c.plan_tags("Keep.md", []),
    "type": lambda c: c.plan_type("Keep.md", "fact"),
    "archive": lambda c: c.plan_archive("people/Drop.md"),
    "delete": lambda c: c.plan_delete("people/Drop.md"),
    "merge": lambda c: c.plan_merge("Keep.md", "people/Drop.md"),
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_apply_then_undo_restores_the_vault(vault: Path, data: Path, action: str) -> None:
    original = file_tree(vault)
    cur = curator(vault, data)
    plan = ACTIONS[action](cur)
    assert plan.writes
    entry = cur.apply(plan)
    changed = file_tree(vault)
    assert changed != original
    assert {c.path for c in entry.changes} == {w.path for w in plan.writes}
    for write in plan.writes:
        assert changed.get(write.path) == write.content
    undo = cur.undo()
    assert undo.undoes == entry.id
    assert undo.action == "undo"
    assert file_tree(vault) == original
    assert [e.id for e in cur.audit.entries()] == [entry.id, undo.id]
    assert cur.audit.last_undoable() is None


@pytest.mark.parametrize(
    ("option", "raw", "where"),
    [
        ("local", None, ".trash/Drop.md"),
        ("system", None, ".trash/Drop.md"),
        (None, None, ".trash/Drop.md"),
        (None, "{ not json", ".trash/Drop.md"),
        (None, '["a list"]', ".trash/Drop.md"),
        ("none", None, None),
    ],
)
def test_delete_follows_the_trash_setting_and_undoes(
    vault: Path, data: Path, option: str | None, raw: str | None, where: str | None
) -> None:
    set_trash(vault, option, raw)
    original = file_tree(vault)
    cur = curator(vault, data)
    plan = cur.plan_delete("people/Drop.md")
    assert plan.destructive
    cur.apply(plan)
    after = file_tree(vault)
    assert "people/Drop.md" not in after
    if where is None:
        assert not (vault / ".trash").exists()
        assert "for good" in plan.summary
    else:
        assert after[where] == DROP.encode()
    assert set(after) - {where} == set(original) - {"people/Drop.md"}
    cur.undo()
    assert file_tree(vault) == original


@pytest.mark.parametrize(
    ("option", "before", "after"),
    [("local", "will be moved to", "was moved to"), ("none", "will be removed", "was removed")],
)
def test_a_deletion_says_what_will_happen_before_and_what_did_after(
    vault: Path, data: Path, option: str, before: str, after: str
) -> None:
    set_trash(vault, option)
    cur = curator(vault, data)
    plan = cur.plan_delete("people/Drop.md")
    assert plan.summary.startswith(f"Delete people/Drop.md: it {before} ")
    assert "was " not in plan.summary
    entry = cur.apply(plan)
    assert entry.summary == plan.outcome and plan.outcome.startswith(f"Deleted people/Drop.md: it {after} ")
    merge = cur.plan_merge("Keep.md", "notes/Prop.md")
    assert f"; notes/Prop.md {before} " in merge.summary and merge.summary.startswith("Merge notes/Prop.md into")
    assert f"; notes/Prop.md {after} " in merge.outcome and merge.outcome.startswith("Merged notes/Prop.md into")


def test_trash_names_do_not_clash(vault: Path, data: Path) -> None:
    write(vault, ".trash/Drop.md", "older drop")
    write(vault, ".trash/Drop 1.md", "older drop 1")
    write(vault, "elsewhere/Drop.md", "another Drop")
    cur = curator(vault, data)
    cur.apply(cur.plan_delete("people/Drop.md"))
    assert (vault / ".trash" / "Drop 2.md").read_text(encoding="utf-8") == DROP
    cur.apply(cur.plan_delete("elsewhere/Drop.md"))
    assert (vault / ".trash" / "Drop 3.md").read_text(encoding="utf-8") == "another Drop"
    assert (vault / ".trash" / "Drop.md").read_text(encoding="utf-8") == "older drop"


# -- what each action writes
# -----------------------------------------------------------------------------------------------------------------


def test_pin_and_unpin_edit_only_the_property(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_pin("Plain.md")
    assert not plan.destructive
    assert plan.action == "pin"
    cur.apply(plan)
    assert (vault / "Plain.md").read_text(encoding="utf-8") == "---\npinned: true\n---\nA note without frontmatter.\n"
    cur.apply(cur.plan_pin("Plain.md", pinned=False))
    assert (vault / "Plain.md").read_text(encoding="utf-8") == "A note without frontmatter.\n"
    cur.apply(cur.plan_pin("Pinned.md", pinned=False))
    assert (vault / "Pinned.md").read_text(encoding="utf-8") == "---\ntitle: x\n---\nbody\n"


def test_crlf_and_bom_notes_keep_their_line_endings_on_pin(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    cur.apply(cur.plan_pin("Windows.md"))
    cur.apply(cur.plan_pin("Bom.md"))
    assert (vault / "Windows.md").read_bytes() == (
        b"---\r\ntitle: CRLF note\r\npinned: true\r\n---\r\nline one\r\nline two\r\n"
    )
    assert (vault / "Bom.md").read_bytes() == "\ufeff---\ntitle: BOM note\npinned: true\n---\nbody\n".encode()
    note = parse_note("Windows.md", (vault / "Windows.md").read_bytes())
    assert note.frontmatter == {"title": "CRLF note", "pinned": True}


def test_pinning_a_pinned_note_changes_nothing(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_pin("Pinned.md")
    assert plan.changes_nothing
    assert "nothing to change" in plan.summary
    with pytest.raises(CurationError, match="nothing to change"):
        cur.apply(plan)
    assert not data.exists()


def test_tags_are_validated_and_replace_the_property(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_tags("Keep.md", ["#alpha", "nested/beta", "Alpha", "ünï_code-1"])
    assert plan.action == "tag"
    cur.apply(plan)
    note = parse_note("Keep.md", (vault / "Keep.md").read_bytes())
    assert note.frontmatter["tags"] == ["alpha", "nested/beta", "ünï_code-1"]
    assert (
        (vault / "Keep.md")
        .read_text(encoding="utf-8")
        .startswith("---\ntags:\n  - alpha\n  - nested/beta\n  - ünï_code-1\naliases: [K]\n---\n")
    )
    for bad in (["two words"], [""], ["#"], ["123"], ["a,b"], ["/lead"], ["a//b"]):
        with pytest.raises(CurationError, match="tag"):
            cur.plan_tags("Keep.md", bad)
    with pytest.raises(CurationError, match="list"):
        cur.plan_tags("Keep.md", "alpha")


def test_legacy_tag_property_is_folded_into_tags(vault: Path, data: Path) -> None:
    write(vault, "Legacy.md", "---\ntag: old\nTags: older\n---\nbody\n")
    cur = curator(vault, data)
    cur.apply(cur.plan_tags("Legacy.md", ["new"]))
    assert (vault / "Legacy.md").read_text(encoding="utf-8") == "---\ntags:\n  - new\n---\nbody\n"


def test_type_is_set_and_quoted_when_needed(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    cur.apply(cur.plan_type("Plain.md", "fact"))
    assert (vault / "Plain.md").read_text(encoding="utf-8").startswith("---\ntype: fact\n---\n")
    cur.apply(cur.plan_type("Plain.md", "yes"))
    assert (vault / "Plain.md").read_text(encoding="utf-8").startswith('---\ntype: "yes"\n---\n')
    with pytest.raises(CurationError, match="one line"):
        cur.plan_type("Plain.md", "two\nlines")
    with pytest.raises(CurationError, match="one line"):
        cur.plan_type("Plain.md", "  ")


def test_archive_moves_the_note_under_the_archive_folder(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_archive("people/Drop.md")
    assert plan.destructive
    cur.apply(plan)
    assert (vault / "archive" / "people" / "Drop.md").read_text(encoding="utf-8") == DROP
    assert not (vault / "people" / "Drop.md").exists()
    with pytest.raises(CurationError, match="already in the archive"):
        cur.plan_archive("archive/people/Drop.md")


def test_archive_refuses_a_taken_destination(vault: Path, data: Path) -> None:
    write(vault, "archive/Keep.md", "an older Keep")
    with pytest.raises(CurationError, match="already exists"):
        curator(vault, data).plan_archive("Keep.md")


def test_archive_folder_can_be_chosen(vault: Path, data: Path) -> None:
    cur = Curator(vault, AuditLog(data), source="test", archive_folder="Old/Stuff/")
    cur.apply(cur.plan_archive("Keep.md"))
    assert (vault / "Old" / "Stuff" / "Keep.md").read_text(encoding="utf-8") == KEEP
    with pytest.raises(CurationError, match="archive folder"):
        Curator(vault, AuditLog(data), source="test", archive_folder="../outside")


# -- refusals: read-only, stale plans, later edits, unsafe paths
# -----------------------------------------------------------------------------------------------------------------


def test_read_only_writes_nothing(vault: Path, data: Path) -> None:
    original = file_tree(vault)
    cur = curator(vault, data, read_only=True)
    for make in ACTIONS.values():
        plan = make(cur)
        with pytest.raises(CurationError, match="read-only"):
            cur.apply(plan)
    with pytest.raises(CurationError, match="read-only"):
        cur.undo()
    assert file_tree(vault) == original
    assert not data.exists()


def test_read_only_cannot_undo_what_a_writer_did(vault: Path, data: Path) -> None:
    entry = curator(vault, data).apply(curator(vault, data).plan_pin("Plain.md"))
    before = file_tree(vault), file_tree(data)
    with pytest.raises(CurationError, match="read-only"):
        curator(vault, data, read_only=True).undo(entry.id)
    assert (file_tree(vault), file_tree(data)) == before


@pytest.mark.parametrize("action", ["pin-frontmatter", "archive", "delete", "merge"])
def test_a_plan_is_refused_when_a_file_changed_since(vault: Path, data: Path, action: str) -> None:
    cur = curator(vault, data)
    plan = ACTIONS[action](cur)
    target = next(w.path for w in plan.writes if w.expected is not None)
    (vault / target).write_text("edited in Obsidian meanwhile\n", encoding="utf-8")
    edited = file_tree(vault)
    with pytest.raises(CurationError) as caught:
        cur.apply(plan)
    assert str(caught.value).startswith(f"{target}: changed since the plan")
    assert "nothing was written" in str(caught.value)
    assert file_tree(vault) == edited
    assert not data.exists()


def test_a_plan_is_refused_when_its_destination_appeared(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_archive("Keep.md")
    write(vault, "archive/Keep.md", "made meanwhile")
    before = file_tree(vault)
    with pytest.raises(CurationError, match=re.escape("archive/Keep.md: appeared since the plan")):
        cur.apply(plan)
    assert file_tree(vault) == before


def test_a_plan_is_refused_when_its_note_vanished(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    plan = cur.plan_type("Keep.md", "fact")
    (vault / "Keep.md").unlink()
    with pytest.raises(CurationError, match=re.escape("Keep.md: was moved or deleted since the plan")):
        cur.apply(plan)


def test_undo_is_refused_after_a_later_edit(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    entry = cur.apply(cur.plan_pin("Keep.md"))
    pinned = (vault / "Keep.md").read_bytes()
    (vault / "Keep.md").write_bytes(pinned + b"A later line.\n")
    edited = file_tree(vault)
    with pytest.raises(CurationError) as caught:
        cur.undo()
    message = str(caught.value)
    assert message.startswith("Keep.md: changed after")
    assert "lose that later edit" in message and "nothing was written" in message
    assert file_tree(vault) == edited
    assert cur.audit.undone_ids() == set()
    # Once the later edit is gone, the undo goes through.
    (vault / "Keep.md").write_bytes(pinned)
    assert cur.undo(entry.id).undoes == entry.id


def test_undo_is_refused_when_a_moved_note_came_back(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    cur.apply(cur.plan_archive("Keep.md"))
    write(vault, "Keep.md", "a new Keep written meanwhile\n")
    with pytest.raises(CurationError, match=re.escape("Keep.md: changed after")):
        cur.undo()
    assert (vault / "archive" / "Keep.md").exists()


def test_undo_errors(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    with pytest.raises(CurationError, match="nothing to undo: no curation of this vault has been done yet"):
        cur.undo()
    first = cur.apply(cur.plan_pin("Plain.md"))
    second = cur.apply(cur.plan_type("Keep.md", "entity"))
    undo_second = cur.undo()
    assert undo_second.undoes == second.id
    with pytest.raises(CurationError, match="already undone"):
        cur.undo(second.id)
    with pytest.raises(CurationError, match="itself an undo"):
        cur.undo(undo_second.id)
    with pytest.raises(CurationError, match="no entry 'nope'"):
        cur.undo("nope")
    assert cur.undo().undoes == first.id
    with pytest.raises(CurationError, match="nothing to undo: every curation of this vault has been undone already"):
        cur.undo()


def test_undo_refuses_when_a_saved_copy_is_missing(vault: Path, data: Path) -> None:
    cur = curator(vault, data)
    entry = cur.apply(cur.plan_pin("Keep.md"))
    before = entry.changes[0].before
    assert before is not None
    (data / "audit" / "blobs" / before).unlink()
    pinned = file_tree(vault)
    with pytest.raises(CurationError, match="missing"):
        cur.undo()
    assert file_tree(vault) == pinned


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("../outside.md", "'..'"),
        ("/etc/passwd.md", "absolute"),
        ("notes/../Keep.md", "'..'"),
        ("./Keep.md", "plain"),
        ("", "empty"),
        (".obsidian/app.json", "hidden"),
        (".trash/Drop.md", "hidden"),
        ("attachments/pic.png", "not a note"),
        ("Missing.md", "no such note"),
        ("linked/Secret.md", "outside the vault"),
        ("Alias.md", "symbolic link"),
    ],
)
def test_unsafe_or_unusable_paths_are_refused(vault: Path, data: Path, tmp_path: Path, path: str, words: str) -> None:
    outside = tmp_path / "outside"
    write(outside, "Secret.md", "secret\n")
    os.symlink(outside, vault / "linked")
    os.symlink(vault / "Keep.md", vault / "Alias.md")
    original = file_tree(vault)
    cur = curator(vault, data)
    with pytest.raises(CurationError) as caught:
        cur.plan_pin(path)
    assert words in str(caught.value)
    assert isinstance(caught.value, CompanionError)
    assert file_tree(vault) == original
    assert (outside / "Secret.md").read_text(encoding="utf-8") == "secret\n"


def test_a_hand_made_plan_cannot_write_outside_the_vault(vault: Path, data: Path, tmp_path: Path) -> None:
    from companion.curation.curator import PlannedWrite

    cur = curator(vault, data)
    for path in ("../escape.md", "/tmp/escape.md"):
        with pytest.raises(CurationError):
            cur.apply(Plan("pin", "evil", False, (PlannedWrite(path, None, b"x"),)))
    assert not (tmp_path / "escape.md").exists()
    assert not data.exists()


def test_a_broken_note_is_refused_without_writing(vault: Path, data: Path) -> None:
    write(vault, "Broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(vault, "Latin1.md", b"caf\xe9\n")
    cur = curator(vault, data)
    with pytest.raises(CurationError, match=re.escape("Broken.md: the frontmatter does not parse")):
        cur.plan_pin("Broken.md")
    with pytest.raises(CurationError, match=re.escape("Latin1.md: is not valid UTF-8")):
        cur.plan_pin("Latin1.md")


# -- the Obsidian URI
# -----------------------------------------------------------------------------------------------------------------


def test_obsidian_uri(vault: Path) -> None:
    assert obsidian_uri(vault, "notes/Other.md") == "obsidian://open?vault=My%20Vault&file=notes%2FOther"
    assert obsidian_uri(vault, "Q&A #1.md") == "obsidian://open?vault=My%20Vault&file=Q%26A%20%231"
    assert obsidian_uri(vault, "Über.md") == "obsidian://open?vault=My%20Vault&file=%C3%9Cber"


def test_two_curations_of_one_note_at_once_never_lose_a_write(vault: Path, data: Path) -> None:
    import threading

    # Two curators (the app and the command line) plan from the same bytes and apply at the same moment: one wins,
    # the other is refused because the note changed, and the audit log holds exactly what the file holds.
    for _ in range(10):
        first, second = curator(vault, data), curator(vault, data)
        plans = [first.plan_pin("Plain.md"), second.plan_type("Plain.md", "fact")]
        outcomes: list[str] = []

        def apply(cur: Curator, plan: Plan, outcomes: list[str] = outcomes) -> None:
            try:
                cur.apply(plan)
                outcomes.append(plan.action)
            except CurationError:
                outcomes.append("refused")

        threads = [threading.Thread(target=apply, args=pair) for pair in zip((first, second), plans, strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) in (["pin", "refused"], ["refused", "type"])
        text = (vault / "Plain.md").read_text(encoding="utf-8")
        assert ("pinned: true" in text) == ("pin" in outcomes) and ("type: fact" in text) == ("type" in outcomes)
        first.undo()
        assert (vault / "Plain.md").read_text(encoding="utf-8") == "A note without frontmatter.\n"
