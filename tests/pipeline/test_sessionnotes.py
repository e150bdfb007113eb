"""The vault's session notes (`ops/sessions/<day>/*.md`) as a source: retain and archive move old notes into xz
archives byte for byte, redact rewrites notes in place, broken notes are named and left alone, a note changed during
a run is not touched, a crash at any step loses no note, and derived notes see the sessions' messages."""

from __future__ import annotations

import json
import lzma
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from companion.cli import main
from companion.config import parse_config
from companion.errors import ConfigError
from companion.pipeline.history import find_sources
from companion.pipeline.run import STEPS, AgentReport, process_vault
from companion.pipeline.sessionnotes import MARKDOWN_KEY, read_notes
from companion.pipeline.triggers import stat_sources
from companion.vault.audit import AuditLog
from tests.helpers.files import file_tree
from tests.helpers.history import history_config

# Session notes hold local time without a zone: the run's moment is local too.
NOW = datetime(2026, 3, 22, 12).astimezone()
SECRET_KEY = "sk-" + "A1b2C3d4" * 4
FOLDER = "ops/sessions"


def session(vault: Path, when: datetime, user: str, answer: str, newline: str = "\n") -> Path:
    path = vault / FOLDER / f"{when:%Y-%m-%d}" / f"{when:%H%M}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"date: {when:%Y-%m-%d}", f'time: "{when:%H:%M}"', "user_id: alice"]
    lines += [
        f"user_msg: {json.dumps(user)}",
        f"sentinel_msg: {json.dumps(answer)}",
        "---",
        f"Talked with alice: {user}",
    ]
    path.write_bytes((newline.join(lines) + newline).encode("utf-8"))
    return path


def sessions(vault: Path) -> list[Path]:
    return [
        session(vault, NOW - timedelta(days=10), "Book the dentist for Friday.", "Booked for 9:00."),
        session(vault, NOW - timedelta(days=9, hours=2), "What was the fee?", "Forty euros."),
        session(vault, NOW - timedelta(days=1), f"Use the key {SECRET_KEY} for the backup.", "Done."),
        session(vault, NOW - timedelta(hours=3), "We decided to move the sync to nightly runs.", "OK, nightly."),
    ]


def config(items: str) -> str:
    return history_config(items, "- session_notes: sentinel")


KEEP_3_DAYS = "    - type: archive\n      destination: ./cold\n    - type: retain\n      max_age_days: 3\n"


def run(vault: Path, yaml_text: str, **kwargs: object) -> AgentReport:
    (report,) = process_vault(vault, parse_config(yaml_text), NOW, **kwargs)  # type: ignore[arg-type]
    return report


def archived(vault: Path) -> dict[str, bytes]:
    """Each archived note's text by its path, from every archive file."""
    out: dict[str, bytes] = {}
    for path in sorted((vault / "cold").rglob("*.jsonl.xz")):
        for line in lzma.decompress(path.read_bytes()).splitlines():
            data = json.loads(line)
            out[data["id"]] = data[MARKDOWN_KEY].encode("utf-8")
    return out


def test_config_names_logs_or_session_notes() -> None:
    parsed = parse_config(config("    - type: redact\n"))
    (source,) = parsed.session_history.sources
    assert source.session_notes == "sentinel" and source.path is None
    for bad in ("    - {}\n", "    - session_notes: sentinel\n      path: ./a/{agent}.jsonl\n"):
        text = "session_history:\n  sources:\n" + bad
        with pytest.raises(ConfigError, match=r"either path .* or session_notes"):
            parse_config(text)


