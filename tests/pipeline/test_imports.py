"""Importing Claude Code, Codex CLI and Gemini CLI sessions as conversation notes, on copies of hand-written
transcripts in each agent's format: what is kept and left out, redaction, a second import changing nothing, a grown
transcript changing one note, a note edited by hand left alone, and damaged or huge transcripts."""

from __future__ import annotations

import errno
import json
import tracemalloc
from datetime import date
from pathlib import Path

import pytest

from companion.pipeline.imports import gemini, records
from companion.pipeline.imports import run as run_module
from companion.pipeline.imports.run import ImportReport, ImportRequest, import_sessions
from companion.vault.parse import parse_note
from indexer.chunking import Chunker
from tests.helpers.files import split_frontmatter
from tests.helpers.transcripts import SECRETS, copy_transcripts

FOLDER = "Agents/{agent}/{project}"
CLAUDE_SECRET, CODEX_SECRET, GEMINI_SECRET = SECRETS.values()
LEFT_OUT = (
    "THINKING-MARKER",
    "REDACTED-THINKING-MARKER",
    "TOOL-OUTPUT-MARKER",
    "SNAPSHOT-MARKER",
    "META-MARKER",
    "QUEUE-MARKER",
    "PROGRESS-MARKER",
    "EDIT-BODY-MARKER",
    "INSTRUCTIONS-MARKER",
    "ENVIRONMENT-MARKER",
    "DUPLICATE-MARKER",
    "REASONING-MARKER",
    "PATCH-BODY-MARKER",
    "THOUGHT-MARKER",
    "NOTICE-MARKER",
)
SOURCES = {"claude-code": "claude-code/projects", "codex": "codex/sessions", "gemini": "gemini/tmp"}


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    """A copy of every fixture transcript, so a test may grow or damage them."""
    return copy_transcripts("", tmp_path / "home")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


def run(vault: Path, agents: Path, *names: str, dry_run: bool = False, **kw: object) -> ImportReport:
    requests = [ImportRequest(n, agents / SOURCES[n], FOLDER, **kw) for n in names or SOURCES]  # type: ignore[arg-type]
    return import_sessions(vault, vault.parent / "data", requests, dry_run=dry_run)


def notes(vault: Path) -> dict[str, str]:
    return {p.relative_to(vault).as_posix(): p.read_text("utf-8") for p in sorted(vault.rglob("*.md"))}


