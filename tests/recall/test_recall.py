"""The recall engine on real files, a real manifest and a real embedded Chroma store (hashing embedder).

The clock is frozen with `as_of`; sessions are written as an agent writes them: a summary under
`ops/sessions/<day>/` and a durable conversation note pointing at it.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest

from companion.config import RecallConfig
from companion.recall.engine import Recall
from companion.recall.fusion import default_model
from companion.recall.results import RecalledContext, log_odds, relative_odds
from companion.recall.scope import Scope
from companion.retention import RetentionPolicy
from companion.workspace import Workspace
from tests.helpers.conversations import NOW, conversation_path
from tests.helpers.files import file_tree, write
from tests.helpers.workspaces import workspace


def engine(ws: Workspace, **policy: int) -> Recall:
    recall = ws.recall()
    recall.policy = RetentionPolicy(**policy)
    return recall


def paths(context: RecalledContext, tier: str | None = None) -> list[str]:
    return [i.path for i in context.results if tier is None or i.tier == tier]


def test_a_session_older_than_the_hot_window_is_recalled(indexed: Workspace) -> None:
    # The hot-tier regression: the sourdough session is two months old, far outside hot_limit=3 / 2 days.
    context = engine(indexed).recall("sourdough starter hydration", as_of=NOW)
    assert context.results[0].path == conversation_path(-60, "sourdough")
    assert context.results[0].tier == "warm"
    assert conversation_path(-60, "sourdough") not in {s.path for s in context.sessions}


def test_hot_sessions_are_labelled_hot_and_never_repeated_as_warm(indexed: Workspace) -> None:
    context = engine(indexed).recall("packing list ski trip goggles", as_of=NOW)
    hot_notes = {
        conversation_path(0, "packing"),
        conversation_path(0, "dinner"),
        conversation_path(-1, "backup"),
        conversation_path(-1, "power"),
        conversation_path(0, "snags"),
    }
    assert {i.path for i in context.results if i.tier == "hot"} <= hot_notes
    assert context.results[0].path == conversation_path(0, "packing")
    assert context.results[0].tier == "hot"
    assert not hot_notes & {i.path for i in context.warm}
    assert len(paths(context)) == len(set(paths(context)))


def test_the_hot_tier_is_per_session_key_and_newest_first(indexed: Workspace) -> None:
    context = engine(indexed).recall("anything", as_of=NOW, bodies=True)
    keys = [(s.user_id, s.chat_id, s.date, s.time) for s in context.sessions]
    today, yesterday = str(NOW.date()), str((NOW - dt.timedelta(days=1)).date())
    assert [k for k in keys if k[:2] == ("alice", "tg")] == [
        ("alice", "tg", today, "09:00:00"),
        ("alice", "tg", today, "07:00:00"),
        ("alice", "tg", yesterday, "08:00:00"),
    ]
    assert ("alice", "web", yesterday, "20:00:00") in keys and ("bob", "mail", today, "10:30:00") in keys
    assert context.pushed_out == ()
    assert all(s.body for s in context.sessions), "hot sessions carry their bodies"


def test_lowering_hot_limit_moves_sessions_to_warm(indexed: Workspace) -> None:
    wide = engine(indexed, hot_limit=3).recall("backup restore Pi container", as_of=NOW)
    narrow = engine(indexed, hot_limit=1).recall("backup restore Pi container", as_of=NOW)
    backup = conversation_path(-1, "backup")
    assert backup in paths(wide, "hot")
    # Pushed out of hot but still within 48 hours: the temporal tier lists it, and the warm tier never repeats it.
    assert backup in paths(narrow, "temporal")
    assert [(s.user_id, s.time) for s in narrow.pushed_out] == [("alice", "07:00:00"), ("alice", "08:00:00")]
    without_temporal = engine(indexed, hot_limit=1)
    without_temporal.settings = type(without_temporal.settings)(temporal_context=False)
    assert backup in paths(without_temporal.recall("backup restore Pi container", as_of=NOW), "warm")


def test_as_of_hides_notes_dated_after_it(indexed: Workspace) -> None:
    earlier = NOW - dt.timedelta(days=30)
    context = engine(indexed).recall("kitchen oak worktop snag list hob", as_of=earlier)
    days = [i.date for i in context.results if i.date]
    assert days and all(d <= str(earlier.date()) for d in days)
    assert conversation_path(0, "snags") not in paths(context)


def test_where_filters_on_any_frontmatter_field(indexed: Workspace) -> None:
    recall = engine(indexed)
    bob = recall.recall("kitchen", as_of=NOW, scope=Scope(where=(("user_id", "bob"),)))
    assert bob.results and all("kitchen" in p or "snags" in p for p in paths(bob))
    tagged = recall.recall("euros", as_of=NOW, scope=Scope(where=(("tags", "chalet"),)))
    assert paths(tagged) == [conversation_path(-40, "chalet")]
    typed = recall.recall("chalet", as_of=NOW, scope=Scope(where=(("type", "entity"),)))
    assert paths(typed) == ["Memory/Chalet Les Praz.md"]
    globbed = recall.recall("kitchen", as_of=NOW, scope=Scope(path_glob="Projects/*"))
    assert paths(globbed) == ["Projects/Kitchen.md"]
    ranged = recall.recall(
        "euros", as_of=NOW, scope=Scope(since=(NOW - dt.timedelta(days=10)).date(), until=NOW.date())
    )
    assert conversation_path(-40, "chalet") not in paths(ranged)
    assert conversation_path(-9, "train") in paths(ranged)


def test_a_date_in_the_question_boosts_notes_of_that_date(indexed: Workspace) -> None:
    # "Tell me about" appears in every session; the date decides.
    when = (NOW + dt.timedelta(days=-20)).date()
    context = engine(indexed).recall(f"what did we talk about on {when.day} {when:%B}", as_of=NOW)
    assert context.date_range is not None and context.date_range.start == when
    assert context.results[0].path == conversation_path(-20, "kitchen")
    explanation = context.results[0].explanation
    assert explanation is not None and explanation.date > 0


def test_a_question_that_is_only_a_date_lists_that_day_s_notes_first(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Notes/Meeting with Sam.md", "---\ndate: 2023-09-12\n---\nMet Sam about the garden.\n")
    # Its text holds the date's digits again and again: no evidence that it is that day's note.
    parcel = "The parcel of 2023-09-12 is lost; 2023-09-12 on its label, 09 12 2023 on the form.\n"
    write(vault, "Notes/Parcel.md", "---\ndate: 2024-01-05\n---\n" + parcel)
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        recall = ws.recall()
        assert paths(recall.recall("2023-09-12", as_of=NOW))[0] == "Notes/Meeting with Sam.md"
        # With words beside the date, the words count as everywhere else.
        assert paths(recall.recall("parcel label 2023-09-12", as_of=NOW))[0] == "Notes/Parcel.md"
    finally:
        ws.close()


def test_a_title_with_a_date_beside_it_still_names_the_note(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Projects/Kitchen renovation.md", "Oak worktops, new tiles, the sink moved under the window.\n")
    ideas = "Kitchen renovation ideas: a larder, open shelves, kitchen renovation costs.\n"
    write(vault, "Notes/Kitchen ideas.md", ideas)
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        context = ws.recall().recall("Kitchen renovation in March", as_of=NOW)
        assert context.date_range is not None  # "in March" is the date; the rest is the title
        first = context.results[0]
        assert first.path == "Projects/Kitchen renovation.md"
        assert first.explanation is not None and first.explanation.named
    finally:
        ws.close()


def test_every_score_is_explained_and_adds_up(indexed: Workspace) -> None:
    context = engine(indexed).recall("chalet Chamonix February", as_of=NOW)
    assert context.results
    for item in context.results:
        e = item.explanation
        assert e is not None
        assert e.raw is not None
        assert e.final == pytest.approx(e.raw * e.decay.value)
        assert item.score == pytest.approx(e.final)
        # The decay multiplies the odds of the relevance (the graph and date boosts in log-odds) against the best
        # candidate's, to the sixth.
        assert 0 < e.raw <= 1
    raws = [i.explanation.raw for i in context.results if i.explanation is not None]
    assert max(raws) == pytest.approx(1.0)
    best = next(i.explanation for i in context.results if i.explanation and i.explanation.raw == max(raws))
    top = log_odds(math.log(best.relevance / (1 - best.relevance)), best.graph + best.date)
    for item in context.results:
        e = item.explanation
        assert e is not None and e.raw is not None
        mine = log_odds(math.log(e.relevance / (1 - e.relevance)), e.graph + e.date)
        assert e.raw == pytest.approx(relative_odds(mine, top))
        # The learned fusion: the relevance is the logistic of its features' contributions (none when every
        # feature is 0, as for a note the date alone brought in).
        assert e.words == 0
        z = default_model().bias + sum(value for _, value in e.fusion)
        assert e.relevance == pytest.approx(1 / (1 + math.exp(-z)))
        # Written with characters every terminal and browser font has (no superscript).
        assert any(line.startswith("final ") and "(odds / best odds)^6" in line for line in e.lines())
    scores = [i.score for i in context.results]
    assert scores == sorted(scores, reverse=True)


def test_the_weighted_sum_is_explained_and_adds_up(indexed: Workspace) -> None:
    recall = engine(indexed)
    recall.settings = RecallConfig(fusion="weighted")
    context = recall.recall("chalet Chamonix February", as_of=NOW)
    assert context.results
    for item in context.results:
        e = item.explanation
        assert e is not None and not e.fusion
        assert e.final == pytest.approx((e.relevance + e.words + e.graph + e.date) * e.decay.value)
        assert e.relevance == pytest.approx(e.dense_weight * e.dense_norm + (1 - e.dense_weight) * e.lexical_norm)


def test_confidence_lifts_a_never_accessed_memory_note(indexed: Workspace) -> None:
    context = engine(indexed).recall("chalet host Favre arrival", as_of=NOW)
    memory = next(i for i in context.results if i.path == "Memory/Chalet Les Praz.md")
    assert memory.explanation is not None
    assert memory.explanation.decay.lift == pytest.approx(0.1 * 0.9)


def test_the_graph_links_a_note_to_the_session_it_cites(indexed: Workspace) -> None:
    context = engine(indexed).recall("chalet host Favre arrival", as_of=NOW)
    chalet = next(i for i in context.results if i.path == conversation_path(-40, "chalet"))
    assert chalet.explanation is not None
    assert chalet.explanation.graph > 0
    assert chalet.explanation.graph_via == "Memory/Chalet Les Praz.md"


def test_recording_an_access_changes_the_decay(fresh: tuple[Path, Workspace]) -> None:
    _, ws = fresh
    recall = ws.recall()
    target = conversation_path(-60, "sourdough")
    before = next(i for i in recall.recall("sourdough", as_of=NOW).results if i.path == target)
    recall.record([target], NOW.astimezone() - dt.timedelta(days=30))
    after = next(i for i in recall.recall("sourdough", as_of=NOW).results if i.path == target)
    assert before.explanation is not None and after.explanation is not None
    assert before.explanation.decay.days_since_access is None
    assert after.explanation.access.access_count == 1
    assert after.explanation.decay.days_since_access == pytest.approx(30, abs=0.01)
    assert after.explanation.decay.value == pytest.approx(0.5 + 0.008)


def test_temporal_tier_lists_recent_sessions_not_hot_and_not_repeated(indexed: Workspace) -> None:
    context = engine(indexed, hot_limit=1).recall("packing list ski trip", as_of=NOW)
    temporal = {t.path for t in context.temporal}
    hot_paths = {i.path for i in context.results if i.tier == "hot"}
    assert temporal and not temporal & hot_paths
    assert not temporal & {i.path for i in context.warm}
    when = [t.when for t in context.temporal]
    assert when == sorted(when, reverse=True)
    assert all(NOW - t.when <= dt.timedelta(hours=48) for t in context.temporal)


def test_the_temporal_tier_can_be_switched_off(indexed: Workspace) -> None:
    recall = engine(indexed, hot_limit=1)
    recall.settings = type(recall.settings)(temporal_context=False)
    assert recall.recall("packing list", as_of=NOW).temporal == ()


def test_a_recap_lists_recent_sessions_first_by_time(indexed: Workspace) -> None:
    context = engine(indexed, hot_limit=1).recall("what did we talk about recently?", as_of=NOW)
    assert context.recap
    recent = [i for i in context.results if i.tier in {"hot", "temporal"}]
    assert recent and list(context.results[: len(recent)]) == recent
    dates = [(i.date or "") for i in recent]
    assert dates == sorted(dates, reverse=True)
    assert any(t.summary for t in context.temporal), "a recap includes summaries"


def test_recall_recent_is_newest_first_within_the_hours(indexed: Workspace) -> None:
    items = engine(indexed).recall_recent(hours=24, limit=10, as_of=NOW)
    assert [t.path for t in items] == [
        conversation_path(0, "snags"),
        conversation_path(0, "packing"),
        conversation_path(0, "dinner"),
        conversation_path(-1, "power"),
    ]
    assert len(engine(indexed).recall_recent(hours=48, limit=2, as_of=NOW)) == 2


def test_recall_never_writes_to_the_vault(indexed: Workspace) -> None:
    before = file_tree(indexed.root)
    recall = engine(indexed)
    recall.recall("chalet", as_of=NOW)
    recall.recall("what did we talk about recently", as_of=NOW)
    recall.record(["Memory/Chalet Les Praz.md"])
    assert file_tree(indexed.root) == before


def test_a_renamed_note_keeps_its_access_statistics(fresh: tuple[Path, Workspace]) -> None:
    root, ws = fresh
    old = conversation_path(-60, "sourdough")
    ws.recall().record([old])
    ws.recall().record([old])
    (root / old).rename(root / "Conversations/Sourdough.md")
    assert ws.indexer().sync().notes_renamed == 1
    stats = ws.access_log().stats([old, "Conversations/Sourdough.md"])
    assert stats["Conversations/Sourdough.md"].access_count == 2
    assert stats[old].access_count == 0


def test_links_to_titles_with_non_ascii_capitals_resolve(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Memory/Ärger mit dem Vermieter.md", "The landlord dispute about the Nebenkosten.\n")
    write(root, "Notes/Miete.md", "Rent notes; see [[ärger mit dem vermieter]] for the dispute.\n")
    ws = workspace(root)
    try:
        ws.indexer().sync()
        assert ws.searcher().titled(["ärger mit dem vermieter"]) == {
            "ärger mit dem vermieter": ["Memory/Ärger mit dem Vermieter.md"]
        }
    finally:
        ws.close()


def test_a_replay_leaves_out_notes_written_later_the_same_day(indexed: Workspace) -> None:
    packing = conversation_path(0, "packing")  # 09:00 on NOW's day
    before = engine(indexed).recall("packing list goggles helmet", as_of=NOW.replace(hour=8, minute=30))
    after = engine(indexed).recall("packing list goggles helmet", as_of=NOW.replace(hour=9, minute=30))
    assert packing not in paths(before)
    assert packing in paths(after)


def test_sessions_answer_where_filters_from_their_notes_and_twins_match_by_moment(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    day = NOW.date()
    write(
        root, f"ops/sessions/{day}/0300-a.md", f"---\ndate: {day}\ntime: '03:00'\nuser_id: Alice\nchat_id: tg\n---\nA\n"
    )
    write(
        root,
        "Conversations/a.md",
        f"---\ntype: conversation\ndate: {day}\ntime: '03:00:00'\nuser_id: alice\nchat_id: tg\ntopic: ski\n---\n\n"
        "**alice:** ski boots\n\n**sentinel:** size 42\n",
    )
    ws = workspace(root)
    try:
        ws.indexer().sync()
        recall = ws.recall()
        hot, _ = recall.hot(NOW)
        assert [(r.carrier, sorted(r.paths)) for r in hot] == [
            ("Conversations/a.md", ["Conversations/a.md", f"ops/sessions/{day}/0300-a.md"])
        ], "the summary and its conversation note are one session"
        scoped = recall.recall("ski boots", as_of=NOW, scope=Scope(where=(("topic", "ski"),)))
        assert [s.path for s in scoped.sessions] == [f"ops/sessions/{day}/0300-a.md"]
        assert paths(scoped, "hot") == ["Conversations/a.md"]
    finally:
        ws.close()


def test_kept_sessions_follow_new_summaries_and_a_changed_index(fresh: tuple[Path, Workspace]) -> None:
    root, ws = fresh
    recall = ws.recall()
    assert len(recall.recall("anything", as_of=NOW).sessions) == 5
    day = NOW.date()
    # A summary the agent just wrote: no index change, seen through the summaries' own stat check.
    write(root, f"ops/sessions/{day}/1700-late.md", f"---\ndate: {day}\ntime: '17:00'\nuser_id: carol\n---\nx\n")
    assert ("carol", "17:00") in {(s.user_id, s.time) for s in recall.recall("anything", as_of=NOW).sessions}
    # A conversation note indexed later: the index generation changes.
    write(
        root,
        "Conversations/dave.md",
        f"---\ntype: conversation\ndate: {day}\ntime: '16:00'\nuser_id: dave\n---\n\n"
        "**dave:** hi\n\n**sentinel:** hello\n",
    )
    ws.indexer().sync()
    assert "Conversations/dave.md" in {s.path for s in recall.recall("anything", as_of=NOW).sessions}


def test_a_pinned_note_keeps_the_ceiling_and_an_archived_one_leaves_recall(fresh: tuple[Path, Workspace]) -> None:
    from companion.curation.curator import Curator
    from companion.vault.audit import AuditLog

    root, ws = fresh
    curator = Curator(root, AuditLog(ws.data_dir), source="test")
    chalet = "Memory/Chalet Les Praz.md"
    before = next(i for i in engine(ws).recall("chalet host Favre", as_of=NOW).results if i.path == chalet)
    assert before.explanation is not None and before.explanation.decay.value < 1.0  # never accessed: ~0.64

    curator.apply(curator.plan_pin(chalet))
    ws.indexer().sync()
    pinned = next(i for i in engine(ws).recall("chalet host Favre", as_of=NOW).results if i.path == chalet)
    assert pinned.explanation is not None and pinned.explanation.decay.pinned
    assert pinned.explanation.decay.value == 1.0 and pinned.score > before.score
    assert any("pinned" in line for line in pinned.explanation.lines())

    curator.apply(curator.plan_archive(chalet))
    ws.indexer().sync()
    paths_now = [i.path for i in engine(ws).recall("chalet host Favre", as_of=NOW).results]
    assert chalet not in paths_now and f"archive/{chalet}" not in paths_now


def test_the_latest_summary_goes_in_once_without_obsidian_comments(fresh: tuple[Path, Workspace]) -> None:
    from companion.recall.assembly import build

    root, ws = fresh
    write(
        root,
        "Memory/Summaries/alice.md",
        "---\ntype: summary\ndate: 2026-11-22\n---\n- The chalet host is Mme Favre.\n\n"
        "%% companion: end of summary %%\n%% a private comment %%\n",
    )
    ws.indexer().sync()
    recall = engine(ws)
    recalled = recall.recall("chalet host summary Favre", as_of=NOW)
    assembled = build(recall, recalled, 2000, lambda text: len(text.split()))
    summaries = [p for p in assembled.pieces if p.kind == "summary"]
    assert [p.text for p in summaries] == ["- The chalet host is Mme Favre."]
    assert all(p.source != "Memory/Summaries/alice.md" for p in assembled.pieces if p.kind == "entity")
    assert "%%" not in assembled.text
