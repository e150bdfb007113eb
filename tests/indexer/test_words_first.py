"""Words first, meaning after: a build makes every note searchable by its words before any is embedded, embeds the
newest notes first, resumes after a kill, and recall says how much of the meaning side is built meanwhile."""

from __future__ import annotations

import os

import pytest

from companion.workspace import Workspace
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


class _Killed(Exception):
    """Stands for a kill in the middle of embedding."""


def _notes(ws: Workspace, count: int = 12, paragraphs: int = 4) -> None:
    for i in range(count):
        body = "\n\n".join(f"paragraph {j} of note {i} about glaciers and moraines " * 8 for j in range(paragraphs))
        write(ws.root, f"notes/n{i:02d}.md", f"---\ndate: 2025-01-{i % 28 + 1:02d}\n---\n{body}\n")


def _store_ids(ws: Workspace) -> set[str]:
    return ws.store().ids()


def test_words_come_first_and_meaning_after(hash_ws: Workspace) -> None:
    _notes(hash_ws)
    write(hash_ws.root, "kiwi.md", "The kiwi is a flightless bird of New Zealand.\n")
    report = hash_ws.indexer().sync(embed_for_s=0.0)
    chunks = hash_ws.manifest.counts()[1]
    assert report.notes_indexed == 13 and report.chunks_embedded == 0
    assert report.chunks_queued == chunks == report.chunks_left
    assert hash_ws.manifest.queue.embedded_count() == 0

    # Searchable by its words at once, saying that the meaning side is not there yet.
    context = hash_ws.recall().recall("flightless kiwi", k=3)
    assert context.results[0].path == "kiwi.md"
    assert context.dense_built == 0.0
    assert context.notice is not None and "0% built" in context.notice and "words only" in context.notice
    # A question no note holds the words of is asked of the meaning side alone, which cannot yet see every note.
    unknown = hash_ws.recall().recall("zymurgy", k=3)
    assert unknown.notice is not None and "cannot be found by their meaning" in unknown.notice

    done = hash_ws.indexer().embed()
    assert done.chunks_embedded == chunks and done.chunks_left == 0 and done.left_s is None
    assert _store_ids(hash_ws) == hash_ws.manifest.chunk_ids() == hash_ws.manifest.queue.embedded_ids()
    context = hash_ws.recall().recall("flightless kiwi", k=3)
    assert context.dense_built == 1.0 and context.notice is None
    assert context.results[0].path == "kiwi.md"


