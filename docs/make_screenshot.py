"""Regenerate `docs/screenshot.svg` (the README's picture) from the real app on the demo vault.

Run with `make screenshot`: writes the demo vault to a temporary folder, indexes it with the real model, opens the
app headless, searches, highlights the best result and saves what the terminal shows.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from companion.demo.build import write_demo_vault
from companion.tui.app import CompanionApp
from companion.workspace import Workspace

QUERY = "where are we going skiing and what is the budget?"
"""The question the picture shows answered."""


def main() -> int:
    """Write the screenshot; returns the exit code."""
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("screenshot.svg")
    with tempfile.TemporaryDirectory(prefix="companion-shot-") as tmp:
        vault = Path(tmp) / "demo-vault"
        now = datetime.now().astimezone()
        write_demo_vault(vault, now=now)
        ws = Workspace.open(vault, data_dir=Path(tmp) / "data")
        ws.indexer().sync()
        app = CompanionApp(ws)

        async def shoot() -> None:
            async with app.run_test(size=(140, 42)) as pilot:
                while app.busy:
                    await pilot.pause(0.05)
                await pilot.press("slash", *QUERY, "enter")
                await pilot.pause(0.5)
                while app.busy:
                    await pilot.pause(0.05)
                await pilot.pause(0.5)
                app.save_screenshot(filename=out.name, path=str(out.parent))

        asyncio.run(shoot())
        ws.close()
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
