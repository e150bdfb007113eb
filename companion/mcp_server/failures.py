"""One shape for every failed tool call: `{"error": ..., "field": ...}` with `isError`, whatever failed.

An argument the input schema refuses, an argument the tool does not take, a bad value the agent API finds, a write
the policy refuses, an unknown tool and a crash all reach the agent the same way, so it can read what went wrong
and which argument to change without parsing the SDK's own texts.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from companion.errors import AgentInputError, CompanionError
from companion.mcp_server.shapes import Failure
from companion.secrets import redact_text


class Refusal(ToolError):
    """A call that failed in a way the agent can act on (a tool error the SDK passes on as such)."""

    def __init__(self, error: str, field: str | None = None) -> None:
        super().__init__(error)
        self.error = error
        """What went wrong and what to do instead."""
        self.field = field
        """The argument at fault, None when none is."""


def refusal_of(exc: BaseException) -> Refusal | None:
    """The refusal an exception carries (itself, or what it was raised from), or None for a crash.

    What the SDK marks unexpected is a crash whatever it wraps: a result failing its own shape is the server's
    fault, never the caller's argument."""
    if isinstance(exc, UnexpectedToolError):
        return None
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, Refusal):
            return seen
        if isinstance(seen, AgentInputError):
            return Refusal(seen.reason, seen.field)
        if isinstance(seen, ValidationError):
            return schema_refusal(seen)
        if isinstance(seen, CompanionError):
            return Refusal(str(seen))
        seen = seen.__cause__
    return None


def schema_refusal(exc: ValidationError) -> Refusal:
    """The input schema's refusal, naming the first argument at fault and saying what each wants."""
    problems = []
    fields = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        fields.append(where)
        problems.append(f"{where}: {_plain(error)}")
    return Refusal("; ".join(problems), fields[0] if fields else None)


def _plain(error: Any) -> str:
    """A validation message without the input echoed back (it may be large, or the agent's private data)."""
    if error["type"] == "missing":
        return "required"
    return str(error["msg"])


def crash(tool: str) -> Refusal:
    """What the agent is told of a failure that is no fault of its call (the details go to the server's log)."""
    return Refusal(f"{tool} failed unexpectedly; the server's log on stderr says why")


def failed(refusal: Refusal) -> CallToolResult:
    """The result a failed call returns; its message redacted, as it may name a note or quote one."""
    text = Failure(error=redact_text(refusal.error), field=refusal.field).model_dump_json()
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
