"""Running the `companion` query commands (`recall`, `recent`, `context`, `graph`, `eval`) against one vault and
one data folder, the way the recall CLI tests do."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.cli import run_companion
from tests.helpers.conversations import NOW

AS_OF = NOW.isoformat()
"""The moment every dated question is asked at, so answers do not drift with the clock."""


def run_on(vault: Path, data_dir: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `companion ARGS` on `vault` with its index kept in `data_dir`, `stdin` as its input."""
    return run_companion(*args, "--vault", str(vault), "--data-dir", data_dir, stdin=stdin)
