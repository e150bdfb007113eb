"""Prompts for the common asks, which clients that support them offer as slash commands: a recap of the last days,
and what the memory holds about something. Each carries the vault's own answer (the sessions and notes, or the best
matches, one line each and numbered `@1`, `@2`...), so the model can reply at once and read further only where a
line is not enough.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import Field

from companion.agent.api import LINE_CHARS, AgentApi
from companion.agent.timeline import MOST_AROUND
from companion.agent.views import about
from companion.mcp_server.failures import Refusal
from companion.words import counted, one_line

if TYPE_CHECKING:
    from companion.mcp_server.server import CompanionServer

RECAP_DAYS = 90
"""Most days a recap reaches back."""
RECALL_NOTES = 8
"""How many notes the memory prompt brings."""
T = TypeVar("T")


def add_prompts(server: MCPServer, companion: CompanionServer) -> None:
    """Register the prompts."""

    async def call(work: Callable[[AgentApi], T], ctx: Context[Any, Any]) -> T:
        try:
            return await companion.call(work, ctx)
        except Refusal as exc:  # a prompt's bad argument is the protocol's invalid-params error
            code = INTERNAL_ERROR if exc.field is None else INVALID_PARAMS  # no field: the server's own failure
            raise MCPError(code, exc.error, {"field": exc.field}) from exc

    @server.prompt(
        name="recap",
        title="Recap of the last days",
        description="Recap what was discussed, decided and left open in the last days, from the sessions and notes "
        "of the user's vault.",
    )
    async def recap(
        ctx: Context[Any, Any],
        days: Annotated[str, Field(description=f"How many days back, 1-{RECAP_DAYS} (default 3)")] = "3",
    ) -> list[Message]:
        """The recap prompt: the last days' sessions and dated notes, one line each."""
        reach = _days(days)
        line = await call(lambda api: api.timeline(before=MOST_AROUND, after=0, days=reach), ctx)
        entries = [
            f"@{n} {e.when} {e.kind} [[{e.path.removesuffix('.md')}]]: {e.summary}"
            for n, e in enumerate(line.entries, 1)
        ]
        listing = "\n".join(entries) if entries else "(nothing was recorded in these days)"
        if len(line.entries) == MOST_AROUND:
            listing += f"\n(the latest {MOST_AROUND} only: older ones are in the vault, found by timeline or search)"
        return [
            UserMessage(
                f"Recap what we did in the last {counted(reach, 'day')}, from the memory in my Obsidian vault below "
                "(oldest first): what was discussed and decided, what is still open, and what must not be "
                "forgotten. Read a note whole with the vault_read tool (by its @number) where its line is not "
                "enough; say so plainly if nothing was recorded.\n\n" + listing
            )
        ]

    @server.prompt(name="recall", title="What do you remember about…")
    async def recall(
        ctx: Context[Any, Any],
        topic: Annotated[str, Field(description="What to remember: a person, a project, a question...")],
    ) -> list[Message]:
        """What the memory in the user's vault holds about something: the best matching notes, one line each."""
        if not topic.strip():
            raise MCPError(INVALID_PARAMS, "topic is empty: say what to remember", {"field": "topic"})
        found = await call(lambda api: api.search(topic, k=RECALL_NOTES, snippet_chars=LINE_CHARS), ctx)
        lines = [
            f"@{n} {f.wikilink}"
            + (f" ({about(f.note_type, f.date)})" if about(f.note_type, f.date) else "")
            + f": {one_line(f.snippet, LINE_CHARS)}"
            for n, f in enumerate(found, 1)
        ]
        if not found:
            head = "The vault holds no note about it."
        elif not any(f.match for f in found):
            head = "No note matches it well; the closest are:"
        else:
            head = "These notes match best, best first:"
        return [
            UserMessage(
                f"What do you remember about {topic.strip()}? Answer from the memory in my Obsidian vault. {head}\n\n"
                + "\n".join(lines)
                + "\n\nRead the notes you need whole with the vault_read tool (by their @number), put one in its "
                "time with the timeline tool, and say plainly what the vault does not hold."
            )
        ]


def _days(text: str) -> int:
    """The recap's reach in days, from the prompt argument's text."""
    try:
        days = int(str(text).strip())
    except ValueError:
        raise MCPError(INVALID_PARAMS, f"days: {text!r} is not a whole number of days", {"field": "days"}) from None
    if not 1 <= days <= RECAP_DAYS:
        raise MCPError(INVALID_PARAMS, f"days: must be between 1 and {RECAP_DAYS}, got {days}", {"field": "days"})
    return days
