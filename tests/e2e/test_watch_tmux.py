"""Drive the real `companion index --watch` in tmux the way a person would: start it, edit notes in the vault,
read the screen, ask for recall from a second command, press Ctrl-C."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.files import write
from tests.helpers.terminal import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "vault"
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(root, "Notes/garden.md", "Tomatoes want sun.\n")
    yield root


@pytest.fixture
def term(terminal: Callable[..., Terminal]) -> Terminal:
    return terminal("companion-e2e")


def test_watch_in_tmux(vault: Path, term: Terminal) -> None:
    term.companion("index", "--watch", "--vault", str(vault))
    screen = term.wait("watching", history=200).string
    assert "indexed 1 note (" in screen

    write(vault, "Notes/skiing.md", "We go to Chamonix on 14 February.\n")
    term.wait("1 indexed", history=200)
    (vault / "Notes/skiing.md").rename(vault / "Notes/ski trip.md")
    term.wait("1 renamed", history=200)

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

    term.keys("C-c", "")
    term.wait("stopped after", history=200)
    term.keys("echo exit=$?", "Enter")
    term.wait("exit=0", history=200)
