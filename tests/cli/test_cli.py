"""The `companion` command line as a user runs it: real processes, real files, clear errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import run_companion
from tests.helpers.files import write
from tests.helpers.history import history_config


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(root, "Notes/ski.md", "---\ndate: 2026-02-01\n---\nChamonix in February, budget 1800 euros.\n")
    write(root, "Notes/garden.md", "Tomatoes want sun.\n")
    (root / "Notes/broken.md").write_bytes(b"\x89PNG\x00\x01 not a note\n")
    return root


def test_index_json_summary_and_skipped_notes(vault: Path) -> None:
    out = run_companion("index", "--json", "--vault", str(vault))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    for key in ("notes_indexed", "notes_skipped", "notes_deleted", "chunks_embedded", "elapsed_s"):
        assert key in report
    assert (report["notes_indexed"], report["notes_skipped"]) == (2, 1)
    assert report["skipped"][0]["path"] == "Notes/broken.md" and report["skipped"][0]["reason"]
    again = json.loads(run_companion("index", "--json", "--vault", str(vault)).stdout)
    assert (again["notes_indexed"], again["chunks_embedded"]) == (0, 0)


def test_human_output_names_the_vault_rule_and_skipped_note(vault: Path) -> None:
    out = run_companion("index", env={"AGENT_VAULT_PATH": str(vault)})
    assert out.returncode == 0, out.stderr
    assert "AGENT_VAULT_PATH" in out.stdout
    assert "skipped Notes/broken.md:" in out.stdout
    # Said once, in the summary, not also as a log line before it.
    assert (out.stdout + out.stderr).count("Notes/broken.md") == 1, out.stderr


def test_recall_json_shape(vault: Path) -> None:
    run_companion("index", "--vault", str(vault))
    out = run_companion("recall", "Chamonix budget", "--json", "--k", "5", "--vault", str(vault))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["query"] == "Chamonix budget"
    first = data["results"][0]
    assert first["path"] == "Notes/ski.md" and isinstance(first["score"], float)
    assert first["date"] == "2026-02-01"
    assert len({r["path"] for r in data["results"]}) == len(data["results"])


def test_recall_never_writes_to_the_vault(vault: Path) -> None:
    run_companion("index", "--vault", str(vault))
    before = {p: p.stat().st_mtime_ns for p in vault.rglob("*")}
    run_companion("recall", "tomatoes", "--vault", str(vault))
    assert {p: p.stat().st_mtime_ns for p in vault.rglob("*")} == before


def test_bad_config_names_file_and_key(vault: Path) -> None:
    write(vault, ".companion/companion.yaml", "index:\n  inclde: ['*.md']\n")
    out = run_companion("index", "--vault", str(vault))
    assert out.returncode == 2
    assert "companion.yaml" in out.stderr and "inclde" in out.stderr
    assert "Traceback" not in out.stderr


def test_missing_vault_is_a_clear_error(tmp_path: Path) -> None:
    out = run_companion("index", "--vault", str(tmp_path / "nowhere"))
    assert out.returncode == 2
    assert "nowhere" in out.stderr and "Traceback" not in out.stderr


def test_corrupt_index_is_explained_and_rebuild_repairs_it(vault: Path) -> None:
    data = Path(os.environ["COMPANION_DATA_DIR"])
    run_companion("index", "--vault", str(vault))
    (manifest,) = data.glob("vaults/*/manifest.sqlite")
    for extra in manifest.parent.glob("manifest.sqlite-*"):
        extra.unlink()
    manifest.write_bytes(b"this is not a database" * 100)
    out = run_companion("index", "--vault", str(vault))
    assert out.returncode == 4
    assert "--rebuild" in out.stderr and "Traceback" not in out.stderr
    fixed = run_companion("index", "--rebuild", "--json", "--vault", str(vault))
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["notes_indexed"] == 2


def test_doctor_reports_rule_model_and_health(vault: Path) -> None:
    run_companion("index", "--vault", str(vault))
    out = run_companion("doctor", "--json", "--vault", str(vault))
    assert out.returncode == 0, out.stdout
    report = json.loads(out.stdout)
    assert report["vault"]["rule"] == "flag"
    assert report["model"]["id"] == "hash-384"
    assert report["store"]["orphans"] == report["store"]["missing"] == 0
    assert [s["path"] for s in report["index"]["skipped"]] == ["Notes/broken.md"]
    # A file read and refused is skipped, not waiting to be indexed.
    assert report["index"]["stale"] == 0
    write(vault, "Notes/new.md", "Written after the index.\n")
    assert json.loads(run_companion("doctor", "--json", "--vault", str(vault)).stdout)["index"]["stale"] == 1
    # Fixed since it was skipped: it waits for the index like any changed note.
    write(vault, "Notes/broken.md", "Now a note.\n")
    assert json.loads(run_companion("doctor", "--json", "--vault", str(vault)).stdout)["index"]["stale"] == 2


def test_a_model_change_is_said_and_followed(vault: Path) -> None:
    run_companion("index", "--vault", str(vault))
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: minilm\n")
    out = run_companion("recall", "tomatoes", "--vault", str(vault))
    assert out.returncode == 0, out.stderr
    assert "changed from hash-384 to all-MiniLM-L6-v2" in out.stderr and "Traceback" not in out.stderr


def test_doctor_shows_the_session_history_sources_lists_and_last_runs(vault: Path, tmp_path: Path) -> None:
    config = (
        "embedding:\n  provider: hash\nsession_history:\n  sources:\n    - path: ./agents/{agent}/history.jsonl\n"
        "  processors:\n    - type: redact\n      trigger: on_write\n    - type: embed\n"
        "agents:\n  lost:\n    processors:\n      - type: retain\n        max_age_days: 3\n"
    )
    write(vault, ".companion/companion.yaml", config)
    for agent in ("trader", "lost"):
        line = json.dumps({"id": "a", "ts": "2026-03-20T09:00:00+00:00", "agent": agent, "text": "hi"})
        write(vault, f"agents/{agent}/history.jsonl", line + "\n")
    data = tmp_path / "data"
    assert run_companion("process", "--vault", str(vault), "--data-dir", str(data), "--agent", "trader").returncode == 0
    run_companion("index", "--vault", str(vault), "--data-dir", str(data))
    out = run_companion("doctor", "--json", "--vault", str(vault), "--data-dir", str(data))
    report = json.loads(out.stdout)["session_history"]
    assert sorted(s["agent"] for s in report["sources"]) == ["lost", "trader"]
    (trader,) = [a for a in report["agents"] if a["agent"] == "trader"]
    assert [(p["type"], p["trigger"]) for p in trader["processors"]] == [("redact", "on_write"), ("embed", None)]
    # `lost` drops entries with no archive: doctor says so, and the vault is not healthy until the list is fixed.
    assert out.returncode == 1 and any("lost" in e and "archive" in e for e in report["errors"])
    text = run_companion("doctor", "--vault", str(vault), "--data-dir", str(data)).stdout
    assert "history   trader: log" in text and "trader (default list): redact [on_write, last never], embed" in text


def test_a_reader_that_stops_early_is_not_an_error(vault: Path, tmp_path: Path) -> None:
    write(vault, ".companion/companion.yaml", history_config("    - type: redact\n"))
    write(vault, "agents/a/history.jsonl", "".join(f"not json {i}\n" for i in range(2000)))
    command = f"{sys.executable} -m companion process --dry-run --vault {vault} --data-dir {tmp_path / 'd'} | head -1"
    out = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("a: ") and "Traceback" not in out.stderr, out.stderr


def test_the_app_refuses_a_missing_fallback_vault_and_offers_the_demo(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "AGENT_OBSIDIAN_DISCOVER": "0", "AGENT_VAULT_PATH": ""}
    done = run_companion("--data-dir", str(tmp_path / "data"), env=env, timeout=60)
    assert done.returncode == 2
    assert ".agent_vault" in done.stderr and "companion demo" in done.stderr
    assert not (home / ".agent_vault").exists()


def test_graph_says_hop_in_the_singular(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "A.md", "Links to [[B]].\n")
    write(vault, "B.md", "Links to [[C]].\n")
    write(vault, "C.md", "The end.\n")
    done = run_companion("graph", "A", "--hops", "1", "--vault", str(vault), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr
    assert "within 1 hop, not directly linked" in done.stdout


def test_graph_reads_the_index_not_every_note_and_lists_a_target_once_with_its_headings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.cli import main
    from companion.vault.reader import ObsidianVault

    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(vault, "Guide.md", "See [[Setup#Install]], [[Setup#Configure]], [[Setup#Install]] and [[Setup#^step2]].\n")
    write(vault, "Setup.md", "# Install\n\n# Configure\n\nStep two ^step2\n")
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    assert main(["index", *where]) == 0

    def walks_every_note(self: ObsidianVault, refresh: bool = False) -> None:
        raise AssertionError("the graph command read every note instead of the index")

    monkeypatch.setattr(ObsidianVault, "graph", walks_every_note)
    capsys.readouterr()
    assert main(["graph", "Guide", *where]) == 0
    out = capsys.readouterr().out
    assert "links to (1)" in out
    assert "-> Setup.md  at #Install, #Configure, #^step2" in out
    assert main(["graph", "Guide", "--json", *where]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(o["path"], o["at"]) for o in data["outlinks"]] == [("Setup.md", ["#Install", "#Configure", "#^step2"])]


def test_index_json_reports_progress_on_stderr_from_the_start(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    for i in range(30):
        write(vault, f"Notes/note {i}.md", f"Note {i} about the garden, the boiler and the week.\n" * 20)
    done = run_companion("index", "--json", "--vault", str(vault), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["notes_indexed"] == 30  # stdout keeps the one result object
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert lines[0] == {"event": "progress", "phase": "scanning"}
    phases = [line["phase"] for line in lines]
    assert "reading" in phases and "embedding" in phases
    last_read = [line for line in lines if line["phase"] == "reading"][-1]
    assert (last_read["done"], last_read["total"]) == (30, 30)


def test_the_terminal_bar_shows_rate_and_time_left() -> None:
    import io

    from companion.cli.output import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    bar = ProgressBar("indexing", screen)
    bar.reading(10, 10)
    bar(50, 100)
    bar(100, 100)
    bar.close()
    drawn = screen.getvalue()
    assert "reading [" in drawn and "10/10 notes" in drawn
    assert "embedding [" in drawn and "100/100 chunks" in drawn and "/s, " in drawn and " left)" in drawn


def test_a_shorter_progress_line_leaves_nothing_of_a_longer_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    from types import SimpleNamespace

    from companion.cli import output

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def shown(written: str) -> str:
        """The last line a terminal shows for what was written: `\\r` goes back, ESC [ K erases to the end."""
        line: list[str] = []
        column = 0
        at = 0
        while at < len(written):
            if written.startswith("\x1b[K", at):
                del line[column:]
                at += 3
                continue
            char = written[at]
            if char == "\r":
                column = 0
            elif char == "\n":
                line, column = [], 0
            elif column < len(line):
                line[column] = char
                column += 1
            else:
                line.append(char)
                column += 1
            at += 1
        return "".join(line)

    # Slow going after a first chunk (hours left), then the rest at once (0 s left): a shorter line follows.
    clock = iter([0.0, 0.0, 100.0, 200.0])
    monkeypatch.setattr(output, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    monkeypatch.setenv("COLUMNS", "200")
    screen = Terminal()
    bar = output.ProgressBar("indexing", screen)
    bar(1, 100_000)
    bar(2, 100_000)
    assert shown(screen.getvalue()).endswith("2/100000 chunks (0/s, 1388 h 51 min left)")
    bar(100_000, 100_000)
    assert shown(screen.getvalue()).endswith("100000/100000 chunks (500/s, 0 s left)")


def test_an_unknown_option_shows_its_commands_usage_and_with_json_is_a_json_error_too() -> None:
    result = run_companion("recall", "x", "--json", "--bogus", "1", timeout=60)
    assert result.returncode == 2
    assert json.loads(result.stdout) == {
        "error": "companion recall: unrecognized arguments: --bogus 1",
        "exit_code": 2,
    }
    # The usage shown is the command's own, which lists what it takes.
    assert result.stderr.startswith("usage: companion recall ") and "--since" in result.stderr
    plain = run_companion("recall", "x", "--bogus", "1", timeout=60)
    assert plain.returncode == 2 and plain.stdout == ""
    nested = run_companion("vault", "search", "x", "--bogus", timeout=60)
    assert nested.returncode == 2 and nested.stderr.startswith("usage: companion vault search ")
