"""Regenerate `docs/browser.png` (the app served to a browser) from the real server on the demo vault.

Run with `make screenshot` (Chromium must be installed; Debian's is used and no browser is downloaded): writes the
demo vault to a temporary folder, indexes it with the real model, starts `companion serve`, opens the page in
headless Chromium, searches and saves what the page shows.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from companion.demo.build import write_demo_vault

QUERY = "where are we going skiing and what is the budget?"
"""The question the picture shows answered."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
"""Chromium headless on a closed network: no sandbox user, no GPU, no update or sync services."""


def main() -> int:
    """Write the picture; returns the exit code."""
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("browser.png")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("Chromium is not installed: the browser picture is skipped and left as it is.", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="companion-browser-") as tmp:
        vault, data = Path(tmp) / "demo-vault", Path(tmp) / "data"
        write_demo_vault(vault, now=datetime.now().astimezone())
        companion = [sys.executable, "-m", "companion"]
        subprocess.run([*companion, "index", "--vault", str(vault), "--data-dir", str(data)], check=True)
        server = subprocess.Popen(
            [*companion, "serve", "--vault", str(vault), "--data-dir", str(data), "--no-browser", "--json"],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert server.stdout is not None
            # The server prints its address once it listens; one that never does must not hang the script.
            if not select.select([server.stdout], [], [], 120)[0]:
                print("companion serve did not start within two minutes.", file=sys.stderr)
                return 1
            url = json.loads(server.stdout.readline())["url"]
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1200, "height": 720})
                page.goto(url)
                time.sleep(8)  # the app starts in a process of its own and opens the index
                page.mouse.click(400, 44)  # the search box, on the app's first line: the page takes the keys
                page.wait_for_timeout(500)
                page.keyboard.type(QUERY)
                page.keyboard.press("Enter")
                page.wait_for_timeout(6000)
                page.screenshot(path=str(out))
                browser.close()
        finally:
            os.killpg(os.getpgid(server.pid), signal.SIGTERM)
            server.wait(timeout=20)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
