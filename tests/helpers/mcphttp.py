"""The real `companion mcp --transport http` on a free loopback port, as tests start it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.cli import run_companion
from tests.helpers.rawmcp import WAIT_S


def free_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server(vault: Path, data: Path) -> Iterator[str]:
    """A real HTTP server on the vault, listening; its URL is yielded."""
    port = free_port()
    args = ["mcp", "--vault", str(vault), "--data-dir", str(data), "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "companion", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not listen: {process.communicate(timeout=WAIT_S)[1]!r}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def show_token(vault: Path, data: Path) -> str:
    """The token, as `companion mcp --show-token` prints it."""
    done = run_companion("mcp", "--vault", str(vault), "--data-dir", str(data), "--show-token", timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert token and "\n" not in token
    return token
