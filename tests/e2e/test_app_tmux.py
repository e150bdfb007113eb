"""Drive the real `companion` app in tmux like a person: open the demo vault, search, lower `hot_limit` from 3 to 1
with the keyboard, and see the sessions that left hot appear in warm."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.model,
]

SESSION = f"companion-app-{os.getpid()}"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _screen() -> str:
    return _tmux("capture-pane", "-p", "-t", SESSION)


def _type(keys: str, literal: bool = False) -> None:
    # A person types at human speed; a burst can reach the app before the focus it depends on has moved.
    _tmux("send-keys", "-t", SESSION, *(["-l"] if literal else []), keys)
    time.sleep(0.4)


def _wait(pattern: str, timeout: float = 90) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, _screen())
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never appeared on screen:\n{_screen()}")


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "demo"
    out = subprocess.run(
        [sys.executable, "-m", "companion", "demo", str(root), "--no-tui"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    yield root
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)


def test_the_app_in_tmux(demo: Path) -> None:
    env = f"COMPANION_DATA_DIR={shlex.quote(os.environ['COMPANION_DATA_DIR'])}"
    command = f"{env} {shlex.quote(sys.executable)} -m companion --vault {shlex.quote(str(demo))}"
    _tmux("new-session", "-d", "-x", "140", "-y", "42", "-s", SESSION, "bash", "--norc", "--noprofile")
    _tmux("send-keys", "-t", SESSION, command, "Enter")
    _wait(r"index: up to date")
    hot_before = int(_wait(r"Hot \((\d+)\)").group(1))
    assert int(_wait(r"pushed out of hot \((\d+)\)").group(1)) == 0

    # A person searches...
    _type("/")
    _type("chalet balance", literal=True)
    _wait(r"▊  chalet balance")
    _type("Enter")
    _wait(r"Warm: 'chalet balance' \(\d+\)")
    assert "Chalet" in _screen()

    # ...clears the search, then lowers hot_limit from 3 to 1 with the keyboard.
    _type("/")
    _type("C-u")
    _type("Enter")
    _wait(r"pushed out of hot \(0\)")
    _type("p")
    _type("Left")  # the knob's "lower" key (so is "-")
    _type("Left")
    _wait(r"hot_limit\s+1")
    moved = int(_wait(r"pushed out of hot \(([1-9]\d*)\)").group(1))
    hot_after = int(_wait(r"Hot \((\d+)\)").group(1))
    assert moved == 2, _screen()  # the demo's alice and bob each had one session too many for a limit of 1
    assert hot_before - hot_after == moved
    assert _screen().count("moved") + _screen().count("pushed out ") >= moved

    _type("C-q")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "Vault Companion" in _screen():
        time.sleep(0.2)
    assert "Vault Companion" not in _screen()
