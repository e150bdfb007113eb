"""The `embed` processor's history notes on real files: one note per day, redacted first, status replies left out,
entries kept after `retain` drops them, re-rendered after redaction, the user's text and notes left alone, a note
edited during a run not overwritten, bad lines redacted in the log, dry runs, the audit record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.audit import AuditLog
from companion.config import parse_config
from companion.errors import ConfigError
from companion.history import parse_entry, serialize
from companion.parse import parse_note
from companion.pipeline import AgentReport, process_vault
from companion.transcripts import END_MARKER, render_entry, turns
from tests.conftest import file_tree, split_frontmatter

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
SECRET_KEY = "sk-" + "A1b2C3d4" * 4
EMAIL = "jane.doe@example.com"
FOLDER = Path("Memory/History/trader")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_VAULT_AUTO_WRITE", raising=False)


def entry(i: int, when: datetime, **fields: object) -> bytes:
    return serialize({"id": f"e{i}", "ts": when.isoformat(), "agent": "trader", **fields})


def write_log(vault: Path, lines: list[bytes]) -> Path:
    path = vault / "agents" / "trader" / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def config(items: str = "    - type: embed\n") -> str:
    return "session_history:\n  sources:\n    - path: ./agents/{agent}/history.jsonl\n  processors:\n" + items


def run(vault: Path, yaml_text: str, now: datetime = NOW, **kwargs: object) -> AgentReport:
    (report,) = process_vault(vault, parse_config(yaml_text), now, **kwargs)  # type: ignore[arg-type]
    return report


def day_notes(vault: Path) -> dict[str, str]:
    folder = vault / FOLDER
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))} if folder.exists() else {}


def conversation(vault: Path) -> list[bytes]:
    day1 = datetime(2026, 3, 20, 9, tzinfo=UTC)
    day2 = datetime(2026, 3, 21, 15, tzinfo=UTC)
    return [
        entry(0, day1, role="user", content=f"Plan the ACME trade; my key is {SECRET_KEY}"),
        entry(1, day1 + timedelta(minutes=1), role="assistant", content="We hold ACME until the earnings call."),
        entry(
            2,
            day1 + timedelta(minutes=9),
            request={"messages": [{"role": "user", "content": "poll"}]},
            response="HEARTBEAT_OK",
        ),
        entry(3, day2, role="user", content=f"Send the report to {EMAIL}"),
    ]


def test_one_note_per_day_redacted_with_status_replies_left_out(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    report = run(vault, config("    - type: embed\n    - type: redact\n"))
    notes = day_notes(vault)
    assert sorted(notes) == ["trader 2026-03-20", "trader 2026-03-21"]
    first = notes["trader 2026-03-20"]
    fields, body = split_frontmatter(first)
    assert fields["type"] == "history" and fields["agent"] == "trader" and fields["entries"] == 2
    assert fields["source"] == "agents/trader/history.jsonl" and str(fields["date"]) == "2026-03-20"
    assert "**user:** Plan the ACME trade; my key is [REDACTED:openai_key]" in body
    assert "**assistant:** We hold ACME until the earnings call." in body
    assert "NO_REPLY" not in first and "poll" not in first
    assert SECRET_KEY not in first and EMAIL not in notes["trader 2026-03-21"]
    assert body.rstrip().endswith(END_MARKER)
    (embed,) = report.embeds
    assert embed.entries == 3 and embed.status == 1
    assert [n.written for n in embed.notes] == [True, True]
    assert report.embedded == tuple(vault / FOLDER / f"{n}.md" for n in sorted(notes))


def test_each_entry_is_a_section_of_its_own_for_the_indexer(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    run(vault, config())
    path = vault / FOLDER / "trader 2026-03-20.md"
    note = parse_note(path.relative_to(vault).as_posix(), path.read_bytes())
    assert note.kind == "note" and note.note_type == "history"
    headings = [line for line in note.body.splitlines() if line.startswith("## ")]
    assert headings == ["## 09:00:00 e0", "## 09:01:00 e1"]


def test_a_second_run_with_nothing_new_writes_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    run(vault, config())
    before = file_tree(vault)
    report = run(vault, config())
    assert file_tree(vault) == before
    assert report.embeds[0].notes == () and report.embedded == ()


def test_entries_dropped_by_retain_stay_in_their_note(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    log = write_log(vault, conversation(vault))
    items = (
        "    - type: embed\n    - type: archive\n      destination: ./cold\n    - type: retain\n      max_age_days: 1\n"
    )
    report = run(vault, config(items))
    assert report.dropped == ("e0", "e1", "e2")
    assert b'"e0"' not in log.read_bytes()
    # New entries of the same day later: the note keeps the dropped ones and gains the new one, in time order.
    late = entry(9, datetime(2026, 3, 20, 23, tzinfo=UTC), role="assistant", content="Sold half of ACME at the close.")
    with log.open("ab") as handle:
        handle.write(late + b"\n")
    report = run(vault, config("    - type: embed\n"), now=NOW)
    text = day_notes(vault)["trader 2026-03-20"]
    assert text.index("e0") < text.index("e1") < text.index("Sold half of ACME")
    assert report.embeds[0].notes[0].added == 1 and report.embeds[0].notes[0].entries == 3


def test_a_note_written_before_redaction_loses_the_secret_on_the_next_run(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    run(vault, config())
    assert SECRET_KEY in day_notes(vault)["trader 2026-03-20"]
    run(vault, config("    - type: redact\n    - type: embed\n"))
    assert SECRET_KEY not in day_notes(vault)["trader 2026-03-20"]


def test_the_users_text_and_properties_are_kept(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    log = write_log(vault, conversation(vault))
    run(vault, config())
    path = vault / FOLDER / "trader 2026-03-20.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace("generated_by: embed-v1\n", "generated_by: embed-v1\ntags: [trading]\n")
    path.write_text(text + "My note: check the ACME fill price.\n", encoding="utf-8")
    with log.open("ab") as handle:
        handle.write(entry(7, datetime(2026, 3, 20, 18, tzinfo=UTC), role="user", content="And the fee?") + b"\n")
    run(vault, config())
    fields, body = split_frontmatter(path.read_text(encoding="utf-8"))
    assert fields["tags"] == ["trading"] and fields["entries"] == 3
    assert body.endswith(END_MARKER + "\nMy note: check the ACME fill price.\n")
    assert "**user:** And the fee?" in body


def test_a_note_not_made_by_the_processor_is_left_alone(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    mine = vault / FOLDER / "trader 2026-03-20.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# My own notes of that day\n", encoding="utf-8")
    report = run(vault, config())
    assert mine.read_text(encoding="utf-8") == "# My own notes of that day\n"
    assert any(str(mine) in w and "not made by the embed processor" in w for w in report.warnings)
    assert "trader 2026-03-21" in day_notes(vault)


def test_a_note_edited_during_the_run_is_not_overwritten(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    log = write_log(vault, conversation(vault))
    run(vault, config())
    path = vault / FOLDER / "trader 2026-03-20.md"
    with log.open("ab") as handle:
        handle.write(entry(8, datetime(2026, 3, 20, 20, tzinfo=UTC), role="user", content="Anything new?") + b"\n")

    def edit_now(step: str) -> None:
        # The run has computed the note's new text; the user saves an edit before it is written.
        if step == "derived":
            path.write_text(path.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")

    report = run(vault, config(), fail_at=edit_now)
    assert path.read_text(encoding="utf-8").endswith("edited by hand\n")
    assert any(str(path) in w and "changed while the run was working" in w for w in report.warnings)
    assert report.embedded == ()


def test_auto_write_off_derives_nothing_and_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    before = file_tree(tmp_path)
    report = run(vault, config(), environ={"AGENT_VAULT_AUTO_WRITE": "off"})
    assert file_tree(tmp_path) == before and report.embeds[0].reason is not None
    report = run(vault, config(), dry_run=True)
    assert file_tree(tmp_path) == before
    assert [n.day for n in report.embeds[0].notes] == ["2026-03-20", "2026-03-21"]


def test_the_run_is_in_the_audit_log(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    audit = AuditLog(tmp_path / "data")
    run(vault, config(), audit=audit)
    (record,) = audit.entries()
    assert record.action == "embed" and "2 history notes" in record.summary
    assert sorted(c.path for c in record.changes) == [
        f"{FOLDER}/trader 2026-03-20.md",
        f"{FOLDER}/trader 2026-03-21.md",
    ]


def test_bad_lines_keep_their_place_but_not_their_secrets(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    bad = b'{"id": "x", "ts": "2026-03-20T10:00:00", "agent": "trader", "text": "key ' + SECRET_KEY.encode() + b'"}'
    broken = b"not json at all, mail " + EMAIL.encode()
    log = write_log(vault, [*conversation(vault), bad, broken])
    report = run(vault, config("    - type: redact\n"))
    lines = log.read_bytes().splitlines()
    assert report.redacted_lines == (5, 6)
    assert lines[4] == bad.replace(SECRET_KEY.encode(), b"[REDACTED:openai_key]")
    assert lines[5] == b"not json at all, mail [REDACTED:email]"
    assert len(report.problems) == 2  # still reported as bad lines


def test_long_entries_are_cut_and_odd_text_stays_plain() -> None:
    raw = serialize(
        {
            "id": "e1",
            "ts": "2026-03-20T09:00:00+00:00",
            "agent": "trader",
            "messages": [{"role": "user", "content": "# not a heading\n\n%% not a comment %%"}],
            "output": "x" * 5000,
        }
    )
    text = render_entry(parse_entry(raw), max_chars=300)
    assert "**user:** \\# not a heading\n\\%% not a comment %%" in text
    assert "more characters are in the log" in text and len(text) < 700
    assert turns({"role": "tool", "content": [{"type": "text", "text": "done"}]}) == [("tool", "done")]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("    - type: embed\n      output: History/{agent}.md\n", "output must contain {date}"),
        ("    - type: embed\n      output: ../out/{date}.md\n", "inside the vault"),
        ("    - type: embed\n      max_chars: 10\n", "max_chars must be at least 200"),
    ],
)
def test_bad_settings_are_config_errors(item: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}")):
        parse_config(config(item))
