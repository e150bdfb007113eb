"""The stdio transport of `companion mcp`: one JSON-RPC message per line, and an answer to every line.

The SDK's own stdio transport drops a line it cannot parse without a word, so a client that sent bad JSON, bytes that
are not UTF-8, or a lone surrogate escape (`"\\ud800"`: valid JSON syntax, but not Unicode text) waits for an answer
that never comes. This one answers such a line with the JSON-RPC 2.0 error it calls for (parse error, invalid
request, or invalid params naming the field, with the request's id when it can be read), logs it on stderr and reads
the next line. On the way out, an answer holding text that cannot be encoded (a lone surrogate from a file name with
undecodable bytes) is sent with U+FFFD in its place instead of ending the server.

While it serves, fd 0 reads the null device and fd 1 writes to stderr, as under the SDK's transport: a library or a
child process that prints cannot corrupt the protocol, nor read the client's messages.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

log = logging.getLogger(__name__)

ANSWER_AFTER_EOF_S = 120.0
"""How long the server goes on answering the requests it has read once stdin has ended."""

_SURROGATE = re.compile("[\ud800-\udfff]")
"""A surrogate code point: in a Python string it is always a lone one (a valid pair decodes to one character)."""


@dataclass(frozen=True)
class BadLine:
    """A line of stdin that holds no message the session can take, and what it is answered."""

    code: int
    """The JSON-RPC error code: parse error, invalid request or invalid params."""
    message: str
    """What is wrong with the line, for the client and the log."""
    request_id: int | str | None
    """The id of the request the line was meant to be, when it could be read (else the answer's id is null)."""

    def reply(self) -> types.JSONRPCError:
        """The JSON-RPC error answering the line."""
        return types.JSONRPCError(
            jsonrpc="2.0", id=self.request_id, error=types.ErrorData(code=self.code, message=self.message)
        )


def read_message(line: bytes) -> types.JSONRPCMessage | BadLine | None:
    """The message one line holds, a `BadLine` saying why it holds none, or None for a blank line."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadLine(
            types.PARSE_ERROR,
            f"Parse error: the line is not UTF-8 (byte {line[exc.start]:#04x} at offset {exc.start})",
            None,
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # ValueError: bad JSON, or an integer too long to convert
        return BadLine(types.PARSE_ERROR, f"Parse error: {exc}", None)
    if not isinstance(data, dict):
        return BadLine(
            types.INVALID_REQUEST, "Invalid Request: a message is one JSON object (batches are not supported)", None
        )
    # Only a request is answered by its id: a response's id names one of the server's own requests.
    raw_id = data.get("id")
    request_id = raw_id if "method" in data and _usable_id(raw_id) else None
    if "id" in data and raw_id is not None and not _usable_id(raw_id):
        return BadLine(types.INVALID_REQUEST, "Invalid Request: id must be a string or an integer", None)
    surrogate = _lone_surrogate(data)
    if surrogate is not None:
        where, char, in_params = surrogate
        explained = (
            f"{where} holds a lone surrogate (\\u{ord(char):04x}), which is not Unicode text; "
            "send UTF-8, or a character outside the BMP as a surrogate pair"
        )
        if request_id is None:  # nothing to answer by: the line is as good as unparsable
            return BadLine(types.PARSE_ERROR, f"Parse error: {explained}", None)
        if in_params:
            return BadLine(types.INVALID_PARAMS, f"Invalid params: {explained}", request_id)
        return BadLine(types.INVALID_REQUEST, f"Invalid Request: {explained}", request_id)
    try:
        # The SDK's own parser, as its transport uses it, so what passes here means what it means there.
        return types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        return BadLine(types.INVALID_REQUEST, f"Invalid Request: {_shape_errors(data, exc)}", request_id)


def encode(message: types.JSONRPCMessage) -> bytes:
    """One line of the wire for `message`; text that is not Unicode (lone surrogates) goes as U+FFFD."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        log.warning("an answer held text that is not Unicode (a lone surrogate); sent with U+FFFD in its place")
        text = json.dumps(_mend(data), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


@asynccontextmanager
async def stdio_transport(
    wire: tuple[BinaryIO, BinaryIO] | None = None,
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The session's (read, write) streams over `wire` (binary stdin and stdout; the process's own by default).

    Serves until stdin ends and the session has closed its write stream.
    """
    restore: Callable[[], None] | None = None
    if wire is None:
        wire_in, wire_out, restore = _claim_std_streams()
    else:
        wire_in, wire_out = wire
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    replies = write_send.clone()  # the reader's answers to bad lines go through the one writer: lines never interleave
    # Requests read and not yet answered: a client that writes its requests and closes stdin still gets every answer.
    pending: set[int | str] = set()
    answered = anyio.Event()

    async def read_lines() -> None:
        nonlocal answered
        number = 0
        async with read_send, replies:
            while True:
                # Abandoned on cancel: a thread blocked on a silent stdin must not hold the server's exit.
                line = await anyio.to_thread.run_sync(wire_in.readline, abandon_on_cancel=True)
                if not line:
                    with anyio.move_on_after(ANSWER_AFTER_EOF_S):
                        while pending:
                            answered = anyio.Event()
                            await answered.wait()
                    return
                number += 1
                read = read_message(line)
                try:
                    if isinstance(read, BadLine):
                        log.warning("stdin line %d answered with error %d: %s", number, read.code, read.message)
                        await replies.send(SessionMessage(read.reply()))
                    elif read is not None:
                        request = getattr(read, "root", read)
                        request_id = getattr(request, "id", None)
                        if hasattr(request, "method") and isinstance(request_id, int | str):
                            pending.add(request_id)
                        await read_send.send(SessionMessage(read))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the session is over

    async def write_lines() -> None:
        async with write_receive:
            async for session_message in write_receive:
                answer = getattr(session_message.message, "root", session_message.message)
                if not hasattr(answer, "method") and getattr(answer, "id", None) in pending:
                    pending.discard(answer.id)
                    answered.set()
                data = encode(session_message.message)
                try:
                    await anyio.to_thread.run_sync(_write, wire_out, data)
                except OSError as exc:  # the client closed its end: nobody is left to answer
                    log.warning("cannot write to stdout (%s); stopping", exc)
                    return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_lines)
            yield read_receive, write_send
            # The session is done with its write stream; closing it (again) lets the writer finish.
            await write_send.aclose()
    finally:
        if restore is not None:
            restore()


def _write(out: BinaryIO, data: bytes) -> None:
    out.write(data)
    out.flush()


def _claim_std_streams() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """The protocol's stdin and stdout on private descriptors, with fd 0 pointed at the null device and fd 1 at
    stderr until the returned function restores them."""
    try:
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:  # a closed standard descriptor: serve the streams as they are, undiverted
        return sys.stdin.buffer, sys.stdout.buffer, lambda: None
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    # closefd=False: a reader thread abandoned at exit may still block on the descriptor, which must not be reused.
    return os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False), restore


def _usable_id(value: Any) -> bool:
    """`value` can be a request id: a string of Unicode text, or an integer."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is None
    return isinstance(value, int) and not isinstance(value, bool)


def _lone_surrogate(message: dict[str, Any]) -> tuple[str, str, bool] | None:
    """Where the first lone surrogate of a parsed message is (`params.arguments.query`), the character, and whether
    it is in the params."""
    # Iterative: json.loads nests as deep as the recursion limit allows, so a recursive walk could not follow it.
    stack: list[tuple[str, Any]] = [("", message)]
    while stack:
        where, value = stack.pop()
        found = None
        if isinstance(value, str):
            found = _SURROGATE.search(value)
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                found = found or _SURROGATE.search(key)
                stack.append((f"{where}.{_short(key)}" if where else key, item))
            where = f"a key of {where or 'the message'}"
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(value))))
        if found:
            return (
                where,
                found.group(),
                where.startswith(("params.", "params[", "a key of params")) or where == "params",
            )
    return None


def _short(key: str) -> str:
    return key if len(key) <= 40 else key[:40] + "..."


def _shape_errors(data: dict[str, Any], exc: ValidationError) -> str:
    """What makes `data` no JSON-RPC message, told against the kind of message it looks like."""
    if "method" in data:
        kind, name = ("JSONRPCRequest", "request") if "id" in data else ("JSONRPCNotification", "notification")
    else:
        kind, name = ("JSONRPCError", "error") if "error" in data else ("JSONRPCResponse", "response")
    errors = [e for e in exc.errors() if e["loc"][:1] == (kind,)] or exc.errors()
    details = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'message'}: {e['msg']}" for e in errors[:3])
    return f"not a JSON-RPC 2.0 {name} ({details})"


def _mend(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_mend(k): _mend(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mend(v) for v in value]
    return value
