"""Small helpers for what commands print: JSON, a progress bar, a human summary."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO


def print_json(data: Any, stream: TextIO | None = None) -> None:
    """One JSON document on its own line."""
    print(json.dumps(data, ensure_ascii=False, default=str), file=stream or sys.stdout, flush=True)


class ProgressBar:
    """A one-line progress bar on a terminal's stderr; silent when stderr is not a terminal."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.started = time.perf_counter()
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        rate = done / max(time.perf_counter() - self.started, 1e-6)
        line = f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} notes ({rate:.0f}/s)"
        self.stream.write(line)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the bar's line."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
