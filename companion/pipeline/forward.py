"""Sending an agent's entries to a `forward` processor's sink, each entry once: a JSONL file or an HTTP webhook.

The pipeline calls `forward_entries` with the entries as redaction left them. What was sent is remembered by id in a
small state file per agent and sink, so a later run sends only what is new (or what an earlier run failed to send);
ids no longer in the log are pruned, so the file stays as small as the log. Delivery is at least once: a crash between
sending and recording the state sends those entries again on the next run, never loses them.

A webhook's bearer token (`token_env`) is only ever sent over https or to a loopback address: a token meant for a
plain `http://` URL on another host is refused, with nothing sent, rather than put on the network in clear text.

A sink that fails (an unreachable webhook after its retries, an unwritable file) never raises: the failure is
returned in the `ForwardReport`, the other processors' results are written as usual, and a later run sends the rest.
"""

from __future__ import annotations

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

from companion.atomic import fsync_dir, make_folders, write_atomic
from companion.errors import ForwardError
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
    """Send the entries of `agent` that `state` does not list yet, and record them there; never raises."""
    spec = processor.spec
    target = processor.target(agent)

    def report(sent: int, pending: int, problem: str | None = None) -> ForwardReport:
        shown = shown_url(target) if spec.sink == "webhook" else target
        return ForwardReport(spec.sink, shown, state, sent, pending, problem)

    try:
        done = _read_state(state)
    except ForwardError as exc:
        return report(0, len(entries), str(exc))
    todo = [entry for entry in entries if entry.id not in done]
    if dry_run:
        return report(len(todo), 0)
    recorded = set(done)
    done &= {entry.id for entry in entries}
    sent, problem = 0, None
    try:
        if spec.sink == "jsonl":
            _append_jsonl(processor.jsonl_path(agent), todo)
            done.update(entry.id for entry in todo)
            sent = len(todo)
        else:
            # No token needed (or asked for) when there is nothing new to send.
            token = _token(processor, environ if environ is not None else os.environ) if todo else None
            for start in range(0, len(todo), spec.batch):
                chunk = todo[start : start + spec.batch]
                _post(processor, agent, chunk, token, sleep or _pause)
                done.update(entry.id for entry in chunk)
                sent += len(chunk)
                # Recorded after every batch, so a crash or a failure later resends at most the batch in flight.
                _write_state(state, entries, done)
                recorded = set(done)
    except ForwardError as exc:
        problem = str(exc)
    if done != recorded:
        try:
            _write_state(state, entries, done)
        except ForwardError as exc:
            problem = problem or str(exc)
    return report(sent, len(todo) - sent, problem)


def _pause(seconds: float) -> None:
    """Wait before a retry (looked up at call time, so tests can record the waits instead)."""
    time.sleep(seconds)


def _read_state(state: Path) -> set[str]:
    try:
        text = state.read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise ForwardError(f"{state}: cannot read the forward state ({exc.strerror or exc}); nothing was sent") from exc
    try:
        data = json.loads(text)
        ids = data["forwarded"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValueError("'forwarded' is not a list of ids")
    except (ValueError, KeyError, TypeError) as exc:
        raise ForwardError(
            f"{state}: the forward state is damaged ({exc}), so nothing was sent rather than risk sending entries "
            "twice; fix the file, or delete it to send every entry in the log again"
        ) from exc
    return set(ids)


def _write_state(state: Path, entries: Sequence[Entry], done: set[str]) -> None:
    # In log order, so the file reads like the log it tracks.
    data = {"forwarded": [entry.id for entry in entries if entry.id in done]}
    try:
        make_folders(state.parent)
        write_atomic(state, (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as exc:
        raise ForwardError(
            f"{state}: cannot record what was forwarded ({exc.strerror or exc}); a later run may send those entries "
            "again"
        ) from exc


def _append_jsonl(path: Path, entries: Sequence[Entry]) -> None:
    """Append the entries' lines to `path` in one O_APPEND write (looped only on a short write), then fsync."""
    if not entries:
        return
    data = b"".join(entry.raw + b"\n" for entry in entries)
    try:
        make_folders(path.parent)
        created = not path.exists()
        if not created and not _ends_with_newline(path):
            # A crash once cut the last line short: start a fresh line so the entries stay readable.
            data = b"\n" + data
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(path.parent)
    except OSError as exc:
        raise ForwardError(
            f"{path}: cannot append {len(entries)} forwarded entries ({exc.strerror or exc}); they stay unsent and "
            "a later run sends them; check the folder exists and is writable"
        ) from exc


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


def _post(processor: ForwardProcessor, agent: str, entries: Sequence[Entry], token: str | None, sleep: Sleep) -> None:
    """POST one batch, retrying failures with doubling backoff; `ForwardError` once the retries are used up."""
    spec = processor.spec
    url = spec.url or ""
    shown = shown_url(url)
    body = json.dumps({"agent": agent, "entries": [entry.data for entry in entries]}, ensure_ascii=False)
    headers = {"Content-Type": "application/json", "User-Agent": "vault-companion"}
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
