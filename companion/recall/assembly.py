"""Turn one recall into the context an agent is given: its pieces in the fixed context order, under a token budget.

Used by `companion context` and by the agent API; `companion.recall.context` does the ordering and trimming.
"""

from __future__ import annotations

from companion.embedding.tokens import TokenCounter
from companion.recall.context import AssembledContext, Piece, assemble
from companion.recall.engine import Recall
from companion.recall.recap import session_line
from companion.recall.results import RecalledContext, RecallItem
from companion.recall.shown import passage
from companion.recall.temporal import summarise
from companion.words import counted


def used_items(
    engine: Recall, recalled: RecalledContext, summary: tuple[str, str] | bool | None = True
) -> list[RecallItem]:
    """The recalled notes a context includes as related notes: matches (above the relevance floor) among the best
    `warm_results`, not listed already as recent sessions or as the latest summary (`summary`, as
    `engine.latest_summary` gives it; read here when True). These, not every listed result, count as used
    (accessed) when the context is given to an agent."""
    if summary is True:
        summary = engine.latest_summary(recalled.as_of)
    return [
        item
        for item in recalled.results[: engine.policy.warm_results]
        if item.tier != "temporal"
        and (not isinstance(summary, tuple) or item.path != summary[0])  # the latest summary is in already, whole
        and item.explanation is not None
        and item.matches(recalled.floor)
    ]


def used_notes(assembled: AssembledContext) -> list[str]:
    """The notes an assembled context includes as related notes, once each: what counts as used (accessed) when it
    is given to an agent. A note trimmed by the budget never reached the agent, so it does not count."""
    return list(dict.fromkeys(p.source for p in assembled.pieces if p.kind == "entity" and p.source))


def build(engine: Recall, recalled: RecalledContext, budget: int, count: TokenCounter) -> AssembledContext:
    """Turn a recall into context pieces and assemble them (in the context order, with the recap boost)."""
    settings = engine.settings
    summary = engine.latest_summary(recalled.as_of)
    recent = [
        Piece(
            "recent",
            f"- {t.when:%Y-%m-%d %H:%M} {t.title}" + (f": {t.summary}" if t.summary else ""),
            t.when.timestamp(),
            t.path,
        )
        for t in recalled.temporal
    ]
    if recalled.period is not None:
        # A recap of a period lists that period's sessions (hot ones too), each with its exchange.
        recent = [Piece("recent", f"- {session_line(t)}", t.when.timestamp(), t.path) for t in recalled.period_sessions]
        if recalled.period_more:
            more = counted(recalled.period_more, "more session")
            recent.append(Piece("recent", f"- and {more} of {recalled.period.phrase}, not listed", 0.0))
    elif recalled.recap:
        # A recap is about the latest sessions, hot ones first of all: list them with summaries too, as their
        # raw turns are the first thing trimmed.
        recent += [
            Piece("recent", f"- {when:%Y-%m-%d %H:%M} {s.session_key}: {summarise(s)}", when.timestamp(), s.path)
            for s in recalled.sessions
            if (when := s.when) is not None
        ]
    entities = [
        Piece(
            "entity", f"[[{item.title}]] ({item.date[:10] if item.date else item.kind})\n{text}", item.score, item.path
        )
        # Every tier's matches, not only warm ones: a hot session that answers the message must survive even
        # when the raw turns are trimmed. Temporal items are listed under recent sessions already (never repeated);
        # a note below the relevance floor is noise.
        for item in used_items(engine, recalled, summary)  # the summary read once, above
        if (text := passage(engine, item))
    ]
    turns = [
        Piece(
            "turn",
            f"{s.date} {s.time} {s.session_key}\n{s.body.strip()}",
            when.timestamp() if (when := s.when) else 0.0,
            s.path,
        )
        for s in recalled.sessions
        if s.body.strip()
    ]
    return assemble(
        policy=settings.context_policy,
        instruction=settings.context_instruction,
        message=recalled.query,
        budget=budget,
        count=count,
        summary=summary[1] if summary else "",
        recent=recent,
        entities=entities,
        turns=turns,
    )
