"""A disk that fills up at the Nth write, deterministically, for the post-processing pipeline's tests.

Every file the pipeline writes goes through one of three calls: `HeldFolder.write` (archives, the rewritten log,
notes, forward state files, audit copies), the JSONL sink's append (`forward.write_fully`) and the audit log's
`AuditLog.record`. From the Nth such call on, each raises `OSError(ENOSPC)` as a full disk does, until `free()` (or only
the Nth, for a disk that has room again right after);
a JSONL append that fails gets half its bytes in first, as a short write on a disk filling up would. Overwriting a
byte already on disk (`os.pwrite`) needs no new space and is left alone, as on a real disk.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from companion.atomic import HeldFolder
from companion.pipeline import forward as forward_module
from companion.vault.audit import AuditLog


@dataclass
class FullDisk:
    """Counts writes; from write number `fills_at` on (1-based), they fail with ENOSPC until `free()` (with `lasting`
    false, only that one write fails: another program freed space right after)."""

    fills_at: int | None = None
    lasting: bool = True
    writes: int = 0
    failed: list[str] = field(default_factory=list)

    def free(self) -> None:
        """Make room again: every later write goes through."""
        self.fills_at = None

    def _gate(self, what: str) -> None:
        self.writes += 1
        if self.fills_at is not None and (
            self.writes == self.fills_at or (self.lasting and self.writes > self.fills_at)
        ):
            self.failed.append(what)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), what)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> FullDisk:
        """Route the pipeline's writes through this disk."""
        held_write = HeldFolder.write
        record = AuditLog.record
        write_fully: Callable[[int, bytes], None] = forward_module.write_fully

        def guarded_held(folder: HeldFolder, name: str, data: bytes, **kwargs: Any) -> None:
            self._gate(f"{_folder_path(folder.fd)}/{name}")
            held_write(folder, name, data, **kwargs)

        def guarded_record(audit: AuditLog, *args: Any, **kwargs: Any) -> Any:
            self._gate(str(audit.log_path))
            return record(audit, *args, **kwargs)

        def guarded_append(fd: int, data: bytes) -> None:
            try:
                self._gate(_folder_path(fd))
            except OSError:
                os.write(fd, data[: len(data) // 2])
                raise
            write_fully(fd, data)

        monkeypatch.setattr(HeldFolder, "write", guarded_held)
        monkeypatch.setattr(AuditLog, "record", guarded_record)
        monkeypatch.setattr(forward_module, "write_fully", guarded_append)
        return self


def _folder_path(fd: int) -> str:
    """The path of an open descriptor (Linux), for naming the file a write failed on."""
    return str(Path(os.readlink(f"/proc/self/fd/{fd}")))
