"""Agent writes on a real vault: typed memories, notes, dedupe, budgets, refusals, the audit log and undo."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.agent.writes import AgentWriter, WriteRefused, WriteSource
from companion.curation import guarded
from companion.curation.curator import Curator
from companion.errors import AgentInputError
from companion.vault.audit import AuditLog
from companion.workspace import Workspace
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.files import file_tree, split_frontmatter, write
from tests.helpers.workspaces import workspace

SOURCE = WriteSource("claude-code 2.1.0", model="model-7", prompt="memory-prompt v3")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    ws = workspace(write_agent_vault(tmp_path / "vault"), data_dir=tmp_path / "data")
    ws.indexer().sync()
    try:
        yield ws
    finally:
        ws.close()


def writer(ws: Workspace, **environ: str) -> AgentWriter:
    return AgentWriter(ws, SOURCE, allowed=True, environ=environ)


def test_remember_writes_a_typed_memory_that_recall_finds_and_undo_removes(ws: Workspace) -> None:
    done = writer(ws).remember(
        "fact",
        "The boiler service is booked for 14 November with Kowalski Heating.",
        confidence=0.8,
        tags=["home", "#boiler"],
        session="2026-10-01 Boiler pressure",
    )
    assert done.path == "Memory/The boiler service is booked for 14 November with Kowalski Heating.md"
    fields, body = split_frontmatter((ws.vault.root / done.path).read_text(encoding="utf-8"))
    assert fields["type"] == "fact" and fields["confidence"] == 0.8 and fields["tags"] == ["home", "boiler"]
    assert fields["source"] == "claude-code 2.1.0" and fields["created"].endswith("Z")
    assert fields["session"] == "[[Conversations/2026-10-01 Boiler pressure]]"
    assert "From [[Conversations/2026-10-01 Boiler pressure]]." in body
    assert ws.recall().recall("Kowalski Heating boiler service", k=3).results[0].path == done.path
    entry = AuditLog(ws.data_dir).find(done.entry)
    assert entry is not None and entry.source == "agent:claude-code 2.1.0" and entry.action == "remember"
    assert dict(entry.details) == {"client": "claude-code 2.1.0", "model": "model-7", "prompt": "memory-prompt v3"}
    Curator(ws.vault.root, AuditLog(ws.data_dir), source="cli").undo()
    assert not (ws.vault.root / done.path).exists()


def test_the_same_title_updates_in_place_keeping_the_other_properties(ws: Workspace) -> None:
    path = ws.vault.root / "Memory/Kitchen budget.md"
    done = writer(ws).write("Kitchen budget", "The kitchen budget is now 19,200 euros.", tags=["home"])
    assert (done.path, done.action) == ("Memory/Kitchen budget.md", "updated")
    fields, body = split_frontmatter(path.read_text(encoding="utf-8"))
    assert fields["confidence"] == 0.9 and fields["type"] == "fact" and fields["tags"] == ["home"]
    assert "updated" in fields and body == "The kitchen budget is now 19,200 euros.\n"


def test_overlapping_content_is_refused_naming_the_note_unless_asked(ws: Workspace) -> None:
    text = "user: book the chalet in Chamonix for the February ski trip\nThe chalet host is Madame Favre."
    with pytest.raises(WriteRefused) as caught:
        writer(ws).write("Chamonix chalet", text)
    assert caught.value.field == "content" and "Conversations/2026-10-05 Ski trip.md" in caught.value.reason
    assert not (ws.vault.root / "Notes/Chamonix chalet.md").exists()
    assert writer(ws).write("Chamonix chalet", text, ignore_dedupe=True).action == "created"
    assert writer(ws, AGENT_VAULT_DEDUPE="0").write("Chamonix chalet 2", text).action == "created"


def test_budgets_per_session_and_per_day(ws: Workspace, tmp_path: Path) -> None:
    config = "embedding:\n  provider: hash\nagent_writes:\n  session_budget: 2\n  daily_budget: 3\n"
    write(ws.vault.root, ".companion/companion.yaml", config)
    fresh = workspace(ws.vault.root, data_dir=ws.data_dir)
    try:
        first = AgentWriter(fresh, SOURCE, allowed=True, environ={})
        first.remember("belief", "Tom prefers trains to planes.")
        first.remember("belief", "Tom dislikes early flights.")
        with pytest.raises(WriteRefused, match="session's budget of 2"):
            first.remember("belief", "Tom likes window seats.")
        second = AgentWriter(fresh, SOURCE, allowed=True, environ={})
        second.remember("belief", "Tom likes window seats.")
        with pytest.raises(WriteRefused, match="today's budget of 3") as caught:
            second.remember("belief", "Tom reads on trains.")
        assert caught.value.field == "budget"
        # Aggressive mode allows four times as many.
        AgentWriter(fresh, SOURCE, allowed=True, environ={"AGENT_VAULT_AUTO_WRITE": "aggressive"}).remember(
            "belief", "Tom reads on trains."
        )
    finally:
        fresh.close()


def test_read_only_and_off_refuse_and_the_refusal_is_logged(ws: Workspace) -> None:
    before = file_tree(ws.vault.root)
    with pytest.raises(WriteRefused, match="read-only") as caught:
        AgentWriter(ws, SOURCE, allowed=False).remember("fact", "Anything.")
    assert caught.value.field == "mode"
    with pytest.raises(WriteRefused, match="AGENT_VAULT_AUTO_WRITE=off"):
        writer(ws, AGENT_VAULT_AUTO_WRITE="off").write("Note", "Text.")
    assert file_tree(ws.vault.root) == before
    refused = [e for e in AuditLog(ws.data_dir).entries() if e.action == "refused"]
    assert len(refused) == 2 and all(e.source == "agent:claude-code 2.1.0" for e in refused)
    assert dict(refused[0].details)["field"] == "mode"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda w: w.remember("opinion", "x"), "type"),
        (lambda w: w.remember("fact", "x", confidence=2), "confidence"),
        (lambda w: w.remember("fact", "x", confidence="high"), "confidence"),
        (lambda w: w.remember("fact", 42), "text"),
        (lambda w: w.remember("fact", "x", tags="home"), "tags"),
        (lambda w: w.remember("fact", "x", tags=["not a tag"]), "tags"),
        (lambda w: w.remember("fact", "x", session="../../etc/passwd"), "session"),
        (lambda w: w.write("Projects/Evil", "x"), "title"),
        (lambda w: w.write("..", "x"), "title"),
        (lambda w: w.write("Title\n---\nevil: true", "x"), "title"),
        (lambda w: w.write("Bad \udcff title", "x"), "title"),
        (lambda w: w.write("Note", "bad \ud800 text"), "content"),
        (lambda w: w.write("Note", "x" * (10 * 1024 * 1024)), "content"),
        (lambda w: w.write("Note", "---\ntype: admin\n---\nbody"), "content"),
        (lambda w: w.write("Note", "   "), "content"),
        (lambda w: w.write("Note", "x", folder="../outside"), "folder"),
        (lambda w: w.write("Note", "x", folder="/etc"), "folder"),
        (lambda w: w.write("Note", "x", folder=".obsidian"), "folder"),
        (lambda w: w.delete("../People/Ingrid Olsen.md"), "note"),
        (lambda w: w.delete("Nobody"), "note"),
        # Control characters (a NUL makes a note unreadable) and folders too long for the file system.
        (lambda w: w.write("Note", "before\x00after"), "content"),
        (lambda w: w.write("Note", "an escape \x1b[31m in red"), "content"),
        (lambda w: w.write("Note", "a form feed\x0c"), "content"),
        (lambda w: w.remember("fact", "a NUL \x00 in a memory"), "text"),
        (lambda w: w.write("Bell\x07 title", "text"), "title"),
        (lambda w: w.write("NUL\x00title", "text"), "title"),
        (lambda w: w.remember("fact", "text", title="Back\x08space"), "title"),
        (lambda w: w.write("Note", "text", note_type="fa\x00ct"), "type"),
        (lambda w: w.write("Note", "text", folder="Notes\x01"), "folder"),
        (lambda w: w.write("Note", "text", folder="a" * 256), "folder"),
        (lambda w: w.write("Note", "text", folder="/".join(["a" * 200] * 6)), "folder"),
    ],
)
def test_bad_proposals_name_the_field_and_write_nothing(ws: Workspace, call: Any, field: str) -> None:
    before = file_tree(ws.vault.root)
    with pytest.raises(AgentInputError) as caught:
        call(writer(ws))
    assert caught.value.field == field
    assert file_tree(ws.vault.root) == before
    assert AuditLog(ws.data_dir).entries()[-1].action == "refused"


def test_a_title_is_made_canonical_and_cannot_inject_properties(ws: Workspace) -> None:
    done = writer(ws).write('Trip: "Chamonix" [draft] #2?', "Plans for the trip to [[Nobody Here]] and [[Ingrid]].")
    assert done.path == "Notes/Trip Chamonix draft 2.md"
    assert done.unresolved == ("Nobody Here",)
    fields, _ = split_frontmatter((ws.vault.root / done.path).read_text(encoding="utf-8"))
    assert set(fields) == {"source"}


def test_an_edit_in_obsidian_at_the_same_moment_is_never_overwritten(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ws.vault.root / "Memory/Kitchen budget.md"
    real_apply = Curator.apply

    def racing(self: Curator, plan: Any, **kwargs: Any) -> Any:
        path.write_text("---\ntype: fact\n---\nThe user's own edit, saved a moment ago.\n", encoding="utf-8")
        return real_apply(self, plan, **kwargs)

    monkeypatch.setattr(Curator, "apply", racing)
    with pytest.raises(WriteRefused, match="changed since the plan was made") as caught:
        writer(ws).write("Kitchen budget", "The agent's version.")
    assert caught.value.field == "note"
    assert "The user's own edit" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("tool", ["vault_write", "vault_delete"])
def test_an_edit_as_the_agent_writes_is_kept_and_the_write_refused(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    # The note is as the agent read it until the last look before the rename; then the user adds a line.
    path = ws.vault.root / "Memory/Kitchen budget.md"
    original = path.read_bytes()
    real_check = guarded._check

    def check(held: Any, name: str, *args: Any) -> None:
        real_check(held, name, *args)
        if name == path.name:
            with path.open("ab") as note:
                note.write(b"The user's line.\n")

    monkeypatch.setattr(guarded, "_check", check)
    with pytest.raises(WriteRefused, match=r"^note: Memory/Kitchen budget\.md: changed while") as caught:
        if tool == "vault_write":
            writer(ws).write("Kitchen budget", "The agent's version.")
        else:
            writer(ws).delete("Kitchen budget")
    assert caught.value.field == "note"
    assert path.read_bytes() == original + b"The user's line.\n"
    assert not (ws.vault.root / ".trash").exists()


@pytest.mark.parametrize("spelled", ["memory", "MEMORY"])
def test_memories_and_notes_go_to_the_folder_the_vault_has_whatever_its_case(ws: Workspace, spelled: str) -> None:
    root = ws.vault.root
    (root / "Memory").rename(root / spelled)
    (root / "notes").mkdir()
    done = writer(ws).remember("fact", "The gutters were cleared on 3 March by Lee's team.")
    assert done.path == f"{spelled}/The gutters were cleared on 3 March by Lee's team.md"
    assert (root / done.path).is_file()
    written = writer(ws).write("Gutter plan", "Clear them again in the autumn.")
    assert written.path == "notes/Gutter plan.md"
    placed = writer(ws).write("Ingrid's permit", "She asked the town hall.", folder="people")
    assert placed.path == "People/Ingrid's permit.md"
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert folders == sorted(["Conversations", "People", "Projects", "notes", spelled])


def test_delete_moves_the_note_to_obsidians_trash_and_undo_brings_it_back(ws: Workspace) -> None:
    original = (ws.vault.root / "Memory/Nowak Renovations.md").read_bytes()
    done = writer(ws).delete("Nowak Renovations")
    assert done.action == "deleted" and done.moved_to == ".trash/Nowak Renovations.md"
    assert not (ws.vault.root / "Memory/Nowak Renovations.md").exists()
    Curator(ws.vault.root, AuditLog(ws.data_dir), source="cli").undo(done.entry)
    assert (ws.vault.root / "Memory/Nowak Renovations.md").read_bytes() == original


# -- names the file system takes, text every reader can read
# -----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title",
    ["漢" * 100, "😀" * 110, "é" * 101],
    ids=["100 CJK characters", "110 emoji", "101 accented letters"],
)
def test_a_title_too_long_in_bytes_is_refused_naming_the_field(ws: Workspace, title: str) -> None:
    before = file_tree(ws.vault.root)
    with pytest.raises(AgentInputError) as caught:
        writer(ws).write(title, "A note whose title is long in bytes.")
    assert caught.value.field == "title"
    assert "bytes" in caught.value.reason and "at most 200" in caught.value.reason
    assert file_tree(ws.vault.root) == before
    last = AuditLog(ws.data_dir).entries()[-1]
    assert last.action == "refused" and dict(last.details)["field"] == "title"
    with pytest.raises(AgentInputError, match="at most 200 bytes"):
        writer(ws).remember("fact", "A memory with a long title.", title=title)


def test_a_title_just_within_the_byte_limit_is_written(ws: Workspace) -> None:
    done = writer(ws).write("漢" * 66, "Sixty-six characters of three bytes: 198 bytes.")
    assert done.path == f"Notes/{'漢' * 66}.md"
    assert (ws.vault.root / done.path).is_file()


@pytest.mark.parametrize("text", ["漢" * 150, "😀" * 100, "Über " * 60], ids=["CJK", "emoji", "words"])
def test_a_title_made_from_a_memory_is_cut_to_fit(ws: Workspace, text: str) -> None:
    done = writer(ws).remember("fact", text)
    name = done.path.rsplit("/", 1)[-1]
    assert len(name.removesuffix(".md").encode("utf-8")) <= 200
    assert text.startswith(name.removesuffix(".md"))
    assert (ws.vault.root / done.path).read_text(encoding="utf-8").endswith(f"{text}\n")


def test_tabs_and_line_breaks_are_fine(ws: Workspace) -> None:
    done = writer(ws).write("Table\tof contents", "col\tcol\r\nrow\trow\n")
    assert done.path == "Notes/Table of contents.md"
    assert (ws.vault.root / done.path).read_bytes().endswith(b"col\tcol\r\nrow\trow\n")


@pytest.mark.parametrize("call", ["delete", "update"])
def test_a_folder_swapped_for_a_link_out_of_the_vault_is_refused_and_recorded(
    ws: Workspace, tmp_path: Path, call: str
) -> None:
    # The index still knows Memory/; meanwhile the folder became a link to a copy outside the vault.
    outside = tmp_path / "outside"
    (ws.vault.root / "Memory").rename(outside)
    (ws.vault.root / "Memory").symlink_to(outside)
    before = file_tree(outside)
    with pytest.raises(WriteRefused) as caught:
        if call == "delete":
            writer(ws).delete("Nowak Renovations")
        else:
            writer(ws).write("Kitchen budget", "The agent's version.", folder="Memory")
    assert caught.value.field == "note" and "outside the vault" in caught.value.reason
    assert file_tree(outside) == before
    assert not (ws.vault.root / ".trash").exists()
    assert AuditLog(ws.data_dir).entries()[-1].action == "refused"


def test_a_memory_holding_a_secret_is_never_named_by_it(ws: Workspace) -> None:
    iban = "DE89 3704 0044 0532 0130 00"
    done = writer(ws).remember("fact", f"Rent goes to {iban} every month.")
    assert "3704" not in done.path and "REDACTED" not in done.path
    assert done.path.startswith("Memory/Rent goes to")
    assert not [p for p in ws.vault.root.rglob("*") if "3704" in p.name]


def test_a_title_holding_a_secret_is_refused_naming_the_field(ws: Workspace) -> None:
    before = file_tree(ws.vault.root)
    with pytest.raises(AgentInputError) as refused:
        writer(ws).remember("fact", "The landlord's account.", title="Rent to DE89370400440532013000")
    assert refused.value.field == "title" and "secret" in str(refused.value)
    assert file_tree(ws.vault.root) == before
