"""`companion serve` as a user runs it: the real server, refused without its token, and the app driven in a real
headless Chromium (Debian's, through Playwright; no browser is downloaded)."""

from __future__ import annotations

import base64
import hashlib
import http.client
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


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """The status and the body of a GET, refused or not."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def handshake(port: int, headers: dict[str, str]) -> int:
    """Open the page's websocket as a browser does, with `headers` added; the status of the answer (101: opened).
    An opened one is checked against the protocol's proof of acceptance, then closed at once."""
    key = base64.b64encode(os.urandom(16)).decode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "GET",
            "/ws?width=80&height=24",
            headers={
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Key": key,
                "Sec-WebSocket-Version": "13",
                **headers,
            },
        )
        response = connection.getresponse()
        if response.status == 101:
            proof = hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()
            assert response.headers["Sec-WebSocket-Accept"] == base64.b64encode(proof).decode()
        return response.status
    finally:
        connection.close()


def test_the_websocket_opens_only_for_the_served_page(
    served: tuple[dict[str, Any], Path, subprocess.Popen[str]],
) -> None:
    info, _, _ = served
    port, cookie = info["port"], {"Cookie": f"companion_token={info['token']}"}
    # A page on another local port gets the cookie too (a site is the host, whatever the port), so its origin
    # is what refuses it.
    assert handshake(port, {**cookie, "Origin": f"http://127.0.0.1:{port + 1}"}) == 403
    assert handshake(port, {**cookie, "Origin": f"http://localhost:{port + 1}"}) == 403
    assert handshake(port, {**cookie, "Origin": "null"}) == 403  # a sandboxed frame or a local file
    assert handshake(port, {**cookie, "Origin": f"https://127.0.0.1:{port}"}) == 403
    assert handshake(port, {**cookie, "Origin": f"http://localhost:{port}"}) == 403  # not the name it was asked by
    assert handshake(port, {"Origin": f"http://127.0.0.1:{port}"}) == 403  # the page's origin, no token
    assert handshake(port, {**cookie, "Origin": f"http://127.0.0.1:{port}"}) == 101


def test_every_path_refuses_another_origin_and_the_page_follows_the_name_it_was_opened_by(
    served: tuple[dict[str, Any], Path, subprocess.Popen[str]],
) -> None:
    info, _, _ = served
    base, cookie = f"http://127.0.0.1:{info['port']}", {"Cookie": f"companion_token={info['token']}"}
    foreign = {**cookie, "Origin": f"http://127.0.0.1:{info['port'] + 1}"}
    for path in ("/", f"/?token={info['token']}", "/static/js/textual.js", "/download/anything"):
        assert fetch(base + path, foreign)[0] == 403, path
    assert fetch(f"{base}/", {**cookie, "Origin": base})[0] == 200
    # A script or an image that a page of another port includes carries no Origin, but the browser says who asked.
    for asker in ("same-site", "cross-site"):
        assert fetch(f"{base}/static/js/textual.js", {**cookie, "Sec-Fetch-Site": asker})[0] == 403, asker
    for asker in ("same-origin", "none"):  # the page's own files; the address opened by the user
        assert fetch(f"{base}/static/js/textual.js", {**cookie, "Sec-Fetch-Site": asker})[0] == 200, asker
    # Opened as localhost, the page's websocket and files are asked of localhost: the cookie is the one that
    # name got, and the origin its own.
    code, page = fetch(info["url"], {"Host": f"localhost:{info['port']}"})
    assert code == 200
    assert f'"ws://localhost:{info["port"]}/ws"' in page and f"http://localhost:{info['port']}/static/" in page
    code, page = fetch(info["url"])
    assert code == 200 and f'"ws://127.0.0.1:{info["port"]}/ws"' in page


def test_static_files_need_the_token_and_no_folder_is_listed(
    served: tuple[dict[str, Any], Path, subprocess.Popen[str]],
) -> None:
    info, _, _ = served
    base, cookie = f"http://127.0.0.1:{info['port']}", {"Cookie": f"companion_token={info['token']}"}
    assert fetch(f"{base}/static/js/textual.js")[0] == 403
    code, script = fetch(f"{base}/static/js/textual.js", cookie)
    assert code == 200 and len(script) > 1000
    assert fetch(f"{base}/static/css/xterm.css?token={info['token']}")[0] == 200
    for folder in ("/static/", "/static/js/", "/static/js", "/static/fonts/", "/static/images"):
        for headers in ({}, cookie):
            code, body = fetch(base + folder, headers)
            assert code in (403, 404), (folder, code)
            assert "textual.js" not in body and "Index of" not in body and ".ttf" not in body, folder
