"""The jargon check (`.ci/jargon.py`, run by `make lint`): the repository names features, never the internal
planning documents they came from. The forbidden words are built by concatenation so this file holds none."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "jargon.py"

ITEM = "se" + "ed"
DOC = "SP" + "EC"
TRACKER = "is" + "sue"


def run(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, paths)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
def test_the_repository_passes_its_own_check() -> None:
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "line",
    [
        f"rng = random.Random({ITEM})",
        f"as planned in {ITEM.capitalize()} 004",
        f"see {ITEM}-004 for the details",
        f"the files under {ITEM}s/ say so",
        f"{ITEM}s 12 and 13",
        f"rng_{ITEM} = 3",
        f"what the {DOC} asks for",
        f"written down in {DOC.lower()}.md",
        "as \N{SECTION SIGN}4 says",
        "see \N{SECTION SIGN} 12.3",
        f"fixes {TRACKER} 12",
        f"fixes {TRACKER.capitalize()} #12",
        f"closes {TRACKER}#7",
        f"{TRACKER}s 12 and 14",
    ],
)
def test_each_kind_of_word_is_caught_with_its_file_and_line(tmp_path: Path, line: str) -> None:
    planted = tmp_path / "pkg" / "module.py"
    planted.parent.mkdir()
    planted.write_text(f'"""A module."""\n\n{line}\n', encoding="utf-8")
    result = run(tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith(f"{planted}:3: the word ")
    assert "name the feature instead" in result.stdout


@pytest.mark.parametrize(
    "line",
    [
        "pumpkin seeds and sunflower seeds",
        "a seedling, seeded secrets, reseed",
        "processor.spec = spec",
        "the spec of the format, a spectrum, inspect",
        "an issue with the network, issues remain",
        "the section sign \N{SECTION SIGN} alone",
    ],
)
def test_plain_words_are_not_flagged(tmp_path: Path, line: str) -> None:
    (tmp_path / "notes.md").write_text(line + "\n", encoding="utf-8")
    result = run(tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_every_hit_is_reported_and_binary_files_and_the_venv_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(f"one\n{DOC}\nthree {TRACKER} 9\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text(f"{ITEM}\n", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(f"{ITEM}\0".encode())
    (tmp_path / "latin1.txt").write_bytes(f"caf\xe9 {ITEM}".encode("latin-1"))
    venv = tmp_path / ".venv" / "lib"
    venv.mkdir(parents=True)
    (venv / "dep.py").write_text(f"{ITEM} = 1\n", encoding="utf-8")
    result = run(tmp_path)
    assert result.returncode == 1
    reported = [line.split(": the word ")[0] for line in result.stdout.splitlines()]
    assert reported == [f"{tmp_path / 'a.md'}:2", f"{tmp_path / 'a.md'}:3", f"{tmp_path / 'b.txt'}:1"]


def test_a_single_file_can_be_checked(tmp_path: Path) -> None:
    clean = tmp_path / "clean.md"
    clean.write_text("nothing to see\n", encoding="utf-8")
    assert run(clean).returncode == 0
