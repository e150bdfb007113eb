"""Drive the real `companion` app in tmux like a person: open the demo vault, search, pin a note and undo it, lower
`hot_limit` from 3 to 1 with the keyboard, and see the sessions that left hot appear in warm."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.files import file_tree
from tests.helpers.terminal import Terminal

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.model,
]


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    out = subprocess.run(
        [sys.executable, "-m", "companion", "demo", str(root), "--no-tui"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return root


def test_the_app_in_tmux(demo: Path, terminal: Callable[..., Terminal]) -> None:
    drive(terminal("companion-app", 140, 42), demo)


def drive(term: Terminal, demo: Path) -> None:
    # A person types at human speed; a burst can reach the app before the focus it depends on has moved.
    def _type(keys: str, literal: bool = False) -> None:
        term.keys(keys, literal=literal, pause=0.4)

    _wait = term.wait
    term.companion("--vault", str(demo))
    _wait(r"index: watching, \d+ notes")
    hot_before = int(_wait(r"Hot \((\d+)\)").group(1))
    _wait(r"nothing pushed out of hot; the notes changed last \(\d+\)")  # not an empty first screen

    # A person searches...
    _type("/")
    _type("chalet balance", literal=True)
    _wait(r"▊  chalet balance")
    _type("Enter")
    _wait(r"Warm: 'chalet balance' \(\d+\)")
    assert "Chalet" in term.screen()

    # ...pins the note on screen, sees it written, and undoes it: the vault is byte for byte as before.
    before = file_tree(demo)
    _type("*")
    _wait(r"done: u undoes it")
    pinned = [p for p, data in file_tree(demo).items() if before.get(p) != data]
    assert len(pinned) == 1 and b"pinned: true" in (demo / pinned[0]).read_bytes()
    _type("u")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and file_tree(demo) != before:
        time.sleep(0.2)
    assert file_tree(demo) == before

    # ...clears the search, then lowers hot_limit from 3 to 1 with the keyboard.
    _type("/")
    _type("C-u")
    _type("Enter")
    _wait(r"nothing pushed out of hot")
    _type("p")
    _type("Left")  # the knob's "lower" key (so is "-")
    _type("Left")
    _wait(r"hot_limit\s+1")
    moved = int(_wait(r"pushed out of hot \(([1-9]\d*)\)").group(1))
    hot_after = int(_wait(r"Hot \((\d+)\)").group(1))
    assert moved == 2, term.screen()  # the demo's alice and bob each had one session too many for a limit of 1
    assert hot_before - hot_after == moved
    shown = term.screen()
    assert shown.count("moved") + shown.count("pushed ") >= moved

    _type("C-q")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "Vault Companion" in term.screen():
        time.sleep(0.2)
    assert "Vault Companion" not in term.screen()


def test_the_app_in_a_small_tmux_terminal(demo: Path, terminal: Callable[..., Terminal]) -> None:
    # 80x24: one side at a time. A person searches, reads the note names, switches to the note with `v`, sees a
    # knob's whole value, and comes back.
    term = terminal("companion-small", 80, 24)
    term.companion("--vault", str(demo))
    term.wait(r"index: watching, \d+ notes")
    term.keys("/", pause=0.4)
    term.keys("ski trip budget", literal=True, pause=0.4)
    term.wait(r"ski trip budget")
    term.keys("Enter", pause=0.4)
    term.wait(r"Warm: 'ski trip budget' \(\d+\)")
    # At 80 columns the warm pane shows the relevance, the decay and the tier before the note's name, and the name
    # before its folder.
    term.wait(r"relevance\s+decay\s+tier\s+note")
    row = term.wait(r"(\d\.\d{3})\s+(\d\.\d\d)\s+(warm|hot|recent|new)\s+Ski trip budget\s+Memory/")
    assert 0.4 <= float(row.group(1)) <= 1.0  # a match: at or above the relevance floor
    assert 0.25 <= float(row.group(2)) <= 1.0  # the demo policy's decay floor and ceiling
    term.keys("v", pause=0.4)
    term.wait(r"Graph: ")
    assert "Warm:" not in term.screen()
    term.keys("p", pause=0.4)  # the knobs...
    term.keys("z", pause=0.4)  # ...zoomed to the whole screen
    term.wait(r"access_resistance\s+0\.008")  # a knob's value is not cut to 0.00
    term.keys("z", pause=0.4)
    term.keys("w", pause=0.4)  # back to the lists
    term.wait(r"Warm: 'ski trip budget'")
    # The key help's first screen is the app's own keys, not a table's page-left and copy.
    term.keys("?", pause=0.4)
    term.wait(r"The app")
    first = term.screen()
    for key, does in (("/", "search"), ("e", "explain"), ("u", "undo"), ("m", "merge"), ("r", "the review queue")):
        assert re.search(rf"│ {re.escape(key)}\s+{does}", first), (key, first)
    assert "Moving around" not in first and "Page up" not in first
    term.keys("Escape", pause=0.4)
    term.wait(r"Warm: 'ski trip budget'")
    term.keys("C-q", pause=0.4)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "index: watching" in term.screen():
        time.sleep(0.2)
    assert "index: watching" not in term.screen()  # a short terminal has no header: the status line is the app
