"""Sending an agent's entries to a `forward` processor's sink, each entry once: a JSONL file or an HTTP webhook.

The pipeline calls `forward_entries` with the entries as redaction left them. What the sink accepted is recorded by id
in a small state file per agent and sink (`companion.pipeline.forwardstate`), written durably once the sink accepted
and read before anything is sent, so a later run sends only what is new or what an earlier run failed to send, also
after a run that stopped midway on a full disk; ids no longer in the log are pruned, so the file stays as small as the
log.

A webhook's bearer token (`token_env`) is only ever sent over https or to a loopback address: a token meant for a
plain `http://` URL on another host is refused, with nothing sent, rather than put on the network in clear text.

A sink that fails (an unreachable webhook after its retries, an unwritable file, a state that cannot be recorded)
never raises: the failure is returned in the `ForwardReport`, and the run leaves the log untrimmed so a later run
sends the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import ipaddress
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from companion.atomic import fsync_dir, make_folders
from companion.errors import ForwardError
from companion.pipeline.forwardstate import Ledger, announce, delivered, read_ledger, record, settle
from companion.pipeline.history import Entry
from companion.pipeline.processors import ForwardProcessor

Sleep = Callable[[float], None]
"""How the retries wait (tests pass a recorder)."""


@dataclass(frozen=True)
class ForwardReport:
    """What one `forward` processor did (or, in a dry run, would do) for one agent."""

    sink: str
    """`jsonl` or `webhook`."""
    target: str
    """The JSONL file or the webhook URL."""
    state: Path
    """The state file remembering the ids already sent."""
    sent: int
    """Entries sent this run (in a dry run: entries that would be sent)."""
    pending: int
    """Entries left unsent because of `problem`; a later run sends them."""
    problem: str | None = None
    """Why some entries were not sent, naming the sink and what to do; none when all went."""


def state_file(processor: ForwardProcessor, agent: str, log_path: Path, state_dir: Path | None) -> Path:
    """The state file of one agent and sink: in `state_dir` when given, else hidden next to the history log."""
    key = f"{processor.spec.sink}:{processor.target(agent)}"
    # The digest tells sinks apart (two webhooks, two files) without putting URLs in file names.
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    if state_dir is not None:
        return state_dir / f"{agent}.{processor.spec.sink}-{digest}.forwarded"
    return log_path.with_name(f".{log_path.name}.{processor.spec.sink}-{digest}.forwarded")


def forward_entries(
    processor: ForwardProcessor,
    agent: str,
    entries: Sequence[Entry],
    state: Path,
    *,
    dry_run: bool = False,
    environ: Mapping[str, str] | None = None,
    sleep: Sleep | None = None,
) -> ForwardReport:
    """Send the entries of `agent` the sink has not accepted yet (see `companion.pipeline.forwardstate`), and record
    them; never raises."""
    spec = processor.spec
    target = processor.target(agent)

    def report(sent: int, pending: int, problem: str | None = None) -> ForwardReport:
        shown = shown_url(target) if spec.sink == "webhook" else target
        return ForwardReport(spec.sink, shown, state, sent, pending, problem)

    try:
        ledger = read_ledger(state)
        done = set(ledger.forwarded)
        sink_at = None
        if spec.sink == "jsonl":
            # Entries appended by a run that could not record them (full disk, crash) are in the sink already.
            found, sink_at = delivered(processor.jsonl_path(agent), ledger.sink_size, entries)
            done |= found
    except ForwardError as exc:
        return report(0, len(entries), str(exc))
    todo = [entry for entry in entries if entry.id not in done]
    if dry_run:
        return report(len(todo), 0)
    if spec.sink == "jsonl":
        return report(*_to_jsonl(processor, agent, entries, todo, state, done, sink_at, ledger))
    return report(*_to_webhook(processor, agent, entries, todo, state, done, ledger, environ, sleep or _pause))


def _to_jsonl(
    processor: ForwardProcessor,
    agent: str,
    entries: Sequence[Entry],
    todo: Sequence[Entry],
    state: Path,
    done: set[str],
    sink_at: int | None,
    ledger: Ledger,
) -> tuple[int, int, str | None]:
    """Append `todo` to the agent's JSONL file, then record it; (sent, pending, problem)."""
    sink = processor.jsonl_path(agent)
    sent, problem = 0, None
    try:
        if todo:
            sink_at = _append_jsonl(sink, todo)
            done.update(entry.id for entry in todo)
            sent = len(todo)
    except ForwardError as exc:
        problem = str(exc)
    in_log = {entry.id for entry in entries}
    if (done & in_log) != ledger.forwarded or sink_at != ledger.sink_size:
        try:
            record(state, entries, done, sink_at)
        except ForwardError as exc:
            # Nothing is sent twice all the same: the next run finds these entries in the sink itself.
            problem = problem or (
                f"{exc}; {sink} holds the {sent} entries sent, and the next run finds them there instead of sending "
                "them again"
            )
    return sent, len(todo) - sent, problem


