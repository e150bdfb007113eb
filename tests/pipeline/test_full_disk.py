"""`process` on a disk that fills up midway, at every write in turn: the failure says exactly what was done and what
not, the log is trimmed only once everything derived from it is durable, and once the disk has room again a rerun
leaves every sink with every entry exactly once and every entry in the log or an archive."""

from __future__ import annotations

import json
import lzma
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.config import parse_config
from companion.errors import ProcessStopped
from companion.pipeline.history import serialize
from companion.pipeline.run import AgentReport, process_vault
from companion.vault.audit import AuditLog
from tests.helpers.fulldisk import FullDisk
from tests.helpers.history import Hook, history_config

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
TEXTS = [
    "We decided to stop trading options until the volatility model is fixed.",
    "HEARTBEAT_OK",
    "TODO: rebalance the bond ladder before the April coupon.",
    "Remember that the broker closes the ACME account review on the 3rd of April.",
    "Our staging database is hosted in Frankfurt.",
    "HEARTBEAT_OK",
]
IDS = [f"e{i}" for i in range(12)]


def write_log(vault: Path, agent: str = "trader") -> Path:
    """Twelve entries, half a day apart, the last one this morning: e0 to e5 are older than the three days kept."""
    path = vault / "agents" / agent / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        serialize(
            {
                "id": i,
                "ts": (NOW - timedelta(days=(11 - n) / 2 + 0.25)).isoformat(),
                "agent": agent,
                "text": TEXTS[n % len(TEXTS)],
            }
        )
        for n, i in enumerate(IDS)
    ]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def every_processor(url: str) -> str:
    return history_config(
        "    - type: redact\n"
        "    - type: forward\n"
        "    - type: forward\n      sink: webhook\n      url: " + url + "\n      batch: 5\n"
        "    - type: summarize\n"
        "    - type: extract\n"
        "    - type: embed\n"
        "    - type: retain\n      max_age_days: 3\n"
        "    - type: archive\n      destination: ./cold\n"
    )


def run(vault: Path, url: str, data: Path, agent: str | None = None) -> list[AgentReport]:
    environ = {"AGENT_VAULT_AUTO_WRITE": "aggressive"}
    config = parse_config(every_processor(url))
    return process_vault(
        vault, config, NOW, audit=AuditLog(data), environ=environ, state_dir=data / "forward", agent=agent
    )


def sink_ids(vault: Path, agent: str = "trader") -> list[str]:
    sink = vault / "forwarded" / f"{agent}.jsonl"
    return [json.loads(line)["id"] for line in sink.read_bytes().splitlines()] if sink.exists() else []


def archived(vault: Path, agent: str = "trader") -> dict[Path, list[str]]:
    folder = vault / "cold" / agent
    return {
        p: [json.loads(line)["id"] for line in lzma.decompress(p.read_bytes()).splitlines()]
        for p in sorted(folder.glob("*.jsonl.xz"))
    }


def log_ids(log: Path) -> list[str]:
    return [json.loads(line)["id"] for line in log.read_bytes().splitlines()]


def writes_of_a_clean_run(tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch) -> int:
    vault = tmp_path / "clean"
    write_log(vault)
    disk = FullDisk().install(monkeypatch)
    run(vault, hook.url, tmp_path / "clean-data")
    hook.requests.clear()
    return disk.writes


def check_the_message_against_the_disk(
    message: str, vault: Path, log: Path, before: bytes, hook: Hook, disk: FullDisk, audit: Path
) -> None:
    """Every claim of the message is true of what is on disk and what the sinks got, and it names the file."""
    assert "nothing was half-written" not in message
    assert any(path in message for path in disk.failed), message
    found = re.findall(r"forwarded (\d+) entr(?:y|ies) to (\S+) \(recorded", message)
    sent = {target: int(count) for count, target in found}
    assert sent.get(str(vault / "forwarded" / "trader.jsonl"), 0) == len(sink_ids(vault))
    assert sum(n for target, n in sent.items() if target.startswith("http")) == len(hook.ids)
    for count, path in re.findall(r"archived (\d+) entr(?:y|ies) into (\S+?\.jsonl\.xz)", message):
        assert len(archived(vault)[Path(path)]) == int(count)
    assert len(re.findall(r"archived \d+ entr", message)) == len(archived(vault))
    for path in re.findall(r"wrote the summary note (\S+\.md)", message):
        assert Path(path).is_file()
    if "is unchanged: no entry was dropped from it" in message:
        assert log.read_bytes() == before
    else:
        assert "rewrote the log" in message and log.read_bytes() != before
    recorded = audit.is_file() and '"action": "process"' in audit.read_text(encoding="utf-8")
    assert ("is not recorded in the audit log" in message) == (not recorded)


