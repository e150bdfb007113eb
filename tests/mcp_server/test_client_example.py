"""The Python client example in the agents' docs, run as a user runs it: over stdio (it starts the companion
itself) and over HTTP with the token against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.agentvault import write_agent_vault
from tests.helpers.mcphttp import http_server, show_token
from tests.helpers.rawmcp import WAIT_S

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "mcp_client.py"
COMPANION = Path(sys.executable).parent / "companion"  # the program `pip install` put beside this Python
ANSWER = "Conversations/2026-10-05 Ski trip.md"


def _example(*args: str, home: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=WAIT_S * 4,
        # A user's environment: the SDK hands the server only HOME, PATH and the like, so the server's data lives
        # under this home, as it would under the user's.
        env={**os.environ, "HOME": str(home)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_example_asks_over_stdio(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    out = _example(str(vault), "chalet deposit", "--companion", str(COMPANION), home=tmp_path / "home")
    assert out.startswith("@1  ") and ANSWER in out.splitlines()[0]
    assert f"{ANSWER}: " in out and "characters" in out
    assert (tmp_path / "home" / ".local" / "share" / "vault-companion" / "vaults").is_dir()


def test_the_example_asks_over_http_with_the_token(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    data = tmp_path / "data"
    with http_server(vault, data) as url:
        token = show_token(vault, data)
        out = _example(str(vault), "chalet deposit", "--http", url, "--token", token, home=tmp_path / "home")
        assert ANSWER in out.splitlines()[0] and f"{ANSWER}: " in out
        refused = subprocess.run(
            [sys.executable, str(EXAMPLE), str(vault), "chalet", "--http", url, "--token", "wrong"],
            capture_output=True,
            text=True,
            timeout=WAIT_S * 4,
            check=False,
        )
        assert refused.returncode == 1 and "is the token right?" in refused.stderr  # a message, not a traceback
        assert "Traceback" not in refused.stderr
