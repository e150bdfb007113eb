"""Recall scopes: parsing, `Scope.matches`, and parity between `matches` and the index's SQL filter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from companion.errors import ConfigError
from companion.recall.scope import Scope, parse_day, parse_where, path_pattern, where_from_mapping
from companion.vault.dates import note_day
from indexer.manifest import Manifest
from indexer.records import NoteRecord

MARCH_1 = date(2026, 3, 1)


def test_parse_where_splits_on_the_first_equals_and_strips() -> None:
    assert parse_where([]) == ()
    assert parse_where(["user_id=alice", " type = conversation "]) == (("user_id", "alice"), ("type", "conversation"))
    assert parse_where(["query=a=b"]) == (("query", "a=b"),)
    assert parse_where(["done="]) == (("done", ""),)


@pytest.mark.parametrize("item", ["user_id", "=alice", "  =alice", ""])
def test_parse_where_refuses_malformed_items(item: str) -> None:
    with pytest.raises(ConfigError, match="expected FIELD=VALUE"):
        parse_where(["user_id=alice", item])


def test_where_from_mapping_turns_values_into_text() -> None:
    assert where_from_mapping(None, "q.json") == ()
    assert where_from_mapping({}, "q.json") == ()
    assert where_from_mapping(
        {"user_id": "alice", "n": 3, "ratio": 0.5, "done": True, "off": False, "day": date(2026, 3, 1)}, "q.json"
    ) == (("user_id", "alice"), ("n", "3"), ("ratio", "0.5"), ("done", "true"), ("off", "false"), ("day", "2026-03-01"))


@pytest.mark.parametrize("value", [["a", "b"], {"a": 1}, None, []])
def test_where_from_mapping_refuses_lists_dicts_and_null(value: Any) -> None:
    with pytest.raises(ConfigError, match=r"q\.json: `where\.tags` must be a single"):
        where_from_mapping({"tags": value}, "q.json")


@pytest.mark.parametrize("where", [["user_id=alice"], "user_id=alice", 3])
def test_where_from_mapping_refuses_a_non_object(where: Any) -> None:
    with pytest.raises(ConfigError, match="must be an object"):
        where_from_mapping(where, "q.json")


def test_parse_day() -> None:
    assert parse_day("2026-03-01", "--since") == MARCH_1
    assert parse_day(" 2026-03-01 ", "--since") == MARCH_1
    assert parse_day("2026-03-01T23:59:59", "--since") == MARCH_1
    assert parse_day("2026-03-01 08:00", "--since") == MARCH_1
    assert parse_day("20260301", "--since") == MARCH_1


@pytest.mark.parametrize("text", ["", "yesterday", "03/01/2026", "2026-02-30", "2026-13-01"])
def test_parse_day_refuses_anything_else_naming_the_option(text: str) -> None:
    with pytest.raises(ConfigError, match="--until"):
        parse_day(text, "--until")


def test_note_day() -> None:
    assert note_day(date(2026, 3, 1)) == MARCH_1
    assert note_day(datetime(2026, 3, 1, 22, 0)) == MARCH_1
    assert note_day("2026-03-01T22:00:00") == MARCH_1
    assert note_day(" 2026-03-01 ") == MARCH_1
    assert note_day(None) is None
    assert note_day("") is None
    assert note_day("TBD") is None


def test_narrowed_intersects_the_date_range_and_keeps_the_rest() -> None:
    base = Scope(where=(("user_id", "alice"),), since=MARCH_1, until=date(2026, 3, 31), path_glob="Conversations/*")
    assert base.narrowed(since=date(2026, 3, 10)) == Scope(
        base.where, date(2026, 3, 10), date(2026, 3, 31), base.path_glob
    )
    assert base.narrowed(since=date(2026, 2, 1)) == base
    assert base.narrowed(until=date(2026, 4, 30)) == base
    assert base.narrowed(until=date(2026, 3, 5)).until == date(2026, 3, 5)
    assert base.narrowed() == base
    assert Scope().narrowed() == Scope()
    assert Scope().narrowed(since=MARCH_1) == Scope(since=MARCH_1)
    assert Scope(until=MARCH_1).narrowed(since=date(2026, 2, 1)) == Scope(since=date(2026, 2, 1), until=MARCH_1)


def test_empty_and_describe() -> None:
    assert Scope().empty and Scope().describe() == "everything"
    full = Scope(where=(("user_id", "alice"),), since=MARCH_1, until=date(2026, 3, 2), path_glob="C/*")
    assert not full.empty
    assert full.describe() == "user_id=alice, since 2026-03-01, until 2026-03-02, path C/*"
    assert not Scope(path_glob="x").empty


def _matches(scope: Scope, fields: dict[str, Any], *, path: str = "Notes/x.md", day: date | None = None) -> bool:
    return scope.matches(path, "note", fields.get("type"), day, fields)


def test_matches_list_fields_case_insensitively() -> None:
    tags = {"tags": ["Ski", "chalet"]}
    assert _matches(Scope(where=(("tags", "ski"),)), tags)
    assert _matches(Scope(where=(("tags", "CHALET"),)), tags)
    assert not _matches(Scope(where=(("tags", "budget"),)), tags)
    assert not _matches(Scope(where=(("tags", "ski"),)), {"tags": []})
    assert _matches(Scope(where=(("user_id", "ALICE"),)), {"user_id": "alice"})
    assert not _matches(Scope(where=(("user_id", "alice"),)), {})
    assert not _matches(Scope(where=(("user_id", ""),)), {"user_id": None})


def test_matches_booleans_as_true_false_and_numbers_as_text() -> None:
    assert _matches(Scope(where=(("done", "true"),)), {"done": True})
    assert _matches(Scope(where=(("done", "TRUE"),)), {"done": True})
    assert _matches(Scope(where=(("done", "false"),)), {"done": False})
    assert not _matches(Scope(where=(("done", "1"),)), {"done": True})
    assert not _matches(Scope(where=(("done", "True"),)), {"done": False})
    assert _matches(Scope(where=(("n", "3"),)), {"n": 3})
    assert _matches(Scope(where=(("ratio", "0.5"),)), {"ratio": 0.5})


def test_matches_all_where_pairs_must_hold() -> None:
    fields = {"user_id": "alice", "chat_id": "main"}
    assert _matches(Scope(where=(("user_id", "alice"), ("chat_id", "main"))), fields)
    assert not _matches(Scope(where=(("user_id", "alice"), ("chat_id", "other"))), fields)


def test_matches_columns_come_from_the_item_not_the_frontmatter() -> None:
    scope = Scope(where=(("kind", "memory"), ("type", "Preference"), ("title", "alice likes tea")))
    path = "Memory/Alice likes tea.md"
    assert scope.matches(path, "memory", "preference", None, {"kind": "other", "title": "other"})
    assert not scope.matches(path, "note", "preference", None, {"kind": "memory"})
    assert Scope(where=(("type", ""),)).matches(path, "note", None, None, {})
    assert Scope(where=(("date", "2026-03-01"),)).matches(path, "note", None, MARCH_1, {"date": "1999-01-01"})
    assert Scope(where=(("path", path.upper()),)).matches(path, "note", None, None, {})


def test_since_leaves_undated_out_and_until_keeps_them() -> None:
    since = Scope(since=MARCH_1)
    assert since.matches("a.md", "note", None, MARCH_1, {})
    assert not since.matches("a.md", "note", None, date(2026, 2, 28), {})
    assert not since.matches("a.md", "note", None, None, {})
    until = Scope(until=MARCH_1)
    assert until.matches("a.md", "note", None, MARCH_1, {})
    assert not until.matches("a.md", "note", None, date(2026, 3, 2), {})
    assert until.matches("a.md", "note", None, None, {})


def test_path_glob_crosses_folders_and_is_case_sensitive() -> None:
    scope = Scope(path_glob="Conversations/*")
    assert scope.matches("Conversations/2026/a.md", "conversation", None, None, {})
    assert scope.matches("Conversations/a.md", "conversation", None, None, {})
    assert not scope.matches("conversations/a.md", "conversation", None, None, {})
    assert not scope.matches("Notes/Conversations/a.md", "note", None, None, {})
    assert Scope(path_glob="*/2026-03-1?.md").matches("Daily/2026-03-10.md", "note", None, None, {})


@pytest.mark.parametrize(
    ("typed", "glob"),
    [
        ("Conversations/*", "Conversations/*"),  # a glob as it is
        ("*.md", "*.md"),
        ("en/Plugins/Canvas.md", "en/Plugins/Canvas.md"),  # a note's path: that note
        ("en", "en/*"),  # a folder's name: everything under it
        (" Projects/Home/ ", "Projects/Home/*"),
        ("./en", "en/*"),  # relative to the vault
        ("/en/", "en/*"),
        (".", "*"),  # the vault itself
        ("/", "*"),
    ],
)
def test_a_folder_s_name_means_the_notes_under_it(typed: str, glob: str) -> None:
    assert path_pattern(typed) == glob


def test_a_folder_s_pattern_holds_its_notes_at_any_depth_and_no_other_folder_s() -> None:
    scope = Scope(path_glob=path_pattern("en"))
    assert scope.matches("en/a.md", "note", None, None, {}) and scope.matches("en/sub/a.md", "note", None, None, {})
    assert not scope.matches("english/a.md", "note", None, None, {})


# (path, kind, note_type, stored date, frontmatter, body) as the indexer would record them.
NOTES: list[tuple[str, str, str | None, str | None, dict[str, Any], str]] = [
    (
        "Conversations/2026-03-05 Ski trip.md",
        "conversation",
        "conversation",
        "2026-03-05",
        {"type": "conversation", "user_id": "alice", "chat_id": "main", "tags": ["ski", "Chalet"], "done": True},
        "We booked the chalet for the ski trip.",
    ),
    (
        "Conversations/2026-03-12 Budget.md",
        "conversation",
        "conversation",
        "2026-03-12",
        {"type": "conversation", "user_id": "Bob", "tags": ["budget"], "done": False, "priority": 2},
        "The chalet budget is 1200 EUR.",
    ),
    (
        "Conversations/archive/2025-12-30 Old.md",
        "conversation",
        "conversation",
        "2025-12-30",
        {"type": "conversation", "user_id": "alice", "tags": "ski"},
        "An old talk about skiing.",
    ),
    (
        "Conversations/2026-03-10 Evening.md",
        "conversation",
        "conversation",
        "2026-03-10T21:15:00",
        {"type": "conversation", "user_id": "alice", "chat_id": "other", "done": False, "tags": []},
        "Evening chat about the chalet keys.",
    ),
    (
        "Memory/Alice prefers mornings.md",
        "memory",
        "memory",
        None,
        {"type": "memory", "user_id": "alice", "confidence": 0.8},
        "Alice prefers morning meetings.",
    ),
    (
        "Memory/Bob budget.md",
        "memory",
        "memory",
        "2026-03-01",
        {"type": "memory", "user_id": "bob", "confidence": 1, "pinned": True},
        "Bob keeps the chalet budget.",
    ),
    ("Notes/Chalet.md", "note", None, None, {"tags": ["chalet", "travel"], "aliases": ["The chalet"]}, "A chalet."),
    (
        "Notes/Recipes.md",
        "note",
        "recipe",
        "2026-02-28",
        {"type": "recipe", "date": "2026-02-28T18:30:00"},
        "Fondue for the evening.",
    ),
    (
        "Daily/2026-03-10.md",
        "note",
        "daily",
        "2026-03-10",
        {"type": "daily", "mood": 3, "people": ["alice", "bob"]},
        "Called Bob about the chalet.",
    ),
    ("Notes/Untitled.md", "note", None, None, {}, "Nothing much."),
    ("Notes/Odd keys.md", "note", None, None, {"a.b": "dotted", "two words": "yes", "catégorie": "Thé"}, "Odd."),
]


def _record(path: str, kind: str, note_type: str | None, day: str | None, fm: dict[str, Any]) -> NoteRecord:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    # Serialised as the indexer does, so non-ASCII keys reach SQLite as written.
    fields = json.dumps(fm, ensure_ascii=False, default=str)
    return NoteRecord(path, 1, 1, "hash", "meta", kind, note_type, title, day, fields)


def _fill(manifest: Manifest, notes: list[tuple[str, str, str | None, str | None, dict[str, Any], str]]) -> None:
    with manifest.transaction() as db:
        for path, kind, note_type, day, fm, body in notes:
            manifest.put_note(db, _record(path, kind, note_type, day, fm), [], body)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Manifest]:
    built = Manifest(tmp_path_factory.mktemp("scope") / "manifest.sqlite")
    _fill(built, NOTES)
    yield built
    built.close()


def _python_side(scope: Scope, manifest: Manifest) -> set[str]:
    records = manifest.notes()
    assert len(records) == len(NOTES)
    return {r.path for r in records if scope.matches(r.path, r.kind, r.note_type, note_day(r.date), r.frontmatter)}


def _where(*pairs: str) -> tuple[tuple[str, str], ...]:
    return parse_where(pairs)


PARITY_SCOPES = [
    Scope(),
    Scope(where=_where("user_id=alice")),
    Scope(where=_where("user_id=ALICE")),
    Scope(where=_where("user_id=bob")),
    Scope(where=_where("chat_id=other")),
    Scope(where=_where("tags=ski")),
    Scope(where=_where("tags=CHALET")),
    Scope(where=_where("tags=budget")),
    Scope(where=_where("people=Bob")),
    Scope(where=_where("aliases=the chalet")),
    Scope(where=_where("done=true")),
    Scope(where=_where("done=FALSE")),
    Scope(where=_where("pinned=true")),
    Scope(where=_where("priority=2")),
    Scope(where=_where("mood=3")),
    Scope(where=_where("confidence=0.8")),
    Scope(where=_where("confidence=1")),
    Scope(where=_where("type=memory")),
    Scope(where=_where("type=Conversation")),
    Scope(where=_where("type=")),
    Scope(where=_where("kind=note")),
    Scope(where=_where("kind=MEMORY")),
    Scope(where=_where("title=chalet")),
    Scope(where=_where("path=Notes/Chalet.md")),
    Scope(where=_where("date=2026-03-10")),
    Scope(where=_where("date=2026-02-28")),
    Scope(where=_where("a.b=dotted")),
    Scope(where=_where("two words=YES")),
    Scope(where=_where("catégorie=thé")),
    Scope(where=_where("missing=x")),
    Scope(where=_where("user_id=alice", "type=conversation")),
    Scope(since=MARCH_1),
    Scope(until=date(2026, 3, 5)),
    Scope(since=MARCH_1, until=date(2026, 3, 10)),
    Scope(since=date(2026, 3, 10), until=date(2026, 3, 10)),
    Scope(path_glob="Conversations/*"),
    Scope(path_glob="Conversations/*/*"),
    Scope(path_glob="*Chalet*"),
    Scope(path_glob="Memory/*.md"),
    Scope(path_glob="Daily/2026-03-1?.md"),
    Scope(path_glob="[CM]*"),
    Scope(path_glob="notes/*"),
    Scope(where=_where("user_id=alice"), since=MARCH_1, path_glob="Conversations/*"),
    Scope(where=_where("tags=chalet"), until=date(2026, 3, 31)),
]


@pytest.mark.parametrize("scope", PARITY_SCOPES, ids=[s.describe() for s in PARITY_SCOPES])
def test_the_index_and_matches_agree(manifest: Manifest, scope: Scope) -> None:
    assert manifest.paths_in_scope(scope) == _python_side(scope, manifest)


def test_the_parity_cases_are_not_vacuous(manifest: Manifest) -> None:
    assert len(manifest.paths_in_scope(Scope())) == len(NOTES)
    assert manifest.paths_in_scope(Scope(where=_where("user_id=bob"))) == {
        "Conversations/2026-03-12 Budget.md",
        "Memory/Bob budget.md",
    }
    assert manifest.paths_in_scope(Scope(since=MARCH_1, until=date(2026, 3, 10))) == {
        "Conversations/2026-03-05 Ski trip.md",
        "Conversations/2026-03-10 Evening.md",
        "Memory/Bob budget.md",
        "Daily/2026-03-10.md",
    }
    assert manifest.paths_in_scope(Scope(where=_where("done=false"))) == {
        "Conversations/2026-03-12 Budget.md",
        "Conversations/2026-03-10 Evening.md",
    }


LEXICAL_SCOPES = [
    Scope(),
    Scope(where=_where("user_id=alice")),
    Scope(where=_where("kind=memory")),
    Scope(since=MARCH_1),
    Scope(path_glob="Conversations/*"),
    Scope(where=_where("missing=x")),
]


@pytest.mark.parametrize("scope", LEXICAL_SCOPES, ids=[s.describe() for s in LEXICAL_SCOPES])
def test_lexical_search_honours_the_scope(manifest: Manifest, scope: Scope) -> None:
    chalet = {path for path, *_, body in NOTES if "chalet" in f"{path} {body}".lower()}
    found = manifest.lexical("chalet", 50, scope)
    assert {path for path, _ in found} == chalet & _python_side(scope, manifest)
    assert [score for _, score in found] == sorted((score for _, score in found), reverse=True)


def test_lexical_with_an_empty_scope_is_unscoped(manifest: Manifest) -> None:
    assert manifest.lexical("chalet", 50, Scope()) == manifest.lexical("chalet", 50)
    assert len(manifest.lexical("chalet", 2, Scope(where=_where("type=conversation")))) == 2


@pytest.mark.parametrize(
    ("notes", "scope"),
    [
        pytest.param(
            [("Notes/Élodie.md", "note", None, None, {"user_id": "élodie"}, "x")],
            Scope(where=_where("user_id=ÉLODIE")),
            id="non-ASCII case",
        ),
        pytest.param(
            [("Notes/Plan.md", "note", None, "TBD", {"date": "TBD"}, "x")],
            Scope(since=MARCH_1),
            id="since with an unreadable date",
        ),
        pytest.param(
            [("Notes/Plan.md", "note", None, "TBD", {"date": "TBD"}, "x")],
            Scope(until=MARCH_1),
            id="until with an unreadable date",
        ),
        pytest.param(
            [("Notes/Trip.md", "note", None, None, {"place": {"city": "Paris"}}, "x")],
            Scope(where=_where("place=paris")),
            id="mapping field",
        ),
        pytest.param(
            [("Notes/a.md", "note", None, None, {}, "x"), ("Notes/b.md", "note", None, None, {}, "x")],
            Scope(path_glob="Notes/[!a].md"),
            id="negated glob class",
        ),
    ],
)
def test_the_index_and_matches_agree_on_edge_cases(
    tmp_path: Path, notes: list[tuple[str, str, str | None, str | None, dict[str, Any], str]], scope: Scope
) -> None:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    try:
        _fill(manifest, notes)
        expected = {
            path
            for path, kind, note_type, day, fm, _ in notes
            if scope.matches(path, kind, note_type, note_day(day), fm)
        }
        assert manifest.paths_in_scope(scope) == expected
    finally:
        manifest.close()


def test_slash_and_dot_dates_are_read_as_days() -> None:
    assert note_day("2026/03/01") == date(2026, 3, 1)
    assert note_day("2026.03.01 (Sun) 10:00") == date(2026, 3, 1)
    assert note_day("03/01/2026") is None
