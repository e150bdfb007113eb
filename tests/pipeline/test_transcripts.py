"""The `embed` processor's history notes on real files: one note per day, redacted first, status replies left out,
entries kept after `retain` drops them, re-rendered after redaction, the user's text and notes left alone, a note
edited during a run not overwritten, bad lines redacted in the log, dry runs, the audit record."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.config import parse_config
from companion.errors import ConfigError
from companion.pipeline.history import parse_entry, serialize
from companion.pipeline.run import AgentReport, process_vault
from companion.pipeline.transcripts import END_MARKER, entry_key, plain_line, render_entry, turns
from companion.vault.audit import AuditLog
from companion.vault.parse import parse_note
from tests.helpers.files import file_tree, split_frontmatter
from tests.helpers.history import history_config

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
SECRET_KEY = "sk-" + "A1b2C3d4" * 4
EMAIL = "jane.doe@example.com"
FOLDER = Path("Memory/History/trader")


def entry(i: int, when: datetime, **fields: object) -> bytes:
    return serialize({"id": f"e{i}", "ts": when.isoformat(), "agent": "trader", **fields})


def write_log(vault: Path, lines: list[bytes]) -> Path:
    path = vault / "agents" / "trader" / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def config(items: str = "    - type: embed\n") -> str:
    return history_config(items)


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
    keys = [entry_key("./agents/{agent}/history.jsonl", i) for i in ("e0", "e1")]
    assert headings == [f"## 09:00:00 · {keys[0]}", f"## 09:01:00 · {keys[1]}"]


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
    # An entry of the same day, appended later but earlier in the day: the note keeps the dropped ones and gains the
    # new one, in time order.
    late = entry(9, datetime(2026, 3, 20, 8, tzinfo=UTC), role="assistant", content="Sold half of ACME at the open.")
    with log.open("ab") as handle:
        handle.write(late + b"\n")
    report = run(vault, config("    - type: embed\n"), now=NOW)
    text = day_notes(vault)["trader 2026-03-20"]
    assert text.index("Sold half of ACME") < text.index("Plan the ACME trade") < text.index("We hold ACME")
    assert report.embeds[0].notes[0].added == 1 and report.embeds[0].notes[0].entries == 3


def test_added_counts_only_entries_new_to_the_note(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    log = write_log(vault, conversation(vault))
    run(vault, config())
    with log.open("ab") as handle:
        handle.write(entry(5, datetime(2026, 3, 20, 22, tzinfo=UTC), role="user", content="Good night.") + b"\n")
    (note,) = run(vault, config()).embeds[0].notes
    assert (note.day, note.added, note.entries) == ("2026-03-20", 1, 3)


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
    text = render_entry(parse_entry(raw), "0" * 16, max_chars=300)
    assert "**user:** # not a heading %\u200b% not a comment %\u200b%" in text
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


TRICKS = [
    "hello\u2028## 09:30:00 · " + "a" * 10 + "\u2028a fake section",
    "and\n## 09:31:00 · " + "b" * 10 + "\nanother",
    'a fake marker\n%% entry t "a" "b" %%\nand more',
    "sneaky\u2028" + END_MARKER + "\u2029tail?",
    "```python\nprint('a fence that never closes')",
    "cut UTF-16 pair \ud800 here, a bell \x07, a form feed \x0c and <!-- a comment",
    "links [[Secret Plans]] and ![[embed.png]] and a #tag and %% hidden %%",
    "=\n-\n---\n===",
]


def test_entry_text_never_passes_for_the_notes_structure(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    day = datetime(2026, 3, 20, 9, tzinfo=UTC)
    # Escaped JSON, as a recorder writes a lone surrogate (the bytes of a cut UTF-16 pair).
    lines = [
        json.dumps(
            {
                "id": f"e{i}",
                "ts": (day + timedelta(minutes=i)).isoformat(),
                "agent": "trader",
                "role": "user",
                "content": t,
            }
        ).encode()
        for i, t in enumerate(TRICKS)
    ]
    log = write_log(vault, lines)
    items = "    - type: embed\n    - type: archive\n      destination: ./cold\n"
    run(vault, config(items))
    first = day_notes(vault)["trader 2026-03-20"]
    # Every entry leaves the log; the note alone keeps them, and must keep them all, run after run.
    run(vault, config(items + "    - type: retain\n      max_age_days: 1\n"))
    assert b"e0" not in log.read_bytes()
    for _ in range(2):
        report = run(vault, config(items))
        assert report.embeds[0].notes == () and report.warnings == ()
    text = day_notes(vault)["trader 2026-03-20"]
    assert text == first
    body = text.split("generated_by", 1)[1]
    assert body.count("\n## ") == len(TRICKS) and text.count(END_MARKER) == 1
    assert "\n```" not in text and "[[" not in body and "\\<!--" in text and " <!--" not in text and "\\#tag" in text
    turn_lines = [line for line in body.splitlines() if line.startswith("**user:**")]
    assert len(turn_lines) == len(TRICKS)
    assert all(line.count("%%") == 0 for line in turn_lines)
    path = vault / FOLDER / "trader 2026-03-20.md"
    parsed = parse_note(path.relative_to(vault).as_posix(), path.read_bytes())
    assert parsed.links == () and "tag" not in parsed.tags


def test_a_note_whose_entries_were_edited_is_left_alone(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    log = write_log(vault, conversation(vault))
    run(vault, config())
    path = vault / FOLDER / "trader 2026-03-20.md"
    # A formatter's blank line under each heading (markdownlint MD022).
    edited = "\n".join(line + ("\n" if line.startswith("## ") else "") for line in path.read_text("utf-8").split("\n"))
    path.write_text(edited, encoding="utf-8")
    with log.open("ab") as handle:
        handle.write(entry(6, datetime(2026, 3, 20, 21, tzinfo=UTC), role="user", content="More?") + b"\n")
    report = run(vault, config())
    assert path.read_text(encoding="utf-8") == edited
    assert any(str(path) in w and "were edited" in w for w in report.warnings)


def test_secrets_in_ids_and_in_notes_written_before_redaction_go_everywhere(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    when = datetime(2026, 3, 20, 9, tzinfo=UTC)
    line = serialize({"id": f"sess-{EMAIL}-1", "ts": when.isoformat(), "agent": "trader", "content": "A calm day."})
    log = write_log(vault, [line, entry(1, when, content=f"key {SECRET_KEY}")])
    audit = AuditLog(tmp_path / "data")
    run(vault, config("    - type: embed\n    - type: archive\n      destination: ./cold\n"), audit=audit)
    assert SECRET_KEY in day_notes(vault)["trader 2026-03-20"]
    # The entry then leaves the log before redaction is configured; the note still holds its secret...
    log.write_bytes(b"")
    run(vault, config("    - type: redact\n    - type: embed\n"), audit=audit)
    text = day_notes(vault)["trader 2026-03-20"]
    assert SECRET_KEY not in text and EMAIL not in text and "[REDACTED:openai_key]" in text
    # ...and no copy of it is kept anywhere in the data dir (history notes keep no copies in the audit log).
    for found in (tmp_path / "data").rglob("*"):
        if found.is_file():
            assert SECRET_KEY.encode() not in found.read_bytes(), found


def test_two_sources_of_one_agent_settle(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    other = vault / "more" / "trader.jsonl"
    other.parent.mkdir(parents=True)
    other.write_bytes(entry(0, datetime(2026, 3, 20, 12, tzinfo=UTC), content="From the other log.") + b"\n")
    text = config().replace(
        "    - path: ./agents/{agent}/history.jsonl\n",
        "    - path: ./agents/{agent}/history.jsonl\n    - path: ./more/{agent}.jsonl\n",
    )
    process_vault(vault, parse_config(text), NOW)
    before = file_tree(vault)
    reports = process_vault(vault, parse_config(text), NOW)
    assert file_tree(vault) == before and all(r.embeds[0].notes == () for r in reports)
    note = day_notes(vault)["trader 2026-03-20"]
    assert "From the other log." in note and "Plan the ACME trade" in note  # both e0s, neither overwrote the other
    fields, _ = split_frontmatter(note)
    assert fields["source"] == ["agents/trader/history.jsonl", "more/trader.jsonl"]


def test_properties_the_user_adds_read_back(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    log = write_log(vault, conversation(vault))
    run(vault, config())
    path = vault / FOLDER / "trader 2026-03-20.md"
    text = path.read_text("utf-8").replace("generated_by: embed-v1\n", "generated_by: embed-v1\n'odd: key': 1\n")
    text = text.replace("generated_by: embed-v1\n", "generated_by: embed-v1\nreviewed: 2026-03-21\n")
    path.write_text(text, encoding="utf-8")
    for n in (7, 8):
        with log.open("ab") as handle:
            handle.write(entry(n, datetime(2026, 3, 20, 20, n, tzinfo=UTC), content=f"Note {n}.") + b"\n")
        report = run(vault, config())
        assert report.warnings == ()
    fields, _ = split_frontmatter(path.read_text("utf-8"))
    assert fields["odd: key"] == 1 and str(fields["reviewed"]) == "2026-03-21" and fields["entries"] == 4


def test_no_note_is_written_through_a_symlink_out_of_the_vault(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "Memory").mkdir()
    (vault / "Memory" / "History").symlink_to(outside)
    report = run(vault, config())
    assert list(outside.rglob("*")) == [] and report.embedded == ()
    assert any("leads out of the vault" in w for w in report.warnings)


def test_odd_roles_never_become_links_or_markup() -> None:
    raw = serialize(
        {"id": "e1", "ts": "2026-03-20T09:00:00+00:00", "agent": "t", "role": "[[Boss]] **x** %%", "content": "hi"}
    )
    text = render_entry(parse_entry(raw), "0" * 10, max_chars=300)
    assert text.splitlines()[1] == "**Boss x:** hi"


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("50%%% of it", "%%"),
        ("see [[[Private Diary]]] now", "[["),
        ("a \\<img src=x onerror=alert(1)> tag", " \\\\<img"),  # an escaped backslash, then raw HTML
        ("and #secret-tag here", " #secret"),
    ],
)
def test_escapes_cannot_be_undone_by_the_text_itself(text: str, absent: str) -> None:
    line = plain_line(text)
    assert absent not in line, line
    assert not parse_note("n.md", f"**user:** {line}\n".encode()).links


def test_a_log_reached_another_way_does_not_double_its_entries(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_log(vault, conversation(vault))
    run(vault, config())
    alias = tmp_path / "alias"
    alias.symlink_to(vault)
    run(alias, config())
    assert day_notes(vault)["trader 2026-03-20"].count("\n## ") == 2


@pytest.mark.parametrize(
    "output", ["History/{date}/{agent} {date}.md", "History/[{agent}]/{date}.md", "History/{agent}/{date}.md"]
)
def test_kept_sections_are_redacted_whatever_the_output_pattern(tmp_path: Path, output: str) -> None:
    vault = tmp_path / "vault"
    when = datetime(2026, 3, 20, 9, tzinfo=UTC)
    log = write_log(vault, [entry(1, when, content=f"key {SECRET_KEY}")])
    item = f'    - type: embed\n      output: "{output}"\n'
    run(vault, config(item))
    log.write_bytes(b"")  # the entry leaves the log before redaction is configured
    run(vault, config("    - type: redact\n" + item))
    texts = [p.read_text("utf-8") for p in (vault / "History").rglob("*.md")]
    assert len(texts) == 1 and SECRET_KEY not in texts[0] and "[REDACTED:openai_key]" in texts[0]
