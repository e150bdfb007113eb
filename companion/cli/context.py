"""`companion context QUERY`: the context an agent would be given for a message, under a hard token budget, built
from redacted pieces (see `companion.recall.context`); the JSON's sources are redacted too."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import (
    add_record_argument,
    add_scope_arguments,
    add_vault_arguments,
    open_workspace,
    scope_from_args,
    sync_first,
)
from companion.cli.output import print_json
from companion.embedding.tokens import TokenCounter
from companion.errors import ConfigError
from companion.recall.assembly import build
from companion.recall.scope import parse_as_of
from companion.secrets import redact_output


def register(sub: Any) -> None:
    """Add the `context` subcommand."""
    p = sub.add_parser("context", help="assemble the context for a message under a token budget")
    add_vault_arguments(p)
    p.add_argument("query", help="the current user message")
    p.add_argument("--budget", type=int, default=None, help="hard token budget (default: retention.token_budget)")
    add_scope_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_record_argument(p, "the notes put in the context", "by default yes, except with --as-of")
    p.set_defaults(run=run)


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
            # What an agent is given counts as used (for the decay), but only what survived the budget.
            engine.record(dict.fromkeys(p.source for p in assembled.pieces if p.kind == "entity" and p.source))
    finally:
        ws.close()
    if args.json:
        print_json(
            redact_output(
                {
                    "query": args.query,
                    "budget": assembled.budget,
                    "tokens": assembled.tokens,
                    "tokenizer": counter.name,
                    "recap": recalled.recap,
                    "message_shortened": assembled.message_shortened,
                    "kept": [{"kind": p.kind, "source": p.source, "tokens": counter(p.text)} for p in assembled.pieces],
                    "dropped": [
                        {"kind": p.kind, "source": p.source, "tokens": counter(p.text)} for p in assembled.dropped
                    ],
                    "text": assembled.text,
                }
            )
        )
        return 0
    print(assembled.text)
    print(
        f"\n-- {assembled.tokens} of {assembled.budget} tokens ({counter.name}); "
        f"{len(assembled.pieces)} pieces kept, {len(assembled.dropped)} trimmed"
        + (" (message shortened)" if assembled.message_shortened else "")
    )
    return 0
