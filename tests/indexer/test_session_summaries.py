"""Session summaries in the index: read as their exchange, their boilerplate (what many summaries repeat) left out,
and the verdicts kept right as summaries arrive, leave and the limit changes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from companion.config import SessionsConfig
from companion.embedding.hashing import HashEmbedder
from companion.errors import NoteError
from companion.vault.notes import Note
from companion.workspace import Workspace
from tests.helpers.cli import companion_json
from tests.helpers.secretcorpus import JWT
from tests.helpers.summaries import write_heartbeats, write_summary
from tests.helpers.workspaces import workspace

NOW = dt.datetime(2026, 11, 27, 20, 0)


def _configure(root: Path, line: str) -> None:
    (root / ".companion").mkdir(exist_ok=True)
    (root / ".companion" / "companion.yaml").write_text(f"sessions:\n  {line}\n", encoding="utf-8")


def _indexed(ws: Workspace) -> set[str]:
    return {n.path for n in ws.manifest.notes()}


def test_a_summary_is_indexed_as_its_exchange(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    path = write_summary(
        root,
        NOW - dt.timedelta(days=20),
        "The NAS fan grinds again.",
        "Likely the bearing; a Noctua NF-A8 fits.",
        "Ordered the fan.\n",
    )
    ws = workspace(root)
    report = ws.indexer().sync()
    assert report.notes_indexed == 1
    assert _indexed(ws) == {path}
    text = ws.manifest.derived.bodies([path])[path]
    # Both messages and the body are searchable; the properties' names are not words anyone asks for.
    for said in ("NAS fan grinds", "Noctua NF-A8", "Ordered the fan"):
        assert said in text
    assert "sentinel_msg" not in text
    assert ws.manifest.chunks(path)
    assert ws.manifest.note(path).kind == "session"  # type: ignore[union-attr]
    ws.close()


def test_boilerplate_is_neither_indexed_nor_embedded(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    real = write_summary(root, NOW - dt.timedelta(days=9), "Guest wifi is Gastnetz, password on the fridge.", "Noted.")
    acks = [
        write_summary(root, NOW - dt.timedelta(days=d), f"Remember topic {word}.", "Noted.", name=f"ack-{d}")
        for d, word in enumerate(("alpha", "bravo", "charlie", "delta", "echo"), 2)
    ]
    beats = write_heartbeats(root, NOW, 8)
    ws = workspace(root)
    report = ws.indexer().sync()
    assert report.sessions_left_out == 8
    assert _indexed(ws) == {real, *acks}
    # "Noted." is said in six summaries: it is in none of their texts, the user's side stays.
    for path in (real, *acks):
        text = ws.manifest.derived.bodies([path])[path]
        assert "Noted" not in text
    assert "Gastnetz" in ws.manifest.derived.bodies([real])[real]
    assert not any(i.startswith(tuple(beats)) for i in ws.manifest.chunk_ids())
    assert not any(i.startswith(tuple(beats)) for i in ws.store().ids())
    ws.close()


def test_verdicts_follow_the_vault(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    first = write_heartbeats(root, NOW - dt.timedelta(days=3), 4)
    ws = workspace(root)
    ws.indexer().sync()
    assert _indexed(ws) == set(first)  # four are not yet many

    fifth = write_heartbeats(root, NOW, 1)
    report = ws.indexer().update(fifth)
    assert _indexed(ws) == set()  # the fifth makes every one of them boilerplate, the first four too
    assert not ws.manifest.chunk_ids()
    assert report.sessions_left_out >= 1

    # A restart with nothing changed reads no summary: the left-out ones are known by their stat.
    again = ws.indexer().sync()
    assert (again.notes_indexed, again.notes_unchanged, again.sessions_left_out) == (0, 0, 0)

    # A deleted heartbeat leaves four: no longer boilerplate, they come back.
    (root / fifth[0]).unlink()
    ws.indexer().update(fifth)
    assert _indexed(ws) == set(first)
    ws.close()


def test_the_limit_is_a_setting(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    beats = write_heartbeats(root, NOW, 6)
    # The default, then 0 (every part kept), then summaries left out of the index.
    for setting, indexed in (("", set()), ("boilerplate_sessions: 0", set(beats)), ("recall: false", set())):
        if setting:
            _configure(root, setting)
        ws = workspace(root)
        ws.indexer().sync()
        assert _indexed(ws) == indexed, setting
        ws.close()


def test_a_run_stopped_before_the_verdicts_were_recorded_heals(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    beats = write_heartbeats(root, NOW, 4)
    ws = workspace(root)
    ws.indexer().sync()
    # As if the run had stopped between indexing the summaries and recording their verdicts.
    with ws.manifest.transaction() as db:
        db.execute("DELETE FROM session_shapes")
    write_heartbeats(root, NOW + dt.timedelta(hours=1), 1)
    ws.indexer().sync()
    assert _indexed(ws) == set()  # the four were counted again: with the fifth, all five are boilerplate
    assert {p for p in beats} <= set(ws.manifest.stats_of_chatter())
    ws.close()


def test_summaries_recorded_ahead_of_a_judgement_that_never_came_are_read_or_forgotten(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    real = write_summary(root, NOW - dt.timedelta(days=2), "Guest wifi is Gastnetz.", "Noted.")
    ws = workspace(root)
    ws.indexer().sync()
    # A run that stopped after recording four acknowledgements' shapes, and before judging them; then they were
    # deleted. They must not count toward "Noted." being boilerplate forever.
    shapes = ws.manifest.note(real)
    assert shapes is not None
    with ws.manifest.transaction() as db:
        row = db.execute("SELECT user, reply, body FROM session_shapes WHERE path = ?", (real,)).fetchone()
        for n in range(4):
            db.execute(
                "INSERT INTO session_shapes(path, mtime_ns, size, user, reply, body, kept) "
                "VALUES (?, 0, 0, ?, ?, ?, '?')",
                (f"ops/sessions/2026-11-01/ack-{n}.md", f"other-{n}", row[1], row[2]),
            )
    ws.indexer().sync()
    with ws.manifest.transaction() as db:
        left = {p for (p,) in db.execute("SELECT path FROM session_shapes")}
    assert left == {real}
    assert "Noted" in ws.manifest.derived.bodies([real])[real]
    ws.close()


def test_a_limit_of_one_is_refused() -> None:
    with pytest.raises(ValueError, match="0 or 2"):
        SessionsConfig(boilerplate_sessions=1)


def test_doctor_counts_no_left_out_summary_as_waiting(tmp_path: Path) -> None:
    root, data = tmp_path / "vault", tmp_path / "data"
    write_heartbeats(root, NOW, 6)
    write_summary(root, NOW - dt.timedelta(days=3), "The NAS fan grinds.", "The bearing, probably.")
    (root / ".companion").mkdir()
    (root / ".companion" / "companion.yaml").write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    companion_json("index", "--vault", str(root), "--data-dir", str(data))
    doctor = companion_json("doctor", "--vault", str(root), "--data-dir", str(data))
    assert doctor["index"]["notes"] == 1 and doctor["index"]["stale"] == 0


class _Recording(HashEmbedder):
    """The hashing embedder, keeping every text it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return super().embed(texts)


