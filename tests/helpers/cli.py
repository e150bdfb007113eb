"""The real `companion` command in a subprocess, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Any


def run_companion(
    *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run `companion ARGS` with this Python, `env` added to this process's environment, `stdin` as its input."""
    return subprocess.run(
        [sys.executable, "-m", "companion", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        env={**os.environ, **(env or {})},
    )


def companion_json(*args: str, timeout: float = 600) -> dict[str, Any]:
    """Run `companion ARGS --json`, assert it succeeded, and return the last JSON line it printed."""
    out = run_companion(*args, "--json", timeout=timeout)
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return data