def _to_webhook(
    processor: ForwardProcessor,
    agent: str,
    entries: Sequence[Entry],
    todo: Sequence[Entry],
    state: Path,
    done: set[str],
    ledger: Ledger,
    environ: Mapping[str, str] | None,
    sleep: Sleep,
) -> tuple[int, int, str | None]:
    """POST `todo` in batches, each announced in the state before it goes out and settled after; (sent, pending,
    problem)."""
    spec = processor.spec
    shown = shown_url(spec.url or "")
    sent = 0
    try:
        # No token needed (or asked for) when there is nothing new to send.
        token = _token(processor, environ if environ is not None else os.environ) if todo else None
        for chunk in _batches(todo, ledger.in_flight, spec.batch):
            try:
                pending = announce(state, agent, entries, done, chunk)
            except ForwardError as exc:
                raise ForwardError(f"{exc}, so {len(todo) - sent} entries were not sent to {shown}") from exc
            try:
                _post(processor, agent, chunk, token, sleep, pending.key)
            except ForwardError:
                # Left at `?` if this fails too: the next run sends the batch again, which is right as it was refused.
                with contextlib.suppress(OSError):
                    settle(pending, accepted=False)
                raise
            done.update(entry.id for entry in chunk)
            sent += len(chunk)
            try:
                settle(pending, accepted=True)
            except OSError as exc:
                raise ForwardError(
                    f"{shown} accepted {len(chunk)} entries of agent '{agent}', but {state} could not record it "
                    f"({exc.strerror or exc}): a later run sends them again; the remaining "
                    f"{len(todo) - sent} were not sent"
                ) from exc
    except ForwardError as exc:
        return sent, len(todo) - sent, str(exc)
    if sent or (done & {entry.id for entry in entries}) != ledger.forwarded:
        # Tidies the state (the batch's status byte already records it): a failure here loses nothing.
        with contextlib.suppress(ForwardError):
            record(state, entries, done)
    return sent, len(todo) - sent, None


def _batches(todo: Sequence[Entry], in_flight: Sequence[str], size: int) -> list[list[Entry]]:
    """`todo` in batches of `size`; a batch left in flight by a killed run goes first, whole, so it is sent again
    under the same idempotency key."""
    again = set(in_flight)
    first = [entry for entry in todo if entry.id in again]
    rest = [entry for entry in todo if entry.id not in again]
    return ([first] if first else []) + [rest[i : i + size] for i in range(0, len(rest), size)]


def _pause(seconds: float) -> None:
    """Wait before a retry (looked up at call time, so tests can record the waits instead)."""
    time.sleep(seconds)