def _with(texts: list[str], said: str) -> list[str]:
    return [t for t in texts if said in t]


MORNING = NOW.replace(hour=9)


def test_a_summary_is_embedded_after_the_exchange_before_it_in_its_session(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_summary(root, MORNING, "Shall we paint the shed behind the garage?", "Yes, with weatherproof acrylic.")
    follow = write_summary(root, MORNING + dt.timedelta(minutes=5), "Which colour was that one?", "Sage green.")
    write_summary(root, MORNING + dt.timedelta(minutes=7), "Book the dentist.", "Booked.", chat_id="other")
    write_summary(root, MORNING + dt.timedelta(days=1), "And the gutters?", "Cleaned on Sunday.")
    embedder = _Recording()
    ws = workspace(root, embedder)
    ws.indexer().sync()

    def text_of(reply: str) -> str:
        (text,) = [t for t in embedder.texts if t.rstrip().endswith(reply)]
        return text

    # The follow-up is embedded with what it follows; the first exchange, another chat and another day are not.
    assert "paint the shed" in text_of("Sage green.")
    assert "colour" not in text_of("weatherproof acrylic.")
    assert "shed" not in text_of("Booked.")
    assert "colour" not in text_of("Cleaned on Sunday.")
    # Its words are its own: a search for the shed does not find the follow-up.
    assert "paint the shed" not in ws.manifest.derived.bodies([follow])[follow]
    ws.close()


def test_a_summary_is_embedded_again_when_the_exchange_before_it_changes(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    first = write_summary(root, MORNING, "Shall we paint the shed?", "Yes, with acrylic.", name="0900")
    follow = write_summary(root, MORNING + dt.timedelta(minutes=5), "Which colour was it?", "Sage green.", name="0905")
    other = write_summary(root, MORNING + dt.timedelta(days=1), "And the gutters?", "Cleaned.", name="0900")
    embedder = _Recording()
    ws = workspace(root, embedder)
    ws.indexer().sync()

    def embedded_after() -> list[str]:
        embedder.texts.clear()
        ws.indexer().sync()
        return _with(embedder.texts, "Which colour")

    # Edited: the follow-up is embedded with the new words, never the old.
    write_summary(root, MORNING, "Shall we mend the fence?", "Yes, new posts.", name="0900")
    assert [t for t in embedded_after() if "mend the fence" in t and "paint the shed" not in t]
    # One arrives between the two: it becomes the context.
    write_summary(root, MORNING + dt.timedelta(minutes=2), "Or the garden bench?", "The bench too.", name="0902")
    assert [t for t in embedded_after() if "garden bench" in t and "mend the fence" not in t]
    # It leaves: the first is the context again.
    (root / f"ops/sessions/{MORNING.date().isoformat()}/0902.md").unlink()
    assert [t for t in embedded_after() if "mend the fence" in t and "garden bench" not in t]
    # A change elsewhere embeds the follow-up no more.
    write_summary(root, MORNING + dt.timedelta(days=1), "And the gutters, again?", "Cleaned twice.", name="0900")
    assert embedded_after() == []
    assert {first, follow, other} <= {n.path for n in ws.manifest.notes()}
    ws.close()


def test_the_exchange_before_a_summary_is_redacted_and_boilerplate_free(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_summary(root, MORNING, f"The deploy token is {JWT} for the shed server.", "Stored it.", name="0900")
    for n, word in enumerate(("alpha", "bravo", "charlie", "delta", "echo")):
        write_summary(root, MORNING + dt.timedelta(minutes=10 + n), f"Remember {word}.", "Noted.", name=f"ack{n}")
    embedder = _Recording()
    ws = workspace(root, embedder)
    ws.indexer().sync()
    assert [t for t in _with(embedder.texts, "Remember alpha.") if "deploy token" in t]
    assert not _with(embedder.texts, JWT)
    assert not _with(embedder.texts, "Noted")  # boilerplate, in its own exchange and as another's context
    ws.close()


def test_an_index_from_before_summaries_had_a_place_embeds_them_again(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_summary(root, MORNING, "Shall we paint the shed?", "Yes, with acrylic.")
    write_summary(root, MORNING + dt.timedelta(minutes=5), "Which colour was it?", "Sage green.")
    ws = workspace(root)
    indexer = ws.indexer()
    indexer.summaries.read = None  # as an older version embedded them: each exchange alone
    indexer.sync()
    with ws.manifest.transaction() as db:
        db.execute("DROP INDEX session_shapes_session")
        for column in ("context", "at", "session"):
            db.execute(f"ALTER TABLE session_shapes DROP COLUMN {column}")
    ws.close()
    embedder = _Recording()
    ws = workspace(root, embedder)
    ws.indexer().sync()
    assert [t for t in _with(embedder.texts, "Which colour") if "paint the shed" in t]
    ws.close()


def test_a_summary_whose_previous_one_cannot_be_read_gets_its_context_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("indexer.summaries._RECENT", 0)  # the previous summary is read, not remembered
    root = tmp_path / "vault"
    first = write_summary(root, MORNING, "Shall we paint the shed?", "Yes, with acrylic.", name="0900")
    write_summary(root, MORNING + dt.timedelta(minutes=5), "Which colour was it?", "Sage green.", name="0905")
    embedder = _Recording()
    ws = workspace(root, embedder)
    indexer = ws.indexer()
    read = indexer.summaries.read
    assert read is not None

    def failing(path: str) -> Note:
        if path == first:
            raise NoteError(path, "unreadable for now")
        return read(path)

    indexer.summaries.read = failing
    indexer.sync()
    assert not [t for t in _with(embedder.texts, "Which colour") if "paint the shed" in t]
    indexer.summaries.read = read
    embedder.texts.clear()
    indexer.sync()
    assert [t for t in _with(embedder.texts, "Which colour") if "paint the shed" in t]
    ws.close()
