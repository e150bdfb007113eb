"""Context assembly under a hard token budget: properties with the real tokenizer, and the trimming order."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.embedding.tokens import TokenCounter
from companion.errors import ContextError
from companion.recall.context import AssembledContext, Piece, PieceKind, assemble, render

SECTIONS: tuple[PieceKind, ...] = ("policy", "instruction", "message", "summary", "recent", "entity", "turn")
TRIMMED: tuple[PieceKind, ...] = ("turn", "entity", "recent", "summary")

WORDS = ["memory", "vault", "chalet", "budget", "naïve", "café", "東京", "🙂", "Ünïcödé", "x", "—", "42", "\n", "\t"]
TEXTS = st.one_of(
    st.just(""),
    st.just("   \n\t "),
    st.text(max_size=30),
    st.text(max_size=300),
    # Long text: many real tokens, so budgets in the thousands still bite.
    st.lists(st.sampled_from(WORDS), min_size=100, max_size=1200).map(" ".join),
)
RELEVANCE = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


def _pieces(kind: PieceKind) -> st.SearchStrategy[list[Piece]]:
    piece = st.builds(Piece, kind=st.just(kind), text=TEXTS, relevance=RELEVANCE, source=st.text(max_size=10))
    return st.lists(piece, max_size=6)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def words(text: str) -> int:
    return len(text.split())


def _kinds(pieces: Sequence[Piece]) -> list[str]:
    return [p.kind for p in pieces]


def _texts(pieces: Sequence[Piece], kind: PieceKind) -> list[str]:
    return [p.text for p in pieces if p.kind == kind]


def _check_trim_order(result: AssembledContext) -> None:
    dropped_ranks = [TRIMMED.index(p.kind) for p in result.dropped]
    assert dropped_ranks == sorted(dropped_ranks)
    for kind in TRIMMED:
        gone = [p.relevance for p in result.dropped if p.kind == kind]
        assert gone == sorted(gone)
        if gone:
            assert all(p.relevance >= max(gone) for p in result.pieces if p.kind == kind)
            # A kind is only trimmed once every kind trimmed before it is gone.
            earlier = TRIMMED[: TRIMMED.index(kind)]
            assert not [p for p in result.pieces if p.kind in earlier]


@pytest.mark.model
@settings(max_examples=200, deadline=None)
@given(
    policy=TEXTS,
    instruction=TEXTS,
    message=TEXTS,
    summary=TEXTS,
    recent=_pieces("recent"),
    entities=_pieces("entity"),
    turns=_pieces("turn"),
    budget=st.one_of(st.integers(min_value=-2, max_value=60), st.integers(min_value=1, max_value=3000)),
)
def test_assembly_holds_the_budget_or_fails_only_on_the_fixed_pieces(
    counter: TokenCounter,
    policy: str,
    instruction: str,
    message: str,
    summary: str,
    recent: list[Piece],
    entities: list[Piece],
    turns: list[Piece],
    budget: int,
) -> None:
    fixed = (Piece("policy", policy.strip()), Piece("instruction", instruction.strip()))

    def run() -> AssembledContext:
        return assemble(
            policy=policy,
            instruction=instruction,
            message=message,
            summary=summary,
            recent=recent,
            entities=entities,
            turns=turns,
            budget=budget,
            count=counter,
        )

    if budget < 1 or counter(render(fixed)) > budget:
        with pytest.raises(ContextError):
            run()
        return
    result = run()

    assert counter(result.text) <= budget
    assert result.tokens == counter(result.text)
    assert result.budget == budget
    assert result.text == render(result.pieces)
    assert result.pieces[:2] == fixed
    assert not [p for p in result.dropped if p.kind in {"policy", "instruction", "message"}]
    ranks = [SECTIONS.index(p.kind) for p in result.pieces]
    assert ranks == sorted(ranks)

    # Every non-blank optional piece is either kept or dropped, exactly once.
    given_pieces = [p for p in (*recent, *entities, *turns) if p.text.strip()]
    if summary.strip():
        given_pieces.append(Piece("summary", summary.strip()))
    optional_kept = [p for p in result.pieces if p.kind in TRIMMED]
    assert Counter(optional_kept) + Counter(result.dropped) == Counter(given_pieces)
    _check_trim_order(result)

    kept_message = [p.text for p in result.pieces if p.kind == "message"]
    if not result.message_shortened:
        assert kept_message == [message.strip()]
        if result.dropped:
            # The last piece dropped had to go: putting it back overflows.
            back = sorted([*result.pieces, result.dropped[-1]], key=lambda p: SECTIONS.index(p.kind))
            assert counter(render(back)) > budget
    else:
        assert not optional_kept
        assert len(kept_message) <= 1
        for text in kept_message:
            assert text == "" or (text.endswith(" …") and message.strip().startswith(text[: -len(" …")]))


@pytest.mark.model
def test_real_tokenizer_counts_a_full_context(counter: TokenCounter) -> None:
    result = assemble(
        policy="Keep memories short.",
        instruction="Answer the user.",
        message="What did we plan for the chalet?",
        summary="We planned the ski trip.",
        entities=[Piece("entity", "Chalet budget: 1200 EUR.", 0.8, "Notes/Chalet.md")],
        budget=2000,
        count=counter,
    )
    assert result.dropped == () and not result.message_shortened
    assert 0 < result.tokens == counter(result.text) <= 2000


def erratic(text: str) -> int:
    # Neither additive nor monotone in the text's length: the budget must hold for any counter.
    return len(text) // 20 + zlib.crc32(text.encode()) % 40


@settings(max_examples=300, deadline=None)
@given(
    policy=st.text(max_size=40),
    instruction=st.text(max_size=40),
    message=TEXTS,
    summary=st.text(max_size=200),
    entities=_pieces("entity"),
    turns=_pieces("turn"),
    budget=st.integers(min_value=-1, max_value=400),
)
def test_any_counter_keeps_the_budget(
    policy: str, instruction: str, message: str, summary: str, entities: list[Piece], turns: list[Piece], budget: int
) -> None:
    fixed = (Piece("policy", policy.strip()), Piece("instruction", instruction.strip()))
    try:
        result = assemble(
            policy=policy,
            instruction=instruction,
            message=message,
            summary=summary,
            entities=entities,
            turns=turns,
            budget=budget,
            count=erratic,
        )
    except ContextError:
        assert budget < 1 or erratic(render(fixed)) > budget
        return
    assert budget >= 1 and erratic(render(fixed)) <= budget
    assert result.tokens == erratic(result.text) <= budget
    assert result.pieces[:2] == fixed


# A deterministic context for the trimming order, counted in words. Headings are 2-3 words each:
# policy 3+1, instruction 2+1, message 3+4, summary 3+2, recent 3+2, entities 3+3, turns 3+2 = 35.
def _full(budget: int) -> AssembledContext:
    return assemble(
        policy="p",
        instruction="i",
        message="m1 m2 m3 m4",
        summary="s1 s2",
        recent=[Piece("recent", "r-old", 1.0), Piece("recent", "r-new", 2.0)],
        entities=[Piece("entity", "e-low", 0.1), Piece("entity", "e-high", 0.9), Piece("entity", "e-mid", 0.5)],
        turns=[Piece("turn", "t-old", 10.0), Piece("turn", "t-new", 20.0)],
        budget=budget,
        count=words,
    )


def _dropped(result: AssembledContext) -> list[str]:
    return [p.text for p in result.dropped]


def test_a_context_that_fits_drops_nothing() -> None:
    result = _full(35)
    assert result.tokens == 35
    assert result.dropped == () and not result.message_shortened
    assert _kinds(result.pieces) == [
        "policy",
        "instruction",
        "message",
        "summary",
        "recent",
        "recent",
        "entity",
        "entity",
        "entity",
        "turn",
        "turn",
    ]


def test_sections_are_ordered_and_entities_by_relevance_descending() -> None:
    result = _full(1000)
    assert _texts(result.pieces, "entity") == ["e-high", "e-mid", "e-low"]
    assert _texts(result.pieces, "turn") == ["t-new", "t-old"]
    assert _texts(result.pieces, "recent") == ["r-new", "r-old"]
    assert result.text == (
        "# Memory policy\n\np\n\n# Instruction\n\ni\n\n# Current message\n\nm1 m2 m3 m4\n\n"
        "# Latest summary\n\ns1 s2\n\n# Recent sessions\n\nr-new\n\nr-old\n\n"
        "# Related notes\n\ne-high\n\ne-mid\n\ne-low\n\n# Recent turns\n\nt-new\n\nt-old"
    )


@pytest.mark.parametrize(
    ("budget", "dropped", "tokens"),
    [
        (34, ["t-old"], 34),
        (33, ["t-old", "t-new"], 30),  # the last turn takes its heading with it
        (29, ["t-old", "t-new", "e-low"], 29),
        (28, ["t-old", "t-new", "e-low", "e-mid"], 28),
        (26, ["t-old", "t-new", "e-low", "e-mid", "e-high"], 24),
        (23, ["t-old", "t-new", "e-low", "e-mid", "e-high", "r-old"], 23),
        (20, ["t-old", "t-new", "e-low", "e-mid", "e-high", "r-old", "r-new"], 19),
        (14, ["t-old", "t-new", "e-low", "e-mid", "e-high", "r-old", "r-new", "s1 s2"], 14),
    ],
)
def test_pieces_leave_turns_first_then_entities_then_recent_then_summary(
    budget: int, dropped: list[str], tokens: int
) -> None:
    result = _full(budget)
    assert _dropped(result) == dropped
    assert result.tokens == tokens
    assert not result.message_shortened
    assert _texts(result.pieces, "message") == ["m1 m2 m3 m4"]


def test_the_message_is_shortened_only_after_everything_else_is_gone() -> None:
    result = _full(13)
    assert _dropped(result) == ["t-old", "t-new", "e-low", "e-mid", "e-high", "r-old", "r-new", "s1 s2"]
    assert result.message_shortened
    assert _texts(result.pieces, "message") == ["m1 m2 …"]
    assert result.tokens == 13


def test_a_message_cut_to_nothing_keeps_its_heading_while_that_fits() -> None:
    result = _full(10)
    assert result.message_shortened
    assert _texts(result.pieces, "message") == [""]
    assert result.text.endswith("# Current message")
    assert result.tokens == 10


def test_the_message_section_goes_when_even_its_heading_overflows() -> None:
    result = _full(9)
    assert result.message_shortened
    assert _kinds(result.pieces) == ["policy", "instruction"]
    assert result.tokens == 7


def test_policy_and_instruction_over_budget_is_an_error() -> None:
    assert _full(7).tokens == 7
    with pytest.raises(ContextError, match="7 tokens, over the budget of 6"):
        _full(6)
    with pytest.raises(ContextError, match="at least 1"):
        _full(0)


def test_blank_pieces_are_ignored() -> None:
    result = assemble(
        policy="  p  ",
        instruction="i\n",
        message="  m  ",
        summary=" \n ",
        entities=[Piece("entity", "   ", 5.0), Piece("entity", "e", 1.0)],
        turns=[Piece("turn", "\t", 1.0)],
        budget=100,
        count=words,
    )
    assert [(p.kind, p.text) for p in result.pieces] == [
        ("policy", "p"),
        ("instruction", "i"),
        ("message", "m"),
        ("entity", "e"),
    ]
    assert result.dropped == ()


def test_every_piece_is_redacted_before_the_budget_is_held(counter: TokenCounter) -> None:
    secret = "sk-ant-api03-" + "ContextPiece7Key9Value3xyz"
    recent = [Piece("recent", f"- 2026-03-01 10:00 set up the bot with {secret}", 1.0, "s.md")]
    entities = [Piece("entity", "[[Bank]]\nThe rent IBAN is DE89 3704 0044 0532 0130 00.", 1.0, "Bank.md")]
    turns = [Piece("turn", "user: the wifi password is hunter2-turn-77", 1.0, "t.md")]
    for budget in (10_000, 60):
        built = assemble(
            policy="Use the notes.",
            instruction="Answer briefly.",
            message=f"my key is {secret}",
            summary="The PIN is 60418273.",
            budget=budget,
            count=counter,
            recent=recent,
            entities=entities,
            turns=turns,
        )
        shown = built.text + "".join(p.text for p in (*built.pieces, *built.dropped))
        assert not [s for s in (secret, "DE89 3704", "hunter2-turn-77", "60418273") if s in shown], shown
        assert built.tokens == counter(built.text) <= budget
        if budget == 10_000:
            assert "[REDACTED:iban]" in built.text and not built.dropped
