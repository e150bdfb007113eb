"""`companion serve` as a user runs it: the real server, refused without its token, and the app driven in a real
headless Chromium (Debian's, through Playwright; no browser is downloaded)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_companion
from tests.helpers.files import write

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The flags a closed network needs: without them Chromium keeps trying to reach its update and sync services.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[dict[str, Any], Path, subprocess.Popen[str]]]:
    """A small vault, indexed with the hashing embedder, served by `companion serve` until the test ends."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(
        vault, "Memory/Boiler pressure.md", "---\ntype: fact\n---\nThe boiler pressure should be 1.5 bar when cold.\n"
    )
    write(vault, "Memory/Ski budget.md", "---\ntype: fact\n---\nThe ski week is capped at 1,800 EUR per person.\n")
    (vault / ".obsidian").mkdir()
    assert run_companion("index", "--vault", str(vault), "--data-dir", str(data)).returncode == 0
    command = [sys.executable, "-m", "companion", "serve", "--vault", str(vault), "--data-dir", str(data)]
    errors = (tmp_path / "serve.err").open("w")  # a file, not a pipe nobody reads, which could fill and block it
    server = subprocess.Popen(
        [*command, "--no-browser", "--json"],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        start_new_session=True,  # the app processes it starts go with it at the end
        env={**os.environ, "BROWSER": "false"},
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line, (tmp_path / "serve.err").read_text()
        yield json.loads(line), tmp_path, server
    finally:
        if server.poll() is None:
            os.killpg(os.getpgid(server.pid), signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(os.getpgid(server.pid), signal.SIGKILL)
            server.wait(timeout=10)
        errors.close()


def status(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


def test_the_server_listens_on_loopback_and_refuses_without_its_token(
    served: tuple[dict[str, Any], Path, subprocess.Popen[str]],
) -> None:
    info, _, _ = served
    base = f"http://127.0.0.1:{info['port']}"
    assert info["url"] == f"{base}/?token={info['token']}"
    assert status(f"{base}/")[0] == 403
    assert status(f"{base}/?token=not-the-token")[0] == 403
    assert status(f"{base}/ws")[0] == 403
    assert status(info["url"], {"Host": f"attacker.example:{info['port']}"})[0] == 403  # a rebound name
    code, headers = status(info["url"])
    assert code == 200
    cookie = headers.get("Set-Cookie", "")
    assert f"companion_token={info['token']}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert status(f"{base}/", {"Cookie": f"companion_token={info['token']}"})[0] == 200


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs Debian's)")
def test_a_search_in_the_browser_returns_results(served: tuple[dict[str, Any], Path, subprocess.Popen[str]]) -> None:
    from playwright.sync_api import sync_playwright

    info, tmp_path, server = served
    frames: list[bytes] = []

    def received(payload: str | bytes) -> None:
        frames.append(payload if isinstance(payload, bytes) else payload.encode())

    def shown(text: bytes, timeout: float = 60) -> bool:
        # The terminal draws on a canvas, so what the app shows is read from what it sends down the websocket.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in b"".join(frames):
                return True
            page.wait_for_timeout(250)
        return False

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("websocket", lambda ws: ws.on("framereceived", received))
            page.goto(info["url"])
            assert shown(b"indexer in the app"), "the app did not start in the page"
            page.mouse.click(400, 44)  # the search box, on the app's first line
            page.wait_for_timeout(500)
            page.keyboard.type("boiler pressure")
            page.keyboard.press("Enter")
            assert shown(b"Warm: 'boiler pressure'"), "the search did not answer"
            assert shown(b"Memory/Boiler pressure.md")
            page.screenshot(path=str(tmp_path / "browser.png"))
            assert apps_of(tmp_path), "the tab runs the app in a process of its own"
            server.send_signal(signal.SIGINT)  # Ctrl-C, with the tab still open
            server.wait(timeout=10)  # it ends the apps of open tabs itself, at once
            deadline = time.monotonic() + 8  # the server ends them itself; left alone they linger far longer
            while apps_of(tmp_path) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not apps_of(tmp_path), "the server left the app of an open tab running"
        finally:
            browser.close()
    assert (tmp_path / "browser.png").stat().st_size > 10_000


def apps_of(tmp_path: Path) -> list[int]:
    """The processes running the app on this test's vault."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue  # a process that ended meanwhile
            if b"companion app" in line and str(tmp_path / "vault").encode() in line:
                found.append(int(entry.name))
    return found
