"""The review queue's finders on plain values: what each kind takes to be found, and what is left alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from companion.curation.queue import ReviewInputs, review_queue
from companion.curation.similar import duplicates_and_changes, similar_pairs, values_of
from companion.curation.suggestions import NoteFacts, Usage

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def note(path: str, text: str, **front: object) -> NoteFacts:
    kind = (
        "memory" if front.get("type") in ("fact", "entity", "belief", "experience", "reflection", "recipe") else "note"
    )
    links = tuple(str(t) for t in front.pop("links", ()))  # type: ignore[union-attr]
    return NoteFacts(
        path=path,
        title=path.rsplit("/", 1)[-1].removesuffix(".md"),
        kind=kind,
        note_type=str(front["type"]) if "type" in front else None,
        text=text,
        content_hash=str(hash(text)),
        changed=NOW - timedelta(days=3),
        frontmatter=front,
        links=links,
    )


def kinds_of(notes: list[NoteFacts], **inputs: object) -> list[tuple[str, tuple[str, ...]]]:
    orphans = inputs.pop("orphans", False)
    by_path = {n.path: n for n in notes}
    names = {n.title.casefold(): n.path for n in notes}

    def resolve(target: str, _source: str) -> str | None:
        return names.get(target.casefold())

    queue = review_queue(ReviewInputs(notes=by_path, **inputs), resolve, NOW)  # type: ignore[arg-type]
    # These notes link nowhere and are months old, so each is an orphan too: shown by the test that asks for them.
    return [(s.kind, s.paths) for s in queue if s.kind != "orphan" or orphans]


BIRTHDAY = "My sister's birthday is on 3 March and she would love a new pair of walking boots this year."


def test_a_note_repeating_another_is_a_duplicate_not_a_changed_fact() -> None:
    kept = note("Memory/fact/Sister birthday.md", BIRTHDAY, type="fact", confidence=0.9)
    repeat = note("Memory/fact/Remember sister birthday.md", "I'll remember that " + BIRTHDAY, type="fact")
    found = duplicates_and_changes(
        {n.path: n for n in (kept, repeat)}, similar_pairs({n.path: n for n in (kept, repeat)}, {}), {}
    )
    assert [(s.kind, s.paths) for s in found] == [("duplicate", (repeat.path, kept.path))]
    assert found[0].proposal.action == "merge" and found[0].proposal.other == kept.path
    assert any("confidence" in line for line in found[0].evidence)


def test_the_same_statement_with_another_value_is_a_changed_fact_newer_kept() -> None:
    text = "The boiler pressure should be {} bar when the heating is cold, topped up at the filling loop."
    old = note("Memory/fact/Boiler.md", text.format("1.5"), type="fact", created="2026-01-10")
    new = note("Memory/fact/Boiler now.md", text.format("1.2"), type="fact", created="2026-11-02")
    assert kinds_of([old, new]) == [("changed_fact", (old.path, new.path))]


def test_a_decision_that_changed_is_a_changed_fact_as_the_pipeline_writes_them() -> None:
    text = "We decided to book the chalet in {} for the February ski week, paying the deposit by card."
    old = note("Memory/decision/Chalet.md", text.format("Chamonix"), type="decision", created="2026-09-10")
    new = note("Memory/decision/Chalet again.md", text.format("Morzine"), type="decision", created="2026-11-02")
    assert kinds_of([old, new]) == [("changed_fact", (old.path, new.path))]
    # Tasks say what is to be done, not what is so: two alike tasks are a duplicate or nothing, never a change.
    task = "Ring the plumber about the boiler pressure on {} before the heating season starts."
    tasks = [
        note("Memory/task/Plumber.md", task.format("Monday"), type="task", created="2026-09-10"),
        note("Memory/task/Plumber again.md", task.format("Friday"), type="task", created="2026-11-02"),
    ]
    assert "changed_fact" not in [k for k, _ in kinds_of(tasks)]


def test_property_values_and_short_notes_are_no_evidence() -> None:
    text = "The garden shed key hangs on the hook behind the kitchen door next to the spare torch."
    a = note("Memory/fact/Shed key.md", text, type="fact", created="2026-01-10")
    b = note("Memory/fact/Shed key again.md", text, type="fact", created="2026-05-02")
    assert kinds_of([a, b]) == [("duplicate", (b.path, a.path))] or kinds_of([a, b]) == [
        ("duplicate", (a.path, b.path))
    ]
    empty = [
        note("Daily/2026-01-01.md", "Tasks today", type="daily"),
        note("Daily/2026-01-02.md", "Tasks today", type="daily"),
    ]
    assert kinds_of(empty) == []


def test_close_vectors_need_some_words_in_common_and_the_same_type() -> None:
    tea = "Green tea in the afternoon keeps my focus steady without the jitters of coffee, every weekday."
    a = note("Memory/belief/Tea.md", tea, type="belief")
    b = note(
        "Memory/belief/Afternoon.md",
        "I find that green tea in the afternoon keeps my focus steady, unlike coffee.",
        type="belief",
    )
    c = note(
        "Memory/belief/Other.md",
        "Afternoons go better with a cup of sencha than an espresso, no shaking hands.",
        type="belief",
    )
    d = note("Memory/recipe/Tea.md", tea + " Brew it at seventy degrees.", type="recipe")
    # Vectors this close (as the model gives every note in a script it does not read) are not enough alone.
    vectors = {n.path: np.array([1.0, 0.0], dtype=np.float32) for n in (a, b, c, d)}
    found = kinds_of([a, b, c, d], vectors=vectors)
    assert [kind for kind, _ in found] == ["duplicate"]
    assert set(found[0][1]) == {a.path, b.path}


def test_a_misspelt_link_is_relinked_and_a_note_yet_to_be_written_is_left_alone() -> None:
    chamonix = note("Places/Chamonix.md", "A town under Mont Blanc.", links=["Ski trip"])
    trip = note(
        "Projects/Ski trip.md",
        "We stay in [[Chamonxi]]; see [[Packing list]].",
        links=["Chamonxi", "Packing list", "Chamonix"],
    )
    queue = review_queue(
        ReviewInputs(notes={n.path: n for n in (chamonix, trip)}),
        lambda target, _s: {"chamonix": chamonix.path, "ski trip": trip.path}.get(target.casefold()),
        NOW,
    )
    broken = [s for s in queue if s.kind == "broken_link"]
    assert [(s.paths, s.proposal.value, s.proposal.other) for s in broken] == [
        ((trip.path, chamonix.path), "Chamonxi", chamonix.path)
    ]


def test_memory_notes_without_a_valid_type_get_the_type_their_folder_names() -> None:
    notes = [
        note("Memory/Facts/Door code.md", "The door code is the year we moved in."),
        note("Memory/Inbox/Loose.md", "Something to file later about the car.", type="thing"),
        note("Memory/summary/Agent.md", "Summary.", type="summary"),
        # The types the session pipeline writes are known types, in the memory folder too.
        note("Memory/decision/Chalet.md", "We chose the chalet in Chamonix.", type="decision"),
        note("Memory/task/Plumber.md", "Ring the plumber on Monday.", type="task"),
        note("Memory/Inbox/Marmalade.md", "Seville oranges make the best marmalade.", type="preference"),
        note("Notes/Elsewhere.md", "Not in the memory folder."),
    ]
    queue = review_queue(ReviewInputs(notes={n.path: n for n in notes}), lambda t, s: None, NOW)
    typed = {s.paths[0]: s.proposal.value for s in queue if s.kind == "missing_type"}
    assert typed == {
        "Memory/Facts/Door code.md": "fact",
        "Memory/Inbox/Loose.md": "fact",
        "Memory/Inbox/Marmalade.md": "fact",
    }
    evidence = next(s.evidence for s in queue if s.paths == ("Memory/Inbox/Loose.md",))
    assert "'thing', one the companion does not know" in evidence[0] and "decision" in evidence[0]


def test_only_use_that_faded_makes_a_note_stale() -> None:
    used = note(
        "Memory/fact/Used long ago.md", "An old fact nobody needs.", type="fact", created="2024-01-01", links=["X"]
    )
    never = note("Memory/fact/Never used.md", "Written and never read.", type="fact", created="2024-01-01", links=["X"])
    loose = note("Notes/Loose.md", "Links nowhere.", created="2026-01-01")
    linked = note("Notes/X.md", "The hub.", links=["Loose"])
    usage = {used.path: Usage(NOW - timedelta(days=400), 1, 0.25, True)}
    found = kinds_of(
        [used, never, loose, linked],
        usage=usage,
        backlinks={linked.path: 2, loose.path: 0},
        outlinks={used.path: 1, never.path: 1, linked.path: 1},
    )
    assert ("stale", (used.path,)) in found
    assert not any(paths == (never.path,) for _, paths in found)


def test_a_skipped_suggestion_returns_when_its_notes_change() -> None:
    text = "The boiler pressure should be {} bar when the heating is cold, topped up at the filling loop."
    old = note("Memory/fact/Boiler.md", text.format("1.5"), type="fact", created="2026-01-10")
    new = note("Memory/fact/Boiler now.md", text.format("1.2"), type="fact", created="2026-11-02")
    inputs = ReviewInputs(notes={n.path: n for n in (old, new)})
    (first,) = [s for s in review_queue(inputs, lambda t, s: None, NOW) if s.kind == "changed_fact"]
    hidden = review_queue(inputs, lambda t, s: None, NOW, {first.id: first.fingerprint})
    assert first.id not in [s.id for s in hidden]
    edited = note(
        "Memory/fact/Boiler now.md", text.format("1.2") + " Checked again.", type="fact", created="2026-11-02"
    )
    again = review_queue(
        ReviewInputs(notes={old.path: old, edited.path: edited}), lambda t, s: None, NOW, {first.id: first.fingerprint}
    )
    assert first.id in [s.id for s in again]


def test_values_are_numbers_dates_months_and_names_not_sentence_starts() -> None:
    assert values_of("The train leaves at 07:34 on 3 March; ask Ingrid. Tomorrow is fine.") == {
        "07:34",
        "3",
        "march",
        "Ingrid",
    }


def test_facts_of_one_day_are_ordered_by_their_own_time_not_their_files() -> None:
    text = "The boiler pressure should be {} bar when the heating is cold, topped up at the filling loop."
    morning = note("Memory/fact/Boiler.md", text.format("1.5"), type="fact", created="2026-11-10T09:00:00Z")
    later = note("Memory/fact/Boiler now.md", text.format("1.2"), type="fact", created="2026-11-10T15:00:00Z")
    # The morning note's file was touched last (a retag, a sync): its own time still says it is the older.
    touched = NoteFacts(**{**morning.__dict__, "changed": NOW})
    assert kinds_of([touched, later]) == [("changed_fact", (morning.path, later.path))]


def test_markdown_links_and_notes_with_dotted_names_are_not_taken_for_broken_wikilinks() -> None:
    shed = note("Places/Garden shed.md", "Where the tools live.")
    release = note("Notes/Release 2.0.md", "What shipped.")
    source = note(
        "Notes/Log.md", "See [x](Gardn%20shed.md) and [[Releese 2.0]].", links=["Gardn shed.md", "Releese 2.0"]
    )
    queue = review_queue(
        ReviewInputs(notes={n.path: n for n in (shed, release, source)}),
        lambda target, _s: None,
        NOW,
    )
    assert [(s.proposal.value, s.proposal.other) for s in queue if s.kind == "broken_link"] == [
        ("Releese 2.0", release.path)
    ]
