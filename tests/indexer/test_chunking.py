"""Chunking with the real tokenizer: every chunk fits the model's window, and ids survive edits."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.embedding.providers import MiniLMEmbedder
from companion.vault.parse import parse_note
from indexer.chunking import Chunker


@cache
def _embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def chunker() -> Chunker:
    return Chunker(_embedder().count_tokens)


def _note(path: str, body: str, front: str = "") -> object:
    text = f"---\n{front}---\n{body}" if front else body
    return parse_note(path, text.encode("utf-8"))


def _conversation(turns: list[str]) -> object:
    body = "\n\n".join(f"**{'alice' if i % 2 == 0 else 'sentinel'}:** {t}" for i, t in enumerate(turns))
    return _note("Conversations/c.md", body + "\n", "type: conversation\ndate: 2026-03-02\n")


def test_conversation_windows_keep_speakers_and_every_turn_once(chunker: Chunker) -> None:
    chunks = chunker.chunk(_conversation([f"turn number {i} about skiing" for i in range(7)]))
    assert [c.anchor for c in chunks] == ["t0", "t3", "t6"]
    assert chunks[0].text.splitlines()[0] == "2026-03-02"
    assert "**alice:** turn number 0" in chunks[0].text and "**alice:** turn number 2" in chunks[0].text
    for i in range(7):
        assert sum(f"turn number {i} " in c.text for c in chunks) == 1, i
    assert "turn number 6" in chunks[-1].text
    assert all(c.id == f"Conversations/c.md#{c.anchor}" for c in chunks)


def test_appending_a_turn_changes_only_the_tail(chunker: Chunker) -> None:
    turns = [f"turn {i} with some words about the kitchen worktop" for i in range(8)]
    before = {c.id: c.text_hash for c in chunker.chunk(_conversation(turns))}
    after = {c.id: c.text_hash for c in chunker.chunk(_conversation([*turns, "a brand new turn"]))}
    changed = {i for i in after if before.get(i) != after[i]}
    assert 1 <= len(changed) <= 2
    assert all(before[i] == after[i] for i in before if i in after and i not in changed)


def test_sections_by_heading_with_unique_anchors(chunker: Chunker) -> None:
    body = "Intro text.\n\n# Plan\n\nStep one.\n\n## Notes\n\nA remark.\n\n# Plan\n\nAgain.\n"
    chunks = chunker.chunk(_note("n.md", body))
    assert [c.anchor for c in chunks] == ["top~0", "plan~0", "notes~0", "plan~0.1"]
    assert chunks[1].text.startswith("Plan\n")
    assert len({c.id for c in chunks}) == len(chunks)


def test_an_empty_note_still_has_one_chunk(chunker: Chunker) -> None:
    (chunk,) = chunker.chunk(_note("Categories/Books.md", ""))
    assert chunk.anchor == "top~0" and "Books" in chunk.text


def test_a_note_made_of_properties_is_embedded_with_them(chunker: Chunker) -> None:
    front = "type: book\nauthor: Kevin Kelly\ngenre:\n  - essays\n  - technology\nrating:\n"
    (chunk,) = chunker.chunk(_note("References/The Inevitable.md", "\n", front))
    assert chunk.text.split("\n") == [
        "The Inevitable",
        "type: book",
        "author: Kevin Kelly",
        "genre: essays, technology",
    ]
    # A list too long for the model is cut to what it takes.
    many = "tags:\n" + "".join(f"  - topic{i}\n" for i in range(2_000))
    (long,) = chunker.chunk(_note("References/Tagged.md", "", many))
    assert long.text.startswith("Tagged\ntags: topic0, topic1") and long.tokens <= chunker.max_tokens
    assert _embedder().count_tokens([long.text])[0] == long.tokens


def test_a_huge_paragraph_is_split_in_linear_time(chunker: Chunker) -> None:
    paragraph = " ".join(f"word{i % 997} and more, then" for i in range(60_000))  # ~1.7 MB, one paragraph
    chunks = chunker.chunk(_note("big.md", paragraph))
    assert len(chunks) > 100
    assert max(_embedder().count_tokens([c.text for c in chunks])) <= 256


words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30)
paragraph = st.lists(words, min_size=1, max_size=120).map(" ".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(paragraph, min_size=2, max_size=12), conversation=st.booleans())
def test_no_chunk_ever_exceeds_the_window(chunker: Chunker, turns: list[str], conversation: bool) -> None:
    note = _conversation(turns) if conversation else _note("n.md", "\n\n".join(turns))
    chunks = chunker.chunk(note)
    assert chunks
    counts = _embedder().count_tokens([c.text for c in chunks])
    # A single "word" longer than the window is the only thing allowed over it (the model truncates it).
    for chunk, count in zip(chunks, counts, strict=True):
        if count > 256:
            assert len(chunk.text.split()) <= 3, chunk.text[:200]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=14))
def test_every_turn_is_in_a_window_and_windows_do_not_overlap(chunker: Chunker, lengths: list[int]) -> None:
    # Turns of very different lengths shrink some windows: none may be skipped, none read twice.
    turns = [f"marker{i}x " + " ".join(["word"] * n) for i, n in enumerate(lengths)]
    chunks = chunker.chunk(_conversation(turns))
    for i in range(len(turns)):
        assert sum(f"marker{i}x " in c.text for c in chunks) == 1, i


def test_a_long_note_is_counted_in_one_call_and_cut_as_when_each_text_was_counted_alone() -> None:
    count = _embedder().count_tokens
    calls: list[int] = []

    def batched(texts: object) -> list[int]:
        calls.append(len(texts))  # type: ignore[arg-type]
        return count(texts)  # type: ignore[arg-type]

    def one_by_one(texts: object) -> list[int]:
        return [count([t])[0] for t in texts]  # type: ignore[attr-defined]

    paragraphs = "Paragraph {j} of part {i} says something about the boiler.\n\n"
    sections = "".join(f"## Part {i}\n\n" + "".join(paragraphs.format(i=i, j=j) for j in range(6)) for i in range(12))
    long_paragraph = " ".join(f"word{i}" for i in range(600))  # past the window: cut by sentences, then words
    note = _note("Notes/manual.md", sections + "## Appendix\n\n" + long_paragraph + "\n", "date: 2026-03-02\n")
    chunks = Chunker(batched).chunk(note)
    assert chunks == Chunker(one_by_one).chunk(note)
    # Every paragraph and heading line in the first call; only the paragraph too long to fit is counted again.
    assert len(calls) <= 3 and calls[0] >= 12 * 6
