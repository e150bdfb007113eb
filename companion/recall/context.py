"""Context assembly under a hard token budget, as a pure function of its inputs and a token counter.

What goes in, in this order: the compact memory policy and the operation instruction (always), the current
message (always, shortened only as a last resort), the latest summary, recent sessions (the temporal
tier), related notes by relevance, and raw turns of the hot sessions. Over budget, pieces leave in this order:
raw turns first (oldest first), then related notes (least relevant first), then recent sessions (oldest first),
then the summary; then the message is shortened. The policy and the instruction are never dropped: if they alone
exceed the budget, assembly fails with a `ContextError` instead of breaking either promise.

Counts come from the caller's tokenizer (the embedding model's WordPiece tokenizer in the CLI, which works
offline); the final text is counted again, so the budget holds for any tokenizer, not only additive ones.

Every piece, the message included, passes through the secret redaction (`companion.secrets`) before anything is
counted: a context goes to a model, and the notes it is built from are read as the user wrote them. Redacting after
the count would change the text the budget was held to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from companion.errors import ContextError
from companion.secrets import redact_text

PieceKind = Literal["policy", "instruction", "message", "summary", "recent", "entity", "turn"]

TokenCount = Callable[[str], int]

_HEADINGS: dict[PieceKind, str] = {
    "policy": "# Memory policy",
    "instruction": "# Instruction",
    "message": "# Current message",
    "summary": "# Latest summary",
    "recent": "# Recent sessions",
    "entity": "# Related notes",
    "turn": "# Recent turns",
}
_ORDER: tuple[PieceKind, ...] = ("policy", "instruction", "message", "summary", "recent", "entity", "turn")


@dataclass(frozen=True)
class Piece:
    """One thing that may go into a context."""

    kind: PieceKind
    """What it is; decides its section and when it is trimmed."""
    text: str
    """The text as it will appear."""
    relevance: float = 0.0
    """For entities: higher stays longer. For turns and recent sessions: a time stamp, newer stays longer."""
    source: str = ""
    """The vault path it came from, if any."""


@dataclass(frozen=True)
class AssembledContext:
    """A context ready to hand to a model, with what was left out and why."""

    text: str
    """The assembled text."""
    tokens: int
    """Tokens in `text`, by the counter it was built with."""
    budget: int
    """The hard budget it respects."""
    pieces: tuple[Piece, ...]
    """The pieces kept, in the order they appear."""
    dropped: tuple[Piece, ...]
    """The pieces trimmed, in the order they were trimmed."""
    message_shortened: bool
    """True when the current message itself had to be cut to fit."""


def assemble(
    *,
    policy: str,
    instruction: str,
    message: str,
    budget: int,
    count: TokenCount,
    summary: str = "",
    recent: Sequence[Piece] = (),
    entities: Sequence[Piece] = (),
    turns: Sequence[Piece] = (),
) -> AssembledContext:
    """Assemble a context of at most `budget` tokens (a recap's boost is the caller's: more recent sessions,
    with summaries, which outlast related notes when trimming)."""
    if budget < 1:
        raise ContextError(f"the token budget must be at least 1, got {budget}")
    policy, instruction, message, summary = (redact_text(t) for t in (policy, instruction, message, summary))
    recent, entities, turns = ([replace(p, text=redact_text(p.text)) for p in ps] for ps in (recent, entities, turns))
    fixed = [Piece("policy", policy.strip()), Piece("instruction", instruction.strip())]
    floor = count(render(fixed))
    if floor > budget:
        raise ContextError(
            f"the memory policy and instruction alone take {floor} tokens, over the budget of {budget}; "
            "raise the budget (`--budget`, the agent's `budget`, or `retention.token_budget`) or shorten them"
        )
    kept: list[Piece] = [*fixed, Piece("message", message.strip())]
    if summary.strip():
        kept.append(Piece("summary", summary.strip()))
    kept.extend(p for p in recent if p.text.strip())
    kept.extend(p for p in entities if p.text.strip())
    kept.extend(p for p in turns if p.text.strip())
    kept = _ordered(kept)
    dropped: list[Piece] = []
    for victim in _trim_order(kept):
        if count(render(kept)) <= budget:
            break
        kept.remove(victim)
        dropped.append(victim)
    shortened = False
    if count(render(kept)) > budget:
        kept, shortened = _shorten_message(kept, budget, count)
    text = render(kept)
    return AssembledContext(text, count(text), budget, tuple(kept), tuple(dropped), shortened)


def render(pieces: Sequence[Piece]) -> str:
    """The pieces as text: one heading per kind present, pieces separated by blank lines."""
    blocks: list[str] = []
    current: PieceKind | None = None
    for piece in pieces:
        if piece.kind != current:
            blocks.append(_HEADINGS[piece.kind])
            current = piece.kind
        if piece.text:
            blocks.append(piece.text)
    return "\n\n".join(blocks)


def _ordered(pieces: list[Piece]) -> list[Piece]:
    rank = {kind: i for i, kind in enumerate(_ORDER)}
    # Entities by relevance, turns and recent sessions newest first; a stable sort keeps the rest as given.
    return sorted(pieces, key=lambda p: (rank[p.kind], -p.relevance if p.kind in {"entity", "turn", "recent"} else 0))


def _trim_order(pieces: Sequence[Piece]) -> list[Piece]:
    def weakest_first(kind: PieceKind) -> list[Piece]:
        return sorted((p for p in pieces if p.kind == kind), key=lambda p: p.relevance)

    return [*weakest_first("turn"), *weakest_first("entity"), *weakest_first("recent"), *weakest_first("summary")]


def _shorten_message(pieces: list[Piece], budget: int, count: TokenCount) -> tuple[list[Piece], bool]:
    index = next(i for i, p in enumerate(pieces) if p.kind == "message")
    text = pieces[index].text
    low, high = 0, len(text)
    # The longest prefix of the message (by characters) whose rendering fits; binary search keeps counts few.
    while low < high:
        mid = (low + high + 1) // 2
        trial = [*pieces[:index], Piece("message", _cut(text, mid)), *pieces[index + 1 :]]
        if count(render(trial)) <= budget:
            low = mid
        else:
            high = mid - 1
    shortened = [*pieces[:index], Piece("message", _cut(text, low)), *pieces[index + 1 :]]
    if count(render(shortened)) > budget:
        # Even an empty message overflows (a heading costs tokens too): leave the section out entirely.
        shortened = [p for p in shortened if p.kind != "message"]
    return shortened, True


def _cut(text: str, length: int) -> str:
    if length >= len(text):
        return text
    return text[:length].rstrip() + " …" if length else ""
