"""SessionSummary from real session notes under ops/sessions/<date>/."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from companion.config import CompanionConfig, SessionsConfig
from companion.vault.parse import parse_note
from companion.vault.reader import ObsidianVault
from companion.vault.sessions import SessionSummary, read_session, session_datetime


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def session(user: str, time: str, msg: str, date: str | None = None, chat: str | None = None) -> str:
    lines = ["---", f"user_id: {user}", f"time: {time}", f"user_msg: {msg}", "sentinel_msg: ok"]
    if date:
        lines.append(f"date: {date}")
    if chat:
        lines.append(f"chat_id: {chat}")
    return "\n".join([*lines, "---", f"Summary of {msg}.", ""])


def test_fields_are_the_typed_summary_plus_chat_id() -> None:
    names = [f.name for f in dataclasses.fields(SessionSummary)]
    assert names == [
        "date",
        "user_id",
        "time",
        "user_msg",
        "sentinel_msg",
        "path",
        "body",
        "chat_id",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        SessionSummary("d", "u", "t", "m", "s", "p", "b").date = "x"  # type: ignore[misc]


def test_read_session_from_frontmatter() -> None:
    rel = "ops/sessions/2026-06-11/1403.md"
    raw = session("alice", "14:03", "hello", date="2026-06-11", chat="main").encode()
    summary = read_session(rel, parse_note(rel, raw))
    assert summary == SessionSummary(
        date="2026-06-11",
        user_id="alice",
        time="14:03",
        user_msg="hello",
        sentinel_msg="ok",
        path=rel,
        body="Summary of hello.\n",
        chat_id="main",
    )
    assert summary.session_key == "alice:main"
    assert summary.when == dt.datetime(2026, 6, 11, 14, 3)


def test_missing_fields_are_empty_and_date_falls_back_to_the_folder() -> None:
    rel = "ops/sessions/2026-06-10/x.md"
    summary = read_session(rel, parse_note(rel, b"no frontmatter at all\n"))
    assert (summary.date, summary.user_id, summary.time, summary.chat_id) == (
        "2026-06-10",
        "",
        "",
        "",
    )
    assert summary.session_key == ""
    assert summary.when == dt.datetime(2026, 6, 10)


def test_numeric_user_ids_become_text() -> None:
    rel = "ops/sessions/2026-06-10/x.md"
    summary = read_session(rel, parse_note(rel, b"---\nuser_id: 12345\ntime: 09:05:30\n---\n"))
    assert (summary.user_id, summary.time) == ("12345", "09:05:30")
    assert summary.session_key == "12345"


@pytest.mark.parametrize(
    ("date", "time", "expected"),
    [
        ("2026-06-11", "14:03", dt.datetime(2026, 6, 11, 14, 3)),
        ("2026-06-11", "14:03:07", dt.datetime(2026, 6, 11, 14, 3, 7)),
        ("2026-06-11", "14-03-07", dt.datetime(2026, 6, 11, 14, 3, 7)),
        ("2026-06-11", "2:03 pm", dt.datetime(2026, 6, 11, 14, 3)),
        ("2026-06-11", "14:03:07+02:00", dt.datetime(2026, 6, 11, 14, 3, 7)),
        ("2026-06-11T08:00:00", "", dt.datetime(2026, 6, 11, 8, 0)),
        ("2026-06-11", "", dt.datetime(2026, 6, 11)),
        ("2026-06-11", "teatime", dt.datetime(2026, 6, 11)),  # the day alone still places it
        ("yesterday", "14:03", None),
        ("", "", None),
    ],
)
def test_when(date: str, time: str, expected: dt.datetime | None) -> None:
    assert session_datetime(date, time) == expected


def test_vault_sessions_newest_first_skipping_bad_notes_and_folders(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "ops/sessions/2026-06-10/a.md", session("alice", "23:59", "late"))
    write(root, "ops/sessions/2026-06-11/b.md", session("alice", "9:05", "morning"))
    write(root, "ops/sessions/2026-06-11/c.md", session("bob", "14:03", "afternoon", chat="c2"))
    write(root, "ops/sessions/2026-06-11/broken.md", "---\nuser_id: [unclosed\n---\n")
    write(root, "ops/sessions/2026-06-11/notes.txt", "not a note")
    write(root, "ops/sessions/drafts/d.md", session("alice", "10:00", "draft"))
    write(root, "ops/sessions/2026-13-45/e.md", session("alice", "10:00", "bad date"))
    vault = ObsidianVault(root)
    summaries = vault.sessions()
    # The broken summary is kept, its properties read line by line (no time: last of its day), and named.
    assert [s.user_msg for s in summaries] == ["afternoon", "morning", "", "late"]
    assert summaries[2].path == "ops/sessions/2026-06-11/broken.md"
    assert summaries[0].session_key == "bob:c2"
    assert [p for p, _ in vault.problems] == ["ops/sessions/2026-06-11/broken.md"]
    assert "read line by line" in vault.problems[0][1]
    assert [s.user_msg for s in vault.sessions(since=dt.date(2026, 6, 11))] == [
        "afternoon",
        "morning",
        "",
    ]


def test_sessions_folder_is_configurable_and_may_be_missing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "agent/log/2026-01-02/a.md", session("u", "10:00", "hi"))
    config = CompanionConfig(sessions=SessionsConfig("agent/log"))
    assert [s.path for s in ObsidianVault(root, config).sessions()] == ["agent/log/2026-01-02/a.md"]
    assert ObsidianVault(root).sessions() == []


def test_slash_dates_combine_with_times() -> None:
    assert session_datetime("2026/03/01", "10:05") == dt.datetime(2026, 3, 1, 10, 5)
