"""The end-to-end tests' fixtures: tmux terminals that are closed whatever the test did."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.helpers.terminal import Terminal


@pytest.fixture
def terminal() -> Iterator[Callable[..., Terminal]]:
    """Opens `Terminal(name, width, height)` sessions for the test and closes them all after it."""
    opened: list[Terminal] = []

    def open_terminal(name: str, width: int = 120, height: int = 40) -> Terminal:
        term = Terminal(name, width, height)
        opened.append(term)
        return term

    yield open_terminal
    for term in opened:
        term.close()
