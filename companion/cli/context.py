"""`companion context QUERY`: the context an agent would be given for a message, under a hard token budget."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import (
    add_record_argument,
    add_scope_arguments,
    add_vault_arguments,
    open_workspace,
    parse_as_of,
    scope_from_args,
    sync_first,
)
from companion.cli.output import print_json
from companion.embedding.tokens import TokenCounter
from companion.errors import ConfigError
from companion.recall.context import AssembledContext, Piece, assemble
from companion.recall.engine import Recall
from companion.recall.results import RecalledContext
from companion.recall.temporal import summarise

MIN_RELEVANCE = 0.1
"""Related notes below this relevance (of 1) stay out of a context, whatever room is left."""


def register(sub: Any) -> None:
    """Add the `context` subcommand."""
    p = sub.add_parser("context", help="assemble the context for a message under a token budget")
    add_vault_arguments(p)
    p.add_argument("query", help="the current user message")
    p.add_argument("--budget", type=int, default=None, help="hard token budget (default: retention.token_budget)")
    add_scope_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_record_argument(p, "the notes put in the context (default: yes, except with --as-of)")
    p.set_defaults(run=run)


def build(engine: Recall, recalled: RecalledContext, budget: int, count: TokenCounter) -> AssembledContext:
    """Turn a recall into context pieces and assemble them (seed 001's order, seed 002's recap boost)."""
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
    if recalled.recap:
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
        # when the raw turns are trimmed.
        # Temporal items are listed under recent sessions already (seed 002: never repeated); a weak match is noise.
        for item in recalled.results[: engine.policy.warm_results]
        if item.tier != "temporal"
        and (summary is None or item.path != summary[0])  # the latest summary is in already, whole
        and item.explanation is not None
        and item.explanation.relevance >= MIN_RELEVANCE
        and (text := engine.passage(item))
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


def run(args: argparse.Namespace) -> int:
    """Recall, then assemble; read-only."""
    scope = scope_from_args(args)
    as_of = parse_as_of(args.as_of)
    ws = open_workspace(args)
    try:
        budget = args.budget if args.budget is not None else ws.config.retention.token_budget
        if budget < 1:
            raise ConfigError("--budget must be at least 1")
        sync_first(ws, args)
        engine = ws.recall()
        recalled = engine.recall(args.query, as_of=as_of, scope=scope, bodies=True)
        counter = TokenCounter()
        assembled = build(engine, recalled, budget, counter)
        if args.record if args.record is not None else as_of is None:
            # What an agent is given counts as surfaced (seed 004), but only what survived the budget.
            engine.record(dict.fromkeys(p.source for p in assembled.pieces if p.kind == "entity" and p.source))
    finally:
        ws.close()
    if args.json:
        print_json(
            {
                "query": args.query,
                "budget": assembled.budget,
                "tokens": assembled.tokens,
                "tokenizer": counter.name,
                "recap": recalled.recap,
                "message_shortened": assembled.message_shortened,
                "kept": [{"kind": p.kind, "source": p.source, "tokens": counter(p.text)} for p in assembled.pieces],
                "dropped": [{"kind": p.kind, "source": p.source, "tokens": counter(p.text)} for p in assembled.dropped],
                "text": assembled.text,
            }
        )
        return 0
    print(assembled.text)
    print(
        f"\n-- {assembled.tokens} of {assembled.budget} tokens ({counter.name}); "
        f"{len(assembled.pieces)} pieces kept, {len(assembled.dropped)} trimmed"
        + (" (message shortened)" if assembled.message_shortened else "")
    )
    return 0
