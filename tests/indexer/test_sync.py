"""The incremental indexer on real files, a real embedded Chroma store and the hashing embedder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from companion.embedding.hashing import HashEmbedder
from companion.workspace import Workspace
from indexer.sync import Indexer
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

CONVERSATION = """---
type: conversation
date: 2026-03-02
time: "09:15:00"
user_id: alice
chat_id: main
---
**alice:** We should plan the ski trip to Chamonix.

**sentinel:** Sure. When do you want to go?

**alice:** The fourteenth of February, for five days.

**sentinel:** Noted: Chamonix, 14 February, five days.

**alice:** The budget is 1800 euros for both of us.
"""


def _embedder(ws: Workspace) -> HashEmbedder:
    embedder = ws.embedder()
    assert isinstance(embedder, HashEmbedder)
    return embedder


def _consistent(ws: Workspace) -> set[str]:
    """The store and the manifest hold exactly the same chunk ids; returns them."""
    ids = ws.store().ids()
    assert ids == ws.manifest.chunk_ids()
    assert ws.manifest.queue.pending() == []
    return ids


def _paths(ws: Workspace, query: str) -> list[str]:
    return [h.path for h in ws.searcher().search(query, k=10)]


def test_first_build_then_nothing_to_do(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Conversations/ski.md", CONVERSATION)
    write(hash_ws.root, "Notes/kitchen.md", "# Kitchen\n\nThe new worktop is oak.\n")
    first = hash_ws.indexer().sync()
    assert first.notes_indexed == 2
    assert first.chunks_embedded == len(_consistent(hash_ws)) > 2
    calls = _embedder(hash_ws).texts_embedded

    again = hash_ws.indexer().sync()
    assert (again.notes_indexed, again.chunks_embedded, again.notes_unchanged) == (0, 0, 0)
    assert _embedder(hash_ws).texts_embedded == calls


def test_touch_without_change_reads_but_does_not_embed(hash_ws: Workspace) -> None:
    note = write(hash_ws.root, "a.md", "alpha beta gamma\n")
    hash_ws.indexer().sync()
    os.utime(note, ns=(1, 1))
    report = hash_ws.indexer().sync()
    assert (report.notes_unchanged, report.chunks_embedded) == (1, 0)
    assert hash_ws.indexer().sync().notes_unchanged == 0  # the new stat was recorded


def test_append_reembeds_only_changed_chunks(hash_ws: Workspace) -> None:
    note = write(hash_ws.root, "Conversations/ski.md", CONVERSATION)
    hash_ws.indexer().sync()
    before = _consistent(hash_ws)
    with note.open("a", encoding="utf-8") as fh:
        fh.write("\n**sentinel:** I booked the chalet near the Aiguille du Midi cable car.\n")
    report = hash_ws.indexer().sync()
    after = _consistent(hash_ws)
    assert report.notes_indexed == 1
    assert 1 <= report.chunks_embedded < len(after)
    assert before <= after | set(before)  # earlier windows keep their ids
    assert "Conversations/ski.md" in _paths(hash_ws, "chalet aiguille cable car")


def test_rename_moves_vectors_without_embedding(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Conversations/ski.md", CONVERSATION)
    write(hash_ws.root, "other.md", "nothing about mountains\n")
    hash_ws.indexer().sync()
    count = len(_consistent(hash_ws))
    (hash_ws.root / "Trips").mkdir()
    (hash_ws.root / "Conversations/ski.md").rename(hash_ws.root / "Trips/ski-trip.md")
    report = hash_ws.indexer().sync()
    assert (report.notes_renamed, report.chunks_embedded) == (1, 0)
    assert report.chunks_reused > 0
    ids = _consistent(hash_ws)
    assert len(ids) == count
    assert not any(i.startswith("Conversations/") for i in ids)
    found = _paths(hash_ws, "Chamonix budget")
    assert "Trips/ski-trip.md" in found
    assert "Conversations/ski.md" not in found


def test_folder_rename_through_update(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Trips/ski.md", CONVERSATION)
    write(hash_ws.root, "Trips/sea.md", "A week by the sea in Brittany.\n")
    indexer = hash_ws.indexer()
    indexer.sync()
    (hash_ws.root / "Trips").rename(hash_ws.root / "Journeys")
    # What watchfiles reports for a folder rename: the folder, twice.
    report = indexer.update({"Trips", "Journeys"})
    assert (report.notes_renamed, report.chunks_embedded, report.notes_deleted) == (2, 0, 0)
    assert {n.path for n in hash_ws.manifest.notes()} == {"Journeys/ski.md", "Journeys/sea.md"}
    _consistent(hash_ws)


def test_delete_removes_every_chunk(hash_ws: Workspace) -> None:
    note = write(hash_ws.root, "Conversations/ski.md", CONVERSATION)
    write(hash_ws.root, "keep.md", "kept note\n")
    hash_ws.indexer().sync()
    note.unlink()
    report = hash_ws.indexer().sync()
    assert report.notes_deleted == 1
    ids = _consistent(hash_ws)
    assert ids and not any(i.startswith("Conversations/") for i in ids)
    assert "Conversations/ski.md" not in _paths(hash_ws, "Chamonix")


def test_broken_note_is_skipped_named_and_not_reread(hash_ws: Workspace) -> None:
    write(hash_ws.root, "good.md", "a good note\n")
    (hash_ws.root / "bad.md").write_bytes(b"\x89PNG\x00\x01 not a note\n")
    (hash_ws.root / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    report = hash_ws.indexer().sync()
    assert report.notes_indexed == 1
    assert {p for p, _ in report.skipped} == {"bad.md", "latin1.md"}
    assert all(reason for _, reason in report.skipped)
    assert hash_ws.indexer().sync().notes_skipped == 0  # unchanged broken notes are not re-read
    assert {p for p, _ in hash_ws.manifest.skipped()} == {"bad.md", "latin1.md"}
    (hash_ws.root / "bad.md").write_text("fixed now\n", encoding="utf-8")
    fixed = hash_ws.indexer().sync()
    assert fixed.notes_indexed == 1
    assert {p for p, _ in hash_ws.manifest.skipped()} == {"latin1.md"}


def test_a_note_that_breaks_leaves_the_index(hash_ws: Workspace) -> None:
    note = write(hash_ws.root, "n.md", "fine text\n")
    hash_ws.indexer().sync()
    note.write_bytes(b"\x00\x01binary")
    report = hash_ws.indexer().sync()
    assert report.notes_skipped == 1
    assert _consistent(hash_ws) == set()


def test_excluded_folders_never_reach_the_index(hash_ws: Workspace) -> None:
    write(hash_ws.root, "ops/logs/2026-03-02.md", "---\nuser_id: alice\n---\nnoise\n")
    write(hash_ws.root, "ops/sessions/notes-on-sessions.md", "not a summary: no day folder\n")
    write(hash_ws.root, ".trash/old.md", "trashed\n")
    write(hash_ws.root, ".obsidian/snippet.md", "settings\n")
    write(hash_ws.root, "real.md", "a real note\n")
    hash_ws.indexer().sync()
    assert {n.path for n in hash_ws.manifest.notes()} == {"real.md"}
    assert all(i.startswith("real.md#") for i in _consistent(hash_ws))


def test_config_change_that_excludes_a_folder_removes_it(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Private/diary.md", "secret diary\n")
    write(vault, "Public/post.md", "public post\n")
    ws = workspace(vault)
    ws.indexer().sync()
    assert len(ws.manifest.notes()) == 2
    ws.close()
    write(vault, ".companion/companion.yaml", "index:\n  exclude: ['ops/**', 'Private/**']\n")
    ws = workspace(vault)
    report = ws.indexer().sync()
    assert report.notes_deleted == 1
    assert {n.path for n in ws.manifest.notes()} == {"Public/post.md"}
    _consistent(ws)
    ws.close()


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("step", ["embed", "upsert", "delete", "commit"])
def test_crash_between_steps_recovers_to_a_clean_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    vault = tmp_path / "v"
    for i in range(12):
        write(vault, f"n{i}.md", f"# Note {i}\n\nparagraph {i} about topic {i % 3}\n")
    ws = workspace(vault)
    ws.indexer().sync()
    # Change some notes and delete others, then crash at `step` while applying that.
    for i in range(4):
        write(vault, f"n{i}.md", f"# Note {i}\n\nrewritten {i} entirely new words\n")
    (vault / "n10.md").unlink()
    (vault / "n11.md").rename(vault / "moved.md")
    indexer = ws.indexer()
    target = {
        "embed": (ws.embedder(), "embed"),
        "upsert": (ws.store(), "upsert"),
        "delete": (ws.store(), "delete"),
        "commit": (ws.manifest, "put_note"),
    }[step]
    original = getattr(target[0], target[1])
    calls = {"n": 0}

    def failing(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 1:
            # Let the real call happen for store writes, then die: the worst moment.
            if step in {"upsert", "delete"}:
                original(*args, **kwargs)
            raise Boom(step)
        return original(*args, **kwargs)

    monkeypatch.setattr(target[0], target[1], failing)
    with pytest.raises(Boom):
        indexer.sync()
    monkeypatch.setattr(target[0], target[1], original)
    ws.close()

    ws = workspace(vault)
    ws.indexer().sync()
    ids = _consistent(ws)
    clean = workspace(vault, data_dir=tmp_path / "clean")
    clean.indexer().sync()
    assert ids == _consistent(clean)
    assert {n.path: n.content_hash for n in ws.manifest.notes()} == {
        n.path: n.content_hash for n in clean.manifest.notes()
    }
    ws.close()
    clean.close()


def test_rebuild_starts_empty(hash_ws: Workspace) -> None:
    write(hash_ws.root, "a.md", "alpha\n")
    hash_ws.indexer().sync()
    report = hash_ws.indexer(rebuild=True).sync()
    assert (report.notes_indexed, report.chunks_embedded) == (1, 1)
    _consistent(hash_ws)


def test_kepano_vault_indexes_every_note_but_its_templates(tmp_path: Path) -> None:
    from tests.helpers.files import KEPANO

    if not KEPANO.exists():
        pytest.skip("shared kepano vault not present")
    vault = tmp_path / "kepano"
    shutil.copytree(KEPANO, vault)
    ws = workspace(vault)
    report = ws.indexer().sync()
    notes = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    # `.obsidian/templates.json` names Templates/: its 52 templates stay out of recall, and the index says so.
    templates = {n for n in notes if n.startswith("Templates/")}
    assert len(templates) == 52
    assert report.notes_skipped == 0
    assert {n.path for n in ws.manifest.notes()} == notes - templates
    assert ws.vault.left_out == {"the templates folder Templates/ (index.templates: false)": 52}
    _consistent(ws)
    ws.close()


def test_indexer_opens_nothing_heavy_when_nothing_changed(hash_ws: Workspace) -> None:
    write(hash_ws.root, "a.md", "alpha\n")
    hash_ws.indexer().sync()
    ws = workspace(hash_ws.root)
    indexer: Indexer = ws.indexer()
    indexer.sync()
    assert indexer._store is None and indexer._embedder is None
    ws.close()


def test_progress_counts_chunks_up_to_the_total(hash_ws: Workspace) -> None:
    for i in range(30):
        write(hash_ws.root, f"n{i}.md", "\n\n".join(f"paragraph {j} of note {i} " * 30 for j in range(6)))
    seen: list[tuple[int, int]] = []
    left: list[float | None] = []
    indexer = hash_ws.indexer()
    indexer.batch_chunks = 50

    def progress(done: int, total: int, left_s: float | None) -> None:
        seen.append((done, total))
        left.append(left_s)

    report = indexer.sync(progress=progress)
    assert len(seen) > 3
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (report.chunks_embedded, report.chunks_embedded)
    # No estimate before the model has been timed; then one that falls to nothing at the end.
    assert left[0] is None and all(s is not None for s in left[1:]) and left[-1] == 0


def test_a_file_name_that_is_not_utf8_is_reported_not_fatal(hash_ws: Workspace) -> None:
    write(hash_ws.root, "good.md", "a good note\n")
    bad = os.fsencode(hash_ws.root) + b"/caf\xe9.md"
    with open(bad, "wb") as fh:
        fh.write(b"latin-1 named note\n")
    report = hash_ws.indexer().sync()
    assert report.notes_indexed == 1
    assert any("not valid UTF-8" in reason for _, reason in hash_ws.vault.problems)
    indexer = hash_ws.indexer()
    assert indexer.update({os.fsdecode(b"caf\xe9.md")}).notes_indexed == 0  # a watcher event for it too


def test_raising_the_size_limit_retries_skipped_notes(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, ".companion/companion.yaml", "index:\n  max_note_mb: 0.001\n")
    write(vault, "big.md", "word " * 400)
    write(vault, "small.md", "tiny\n")
    ws = workspace(vault)
    first = ws.indexer().sync()
    assert [p for p, _ in first.skipped] == ["big.md"]
    ws.close()
    write(vault, ".companion/companion.yaml", "index:\n  max_note_mb: 1\n")
    ws = workspace(vault)
    again = ws.indexer().sync()
    assert (again.notes_indexed, again.notes_unchanged) == (1, 1)  # small.md is only re-read, not re-embedded
    assert again.chunks_embedded == len(ws.manifest.chunks("big.md")) >= 1
    assert ws.manifest.skipped() == []
    ws.close()