def write_fully(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (looped only on a short write)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _append_jsonl(path: Path, entries: Sequence[Entry]) -> int:
    """Append the entries' lines to `path` in one O_APPEND write, then fsync; the file's size after it. A write that
    fails is cut back off, so the sink never keeps half an entry."""
    data = b"".join(entry.raw + b"\n" for entry in entries)
    try:
        make_folders(path.parent)
        created = not path.exists()
        if not created and not _ends_with_newline(path):
            # A crash once cut the last line short: start a fresh line so the entries stay readable.
            data = b"\n" + data
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            start = os.fstat(fd).st_size
            try:
                write_fully(fd, data)
                os.fsync(fd)
            except OSError:
                # Shortening a file needs no space, so this works on a full disk too.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)
                    os.fsync(fd)
                raise
            end = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if created:
            fsync_dir(path.parent)
    except OSError as exc:
        raise ForwardError(
            f"{path}: cannot append {len(entries)} forwarded entries ({exc.strerror or exc}); none of them was "
            "forwarded, and a later run sends them; check the folder exists, is writable and has space"
        ) from exc
    return end


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return True
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _token(processor: ForwardProcessor, environ: Mapping[str, str]) -> str | None:
    name = processor.spec.token_env
    if name is None:
        return None
    url = processor.spec.url or ""
    token = environ.get(name, "")
    if not token:
        raise ForwardError(
            f"{shown_url(url)}: the environment variable {name} (token_env) is not set, so nothing was sent; set it "
            "to the webhook's bearer token and run again"
        )
    host = cleartext_host(url)
    if host is not None:
        raise ForwardError(
            f"{shown_url(url)}: this webhook sends a bearer token (token_env {name}) over plain http to {host}, "
            "readable by anyone on the way, so nothing was sent; use https, or a loopback address (127.0.0.1, ::1, "
            "localhost) for a local webhook, and run again: the entries stay unsent until then"
        )
    return token


def cleartext_host(url: str) -> str | None:
    """The host a bearer token would reach in clear text over this URL (plain http to another machine), or none.

    Plain http stays allowed (local webhooks and model servers are common), but not with a token anyone on the way
    could read."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    return host if parts.scheme == "http" and not _loopback(host) else None


def _loopback(host: str) -> bool:
    """Whether a URL's host stays on this machine: `localhost`, 127.0.0.0/8 or ::1 (also IPv4-mapped)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        # Any other name may resolve anywhere.
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def shown_url(url: str) -> str:
    """A webhook URL as messages, reports and the audit log show it: scheme and host only, since the path, the query
    and any `user:password@` often carry a secret (Slack-style `/services/...`, `?token=`)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    rest = "/…" if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{host}{rest}" if parts.scheme else url


# Statuses worth trying again: the server is busy or failing, not refusing this request.
_RETRY_STATUSES = frozenset({408, 425, 429}) | frozenset(range(500, 600))


def _post(
    processor: ForwardProcessor, agent: str, entries: Sequence[Entry], token: str | None, sleep: Sleep, key: str
) -> None:
    """POST one batch, retrying failures with doubling backoff; `ForwardError` once the retries are used up."""
    spec = processor.spec
    url = spec.url or ""
    shown = shown_url(url)
    body = json.dumps({"agent": agent, "entries": [entry.data for entry in entries]}, ensure_ascii=False)
    headers = {"Content-Type": "application/json", "User-Agent": "vault-companion", "Idempotency-Key": key}
    request = urllib.request.Request(url, data=body.encode("utf-8"), headers=headers, method="POST")
    if token is not None:
        # Not copied onto a redirect: an https webhook redirecting to plain http must not get the token in clear.
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    attempts = spec.retries + 1
    last = ""
    for attempt in range(attempts):
        if attempt:
            sleep(spec.backoff_s * 2 ** (attempt - 1))
        try:
            with urllib.request.urlopen(request, timeout=spec.timeout_s) as response:
                response.read()
            return
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code} {exc.reason}"
            exc.close()
            if exc.code not in _RETRY_STATUSES:
                raise ForwardError(
                    f"{shown}: the webhook refused {len(entries)} entries of agent '{agent}' ({last}); they stay "
                    "unsent; check the URL and token_env, and a later run sends them"
                ) from None
        except (OSError, http.client.HTTPException) as exc:  # URLError, refused connections, timeouts, bad replies
            last = str(getattr(exc, "reason", None) or exc) or type(exc).__name__
    raise ForwardError(
        f"{shown}: could not forward {len(entries)} entries of agent '{agent}' after {attempts} attempts ({last}); "
        "they stay unsent and a later run sends them; check the webhook is up and reachable"
    )
