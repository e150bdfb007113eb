"""The app in a browser window on this machine: `textual-serve` behind a token, bound to loopback.

Every browser tab that opens the page starts the app in a process of its own (textual-serve's model), on the same
vault; they share the index as any two processes do (one writes, the others follow it). Loopback is open to every
local process and to web pages the user visits (which may try `http://127.0.0.1:PORT`), so every request (the page,
its websocket, its files, its downloads) needs the token printed at start: in the address (`?token=...`), which then
sets an HttpOnly, same-site cookie so the page's websocket and files carry it. A request naming another host (a DNS
rebinding attack) is refused, and so is one a browser sends for a page of another origin: a page served on another
port of this machine is "same-site" and gets the cookie too, so the origin is what tells it apart. No folder is
listed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import signal
import socket
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import aiohttp_jinja2
import jinja2
import textual_serve.server
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int


class _TrackedAppService(AppService):
    """textual-serve's app process, remembered so the server can end it when it stops (its own shutdown leaves the
    apps of open tabs running)."""

    running: ClassVar[weakref.WeakSet[_TrackedAppService]] = weakref.WeakSet()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _TrackedAppService.running.add(self)

    def end(self) -> None:
        """Stop the app's process now, if it still runs."""
        process = self._process  # the library keeps it here; it offers no synchronous way to stop it
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()


# The server builds its app services by this module-level name: each becomes one that the server can end.
textual_serve.server.AppService = _TrackedAppService  # type: ignore[attr-defined]

COOKIE = "companion_token"
"""The cookie that carries the token once the page was opened with it."""


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def new_token() -> str:
    """A token for one run of the server."""
    return secrets.token_urlsafe(24)


class TokenServer(Server):
    """textual-serve's server, refusing every request without the run's token, for another host or from a page of
    another origin."""

    def __init__(self, command: str, *, port: int, token: str, title: str, on_ready: Callable[[str], None]) -> None:
        """Serve `command` (the app's command line) on 127.0.0.1:`port`; `on_ready` gets the address to open."""
        super().__init__(command, host="127.0.0.1", port=port, title=title)
        self.token = token
        """What every request must show (in the address, or in the cookie the page got)."""
        self.url = f"http://127.0.0.1:{port}/?token={token}"
        """The address to open, with the token."""
        self._on_ready = on_ready
        self._names = (f"127.0.0.1:{port}", f"localhost:{port}")

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl-C or SIGTERM, saying where to point the browser once the port listens (textual-serve
        announces itself before it listens: a browser opened at once could find nothing there)."""
        loop = asyncio.new_event_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):  # Windows: Ctrl-C then ends the loop by itself
                loop.add_signal_handler(signum, self.request_exit)
        try:
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                print=lambda *_: self._on_ready(self.url),  # called once every socket listens
            )
        finally:
            asyncio.set_event_loop(None)  # the loop is closed now; nobody may pick it up

    async def _make_app(self) -> web.Application:
        # textual-serve's routes, but its static folder lists its files: here no folder is listed.
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        app.on_shutdown.append(self.on_shutdown)
        return app

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page, asking its websocket and files of the name the browser used (the guard lets through only
        this server's two): so they carry the cookie that name got, and their origin is the page's."""
        here = request.host
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"ws://{here}/ws",
            "config": {"static": {"url": f"http://{here}/static/"}},
            "application": {"name": self.title},
        }

    async def on_shutdown(self, app: web.Application) -> None:
        """End the apps of the tabs still open: they would otherwise outlive the server."""
        for service in list(_TrackedAppService.running):
            service.end()

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        if host not in self._names:
            return web.Response(status=403, text=f"refused: this server answers only 127.0.0.1:{self.port}\n")
        # A browser names the page a websocket or a cross-origin read comes from (Origin), and says whether any
        # request was started by a page of another origin (Sec-Fetch-Site; an image or a script of another page
        # carries no Origin): only this server's own page, under the name it was opened by, may use it. Any other
        # request (the page's own, the address typed or opened, a local program) needs the token alone.
        origin = request.headers.get("Origin")
        started_by = request.headers.get("Sec-Fetch-Site", "")
        if (origin is not None and origin != f"http://{host}") or started_by in ("same-site", "cross-site"):
            return web.Response(
                status=403,
                text=f"refused: asked by a page of another origin; only http://{host}/ (the address `companion serve` "
                "printed) may use this server\n",
            )
        given = request.query.get("token", "") or request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return web.Response(
                status=403,
                text="refused: open the address `companion serve` printed, with its ?token=...\n",
            )
        response = await handler(request)
        if request.path == "/" and request.query.get("token") and isinstance(response, web.Response):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict", path="/")
        return response


def describe(server: TokenServer) -> dict[str, Any]:
    """What `companion serve --json` prints once the server listens."""
    return {"url": server.url, "port": server.port, "token": server.token}
