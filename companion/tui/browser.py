"""The app in a browser window on this machine: `textual-serve` behind a token, bound to loopback.

Every browser tab that opens the page starts the app in a process of its own (textual-serve's model), on the same
vault; they share the index as any two processes do (one writes, the others follow it). Loopback is open to every
local process and to web pages the user visits (which may try `http://127.0.0.1:PORT`), so the page, its websocket
and its downloads need the token printed at start: in the address (`?token=...`), which then sets an HttpOnly,
same-site cookie so the page's websocket carries it. A request naming another host (a DNS rebinding attack) is
refused too.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import socket
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import textual_serve.server
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server


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
_GUARDED = ("/", "/ws", "/download/")


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def new_token() -> str:
    """A token for one run of the server."""
    return secrets.token_urlsafe(24)


class TokenServer(Server):
    """textual-serve's server, refusing every request for the app without the run's token."""

    def __init__(self, command: str, *, port: int, token: str, title: str, on_ready: Callable[[str], None]) -> None:
        """Serve `command` (the app's command line) on 127.0.0.1:`port`; `on_ready` gets the address to open."""
        super().__init__(command, host="127.0.0.1", port=port, title=title)
        self.token = token
        """What every request must show (in the address, or in the cookie the page got)."""
        self.url = f"http://127.0.0.1:{port}/?token={token}"
        """The address to open, with the token."""
        self._on_ready = on_ready

    def initialize_logging(self) -> None:
        """Keep textual-serve's request log quiet: the terminal shows the address and errors only."""

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def on_shutdown(self, app: web.Application) -> None:
        """End the apps of the tabs still open: they would otherwise outlive the server."""
        for service in list(_TrackedAppService.running):
            service.end()

    async def on_startup(self, app: web.Application) -> None:
        """Say where to point the browser (instead of textual-serve's banner, which has no token)."""
        self._on_ready(self.url)

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        if host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            return web.Response(status=403, text=f"refused: this server answers only 127.0.0.1:{self.port}\n")
        guarded = request.path == "/" or any(request.path.startswith(p) for p in _GUARDED[1:])
        if not guarded:
            return await handler(request)  # the page's scripts and styles: nothing of the vault
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
