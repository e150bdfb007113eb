"""Drive the real `companion index --watch` in tmux the way a person would: start it, edit notes in the vault,
read the screen, ask for recall from a second command, press Ctrl-C."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SESSION = f"companion-e2e-{os.getpid()}"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _screen() -> str:
    return _tmux("capture-pane", "-p", "-t", SESSION, "-S", "-200")


def _wait_screen(text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _screen()
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared on screen:\n{_screen()}")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "vault"
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(root, "Notes/garden.md", "Tomatoes want sun.\n")
    yield root
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)


def test_watch_in_tmux(vault: Path) -> None:
    env = f"COMPANION_DATA_DIR={shlex.quote(os.environ['COMPANION_DATA_DIR'])}"
    command = f"{env} {shlex.quote(sys.executable)} -m companion index --watch --vault {shlex.quote(str(vault))}"
    _tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", SESSION, "bash", "--norc", "--noprofile")
    _tmux("send-keys", "-t", SESSION, command, "Enter")
    screen = _wait_screen("watching")
    assert "indexed 1 notes" in screen

    write(vault, "Notes/skiing.md", "We go to Chamonix on 14 February.\n")
    _wait_screen("1 indexed")
    (vault / "Notes/skiing.md").rename(vault / "Notes/ski trip.md")
    _wait_screen("1 renamed")

    found = subprocess.run(
        [sys.executable, "-m", "companion", "recall", "Chamonix", "--json", "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "Notes/ski trip.md"

    # A second writer is refused at once, naming the one that holds the index.
    second = subprocess.run(
        [sys.executable, "-m", "companion", "index", "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 5
    assert "already being written by pid" in second.stderr and "index --watch" in second.stderr

    _tmux("send-keys", "-t", SESSION, "C-c", "")
    _wait_screen("stopped after")
    _tmux("send-keys", "-t", SESSION, "echo exit=$?", "Enter")
    _wait_screen("exit=0")
