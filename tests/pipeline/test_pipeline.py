"""The processing pipeline on real files: the heartbeat-agent case, crashes at every step, appends during a run,
refusal to lose data, redaction before archival, the audit record."""

from __future__ import annotations

import json
import lzma
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.config import CompanionConfig, parse_config
from companion.errors import ConfigError
from companion.pipeline.history import serialize
from companion.pipeline.run import STEPS, process_vault
from companion.vault.audit import AuditLog, sha256_hex

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)

HEARTBEAT = """
session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: retain
      max_age_days: 30
    - type: archive
      older_than_days: 30
      destination: ./cold-storage
agents:
  sentinel:
    processors:
      - type: archive
        older_than_days: 3
        destination: ./cold-storage
      - type: retain
        max_age_days: 3
"""


def heartbeat_log(vault: Path, agent: str = "sentinel", days: int = 21, every_minutes: int = 10) -> list[bytes]:
    """`days` of ~2 KB heartbeat entries ending at NOW; returns the lines (without newlines)."""
    lines = []
    count = days * 24 * 60 // every_minutes
    for i in range(count):
        ts = NOW - timedelta(minutes=every_minutes * (count - 1 - i))
        data = {"id": f"{agent}-{i:05d}", "ts": ts.isoformat(), "agent": agent, "prompt": "p" * 1900}
        data["response"] = "HEARTBEAT_OK"
        lines.append(serialize(data))
    path = vault / "agents" / agent / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return lines


def archived_lines(vault: Path, agent: str = "sentinel") -> list[bytes]:
    folder = vault / "cold-storage" / agent
    out: list[bytes] = []
    for path in sorted(folder.glob("*.jsonl.xz")) if folder.exists() else []:
        out.extend(lzma.decompress(path.read_bytes()).splitlines())
    return out


def history_lines(vault: Path, agent: str = "sentinel") -> list[bytes]:
    return (vault / "agents" / agent / "history.jsonl").read_bytes().splitlines()


def test_the_heartbeat_case(tmp_path: Path) -> None:
    original = heartbeat_log(tmp_path)
    other = heartbeat_log(tmp_path, "trader", days=2, every_minutes=60)
    config = parse_config(HEARTBEAT)
    audit = AuditLog(tmp_path / "data")
    (sentinel, trader) = sorted(process_vault(tmp_path, config, NOW, audit=audit), key=lambda r: r.agent)

    kept = history_lines(tmp_path)
    cutoff = NOW - timedelta(days=3)
    assert kept == [line for line in original if datetime.fromisoformat(json.loads(line)["ts"]) >= cutoff]
    assert len(kept) == 3 * 144 + 1  # the entry exactly 3 days old stays
    archived = archived_lines(tmp_path)
    assert sorted(archived + kept) == sorted(original)  # by bytes, so by id too
    assert not set(archived) & set(kept)
    assert sentinel.kept == len(kept) and len(sentinel.dropped) == len(archived)
    assert [a.entries for a in sentinel.archives] == [len(archived)]
    # The default list (30 days) leaves the trader's 2 days alone.
    assert history_lines(tmp_path, "trader") == other and trader.dropped == ()
    (record,) = AuditLog(tmp_path / "data").entries()
    assert record.action == "process" and record.changes[0].path == "agents/sentinel/history.jsonl"
    assert record.changes[0].before == sha256_hex(b"".join(line + b"\n" for line in original))
    assert record.changes[0].after == sha256_hex((tmp_path / "agents/sentinel/history.jsonl").read_bytes())


def test_retain_drops_land_in_the_archive_too(tmp_path: Path) -> None:
    original = heartbeat_log(tmp_path, days=4, every_minutes=60)
    config = parse_config(HEARTBEAT.split("agents:")[0].replace("30", "2"))
    # retain 2 d comes first and drops the old entries before archive sees them: they must still be archived.
    process_vault(tmp_path, config, NOW)
    assert sorted(archived_lines(tmp_path) + history_lines(tmp_path)) == sorted(original)
    assert len(archived_lines(tmp_path)) > 0


class Crash(Exception):
    pass


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_any_step_leaves_history_complete(tmp_path: Path, step: str) -> None:
    original = heartbeat_log(tmp_path, days=5, every_minutes=60)

    def fail_at(name: str) -> None:
        if name == step:
            raise Crash(name)

    with pytest.raises(Crash):
        process_vault(tmp_path, parse_config(HEARTBEAT), NOW, audit=AuditLog(tmp_path / "data"), fail_at=fail_at)
    history, archived = history_lines(tmp_path), archived_lines(tmp_path)
    assert set(history) | set(archived) == set(original)
    assert set(history) <= set(original) and set(archived) <= set(original)
    assert not list((tmp_path / "agents" / "sentinel").glob(".companion-*.tmp"))  # no temp file left behind
    # The run can simply be repeated.
    process_vault(tmp_path, parse_config(HEARTBEAT), NOW)
    assert set(history_lines(tmp_path)) | set(archived_lines(tmp_path)) == set(original)
    assert len(history_lines(tmp_path)) == 3 * 24 + 1


