"""Small helpers for what commands print: JSON, a progress bar, a human summary."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import Any, TextIO

from companion.words import duration

CLEAR_TO_END = "\x1b[K"
"""The terminal control that erases the rest of the line: what a shorter redraw leaves of a longer one."""


def print_json(data: Any, stream: TextIO | None = None) -> None:
    """One JSON document on its own line."""
    print(json.dumps(data, ensure_ascii=False, default=str), file=stream or sys.stdout, flush=True)


class ProgressBar:
    """A one-line progress bar on a terminal's stderr, with the rate and the time left; silent when stderr is not a
    terminal. Each phase (reading notes, embedding chunks) starts its own bar."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._phase = ""
        self.started = time.perf_counter()
        self._drawn = False
        self._last = 0.0

    def reading(self, done: int, total: int) -> None:
        """Notes read and chunked so far."""
        self._show("reading", "notes", done, total)

    def __call__(self, done: int, total: int, left_s: float | None = None) -> None:
        """Chunks embedded and written so far, and the time left as the indexer measures it (by model tokens)."""
        self._show("embedding", "chunks", done, total, left_s)

    def _show(self, phase: str, unit: str, done: int, total: int, left_s: float | None = None) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.perf_counter()
        if phase != self._phase:
            if self._drawn:
                self.stream.write("\n")
            self._phase, self.started = phase, now
        elif done < total and now - self._last < 0.1:
            return  # redrawing faster than the eye reads costs time on a fast phase
        self._last = now
        elapsed = max(now - self.started, 1e-6)
        rate = done / elapsed
        left = left_s if left_s is not None else (total - done) / rate if rate > 0 else 0.0
        head = f"{self.label}: {phase} "
        tail = f" {done}/{total} {unit} ({rate:.0f}/s, {duration(left)} left)"
        # A line as wide as the terminal wraps, and `\r` then returns to the wrapped part only: the bar gives way
        # (down to 10 characters) so the line stays one short of the width, and only then is the line cut.
        columns = _columns(self.stream)
        width = max(min(30, columns - 1 - len(head) - len(tail) - 2), 10)
        filled = int(width * done / total)
        line = f"{head}[{'#' * filled}{'.' * (width - filled)}]{tail}"
        # `\r` returns to the line's start; erasing to its end clears what a longer line drawn before left there.
        self.stream.write(f"\r{line[: max(columns - 1, 20)]}{CLEAR_TO_END}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the bar's line."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


class JsonProgress:
    """Progress as JSON lines on stderr for `--json` commands: one when the work starts, then at most one a second
    per phase and one when a phase ends (stdout keeps the one result object)."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 1.0) -> None:
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self._phase = ""
        self._started = time.perf_counter()
        self._last = 0.0
        print_json({"event": "progress", "phase": "scanning"}, self.stream)

    def reading(self, done: int, total: int) -> None:
        """Notes read and chunked so far."""
        self._emit("reading", done, total)

    def __call__(self, done: int, total: int, left_s: float | None = None) -> None:
        """Chunks embedded and written so far, and the time left as the indexer measures it."""
        self._emit("embedding", done, total, left_s)

    def _emit(self, phase: str, done: int, total: int, left_s: float | None = None) -> None:
        now = time.perf_counter()
        if phase != self._phase:
            self._phase, self._started, self._last = phase, now, 0.0
        if done < total and now - self._last < self.every_s and done > 1:
            return
        self._last = now
        elapsed = now - self._started
        rate = done / elapsed if elapsed >= 0.2 else 0.0  # a rate over a few milliseconds says nothing
        eta = left_s if left_s is not None else (total - done) / rate if rate > 0 else None
        print_json(
            {
                "event": "progress",
                "phase": phase,
                "done": done,
                "total": total,
                "per_s": round(rate, 1) if rate > 0 else None,
                "eta_s": round(eta, 1) if eta is not None else None,
            },
            self.stream,
        )

    def close(self) -> None:
        """Nothing to end: every line is whole."""


def _columns(stream: TextIO) -> int:
    """The width of the terminal `stream` writes to (its own, as stdout may be redirected while stderr is not)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return shutil.get_terminal_size().columns


def model_change_line(change: tuple[str, str]) -> str:
    """What a user is told when the index's vectors were made with another model than the configured one."""
    before, now = change
    return (
        f"The embedding model changed from {before} to {now}: its vectors were dropped and every note is embedded "
        "again, newest first. The words index is kept, so recall answers from words meanwhile."
    )