def test_old_notes_are_archived_byte_for_byte_and_removed(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    notes = sessions(vault)
    original = {p.relative_to(vault).as_posix(): p.read_bytes() for p in notes}
    report = run(vault, config(KEEP_3_DAYS))
    old = [p.relative_to(vault).as_posix() for p in notes[:2]]
    assert report.dropped == tuple(old) and report.kept == 2
    assert not notes[0].exists() and not notes[1].exists() and notes[2].exists() and notes[3].exists()
    assert not notes[0].parent.exists()  # the emptied day folder went too
    kept = {p.relative_to(vault).as_posix(): p.read_bytes() for p in (vault / FOLDER).rglob("*.md")}
    assert archived(vault) == {rel: original[rel] for rel in old}
    assert {**kept, **archived(vault)} == original


def test_redaction_rewrites_only_the_secret_and_keeps_line_ends(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    note = session(vault, NOW - timedelta(days=1), f"Use the key {SECRET_KEY} now.", "Done.", newline="\r\n")
    before = note.read_bytes()
    report = run(vault, config("    - type: redact\n"))
    assert report.replaced == (note.relative_to(vault).as_posix(),)
    assert note.read_bytes() == before.replace(SECRET_KEY.encode(), b"[REDACTED:openai_key]")
    assert b"\r\n" in note.read_bytes()


def test_archives_hold_redacted_notes_when_the_list_redacts(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    old = session(vault, NOW - timedelta(days=8), f"The key is {SECRET_KEY}.", "Stored.")
    run(vault, config("    - type: redact\n" + KEEP_3_DAYS))
    (text,) = archived(vault).values()
    assert not old.exists() and SECRET_KEY.encode() not in text and b"[REDACTED:openai_key]" in text


def test_broken_notes_are_named_and_left_alone(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    sessions(vault)
    broken = vault / FOLDER / "2026-03-01" / "broken.md"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"---\ndate: [\n---\nold\n")
    report = run(vault, config(KEEP_3_DAYS))
    assert broken.read_bytes() == b"---\ndate: [\n---\nold\n"
    assert any(str(broken) in p and "left as it is" in p for p in report.problems)


def test_a_note_whose_properties_are_not_valid_yaml_is_left_alone(tmp_path: Path) -> None:
    # Old enough to be dropped, and every property it needs readable line by line: still never touched.
    vault = tmp_path / "vault"
    text = (
        b'---\ndate: 2026-03-01\ntime: "10:00"\nuser_id: alice\nuser_msg: Fee?\nsentinel_msg: Paid: 40 euros\n---\nx\n'
    )
    broken = vault / FOLDER / "2026-03-01" / "1000.md"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(text)
    report = run(vault, config(KEEP_3_DAYS))
    assert broken.read_bytes() == text and not (vault / "cold").exists()
    assert any(str(broken) in p and "line 6" in p for p in report.problems)


def test_a_note_changed_during_the_run_is_left_as_it_is(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    notes = sessions(vault)

    def agent_writes(step: str) -> None:
        if step == "derived":
            with notes[0].open("ab") as handle:
                handle.write(b"A late line from the agent.\n")

    report = run(vault, config(KEEP_3_DAYS), fail_at=agent_writes)
    assert notes[0].exists() and notes[0].read_bytes().endswith(b"A late line from the agent.\n")
    assert not notes[1].exists()
    assert any(str(notes[0]) in w and "changed" in w for w in report.warnings)


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_any_step_loses_no_note(tmp_path: Path, step: str) -> None:
    vault = tmp_path / "vault"
    notes = sessions(vault)
    original = {p.relative_to(vault).as_posix(): p.read_bytes() for p in notes}

    def crash(name: str) -> None:
        if name == step:
            raise RuntimeError(f"crash after {name}")

    with pytest.raises(RuntimeError):
        run(vault, config(KEEP_3_DAYS), fail_at=crash)
    kept = {p.relative_to(vault).as_posix(): p.read_bytes() for p in (vault / FOLDER).rglob("*.md")}
    found = {**archived(vault), **kept}
    assert found == original


def test_derived_notes_see_the_sessions_messages(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    sessions(vault)
    audit = AuditLog(tmp_path / "data")
    run(vault, config("    - type: redact\n    - type: embed\n    - type: summarize\n"), audit=audit)
    day = (vault / "Memory/History/sentinel" / f"sentinel {NOW - timedelta(hours=3):%Y-%m-%d}.md").read_text("utf-8")
    assert "**user:** We decided to move the sync to nightly runs." in day and "**sentinel:** OK, nightly." in day
    summary = (vault / "Memory/Summaries/sentinel.md").read_text("utf-8")
    assert "source: ops/sessions" in summary and SECRET_KEY not in summary
    body = day.split("\n---\n", 1)[1]  # the session notes' own frontmatter is not repeated in the history note
    assert "user_id" not in body and "user_msg" not in body and "time:" not in body


def test_a_dry_run_changes_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    sessions(vault)
    before = file_tree(tmp_path)
    report = run(vault, config("    - type: redact\n" + KEEP_3_DAYS), dry_run=True)
    assert file_tree(tmp_path) == before and len(report.dropped) == 2


def test_on_write_sees_a_note_written_edited_or_removed(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    notes = sessions(vault)
    (source,) = find_sources(vault, parse_config(config(KEEP_3_DAYS)).session_history.sources)
    assert source.notes and source.agent == "sentinel"

    def stat() -> object:
        return stat_sources([source])["sentinel"]

    seen = [stat()]
    session(vault, NOW - timedelta(hours=1), "One more question.", "One more answer.")
    seen.append(stat())
    os.utime(notes[3], ns=(notes[3].stat().st_atime_ns, notes[3].stat().st_mtime_ns + 10**9))
    seen.append(stat())
    notes[2].unlink()
    seen.append(stat())
    assert len({repr(s) for s in seen}) == 4
    assert stat() == seen[-1]  # and nothing changes while nothing is written


def test_an_archived_note_is_restored_byte_for_byte_and_undone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    notes = sessions(vault)
    before = notes[0].read_bytes()
    (vault / ".companion").mkdir()
    (vault / ".companion" / "companion.yaml").write_text(config(KEEP_3_DAYS), encoding="utf-8")
    run(vault, config(KEEP_3_DAYS))
    assert not notes[0].exists()
    rel = notes[0].relative_to(vault).as_posix()
    data = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    assert main(["archives", "restore", rel, *data[:2], "--dry-run"]) == 0 and not notes[0].exists()
    assert main(["archives", "restore", rel, *data]) == 0
    assert notes[0].read_bytes() == before
    assert main(["archives", "restore", rel, *data]) == 0  # there already, unchanged: nothing to do
    assert "there already" in capsys.readouterr().out
    notes[0].write_bytes(b"edited since\n")
    assert main(["archives", "restore", rel, *data]) == 7
    assert notes[0].read_bytes() == b"edited since\n" and "left as it is" in capsys.readouterr().err
    notes[0].unlink()
    assert main(["archives", "restore", rel, *data]) == 0
    assert main(["undo", *data]) == 0
    assert not notes[0].exists()


def test_only_session_notes_can_be_restored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    log = vault / "agents" / "a" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps({"id": "x1", "ts": "2026-03-01T10:00:00+00:00", "agent": "a", "text": "hi"}) + "\n")
    text = history_config(KEEP_3_DAYS)
    (vault / ".companion").mkdir()
    (vault / ".companion" / "companion.yaml").write_text(text, encoding="utf-8")
    run(vault, text)
    assert main(["archives", "restore", "x1", "--vault", str(vault)]) == 7
    assert "history-log entry, not a session note" in capsys.readouterr().err
    assert main(["archives", "restore", "nothing-like-it", "--vault", str(vault)]) == 7


def test_session_times_are_local_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        vault = tmp_path / "vault"
        session(vault, datetime(2026, 3, 20, 9, 15), "Morning question.", "Morning answer.")
        read = read_notes(vault, vault / FOLDER, "sentinel")
        (entry,) = read.log.entries
        assert entry.ts.isoformat() == "2026-03-20T09:15:00+09:00"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_notes_out_of_the_vault_are_never_touched(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    sessions(vault)
    outside = tmp_path / "outside"
    note = session(outside, NOW - timedelta(days=20), "Elsewhere.", "Not ours.")
    (vault / FOLDER / "2026-01-01").symlink_to(note.parent)
    report = run(vault, config(KEEP_3_DAYS))
    assert note.exists() and any("leads out of the vault" in p for p in report.problems)
    bad = "sessions:\n  folder: ../outside/ops/sessions\n" + config(KEEP_3_DAYS)
    with pytest.raises(ConfigError, match="leads out of the vault"):
        process_vault(vault, parse_config(bad), NOW)
    assert note.exists()


def test_a_secret_in_a_name_or_behind_a_yaml_escape_settles_after_one_run(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    named = vault / FOLDER / f"{NOW:%Y-%m-%d}" / "call-jane.doe@example.com.md"
    named.parent.mkdir(parents=True)
    named.write_text(f'---\ndate: {NOW:%Y-%m-%d}\ntime: "10:00"\nuser_msg: "mail \\u0040 jane"\n---\nHi\n', "utf-8")
    items = "    - type: redact\n    - type: embed\n"
    run(vault, config(items))
    before = file_tree(vault)
    report = run(vault, config(items))
    assert file_tree(vault) == before and report.replaced == () and report.embeds[0].notes == ()
    history = "".join(p.read_text("utf-8") for p in (vault / "Memory").rglob("*.md"))
    assert "jane.doe@example.com" not in history and "Hi" in history


def test_symlink_loops_are_named_not_fatal(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    sessions(vault)
    loop = vault / FOLDER / "2026-01-02"
    loop.symlink_to(loop)
    note_loop = vault / FOLDER / f"{NOW - timedelta(hours=3):%Y-%m-%d}" / "loop.md"
    note_loop.symlink_to(note_loop)
    report = run(vault, config(KEEP_3_DAYS))
    assert len(report.dropped) == 2
    assert sum("loop" in p for p in report.problems) == 2


def test_a_deeply_nested_entry_is_a_bad_line_not_a_crash(tmp_path: Path) -> None:
    log = tmp_path / "vault" / "agents" / "a" / "history.jsonl"
    log.parent.mkdir(parents=True)
    deep = "[" * 600 + "]" * 600
    log.write_text(json.dumps({"id": "x", "ts": "2026-03-01T10:00:00+00:00", "agent": "a"})[:-1] + f', "d": {deep}}}\n')
    text = history_config(KEEP_3_DAYS)
    (report,) = process_vault(tmp_path / "vault", parse_config(text), NOW)
    assert report.entries == 0 and "nested too deeply" in report.problems[0]