def stamps(*roots: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


def one_note(vault: Path, agent: str) -> tuple[str, dict[str, object], str]:
    (found,) = [(path, text) for path, text in notes(vault).items() if path.startswith(f"Agents/{agent}/")]
    meta, body = split_frontmatter(found[1])
    return found[0], meta, body


def test_claude_code_session_becomes_a_conversation_note(vault: Path, agents: Path) -> None:
    report = run(vault, agents, "claude-code")
    assert report.problems == []
    path, meta, body = one_note(vault, "claude-code")
    assert path == "Agents/claude-code/ledger/2026-03-10 Ledger export rounding fix.md"  # the agent's own summary
    assert meta["type"] == "conversation" and meta["agent"] == "claude-code" and meta["project"] == "ledger"
    assert meta["cwd"] == "/home/alice/work/ledger" and meta["git_branch"] == "fix/rounding"
    assert meta["session_id"] == "1f0c2a9e-5b7d-4c1e-9a3b-2d4e6f8a0b1c"
    assert meta["model"] == "claude-opus-4-5-20251101" and meta["turns"] == 11
    assert str(meta["source"]).endswith("-home-alice-work-ledger/1f0c2a9e-5b7d-4c1e-9a3b-2d4e6f8a0b1c.jsonl")
    assert "**user:** The ledger export rounds 0.125 EUR down" in body
    assert "→ Read: /home/alice/work/ledger/src/export.py\n→ Edit: /home/alice/work/ledger/src/export.py" in body
    assert "→ Bash: pytest -q tests/test_export.py --maxfail=1 …" in body
    # Written before the Edit record but later in time: the note follows the timestamps.
    assert body.index("→ Bash:") < body.index("banker's rounding")
    summary = body.index("## Compaction summaries\n\n**summary:** This session is being continued")
    first_side = body.index("## Sub-agent agent-a7c21f\n\n**task:** List every call of round()")
    assert summary < first_side < body.index("## Sub-agent agent-b3e9d0\n\n**task:** Check that CHANGELOG.md")
    assert "**claude:** → Grep: src" in body and "/compact" not in body


def test_codex_session_becomes_a_conversation_note(vault: Path, agents: Path) -> None:
    report = run(vault, agents, "codex")
    assert report.problems == []
    path, meta, body = one_note(vault, "codex")
    assert path.startswith("Agents/codex/weather/2026-03-11 Use the key … and raise the radar tile timeout")
    assert CODEX_SECRET not in path and "REDACTED" not in path
    assert meta["session_id"] == "0199c7a2-4d1e-7b30-a5f2-8e61d4c09b37" and meta["model"] == "gpt-5-codex"
    assert meta["git_branch"] == "feature/radar" and meta["cwd"] == "/home/alice/work/weather"
    assert "[REDACTED:openai_key] and raise the radar tile timeout" in body
    for line in ("→ shell: bash -lc rg -n …", "→ shell: git diff --stat", "→ web_search: radar tile server"):
        assert line in body
    assert "**codex:** Noted: tiles-b is the fallback mirror" in body
    assert "**summary:** Radar tiles now time out after 20 seconds" in body


def test_gemini_session_becomes_a_conversation_note(vault: Path, agents: Path) -> None:
    report = run(vault, agents, "gemini")
    assert report.problems == []
    path, meta, body = one_note(vault, "gemini")
    assert path == "Agents/gemini/gemini-8876362f/2026-03-12 Garden drip irrigation plan.md"
    assert meta["session_id"] == "477739d0-1b78-4aa7-9116-02d08c952344" and meta["turns"] == 4
    assert "**user:** And for the 6 pepper plants in bed B?" in body
    assert "→ read_file: /home/alice/garden/plan.md\n→ run_shell_command: ls -la /home/alice/garden" in body


def test_nothing_left_out_or_secret_reaches_the_vault_or_the_data_dir(vault: Path, agents: Path) -> None:
    run(vault, agents)
    assert len(notes(vault)) == 3
    for path, (data, _) in stamps(vault, vault.parent / "data").items():
        for text in (*LEFT_OUT, CLAUDE_SECRET, CODEX_SECRET, GEMINI_SECRET):
            assert text.encode() not in data and text not in path, (text, path)


def test_imported_notes_are_chunked_by_turns(vault: Path, agents: Path) -> None:
    run(vault, agents)
    chunker = Chunker(lambda texts: [len(t.split()) + 2 for t in texts], window_turns=2, stride_turns=2)
    for path in vault.rglob("*.md"):
        note = parse_note(path.relative_to(vault).as_posix(), path.read_bytes())
        chunks = chunker.chunk(note)
        assert note.kind == "conversation" and all(c.anchor.startswith("t") for c in chunks)
        assert all(c.text.count("**") >= 2 for c in chunks)  # each window holds named turns


def test_importing_again_changes_no_file(vault: Path, agents: Path) -> None:
    run(vault, agents)
    before = stamps(vault, vault.parent / "data")
    report = run(vault, agents)
    assert stamps(vault, vault.parent / "data") == before
    assert report.written == [] and report.not_read == 3


def test_a_grown_transcript_changes_only_its_note(vault: Path, agents: Path) -> None:
    run(vault, agents)
    before = stamps(vault)
    (main,) = (agents / SOURCES["codex"]).rglob("rollout-*.jsonl")
    line = {
        "timestamp": "2026-03-11T15:00:00.000Z",
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Ship it Friday."}]},
    }
    with main.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    report = run(vault, agents)
    after = stamps(vault)
    changed = [p for p in after if after[p] != before.get(p)]
    assert len(changed) == 1 and "/Agents/codex/" in changed[0]
    assert "**user:** Ship it Friday." in Path(changed[0]).read_text("utf-8")
    assert [n.action for n in report.notes] == ["updated"] and report.not_read == 2


def test_a_note_edited_by_hand_is_never_overwritten(vault: Path, agents: Path) -> None:
    run(vault, agents, "gemini")
    path = vault / one_note(vault, "gemini")[0]
    edited = path.read_text("utf-8").replace("two drip lines", "three drip lines")
    path.write_text(edited, encoding="utf-8")
    (session,) = (agents / SOURCES["gemini"]).rglob("session-*.json")
    document = json.loads(session.read_text("utf-8"))
    document["messages"].append({"id": "g8", "timestamp": "2026-03-12T08:30:00Z", "type": "user", "content": "Thanks"})
    session.write_text(json.dumps(document), encoding="utf-8")
    report = run(vault, agents, "gemini")
    assert path.read_text("utf-8") == edited
    assert report.written == [] and [n.action for n in report.notes] == ["skipped"]
    assert any(str(path) in p and "edited" in p for p in report.problems)


def test_text_below_the_end_marker_and_added_properties_are_kept(vault: Path, agents: Path) -> None:
    run(vault, agents, "codex")
    path = vault / one_note(vault, "codex")[0]
    text = path.read_text("utf-8").replace("type: conversation\n", "type: conversation\ntags: [radar]\n")
    path.write_text(text + "My own note: ask Ops about tiles-c.\n", encoding="utf-8")
    (main,) = (agents / SOURCES["codex"]).rglob("rollout-*.jsonl")
    turn = {"timestamp": "2026-03-11T15:00:00Z", "type": "response_item", "payload": {"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": "Deployed."}]}}  # fmt: skip
    with main.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(turn) + "\n")
    report = run(vault, agents, "codex")
    assert [n.action for n in report.notes] == ["updated"]
    meta, body = split_frontmatter(path.read_text("utf-8"))
    assert meta["tags"] == ["radar"] and body.endswith("My own note: ask Ops about tiles-c.\n")
    assert "**codex:** Deployed." in body