def test_the_newest_notes_are_embedded_first(hash_ws: Workspace) -> None:
    write(hash_ws.root, "old.md", "---\ndate: 2023-05-01\n---\nan old note\n")
    write(hash_ws.root, "new.md", "---\ndate: 2025-05-01\n---\na new note\n")
    write(hash_ws.root, "undated-a.md", "no date, written first\n")
    write(hash_ws.root, "undated-b.md", "no date, written last\n")
    os.utime(hash_ws.root / "undated-a.md", ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    os.utime(hash_ws.root / "undated-b.md", ns=(1_100_000_000_000_000_000, 1_100_000_000_000_000_000))
    for i in range(70):  # a build, not an edit: more notes than an edit touches
        write(hash_ws.root, f"filler/{i}.md", f"---\ndate: 2024-01-01\n---\nfiller {i}\n")
    indexer = hash_ws.indexer()
    indexer.sync(embed_for_s=0.0)
    order = [row.path for row in hash_ws.manifest.queue.next_unembedded(100) if not row.path.startswith("filler/")]
    # By date; an undated note by the day its file was written (2004, 2001).
    assert order == ["new.md", "old.md", "undated-b.md", "undated-a.md"]

    # An edit made meanwhile goes before the whole backlog, whatever its date.
    write(hash_ws.root, "undated-a.md", "no date, edited now\n")
    os.utime(hash_ws.root / "undated-a.md", ns=(1_000_000_001_000_000_000, 1_000_000_001_000_000_000))
    indexer.update({"undated-a.md"}, embed_for_s=0.0)
    assert hash_ws.manifest.queue.next_unembedded(1)[0].path == "undated-a.md"


def test_a_killed_embedding_resumes_and_leaves_nothing_half_done(hash_ws: Workspace) -> None:
    _notes(hash_ws, 28, paragraphs=8)
    indexer = hash_ws.indexer()
    calls = 0

    def kill_after_two_slices(done: int, total: int, left_s: float | None) -> None:
        nonlocal calls
        calls += 1
        if calls > 2:
            raise _Killed

    with pytest.raises(_Killed):
        indexer.sync(progress=kill_after_two_slices)
    # Every note was already searchable by its words; the batch in flight is undone on the next start.
    assert hash_ws.manifest.note_count() == 28
    assert hash_ws.manifest.queue.pending()
    hash_ws.close()

    again = workspace(hash_ws.root)
    report = again.indexer().sync()
    assert report.recovered > 0 and report.chunks_left == 0
    assert report.notes_indexed == 0  # the queue kept their text: no note had to be read again
    assert again.manifest.queue.unembedded_totals() == (0, 0)
    assert _store_ids(again) == again.manifest.chunk_ids()
    assert not again.manifest.queue.pending()
    again.close()


def test_an_edit_before_its_vectors_exist_embeds_only_the_new_text(hash_ws: Workspace) -> None:
    write(hash_ws.root, "a.md", "first words about otters\n")
    indexer = hash_ws.indexer()
    indexer.sync(embed_for_s=0.0)
    write(hash_ws.root, "a.md", "second words about beavers\n")
    indexer.update({"a.md"}, embed_for_s=0.0)
    waiting = hash_ws.manifest.queue.next_unembedded(10)
    assert len(waiting) == 1 and "beavers" in waiting[0].text
    indexer.embed()
    assert _store_ids(hash_ws) == hash_ws.manifest.chunk_ids() == {waiting[0].id}


def test_a_changed_note_loses_its_old_vector_until_the_new_one_is_made(hash_ws: Workspace) -> None:
    write(hash_ws.root, "a.md", "otters hold hands while they sleep\n")
    write(hash_ws.root, "b.md", "beavers build dams\n")
    indexer = hash_ws.indexer()
    indexer.sync()
    write(hash_ws.root, "a.md", "otters use stones as tools\n")
    report = indexer.update({"a.md"}, embed_for_s=0.0)
    assert report.chunks_left == 1
    (chunk_id,) = hash_ws.manifest.queue.unembedded_ids("a.md")
    assert chunk_id not in _store_ids(hash_ws)  # the old text's vector must not answer for the new text
    assert hash_ws.searcher().built() == 0.5
    indexer.embed()
    assert chunk_id in _store_ids(hash_ws) and hash_ws.searcher().built() == 1.0


def test_a_rename_carries_its_vectors_without_queueing_anything(hash_ws: Workspace) -> None:
    write(hash_ws.root, "a.md", "a note that will move\n\nwith two paragraphs\n")
    indexer = hash_ws.indexer()
    indexer.sync()
    (hash_ws.root / "a.md").rename(hash_ws.root / "b.md")
    report = indexer.sync(embed_for_s=0.0)
    assert report.notes_renamed == 1 and report.chunks_queued == 0 and report.chunks_left == 0
    assert _store_ids(hash_ws) == hash_ws.manifest.chunk_ids()
    assert all(i.startswith("b.md#") for i in _store_ids(hash_ws))


def test_mending_does_not_count_queued_chunks_as_missing(hash_ws: Workspace) -> None:
    _notes(hash_ws, 3)
    hash_ws.indexer().sync(embed_for_s=0.0)
    mended = hash_ws.mend(full=True)
    assert mended.requeued == 0 and not mended.actions


def test_common_words_stay_in_the_question_while_the_meaning_side_is_built(
    hash_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In a large vault, words most notes hold leave the question (the meaning side answers it); while that side is
    # still being built it cannot, so the rarest of them stay.
    monkeypatch.setattr("indexer.search._PRUNE_FROM", 10)
    for i in range(12):
        write(hash_ws.root, f"n{i}.md", f"sync settings note {i}\n" if i % 2 else f"settings page {i}\n")
    hash_ws.indexer().sync(embed_for_s=0.0)
    searcher = hash_ws.searcher()
    hits = searcher.search("sync settings", k=5)
    assert hits and all(h.lexical > 0 for h in hits)
    assert searcher.dense_unavailable is not None and "words only" in searcher.dense_unavailable
    hash_ws.indexer().embed()
    searcher.search("sync settings", k=5)
    assert searcher.dense_unavailable is None and searcher._lexical_terms("sync settings") == []
