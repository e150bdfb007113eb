"""`companion process`: prints what was (or would be) done, --dry-run writes nothing, errors are messages."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from companion.cli import main
from companion.pipeline.history import serialize
from tests.helpers.files import file_tree
from tests.helpers.fulldisk import FullDisk

CONFIG = """session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: archive
      older_than_days: 3
    - type: redact
"""

AS_OF = "2026-03-22T12:00:00+00:00"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".companion").mkdir(parents=True)
    (root / ".companion" / "companion.yaml").write_text(CONFIG, encoding="utf-8")
    now = datetime.fromisoformat(AS_OF)
    for agent in ("sentinel", "helper"):
        path = root / "agents" / agent / "history.jsonl"
        path.parent.mkdir(parents=True)
        lines = [
            serialize({"id": f"{agent}-{i}", "ts": (now - timedelta(days=i)).isoformat(), "agent": agent, "r": "ok"})
            for i in range(6)
        ]
        lines.append(serialize({"id": f"{agent}-s", "ts": AS_OF, "agent": agent, "r": "token ghp_" + "x" * 36}))
        path.write_bytes(b"".join(line + b"\n" for line in lines))
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["process", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dry_run_writes_nothing(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    before = file_tree(tmp_path)
    code, out, err = run(capsys, "--vault", str(vault), "--data-dir", str(data), "--as-of", AS_OF, "--dry-run")
    assert code == 0, err
    assert file_tree(tmp_path) == before
    assert "would drop 2" in out and "would archive 2 into" in out and "would replace (redact) 1" in out


def test_process_json_and_agent_filter(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--as-of", AS_OF, "--json"]
    code, out, err = run(capsys, *args, "--agent", "sentinel")
    assert code == 0, err
    (report,) = json.loads(out)["agents"]
    assert report["agent"] == "sentinel" and report["dropped"] == ["sentinel-4", "sentinel-5"]
    assert report["replaced"] == ["sentinel-s"] and report["archives"][0]["entries"] == 2
    assert Path(report["archives"][0]["path"]).is_file()
    assert len((vault / "agents/helper/history.jsonl").read_bytes().splitlines()) == 7  # untouched
    code, out, err = run(capsys, *args, "--agent", "nobody")
    assert code == 7 and "nobody" in err and "Traceback" not in err


def test_config_errors_name_file_line_and_key(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = vault / ".companion" / "companion.yaml"
    path.write_text(CONFIG.replace("type: redact", "type: redcat"), encoding="utf-8")
    code, _, err = run(capsys, "--vault", str(vault))
    assert code == 2
    assert f"{path}, line 7: session_history.processors[1].type: unknown processor type 'redcat'" in err
    assert "built types: retain, archive, redact, forward, summarize, extract, embed" in err
    other = vault.parent / "other.yaml"
    other.write_text(CONFIG.replace("older_than_days", "older_than"), encoding="utf-8")
    code, _, err = run(capsys, "--vault", str(vault), "--config", str(other))
    assert code == 2 and f"{other}, line 6: session_history.processors[0].older_than: unknown key" in err
    code, _, err = run(capsys, "--vault", str(vault), "--config", str(vault / "missing.yaml"))
    assert code == 2 and "no such config file" in err


def test_the_process_bench_runs_the_heartbeat_case_small(tmp_path: Path) -> None:
    from companion.cli.bench.pipeline import process_history

    result = process_history(tmp_path / "bench", days=5, entry_kb=2)
    assert result["entries"] == 720 and result["kept"] + result["archived"] == 720
    assert result["kept"] == 432 and result["history_notes"] >= 5  # three days kept; the 1-in-50 answers embedded
    assert result["seconds"] > 0 and result["peak_rss_mb_of_the_largest_child"] > 0


def test_a_full_disk_midway_is_reported_as_it_is(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = vault / ".companion" / "companion.yaml"
    config.write_text(CONFIG + "    - type: forward\n", encoding="utf-8")
    disk = FullDisk().install(monkeypatch)
    real = disk._gate

    def at_sentinels_archive(what: str) -> None:
        if "cold-storage/sentinel" in what:
            disk.fills_at = disk.writes + 1
        real(what)

    monkeypatch.setattr(disk, "_gate", at_sentinels_archive)
    args = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--as-of", AS_OF]
    sentinel = vault / "agents/sentinel/history.jsonl"
    before = sentinel.read_bytes()
    code, _, err = run(capsys, *args)
    assert code == 9 and "Traceback" not in err
    assert "nothing was half-written" not in err
    assert err.startswith(f"companion: processing sentinel's history ({sentinel}) stopped while writing the archives: ")
    assert f"{vault / 'cold-storage' / 'sentinel'}/" in err and "No space left on device" in err
    sink = vault / "forwarded" / "sentinel.jsonl"
    assert f"Done for sentinel: forwarded 7 entries to {sink} (recorded in " in err
    assert f"the log {sentinel} is unchanged: no entry was dropped from it or redacted in it" in err
    assert "Processed completely before it: helper (dropped 2, kept 5, archived 2 into " in err
    assert sentinel.read_bytes() == before and len(sink.read_bytes().splitlines()) == 7
    code, out, _ = run(capsys, *args, "--json")
    assert code == 9 and "stopped while writing the archives" in json.loads(out)["error"]
    monkeypatch.setattr(disk, "_gate", real)
    disk.free()
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "forward 0 to" in out and "archive 2 into" in out
    assert len(sink.read_bytes().splitlines()) == 7  # nothing forwarded twice


def test_indexing_failing_after_the_run_says_the_history_was_processed(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from companion.workspace import Workspace

    config = vault / ".companion" / "companion.yaml"
    config.write_text(CONFIG + "    - type: embed\n", encoding="utf-8")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "data" / "chroma"))

    monkeypatch.setattr(Workspace, "open", full)
    code, _, err = run(capsys, "--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--as-of", AS_OF)
    assert code == 9 and "nothing was half-written" not in err
    assert f"indexing the 12 history notes this run wrote failed: {tmp_path / 'data' / 'chroma'}: No space" in err
    assert "The history was processed all the same: helper (dropped 2, kept 5, archived 2 into " in err
    assert "`companion index` indexes the notes" in err
    assert len((vault / "agents/helper/history.jsonl").read_bytes().splitlines()) == 5