def test_damaged_lines_are_named_and_the_rest_imported(vault: Path, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-home-bob-shop"
    folder.mkdir(parents=True)
    main = folder / "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f.jsonl"

    def say(kind: str, minute: int, text: str) -> str:
        record = {"type": kind, "timestamp": f"2026-03-14T10:{minute:02d}:00Z", "cwd": "/home/bob/shop",
                  "message": {"role": kind, "content": text}}  # fmt: skip
        return json.dumps(record) + "\n"

    main.write_text(
        say("user", 0, "The shop closes at 18:00 on Saturdays.")
        + "{not json at all\n"
        + json.dumps({"type": "hologram", "timestamp": "2026-03-14T10:01:00Z"})
        + "\n"
        + "[1, 2]\n"
        + say("assistant", 2, "Noted: Saturdays close at 18:00.")
        + say("user", 3, "And Sundays at 14:00.")[:40],  # the agent is still writing this line
        encoding="utf-8",
    )
    report = import_sessions(vault, tmp_path / "data", [ImportRequest("claude-code", folder, FOLDER)])
    assert f"{main}, line 2: not JSON; the line was skipped" in report.problems
    assert f"{main}, line 4: not a JSON object; the line was skipped" in report.problems
    assert any(p.startswith(f"{main}, line 3: 1 record(s) of unknown type 'hologram'") for p in report.problems)
    assert any(p.startswith(f"{main}, line 6: the last line is incomplete") for p in report.problems)
    body = one_note(vault, "claude-code")[2]
    assert "Saturdays close at 18:00" in body and "Sundays" not in body
    with main.open("a", encoding="utf-8") as handle:  # the agent finishes the line
        handle.write(say("user", 3, "And Sundays at 14:00.")[40:])
    import_sessions(vault, tmp_path / "data", [ImportRequest("claude-code", folder, FOLDER)])
    assert "**user:** And Sundays at 14:00." in one_note(vault, "claude-code")[2]


def test_a_huge_transcript_is_read_line_by_line(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "MAX_LINE_BYTES", 1024 * 1024)
    folder = tmp_path / "projects" / "-home-carol-big"
    folder.mkdir(parents=True)
    main = folder / "9a8b7c6d-0000-4000-8000-000000000001.jsonl"
    output = "x" * 200_000  # a tool's output: left out of the note, and never held whole
    with main.open("w", encoding="utf-8") as handle:
        for i in range(300):
            stamp = f"2026-03-15T{i // 60:02d}:{i % 60:02d}:00Z"
            said = {"type": "user", "timestamp": stamp, "message": {"role": "user", "content": f"step {i} done"}}
            result = {"type": "user", "timestamp": stamp, "toolUseResult": {}, "message": {"role": "user",
                      "content": [{"type": "tool_result", "tool_use_id": str(i), "content": output}]}}  # fmt: skip
            handle.write(json.dumps(said) + "\n" + json.dumps(result) + "\n")
        handle.write(json.dumps({"type": "user", "message": {"content": "y" * 2_000_000}}) + "\n")
        handle.write(json.dumps({"type": "user", "timestamp": "2026-03-15T06:00:00Z", "message": {"content": "end"}}))
    assert main.stat().st_size > 60_000_000
    tracemalloc.start()
    report = import_sessions(vault, tmp_path / "data", [ImportRequest("claude-code", folder, FOLDER)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak
    assert any(f"{main}, line 601: a record of more than" in p for p in report.problems)
    body = one_note(vault, "claude-code")[2]
    assert "**user:** step 299 done" in body and "**user:** end" in body and "xxxx" not in body


def test_an_oversized_gemini_session_is_refused_with_a_message(
    vault: Path, agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gemini, "MAX_JSON_BYTES", 1000)
    report = run(vault, agents, "gemini")
    (session,) = (agents / SOURCES["gemini"]).rglob("session-*.json")
    assert any(p.startswith(f"{session}: ") and "was not imported" in p for p in report.problems)
    assert notes(vault) == {}


def test_dry_run_writes_nothing_and_filters_apply(vault: Path, agents: Path) -> None:
    report = run(vault, agents, dry_run=True)
    assert len(report.written) == 3 and not vault.parent.joinpath("data").exists() and notes(vault) == {}
    assert len(run(vault, agents, dry_run=True, project="WEATHER").written) == 1
    assert run(vault, agents, dry_run=True, since=date(2026, 3, 12)).written == [
        "Agents/gemini/gemini-8876362f/2026-03-12 Garden drip irrigation plan.md"
    ]


def _codex_session(folder: Path, said: str, answer: str) -> None:
    """One Codex CLI session in its own format: its meta record, a user message and the agent's reply."""

    def message(role: str, kind: str, text: str, ts: str) -> dict[str, object]:
        content = [{"type": kind, "text": text}]
        return {
            "timestamp": ts,
            "type": "response_item",
            "payload": {"type": "message", "role": role, "content": content},
        }

    meta = {"id": "0199c7a2-0000-7b30-a5f2-000000000001", "timestamp": "2026-03-11T14:02:00.000Z", "cwd": "/w/atlas"}
    records = [
        {"timestamp": "2026-03-11T14:02:00.100Z", "type": "session_meta", "payload": meta},
        message("user", "input_text", said, "2026-03-11T14:02:05.000Z"),
        message("assistant", "output_text", answer, "2026-03-11T14:02:09.000Z"),
    ]
    day = folder / "2026" / "03" / "11"
    day.mkdir(parents=True)
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    (day / "rollout-2026-03-11T14-02-00-0199c7a2-0000-7b30-a5f2-000000000001.jsonl").write_text(lines, "utf-8")


def test_a_secret_across_the_cut_of_a_long_turn_is_redacted_whole(vault: Path, tmp_path: Path) -> None:
    key = "-----BEGIN PRIVATE KEY-----\n" + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 40 + "\n-----END PRIVATE KEY-----"
    said = "x " * 9_700 + key  # the key begins inside the 20,000 characters a turn keeps and ends past them
    source = tmp_path / "codex"
    _codex_session(source, said, "Noted.")
    report = import_sessions(vault, tmp_path / "data", [ImportRequest("codex", source, FOLDER)])
    assert report.problems == []
    text = "\n".join(notes(vault).values())
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in text and "BEGIN PRIVATE KEY" not in text


def test_a_long_title_in_wide_characters_still_makes_a_file_name(vault: Path, tmp_path: Path) -> None:
    source = tmp_path / "codex"
    _codex_session(source, "請" * 120 + " レーダー画像のタイルを修正する", "Done: the radar tiles are fixed.")
    report = import_sessions(vault, tmp_path / "data", [ImportRequest("codex", source, FOLDER)])
    assert report.problems == []
    (name,) = [p.name for p in vault.rglob("*.md")]
    assert name.startswith("2026-03-11 請") and len(name.encode("utf-8")) <= 255


def test_a_note_that_cannot_be_written_is_named_and_the_others_are_imported(
    vault: Path, agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = run_module.write_atomic

    def full_disk_for_codex(path: Path, data: bytes, **kw: object) -> None:
        if "/codex/" in path.as_posix():
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real_write(path, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "write_atomic", full_disk_for_codex)
    report = run(vault, agents)
    assert any("cannot write the note" in p and "Agents/codex" in p for p in report.problems), report.problems
    written = notes(vault)
    assert any(p.startswith("Agents/claude-code/") for p in written) and any(
        p.startswith("Agents/gemini/") for p in written
    )
    monkeypatch.undo()
    assert run(vault, agents).problems == []  # the session not written is imported once there is room
    assert any(p.startswith("Agents/codex/") for p in notes(vault))
