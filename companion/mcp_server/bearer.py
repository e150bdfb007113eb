"""The bearer token of `companion mcp --transport http`: the file that keeps it, and the guard that requires it.

Loopback alone does not make the HTTP server private: any local process, of any user, can reach 127.0.0.1, and with
`--allow-writes` it could write the vault. So every request must carry `Authorization: Bearer <token>`, where the
token is made on first use and kept in the vault's data directory, readable by its owner only (mode 600);
`companion mcp --show-token` prints it for the client's config. The SDK's Host and Origin checks (against DNS
rebinding) still run behind this guard.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from companion.errors import ConfigError
from companion.locations import private_folder

SHOW_TOKEN = "companion mcp --show-token"
"""The command that prints the token (with the server's --vault and --data-dir)."""


def load_token(path: Path) -> str:
    """The token kept at `path`, made (32 random bytes, URL-safe) and written with mode 600 when there is none."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the bearer token ({exc.strerror})") from exc
    private_folder(path.parent)
    # Written whole to a private temporary file, then linked into place: a reader never sees a half-written token,
    # and of two servers starting at once the second finds the first's token instead of replacing it.
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(new_token() + "\n")
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileExistsError):  # another server made it first: its token is the one
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)


def new_token() -> str:
    """32 random bytes, URL-safe, never starting with `-`: the token is pasted after `--token` on command lines,
    where a leading dash reads as an option (about one token in 64 would)."""
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def _read(path: Path) -> str:
    token = path.read_text(encoding="ascii", errors="replace").strip()
    if not token or not token.isprintable() or " " in token or not token.isascii():
        raise ConfigError(f"{path}: not a bearer token; delete the file and a new token is made on the next start")
    if path.stat().st_mode & 0o077:
        # Copied or restored with wider permissions: other users could read it, so it is made private again.
        path.chmod(0o600)
    return token


class BearerGuard:
    """ASGI middleware answering 401, with a JSON body saying where the token is, to a request without the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        """The application behind the guard (the SDK's streamable HTTP app)."""
        self._token = token.encode("ascii")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the server's lifespan and authorised requests through; refuse every other request."""
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await _refuse(send, problem)
        else:  # a websocket: the app serves none, and none is let past without the token either
            await send({"type": "websocket.close", "code": 1008})

    def _problem(self, scope: Scope) -> str | None:
        """Why the request is not authorised, or None when it carries the token."""
        values = [value for name, value in scope.get("headers", []) if name == b"authorization"]
        if not values:
            return "this server needs the header `Authorization: Bearer <token>`"
        scheme, _, credentials = values[0].strip().partition(b" ")
        if scheme.lower() != b"bearer":
            return "the Authorization header must be `Bearer <token>`"
        if not hmac.compare_digest(credentials.strip(), self._token):
            return "wrong bearer token"
        return None


async def _refuse(send: Send, problem: str) -> None:
    body = json.dumps(
        {
            "error": f"unauthorized: {problem}",
            "token": f"run `{SHOW_TOKEN}` with the server's --vault (and --data-dir) to print the token",
        }
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"www-authenticate", b'Bearer realm="vault-companion"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
