"""Hand a link to the desktop (Obsidian registers the `obsidian://` scheme)."""

from __future__ import annotations

import shutil
import subprocess
import sys


def open_uri(uri: str) -> bool:
    """Open `uri` with the platform's launcher; False when there is none (a server, a container) or it failed."""
    command = {"darwin": "open", "win32": "explorer"}.get(sys.platform, "xdg-open")
    launcher = shutil.which(command)
    if launcher is None:
        return False
    try:
        # The launcher returns at once; its output would scribble over the terminal app.
        done = subprocess.run(
            [launcher, uri], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
