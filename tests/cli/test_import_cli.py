"""`companion import`: each agent's default folder under the home folder, --dry-run, --json and its errors, and an
imported session recalled by a question worded differently from what was said in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.cli import main
from tests.helpers.files import file_tree
from tests.helpers.transcripts import copy_transcripts


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding each agent's sessions where the agent keeps them."""
    home = tmp_path / "home"
    copy_transcripts("claude-code", home / ".claude")
    copy_transcripts("gemini", home / ".gemini")
    copy_transcripts("codex", tmp_path / "codex-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    return home


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".companion").mkdir(parents=True)
    (root / ".companion" / "companion.yaml").write_text(
        "embedding:\n  provider: hash\nimports:\n  folder: Imported/{agent}\n", encoding="utf-8"
    )
    return root


def companion(capsys: pytest.CaptureFixture[str], vault: Path, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--vault", str(vault), "--data-dir", str(vault.parent / "data")])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dry_run_writes_nothing(vault: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = file_tree(tmp_path)
    code, out, err = companion(capsys, vault, "import", "all", "--dry-run")
    assert code == 0, err
    assert file_tree(tmp_path) == before
    assert "would be created  Imported/claude-code/2026-03-10 Ledger export rounding fix.md  (11 turns)" in out
    assert "would be created 3" in out


def test_json_output_and_a_second_import(vault: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = companion(capsys, vault, "import", "all", "--json", "--no-index")
    assert code == 0, err
    data = json.loads(out)
    assert sorted(n["agent"] for n in data["notes"]) == ["claude-code", "codex", "gemini"]
    assert {n["action"] for n in data["notes"]} == {"created"} and data["problems"] == [] and data["indexed"] is None
    codex = next(n for n in data["notes"] if n["agent"] == "codex")
    assert codex["project"] == "weather" and codex["note"].startswith("Imported/codex/2026-03-11 Use the key")
    code, out, _ = companion(capsys, vault, "import", "codex", "--json", "--no-index")
    assert code == 0 and json.loads(out)["notes"] == [] and json.loads(out)["not_read"] == 1


def test_a_missing_source_is_a_json_error(vault: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = home / "nowhere"
    code, out, err = companion(capsys, vault, "import", "codex", "--source", str(missing), "--json")
    assert code == 2
    data = json.loads(out)
    assert data["exit_code"] == 2 and str(missing) in data["error"] and "--source" in data["error"]
    assert "Traceback" not in err
    code, out, _ = companion(capsys, vault, "import", "all", "--source", str(home), "--json")
    assert code == 2 and "give the agent" in json.loads(out)["error"]
    code, out, _ = companion(capsys, vault, "import", "all", "--since", "yesterday-ish", "--json")
    assert code == 2 and "--since" in json.loads(out)["error"]


def test_problems_are_named_on_stderr(vault: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (main_file,) = (home / ".claude" / "projects").rglob("1f0c*.jsonl")
    with main_file.open("a", encoding="utf-8") as handle:
        handle.write("{oops\n")
    lines = main_file.read_text("utf-8").count("\n")
    code, _, err = companion(capsys, vault, "import", "claude-code", "--no-index")
    assert code == 0
    assert f"warning: {main_file}, line {lines}: not JSON; the line was skipped" in err


def test_an_imported_session_is_recalled_by_a_paraphrase(
    vault: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = companion(capsys, vault, "import", "all")
    assert code == 0, err
    assert "imported notes: indexed 3 notes" in out
    code, out, err = companion(capsys, vault, "recall", "which backup server serves the radar tiles?", "--json")
    assert code == 0, err
    first = json.loads(out)["results"][0]
    assert first["path"].startswith("Imported/codex/")


def test_the_import_bench_imports_generated_sessions_once_then_only_the_grown_one(tmp_path: Path) -> None:
    from companion.cli.bench.imports import import_speed

    result = import_speed(tmp_path / "bench", sessions=6, turns=3)
    assert result["sessions"] == 6 and result["again_not_read"] == 6
    assert result["one_session_grown_written"] == 1
    assert result["transcripts_mb"] > 0 and result["sessions_per_s"] > 0
    notes = sorted((tmp_path / "bench" / "vault").rglob("*.md"))
    assert len(notes) == 6 and "ROUND_HALF_UP" in notes[0].read_text(encoding="utf-8")
