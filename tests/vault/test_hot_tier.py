"""The hot tier: `get_recent_sessions(user_id, policy)` at the policy's edges, with a frozen clock."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from companion.retention import RetentionPolicy
from companion.vault.reader import ObsidianVault
from tests.helpers.files import write

NOW = datetime(2026, 3, 10, 15, 0)


def _session(root: Path, date: str, time: str, user: str = "alice", chat: str = "main") -> None:
    write(
        root,
        f"ops/sessions/{date}/{time.replace(':', '')}-s.md",
        f"---\ndate: {date}\ntime: '{time}'\nuser_id: {user}\nchat_id: {chat}\n"
        f"user_msg: hello at {time}\nsentinel_msg: hi\n---\nsummary {date} {time}\n",
    )


def _vault(tmp_path: Path) -> ObsidianVault:
    root = tmp_path / "v"
    _session(root, "2026-03-10", "14:00:00")
    _session(root, "2026-03-10", "09:00:00")
    _session(root, "2026-03-10", "16:00:00")  # after NOW: not yet recent
    _session(root, "2026-03-09", "22:00:00")
    _session(root, "2026-03-09", "08:00:00", chat="other")
    _session(root, "2026-03-08", "12:00:00")  # three days ago: outside the default window
    _session(root, "2026-03-10", "13:00:00", user="bob")
    return ObsidianVault(root)


def _times(sessions: list) -> list[str]:
    return [f"{s.date} {s.time}" for s in sessions]


def test_default_policy_is_three_newest_of_today_and_yesterday(tmp_path: Path) -> None:
    hot = _vault(tmp_path).recent_sessions("alice", RetentionPolicy(), now=NOW)
    assert _times(hot) == ["2026-03-10 14:00:00", "2026-03-10 09:00:00", "2026-03-09 22:00:00"]
    assert hot[0].user_msg == "hello at 14:00:00" and hot[0].path.startswith("ops/sessions/2026-03-10/")


def test_hot_limit_edges(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    assert _times(vault.recent_sessions("alice", replace(RetentionPolicy(), hot_limit=1), now=NOW)) == [
        "2026-03-10 14:00:00"
    ]
    everything = vault.recent_sessions("alice", replace(RetentionPolicy(), hot_limit=99), now=NOW)
    assert len(everything) == 4  # today's two, yesterday's two (both chats)


def test_window_edges(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    today = vault.recent_sessions("alice", replace(RetentionPolicy(), hot_window_days=1, hot_limit=9), now=NOW)
    assert _times(today) == ["2026-03-10 14:00:00", "2026-03-10 09:00:00"]
    three = vault.recent_sessions("alice", replace(RetentionPolicy(), hot_window_days=3, hot_limit=9), now=NOW)
    assert "2026-03-08 12:00:00" in _times(three)
    assert vault.recent_sessions("alice", replace(RetentionPolicy(), hot_window_days=0), now=NOW) == []


def test_session_key_is_user_and_chat(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    other = vault.recent_sessions("alice", RetentionPolicy(), chat_id="other", now=NOW)
    assert _times(other) == ["2026-03-09 08:00:00"]
    assert other[0].session_key.endswith("other")
    assert _times(vault.recent_sessions("bob", RetentionPolicy(), now=NOW)) == ["2026-03-10 13:00:00"]


def test_async_signature(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    hot = asyncio.run(vault.get_recent_sessions("alice", RetentionPolicy(), now=NOW))
    assert hot == vault.recent_sessions("alice", RetentionPolicy(), now=NOW)


def test_an_aware_now_is_compared_in_local_time(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    aware = NOW.astimezone()  # the same instant, with the local zone attached
    assert vault.recent_sessions("alice", RetentionPolicy(), now=aware) == vault.recent_sessions(
        "alice", RetentionPolicy(), now=NOW
    )
