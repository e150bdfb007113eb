"""A session summary in the app's warm pane: named by when and what was said, its exchange in the note view."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

from companion.tui.app import CompanionApp
from tests.helpers.pilot import settle
from tests.helpers.summaries import write_summary
from tests.helpers.workspaces import workspace
from widgets.warm_pane import WarmPane

NOW = dt.datetime(2026, 11, 27, 20, 0)


def test_a_recalled_summary_is_named_by_what_was_said(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    when = NOW - dt.timedelta(days=12)
    path = write_summary(
        root, when, "The NAS fan is making a grinding noise again.", "Likely its bearing; an NF-A8 fits."
    )
    write_summary(root, NOW - dt.timedelta(hours=2), "Book the dentist for Thursday.", "Booked for 09:00.")
    ws = workspace(root)
    ws.indexer().sync()
    app = CompanionApp(ws, as_of=NOW)

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("slash", *"grinding fan", "enter")
            await settle(pilot)
            warm = app.query_one(WarmPane)
            assert app.context is not None and app.context.results[0].path == path
            assert warm.cell(0, "note") == f"{when.date()} The NAS fan is making a grinding noise again."
            assert warm.cell(0, "type") == "session"

    asyncio.run(go())
    ws.close()