def test_lines_appended_during_a_run_survive(tmp_path: Path) -> None:
    original = heartbeat_log(tmp_path, days=5, every_minutes=60)
    path = tmp_path / "agents" / "sentinel" / "history.jsonl"
    late = serialize({"id": "late", "ts": NOW.isoformat(), "agent": "sentinel", "response": "HEARTBEAT_OK"})
    with path.open("ab") as handle:
        handle.write(late[:20])  # the recorder is mid-write when the run reads the log

    def append(name: str) -> None:
        if name == "archived":
            with path.open("ab") as handle:
                handle.write(
                    late[20:] + b"\n" + b'{"id": "later", "ts": "2026-03-22T12:00:01Z", "agent": "sentinel"}\n'
                )

    (report,) = process_vault(tmp_path, parse_config(HEARTBEAT), NOW, fail_at=append)
    history = history_lines(tmp_path)
    assert history[-2:] == [late, b'{"id": "later", "ts": "2026-03-22T12:00:01Z", "agent": "sentinel"}']
    assert sorted(history[:-2] + archived_lines(tmp_path)) == sorted(original)
    assert report.appended > 0


def test_bad_lines_stay_byte_for_byte(tmp_path: Path) -> None:
    heartbeat_log(tmp_path, days=5, every_minutes=60)
    path = tmp_path / "agents" / "sentinel" / "history.jsonl"
    content = path.read_bytes()
    path.write_bytes(b"{broken line \xff\n" + content)
    (report,) = process_vault(tmp_path, parse_config(HEARTBEAT), NOW)
    assert path.read_bytes().startswith(b"{broken line \xff\n")
    assert report.problems and "line 1" in report.problems[0]


def test_dropping_without_archive_is_refused_unless_allowed(tmp_path: Path) -> None:
    original = heartbeat_log(tmp_path, days=5, every_minutes=60)
    text = "session_history:\n  sources:\n    - path: agents/{agent}/history.jsonl\n"
    text += "  processors:\n    - type: retain\n      max_age_days: 3\n"
    with pytest.raises(ConfigError) as caught:
        process_vault(tmp_path, parse_config(text), NOW, config_source="vault.yaml")
    message = str(caught.value)
    assert "vault.yaml" in message and "sentinel" in message and "allow_data_loss: true" in message
    assert history_lines(tmp_path) == original
    # Allowed for this agent only: the entries go, and no archive is written.
    allowed = text + "agents:\n  sentinel:\n    allow_data_loss: true\n"
    process_vault(tmp_path, parse_config(allowed), NOW)
    assert len(history_lines(tmp_path)) == 3 * 24 + 1 and not (tmp_path / "cold-storage").exists()


def test_redaction_comes_before_archival(tmp_path: Path) -> None:
    path = tmp_path / "agents" / "bot" / "history.jsonl"
    path.parent.mkdir(parents=True)
    old = serialize(
        {"id": "1", "ts": "2026-01-01T00:00:00Z", "agent": "bot", "text": "key sk-ant-api03-abcdefghijklmnopqrstuvwx"}
    )
    new = serialize({"id": "2", "ts": "2026-03-22T00:00:00Z", "agent": "bot", "text": "mail ada@example.org"})
    plain = serialize({"id": "3", "ts": "2026-03-22T01:00:00Z", "agent": "bot", "text": "HEARTBEAT_OK"})
    path.write_bytes(old + b"\n" + new + b"\n" + plain + b"\n")
    text = HEARTBEAT.split("agents:")[0] + "    - type: redact\n"  # listed last, runs first
    (report,) = process_vault(tmp_path, parse_config(text), NOW)
    assert report.dropped == ("1",) and report.replaced == ("2",)
    (archived,) = archived_lines(tmp_path, "bot")
    assert json.loads(archived)["text"] == "key [REDACTED:anthropic_key]"
    kept = history_lines(tmp_path, "bot")
    assert json.loads(kept[0])["text"] == "mail [REDACTED:email]" and kept[1] == plain


def test_nothing_configured_is_an_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"session_history\.sources"):
        process_vault(tmp_path, CompanionConfig(), NOW)


def test_a_line_written_through_an_old_handle_just_before_the_rename_is_carried_over(tmp_path: Path) -> None:
    original = heartbeat_log(tmp_path, days=5, every_minutes=60)
    path = tmp_path / "agents" / "sentinel" / "history.jsonl"
    late = serialize({"id": "late", "ts": NOW.isoformat(), "agent": "sentinel", "response": "HEARTBEAT_OK"})
    recorder = path.open("ab")  # opened before the run: it writes to the file the run is about to replace

    def append(name: str) -> None:
        if name == "history-written":  # after the last copy of the tail, before the rename
            recorder.write(late + b"\n")
            recorder.flush()

    try:
        process_vault(tmp_path, parse_config(HEARTBEAT), NOW, fail_at=append)
    finally:
        recorder.close()
    history = history_lines(tmp_path)
    assert history[-1] == late
    assert sorted(history[:-1] + archived_lines(tmp_path)) == sorted(original)


def test_two_runs_on_one_log_take_turns(tmp_path: Path) -> None:
    import threading

    original = heartbeat_log(tmp_path, days=5, every_minutes=60)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            process_vault(tmp_path, parse_config(HEARTBEAT), NOW)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    history = history_lines(tmp_path)
    assert len(history) == 3 * 24 + 1
    assert set(history) | set(archived_lines(tmp_path)) == set(original)
