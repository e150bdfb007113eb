"""An exclusive `flock` on a folder: writers of the same files take turns, across threads and processes.

The folder itself is locked, so no lock file is left anywhere, and a refused or dry run leaves no trace.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder` (waiting for another holder to finish) for the `with` block."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
