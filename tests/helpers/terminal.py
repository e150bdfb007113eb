"""A tmux session that runs a real `companion` command as a person would, shared by the end-to-end tests."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time


class Terminal:
    """One detached tmux session running `bash`; type into it and read its screen."""

    def __init__(self, name: str, width: int = 120, height: int = 40) -> None:
        self.name = f"{name}-{os.getpid()}"
        self._tmux(
            "new-session", "-d", "-x", str(width), "-y", str(height), "-s", self.name, "bash", "--norc", "--noprofile"
        )

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout

    def companion(self, *args: str) -> None:
        """Start `companion ARGS` with this test's data directory."""
        env = f"COMPANION_DATA_DIR={shlex.quote(os.environ['COMPANION_DATA_DIR'])}"
        command = " ".join([env, shlex.quote(sys.executable), "-m", "companion", *map(shlex.quote, args)])
        self.keys(command, "Enter")

    def keys(self, *keys: str, literal: bool = False, pause: float = 0.0) -> None:
        """Send keys (tmux key names, or text with `literal`), then wait `pause` seconds."""
        self._tmux("send-keys", "-t", self.name, *(["-l"] if literal else []), *keys)
        time.sleep(pause)

    def screen(self, history: int = 0) -> str:
        """What the terminal shows (with `history` lines of scroll-back)."""
        return self._tmux("capture-pane", "-p", "-t", self.name, *(["-S", str(-history)] if history else []))

    def wait(self, pattern: str, timeout: float = 90, history: int = 0) -> re.Match[str]:
        """Wait until a regular expression matches the screen; fail with the screen if it never does."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.screen(history))
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(f"{pattern!r} never appeared on screen:\n{self.screen(history)}")

    def close(self) -> None:
        """End the session."""
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)
