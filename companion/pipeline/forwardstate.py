"""What a `forward` processor's sink has accepted, recorded so that no entry reaches a sink twice, across runs and
after a run that failed midway (a full disk, a crash).

One small file per agent and sink (the state) lists, by id and in log order, the entries the sink accepted. It is
read before anything is sent and written, durably, after the sink accepted; what is in it is never sent again.

- A JSONL sink is its own proof. The state also records how long the sink file was after the last append it knows
  of (`sink_size`), and every run first reads what the sink holds past that point: an entry found there (appended by a
  run that could not record it: full disk, crash) counts as forwarded. With no size recorded the whole sink is read
  once. An append that fails is cut back off the sink, so no half entry stays in it.
- A webhook is asked once per batch. Before a batch goes out, the state is rewritten to name it (`sending`), followed by
  a one-byte status line `?`; once the webhook has answered, that byte is overwritten in place with `+` (accepted) or
  `-` (not accepted). Overwriting a byte already on disk allocates nothing, so the answer is recorded even on a disk
  that has just filled up, when no new file could be written. A batch whose status is still `?` was in flight when the
  process was killed: whether the webhook got it is unknown, so it is sent again (the one case where a webhook can
  get an entry twice; it carries the same `Idempotency-Key` header both times, for a webhook that checks it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from companion.atomic import make_folders, write_atomic
from companion.errors import ForwardError
from companion.pipeline.history import Entry

_WAITING, _ACCEPTED, _REFUSED = b"?", b"+", b"-"


@dataclass(frozen=True)
class Ledger:
    """A state file as read: what the sink accepted, how far a JSONL sink was read, and a batch left in flight."""

    forwarded: frozenset[str]
    """Ids the sink accepted (a webhook batch marked accepted included)."""
    sink_size: int | None = None
    """A JSONL sink's size after the last append the state records; none: unknown (read the whole sink)."""
    in_flight: tuple[str, ...] = ()
    """Ids of a webhook batch whose answer never got recorded (the process was killed while it was out)."""


@dataclass(frozen=True)
class Pending:
    """A webhook batch announced in the state before it is sent: where its status byte is."""

    state: Path
    """The state file."""
    offset: int
    """The byte to overwrite with the webhook's answer."""
    key: str
    """The batch's `Idempotency-Key`: the same for the same ids, so a resent batch can be recognised."""


def batch_key(agent: str, ids: Iterable[str]) -> str:
    """The idempotency key of a batch: a digest of the agent and the batch's ids."""
    return hashlib.sha256(json.dumps([agent, *ids]).encode("utf-8")).hexdigest()[:32]


def read_ledger(state: Path) -> Ledger:
    """The state as recorded; none yet: an empty ledger. `ForwardError` (nothing is sent) when it cannot be read or
    is damaged, rather than risk sending an entry twice."""
    try:
        raw = state.read_bytes()
    except FileNotFoundError:
        return Ledger(frozenset())
    except OSError as exc:
        raise ForwardError(f"{state}: cannot read the forward state ({exc.strerror or exc}); nothing was sent") from exc
    head, _, rest = raw.partition(b"\n")
    try:
        data = json.loads(head.decode("utf-8"))
        ids = data["forwarded"]
        sending = data.get("sending", [])
        size = data.get("sink_size")
        for name, value in (("forwarded", ids), ("sending", sending)):
            if not isinstance(value, list) or not all(isinstance(i, str) for i in value):
                raise ValueError(f"'{name}' is not a list of ids")
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError("'sink_size' is not a byte count")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ForwardError(
            f"{state}: the forward state is damaged ({exc}), so nothing was sent rather than risk sending entries "
            "twice; fix the file, or delete it to send the log's entries again (a JSONL sink then gets only those "
            "it does not hold)"
        ) from exc
    status = rest[:1]
    if sending and status == _ACCEPTED:
        return Ledger(frozenset(ids) | frozenset(sending), size)
    return Ledger(frozenset(ids), size, tuple(sending) if status == _WAITING else ())


def record(state: Path, entries: Sequence[Entry], done: set[str], sink_size: int | None = None) -> None:
    """Write the state: the ids in `done` that are still in the log (in log order), and a JSONL sink's size."""
    _write(state, _head(entries, done, sink_size))


def announce(state: Path, agent: str, entries: Sequence[Entry], done: set[str], batch: Sequence[Entry]) -> Pending:
    """Record, before it is sent, that `batch` is going out (status `?`); `ForwardError` when that cannot be written,
    and then the batch must not be sent."""
    ids = [entry.id for entry in batch]
    head = _head(entries, done, None, ids)
    _write(state, head + b"\n" + _WAITING)
    return Pending(state, len(head) + 1, batch_key(agent, ids))


def settle(pending: Pending, accepted: bool) -> None:
    """Overwrite the batch's status byte in place with the webhook's answer, and flush it to disk.

    `OSError` when even that fails (a copy-on-write file system with no space at all)."""
    fd = os.open(pending.state, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.pwrite(fd, _ACCEPTED if accepted else _REFUSED, pending.offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def delivered(sink: Path, since: int | None, entries: Sequence[Entry]) -> tuple[set[str], int | None]:
    """The ids of `entries` a JSONL sink holds past byte `since` (all of it when none, or when the file is now
    shorter: rotated), and the offset just past its last whole line (where the next read starts; none when there is
    no sink file yet)."""
    wanted = {entry.id: entry.agent for entry in entries}
    found: set[str] = set()
    try:
        handle = sink.open("rb")
    except FileNotFoundError:
        return found, None
    except OSError as exc:
        raise ForwardError(
            f"{sink}: cannot read the JSONL sink to see what it holds ({exc.strerror or exc}); nothing was sent"
        ) from exc
    with handle:
        size = os.fstat(handle.fileno()).st_size
        offset = since if since is not None and since <= size else 0
        handle.seek(offset)
        for line in handle:
            if not line.endswith(b"\n"):
                break  # cut short (or being written): not a whole entry
            offset += len(line)
            entry_id, agent = _identity(line)
            if entry_id is not None and wanted.get(entry_id) == agent:
                found.add(entry_id)
    return found, offset


def _identity(line: bytes) -> tuple[str | None, object]:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None, None
    return data["id"], data.get("agent")


def _head(
    entries: Sequence[Entry], done: set[str], sink_size: int | None, sending: Sequence[str] | None = None
) -> bytes:
    # In log order, so the file reads like the log it tracks; ids no longer in the log are left out.
    data: dict[str, object] = {"forwarded": [entry.id for entry in entries if entry.id in done]}
    if sink_size is not None:
        data["sink_size"] = sink_size
    if sending:
        data["sending"] = list(sending)
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _write(state: Path, head: bytes) -> None:
    try:
        make_folders(state.parent)  # the data directory it lives in is made private when opened
        write_atomic(state, head + b"\n")
    except OSError as exc:
        raise ForwardError(f"{state}: cannot record what was forwarded ({exc.strerror or exc})") from exc