@pytest.mark.parametrize("lasting", [True, False], ids=["stays-full", "one-write-fails"])
def test_a_disk_filling_up_at_any_write_never_loses_or_repeats_an_entry_and_the_message_tells_the_truth(
    tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch, lasting: bool
) -> None:
    total = writes_of_a_clean_run(tmp_path, hook, monkeypatch)
    assert total >= 10  # archives, log, notes, forward state, audit record: the disk can fill at any of them
    stopped = 0
    for fills_at in range(1, total + 1):
        vault, data = tmp_path / f"full-{fills_at}", tmp_path / f"data-{fills_at}"
        log = write_log(vault)
        before = log.read_bytes()
        hook.requests.clear()
        disk = FullDisk(fills_at=fills_at, lasting=lasting).install(monkeypatch)
        try:
            (first,) = run(vault, hook.url, data)
        except ProcessStopped as exc:
            stopped += 1
            check_the_message_against_the_disk(str(exc), vault, log, before, hook, disk, data / "audit" / "log.jsonl")
        else:
            # A run that went through reports what it did: what each sink got, and whether the log was trimmed.
            jsonl, webhook = first.forwards
            assert (jsonl.sent, webhook.sent) == (len(sink_ids(vault)), len(hook.ids)), fills_at
            assert bool(first.dropped) == (log.read_bytes() != before), fills_at
        if log.read_bytes() != before:
            # Trimmed only once everything derived from the entries was durable.
            assert sorted(sink_ids(vault)) == sorted(IDS) and sorted(hook.ids) == sorted(IDS), fills_at
            assert (vault / "Memory" / "Summaries" / "trader.md").is_file()
        disk.free()
        run(vault, hook.url, data)
        assert Counter(sink_ids(vault)) == Counter(IDS), f"JSONL sink after a full disk at write {fills_at}"
        assert Counter(hook.ids) == Counter(IDS), f"webhook after a full disk at write {fills_at}"
        kept = log_ids(log)
        assert kept == IDS[6:], fills_at
        assert {i for ids in archived(vault).values() for i in ids} | set(kept) == set(IDS)
    assert stopped, "no write of the run made it stop"  # the audit record's failure stops it, in both modes


def test_the_message_of_a_run_stopped_at_the_archive(
    tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path)
    before = log.read_bytes()
    disk = FullDisk().install(monkeypatch)
    # Fill the disk at the archive: the first write into ./cold.
    real = disk._gate

    def at_the_archive(what: str) -> None:
        if "/cold/" in what:
            disk.fills_at = disk.writes + 1
        real(what)

    monkeypatch.setattr(disk, "_gate", at_the_archive)
    with pytest.raises(ProcessStopped) as caught:
        run(tmp_path, hook.url, tmp_path / "data")
    message = str(caught.value)
    assert caught.value.exit_code == 9
    assert (
        f"processing trader's history ({log}) stopped while writing the archives: {tmp_path / 'cold' / 'trader'}/"
        in message
    )
    assert "No space left on device" in message
    assert f"forwarded 12 entries to {tmp_path / 'forwarded' / 'trader.jsonl'} (recorded in" in message
    assert "forwarded 12 entries to http://127.0.0.1:" in message
    assert f"wrote the summary note {tmp_path / 'Memory' / 'Summaries' / 'trader.md'}" in message
    assert f"the log {log} is unchanged: no entry was dropped from it or redacted in it" in message
    assert "is not recorded in the audit log" in message and "nothing forwarded is sent again" in message
    assert log.read_bytes() == before and sorted(sink_ids(tmp_path)) == sorted(IDS)


def test_a_later_agent_failing_names_the_agents_done_and_not_reached(
    tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    for agent in ("alpha", "beta", "gamma"):
        write_log(tmp_path, agent)
    disk = FullDisk().install(monkeypatch)
    real = disk._gate

    def at_beta(what: str) -> None:
        if "/cold/beta" in what:
            disk.fills_at = disk.writes + 1
        real(what)

    monkeypatch.setattr(disk, "_gate", at_beta)
    with pytest.raises(ProcessStopped) as caught:
        run(tmp_path, hook.url, tmp_path / "data")
    message = str(caught.value)
    assert message.startswith("processing beta's history")
    assert "Processed completely before it: alpha (dropped 6, kept 6, archived 6 into" in message
    assert message.endswith("Not reached: gamma")
    assert log_ids(tmp_path / "agents" / "alpha" / "history.jsonl") == IDS[6:]
    assert log_ids(tmp_path / "agents" / "gamma" / "history.jsonl") == IDS


def test_a_derived_note_that_cannot_be_written_keeps_the_entries_in_the_log(
    tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path)
    disk = FullDisk().install(monkeypatch)
    real = disk._gate

    def summary_full(what: str) -> None:
        real(what)
        if what.endswith("Summaries/trader.md"):
            raise OSError(28, "No space left on device", what)

    monkeypatch.setattr(disk, "_gate", summary_full)
    (report,) = run(tmp_path, hook.url, tmp_path / "data")
    # The summary would never cover the old entries if they were dropped now.
    assert report.dropped == () and log_ids(log) == IDS and not (tmp_path / "cold").exists()
    assert report.held is not None and "1 of the" in report.held and "derived notes could not be written" in report.held
    monkeypatch.setattr(disk, "_gate", real)
    (later,) = run(tmp_path, hook.url, tmp_path / "data")
    assert later.dropped == tuple(IDS[:6]) and log_ids(log) == IDS[6:]
    assert Counter(sink_ids(tmp_path)) == Counter(IDS) and Counter(hook.ids) == Counter(IDS)
