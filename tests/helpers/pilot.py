"""Driving the app in tests: wait until it settles, run steps in a terminal of the usual size, search, curate."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from companion.tui.app import CompanionApp
from widgets.confirm import ConfirmDialog
from widgets.warm_pane import WarmPane

CHALET = "Memory/Chalet Les Praz.md"
"""A memory note of the test vault that every curation test acts on."""


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until every worker (indexing, recall, note reads) is done and no new one starts from the messages
    their results post (a highlighted row opens a note)."""
    quiet = 0
    for _ in range(1000):
        await pilot.pause(0.02)
        quiet = 0 if pilot.app.busy else quiet + 1
        if quiet >= 3:
            return
    raise AssertionError("the app never settled")


def run(app: CompanionApp, steps: Any) -> None:
    """Run `steps(pilot)` in a 140x42 terminal once the app has settled."""

    async def go() -> None:
        async with app.run_test(size=(140, 42)) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(go())


async def until(pilot: Pilot[Any], condition: Any, what: str, seconds: float = 30) -> None:
    """Wait (real time: file events and threads) until `condition()` holds."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def show(pilot: Pilot[Any], query: str, path: str) -> None:
    """Search, and check the first result is `path`, now shown in the note view."""
    app = pilot.app
    assert isinstance(app, CompanionApp)
    search = app.query_one("#search", Input)
    search.value = ""
    await pilot.press("slash", *query, "enter")
    await settle(pilot)
    assert app.query_one(WarmPane).path_at(0) == path
    assert app.query_one("#note").border_title == path


async def curate(pilot: Pilot[Any], *keys: str) -> None:
    """Press keys that end in a curation (or an undo) and wait until it is applied."""
    app = pilot.app
    assert isinstance(app, CompanionApp)
    done = app.curations
    await pilot.press(*keys)
    await until(pilot, lambda: app.curations > done, f"the curation after {keys}")
    await settle(pilot)


async def confirmation(pilot: Pilot[Any]) -> ConfirmDialog:
    """Wait for the confirmation a key asked for, and return its dialog."""
    await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), "the confirmation")
    dialog = pilot.app.screen
    assert isinstance(dialog, ConfirmDialog)
    return dialog
