"""The session-history triggers, with a frozen clock: each fires when it should and not otherwise."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from companion.config import CompanionConfig
from companion.pipeline.autorun import AutoProcessor
from companion.pipeline.history import serialize
from companion.pipeline.run import AgentReport, process_vault
from companion.pipeline.triggers import STATE_FILE, Due, FileStat, Run, TriggerState, due_agents, is_due, recorded_files
from companion.specs import AgentConfig, ArchiveSpec, RetainSpec, SessionHistoryConfig, SourceConfig

T0 = datetime(2026, 3, 22, 12, 0, tzinfo=UTC)
PARIS_WINTER = timezone(timedelta(hours=1))
FILES = (FileStat("/v/agents/sentinel/history.jsonl", 1000, 1),)


def _config(*specs: ArchiveSpec | RetainSpec, agents: dict[str, AgentConfig] | None = None) -> CompanionConfig:
    return CompanionConfig(
        session_history=SessionHistoryConfig(
            sources=(SourceConfig(path="./agents/{agent}/history.jsonl"),), processors=specs
        ),
        agents=agents or {},
    )


def _due(spec: ArchiveSpec, last: Run | None, now: datetime, files: tuple[FileStat, ...] = FILES) -> bool:
    return is_due(spec, last, files, now, started=T0, tz=PARIS_WINTER)


def test_no_trigger_is_never_automatic() -> None:
    assert not _due(ArchiveSpec(), None, T0)


def test_on_startup_fires_once_per_process_start() -> None:
    spec = ArchiveSpec(trigger="on_startup")
    assert _due(spec, None, T0)
    assert not _due(spec, Run(T0, FILES), T0 + timedelta(hours=5))
    # A restart: the new process started after the last run.
    later = T0 + timedelta(days=1)
    assert is_due(spec, Run(T0, FILES), FILES, later, started=later)


def test_on_write_fires_after_a_change_only() -> None:
    spec = ArchiveSpec(trigger="on_write")
    last = Run(T0, FILES)
    assert _due(spec, None, T0)  # never processed: counts as changed
    assert not _due(spec, last, T0 + timedelta(hours=3))
    grown = (FileStat(FILES[0].path, 1200, 1),)
    touched = (FileStat(FILES[0].path, 1000, 2),)
    assert _due(spec, last, T0, grown)
    assert _due(spec, last, T0, touched)


def test_on_schedule_fires_at_interval_boundaries() -> None:
    spec = ArchiveSpec(trigger="on_schedule", interval_minutes=15)
    last = Run(T0, FILES)
    assert _due(spec, None, T0)
    assert not _due(spec, last, T0 + timedelta(minutes=14, seconds=59))
    assert _due(spec, last, T0 + timedelta(minutes=15))
    assert _due(spec, last, T0 + timedelta(minutes=40))


def test_nightly_fires_once_a_day_after_three_local() -> None:
    spec = ArchiveSpec(trigger="nightly")

    def local(day: int, hour: int, minute: int = 0) -> datetime:
        return datetime(2026, 3, day, hour, minute, tzinfo=PARIS_WINTER)

    assert not _due(spec, None, local(22, 2, 59))
    assert _due(spec, None, local(22, 3, 0))
    ran = Run(local(22, 3, 0), FILES)
    assert not _due(spec, ran, local(22, 3, 1))
    assert not _due(spec, ran, local(22, 23, 59))
    assert not _due(spec, ran, local(23, 2, 59))
    assert _due(spec, ran, local(23, 3, 0))
    # The list ran at 01:00 (another trigger): that was still the previous night's day, so 03:00 fires.
    assert _due(spec, Run(local(23, 1, 0), FILES), local(23, 3, 5))
    # The same moments in UTC are judged in local time: 02:30 UTC is 03:30 in Paris.
    assert _due(spec, ran, datetime(2026, 3, 23, 2, 30, tzinfo=UTC))


def test_size_threshold_fires_only_above_it() -> None:
    spec = ArchiveSpec(trigger="on_size_threshold", threshold_mb=1)
    at_limit = (FileStat("/h", 1024 * 1024, 1),)
    above = (FileStat("/h", 1024 * 1024 + 1, 2),)
    assert not _due(spec, None, T0, at_limit)
    assert _due(spec, None, T0, above)
    # Still above after a run that could not shrink it: not again until the log changes.
    assert not _due(spec, Run(T0, above), T0 + timedelta(minutes=1), above)
    bigger = (FileStat("/h", 2 * 1024 * 1024, 3),)
    assert _due(spec, Run(T0, above), T0 + timedelta(minutes=1), bigger)


def test_per_agent_overrides_apply() -> None:
    config = _config(
        ArchiveSpec(older_than_days=30, trigger="nightly"),
        RetainSpec(max_age_days=30),
        agents={
            "sentinel": AgentConfig(
                processors=(ArchiveSpec(older_than_days=3), RetainSpec(max_age_days=3, trigger="on_write"))
            )
        },
    )
    stats = {"sentinel": FILES, "helper": (FileStat("/v/agents/helper/history.jsonl", 10, 1),)}
    night = datetime(2026, 3, 22, 2, 0, tzinfo=PARIS_WINTER)  # before 03:00: the default list's nightly waits
    check = due_agents(config, stats, TriggerState(), night, started=T0, tz=PARIS_WINTER)
    assert check.due == (Due("sentinel", ("retain (on_write)",), ("0:archive", "1:retain")),)
    check = due_agents(config, stats, TriggerState(), night + timedelta(hours=2), started=T0, tz=PARIS_WINTER)
    assert [(d.agent, d.reasons) for d in check.due] == [
        ("helper", ("archive (nightly)",)),
        ("sentinel", ("retain (on_write)",)),
    ]


def test_a_refused_list_is_a_problem_not_a_run() -> None:
    config = _config(RetainSpec(max_age_days=3, trigger="on_startup"))
    check = due_agents(config, {"sentinel": FILES}, TriggerState(), T0, started=T0)
    assert check.due == () and "archive" in check.problems[0]


def test_a_write_during_or_after_a_run_is_still_a_write_at_the_next_check() -> None:
    spec = RetainSpec(max_age_days=3, trigger="on_write")
    path = FILES[0].path
    written = (FileStat(path, 1200, 2),)  # an append that landed after the run read the log
    # A run that did not rewrite the log: recorded as before it, so the append makes the list due again.
    kept = recorded_files(FILES, written, set())
    assert kept == FILES and is_due(spec, Run(T0, kept), written, T0 + timedelta(minutes=1), started=T0)
    # A log the run rewrote and nothing touched since: recorded as after it, so its own rewrite is no write.
    rewritten = (FileStat(path, 800, 2),)
    settled = recorded_files(FILES, rewritten, {path})
    assert settled == rewritten and not is_due(spec, Run(T0, settled), rewritten, T0, started=T0)
    # A log that appeared during the run is left out, so it counts as changed.
    other = FileStat("/v/agents/sentinel/more.jsonl", 10, 3)
    grown = recorded_files(FILES, (*FILES, other), set())
    assert grown == FILES and is_due(spec, Run(T0, grown), (*FILES, other), T0, started=T0)


def test_state_survives_a_restart(tmp_path: Path) -> None:
    state = TriggerState.load(tmp_path)
    assert state.runs == {}
    state.record("sentinel", ("0:archive", "1:retain"), Run(T0, FILES))
    state.save()
    again = TriggerState.load(tmp_path)
    assert again.last("sentinel", "1:retain") == Run(T0, FILES)
    spec = RetainSpec(max_age_days=3, trigger="on_write")
    assert not is_due(spec, again.last("sentinel", "1:retain"), FILES, T0 + timedelta(hours=1), started=T0)


def test_a_damaged_state_file_starts_fresh(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).parent.mkdir()
    (tmp_path / STATE_FILE).write_text("{not json", encoding="utf-8")
    assert TriggerState.load(tmp_path).runs == {}


def _entry(agent: str, n: int, ts: datetime) -> bytes:
    return serialize({"id": f"{agent}-{n}", "ts": ts.isoformat(), "agent": agent}) + b"\n"


def test_auto_processor_runs_the_whole_list_and_records_it(tmp_path: Path) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    log = vault / "agents" / "sentinel" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(_entry("sentinel", 1, T0 - timedelta(days=10)) + _entry("sentinel", 2, T0))
    config = _config(
        ArchiveSpec(older_than_days=30),
        RetainSpec(max_age_days=30),
        agents={
            "sentinel": AgentConfig(
                processors=(ArchiveSpec(older_than_days=3), RetainSpec(max_age_days=3, trigger="on_write"))
            )
        },
    )
    now = [T0]
    runs: list[tuple[Due, list[AgentReport]]] = []
    errors: list[tuple[str, Exception]] = []
    auto = AutoProcessor(
        vault,
        config,
        data,
        clock=lambda: now[0],
        on_run=lambda due, reports: runs.append((due, reports)),
        on_error=lambda agent, exc: errors.append((agent, exc)),
    )
    assert [d.agent for d in auto.check()] == ["sentinel"]
    assert runs[0][1][0].dropped == ("sentinel-1",) and len(runs[0][1][0].archives) == 1
    assert (data / STATE_FILE).exists()
    now[0] = T0 + timedelta(minutes=1)
    assert auto.check() == []  # the run's own rewrite is not a write
    with log.open("ab") as handle:
        handle.write(_entry("sentinel", 3, T0 - timedelta(days=5)))
    assert [d.agent for d in auto.check()] == ["sentinel"]
    assert runs[1][1][0].dropped == ("sentinel-3",)
    assert errors == []


def test_nothing_due_writes_no_state(tmp_path: Path) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    log = vault / "agents" / "helper" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(_entry("helper", 1, T0))
    config = _config(ArchiveSpec(older_than_days=30), RetainSpec(max_age_days=30))
    auto = AutoProcessor(vault, config, data, clock=lambda: T0, on_run=lambda d, r: None, on_error=lambda a, e: None)
    assert auto.check() == []
    assert not data.exists()


def test_a_failing_run_is_reported_and_retried_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    log = vault / "agents" / "helper" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(_entry("helper", 1, T0))
    config = _config(ArchiveSpec(older_than_days=30, trigger="on_startup"))
    now = [T0]
    errors: list[str] = []

    def broken(*args: object, **kwargs: object) -> list[AgentReport]:
        raise OSError("disk full")

    monkeypatch.setattr("companion.pipeline.autorun.process_vault", broken)
    auto = AutoProcessor(
        vault,
        config,
        data,
        clock=lambda: now[0],
        on_run=lambda d, r: None,
        on_error=lambda agent, exc: errors.append(f"{agent}: {exc}"),
        retry_s=300,
    )
    assert auto.check() == [] and errors == ["helper: disk full"]
    now[0] = T0 + timedelta(minutes=1)
    assert auto.check() == [] and len(errors) == 1  # not hammered every check
    now[0] = T0 + timedelta(minutes=6)
    auto.check()
    assert len(errors) == 2


def _sentinel(tmp_path: Path) -> tuple[Path, Path, Path, CompanionConfig]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    log = vault / "agents" / "sentinel" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(_entry("sentinel", 1, T0 - timedelta(days=10)) + _entry("sentinel", 2, T0))
    config = _config(ArchiveSpec(older_than_days=3), RetainSpec(max_age_days=3, trigger="on_write"))
    return vault, data, log, config


def _fail(agent: str, exc: Exception) -> None:
    pytest.fail(f"{agent}: {exc}")


def _ids(log: Path) -> list[str]:
    return [json.loads(line)["id"] for line in log.read_bytes().splitlines()]


def test_an_append_right_after_a_run_makes_the_next_check_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, data, log, config = _sentinel(tmp_path)
    appends = [_entry("sentinel", 3, T0 - timedelta(days=5)), _entry("sentinel", 4, T0)]

    def then_append(*args: object, **kwargs: object) -> list[AgentReport]:
        reports = process_vault(*args, **kwargs)  # type: ignore[arg-type]
        if appends:
            # Lands after the run's rewrite, before the thread looks at the log again.
            with log.open("ab") as handle:
                handle.write(appends.pop(0))
        return reports

    monkeypatch.setattr("companion.pipeline.autorun.process_vault", then_append)
    now = [T0]
    auto = AutoProcessor(vault, config, data, clock=lambda: now[0], on_run=lambda d, r: None, on_error=_fail)
    assert [d.agent for d in auto.check()] == ["sentinel"]  # drops sentinel-1 and rewrites the log
    assert _ids(log) == ["sentinel-2", "sentinel-3"]
    now[0] += timedelta(minutes=1)
    assert [d.agent for d in auto.check()] == ["sentinel"]  # the append was seen: sentinel-3 dropped
    assert _ids(log) == ["sentinel-2", "sentinel-4"]
    # That run rewrote nothing but an append followed it too: still a write at the next check.
    now[0] += timedelta(minutes=1)
    assert [d.agent for d in auto.check()] == ["sentinel"]
    now[0] += timedelta(minutes=1)
    assert auto.check() == []  # and once nothing more is written, nothing more runs


def test_an_entry_appended_while_a_run_rewrites_the_log_is_processed_next_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, data, log, config = _sentinel(tmp_path)
    appends = [_entry("sentinel", 3, T0 - timedelta(days=5))]

    def append_at(step: str) -> None:
        if step == "computed" and appends:
            with log.open("ab") as handle:
                handle.write(appends.pop(0))

    def appending(*args: object, **kwargs: object) -> list[AgentReport]:
        return process_vault(*args, fail_at=append_at, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("companion.pipeline.autorun.process_vault", appending)
    now = [T0]
    runs: list[AgentReport] = []
    auto = AutoProcessor(vault, config, data, clock=lambda: now[0], on_run=lambda d, r: runs.extend(r), on_error=_fail)
    assert [d.agent for d in auto.check()] == ["sentinel"]
    # The run read the log before the append, so it carried sentinel-3 over without processing it.
    assert runs[0].appended > 0 and _ids(log) == ["sentinel-2", "sentinel-3"]
    now[0] += timedelta(minutes=1)
    assert [d.agent for d in auto.check()] == ["sentinel"]
    assert runs[1].dropped == ("sentinel-3",) and _ids(log) == ["sentinel-2"]
    now[0] += timedelta(minutes=1)
    assert auto.check() == []
