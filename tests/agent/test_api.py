"""The agent API on a real vault, a real manifest and a real embedded Chroma store (hashing embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.agent.api import AgentApi
from companion.errors import AgentInputError
from companion.workspace import Workspace
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


@pytest.fixture
def api(tmp_path: Path) -> Iterator[AgentApi]:
    ws: Workspace = workspace(write_agent_vault(tmp_path / "vault"), data_dir=tmp_path / "data")
    ws.indexer().sync()
    try:
        yield AgentApi(ws)
    finally:
        ws.close()


def test_search_lists_without_counting_and_reading_counts_one_access(api: AgentApi) -> None:
    found = api.search("boiler pressure gauge", k=3)
    assert found[0].path == "Conversations/2026-10-01 Boiler pressure.md"
    assert "0.6 bar" in found[0].snippet and found[0].tier == "warm" and found[0].match
    log = api.workspace.access_log()
    assert log.stats([found[0].path])[found[0].path].access_count == 0  # a listing is not a use
    api.read("@1")
    assert log.stats([found[0].path])[found[0].path].access_count == 1  # reading the note is
    # A reader that only looks counts nothing.
    AgentApi(api.workspace, record=False).read(found[0].path)
    assert log.stats([found[0].path])[found[0].path].access_count == 1


def test_a_search_while_the_meaning_side_is_built_says_so(tmp_path: Path) -> None:
    ws = workspace(write_agent_vault(tmp_path / "vault"), data_dir=tmp_path / "data")
    try:
        ws.indexer().sync(embed_for_s=0.0)
        api = AgentApi(ws)
        found = api.search("boiler pressure gauge", k=3)
        assert found[0].path == "Conversations/2026-10-01 Boiler pressure.md"
        assert api.notice is not None and "0% built" in api.notice
        ws.indexer().embed()
        api.search("boiler pressure gauge", k=3)
        assert api.notice is None
    finally:
        ws.close()


def test_a_search_with_no_good_match_says_so_with_the_closest_notes(api: AgentApi) -> None:
    found = api.search("zeppelin hangar", k=10)
    assert found and len(found) <= 3
    assert not any(f.match for f in found)
    assert all(f.as_json()["match"] is False for f in found)
    # Each says how far it is from a match, on the scale the floor is held to.
    floor = api.workspace.config.recall.relevance_floor
    assert all(f.relevance is not None and f.relevance < floor for f in found)


def test_each_search_result_carries_its_relevance_on_one_scale(api: AgentApi) -> None:
    found = api.search("kitchen renovation", k=5)
    floor = api.workspace.config.recall.relevance_floor
    assert found and all(f.relevance is not None and f.relevance >= floor for f in found if f.match)
    assert [f.as_json()["relevance"] for f in found] == [round(f.relevance or 0.0, 6) for f in found]
    # Unlike the final score (relative to the first, to the sixth power), it does not vanish after the first.
    assert len(found) >= 2 and found[1].relevance is not None and found[1].relevance > found[1].score
    assert all(f.relevance is None for f in api.memory_query("lexical", "boiler"))


def test_search_filters_by_frontmatter_dates_and_path(api: AgentApi) -> None:
    assert [f.path for f in api.search("kitchen", where={"type": "fact"})] == ["Memory/Kitchen budget.md"]
    assert all(f.path.startswith("Conversations/") for f in api.search("chalet boiler", path="Conversations/*"))
    dated = api.search("chalet boiler", since="2026-10-03", until="2026-10-31")
    assert [f.path for f in dated] == ["Conversations/2026-10-05 Ski trip.md"]


@pytest.mark.parametrize("name", ["People/Ingrid Olsen.md", "People/Ingrid Olsen", "Ingrid Olsen", "ingrid"])
def test_read_takes_a_path_a_title_or_an_alias(api: AgentApi, name: str) -> None:
    note = api.read(name)
    assert note.path == "People/Ingrid Olsen.md"
    assert note.frontmatter["type"] == "person" and note.tags == ("family",) and note.aliases == ("Ingrid",)
    assert note.backlinks == ("Projects/Kitchen Renovation.md",)


def test_links_resolve_and_list_the_unresolved(api: AgentApi) -> None:
    links = api.links("Kitchen Renovation")
    by_target = {link.target: link.path for link in links.outgoing}
    assert by_target == {
        "Nowak Renovations": "Memory/Nowak Renovations.md",
        "Kitchen budget": "Memory/Kitchen budget.md",
        "Ingrid": "People/Ingrid Olsen.md",
        "Missing Note": None,
    }
    assert links.backlinks == ("Memory/Nowak Renovations.md",)
    assert links.as_json()["unresolved"] == ["Missing Note"]


def test_graph_reaches_as_far_as_asked(api: AgentApi) -> None:
    one = api.graph("Ingrid", hops=1)
    assert dict(one.nodes) == {"People/Ingrid Olsen.md": 0, "Projects/Kitchen Renovation.md": 1}
    assert one.edges == (("Projects/Kitchen Renovation.md", "People/Ingrid Olsen.md"),)
    two = dict(api.graph("Ingrid", hops=2).nodes)
    assert two["Memory/Kitchen budget.md"] == 2 and two["Memory/Nowak Renovations.md"] == 2


def test_exact_lists_every_note_of_the_name_those_in_its_language_first(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    danish = (
        "Canvas er et kerneplugin, der giver dig mulighed for at organisere noter visuelt på et uendeligt lærred. Du "
        "kan tilføje noter, vedhæftede filer og websider og forbinde dem med linjer, når du har oprettet et lærred.\n"
    )
    write(vault, "a/Canvas.md", danish)
    write(vault, "en/Plugins/Canvas.md", "Canvas is a core plugin that lets you lay out notes on a board. [[Cards]]\n")
    write(vault, "en/Plugins/Cards.md", "A card on a canvas.\n")
    write(vault, "ja/白板.md", "---\naliases: [Canvas]\n---\nキャンバスはノートを並べるプラグインです。\n")
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        api = AgentApi(ws)
        exact = [f.path for f in api.memory_query("exact", "Canvas")]
        assert exact[0] == "en/Plugins/Canvas.md" and set(exact) == {
            "a/Canvas.md",
            "en/Plugins/Canvas.md",
            "ja/白板.md",
        }
        assert [f.path for f in api.memory_query("exact", "a/Canvas.md")] == ["a/Canvas.md"]  # a path: that note
        assert [f.path for f in api.memory_query("graph", "Canvas")] == ["en/Plugins/Cards.md"]
    finally:
        ws.close()


def test_list_filters_by_folder_type_tag_and_date(api: AgentApi) -> None:
    assert [n.path for n in api.list_notes(folder="Conversations")] == [
        "Conversations/2026-10-05 Ski trip.md",
        "Conversations/2026-10-01 Boiler pressure.md",
    ]
    assert [n.path for n in api.list_notes(note_type="FACT")] == ["Memory/Kitchen budget.md"]
    assert [n.path for n in api.list_notes(tag="#home")] == ["Projects/Kitchen Renovation.md"]
    assert [n.path for n in api.list_notes(since="2026-10-02")] == ["Conversations/2026-10-05 Ski trip.md"]
    assert len(api.list_notes(limit=2)) == 2


def test_list_dates_notes_by_date_then_created_then_title_newest_first(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Memory/Boiler.md", "---\ntype: fact\ncreated: 2026-10-03T08:15:00\n---\nThe boiler holds 1.5 bar.\n")
    write(vault, "Memory/Alpha.md", "---\ntype: fact\ncreated: 2026-10-03\n---\nAlpha.\n")
    write(vault, "Daily/2026-10-04.md", "Groceries and the boiler.\n")
    write(vault, "Memory/Dated.md", "---\ndate: 2026-09-30\ncreated: 2026-10-09\n---\nThe date wins.\n")
    write(vault, "Notes/zebra.md", "No date at all.\n")
    write(vault, "Notes/apple.md", "No date either.\n")
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        listed = AgentApi(ws).list_notes()
        assert [(n.path, n.date) for n in listed] == [
            ("Daily/2026-10-04.md", "2026-10-04"),
            ("Memory/Alpha.md", "2026-10-03"),  # a day stands at its end, after that day's moments
            ("Memory/Boiler.md", "2026-10-03T08:15"),
            ("Memory/Dated.md", "2026-09-30"),
            ("Notes/apple.md", None),  # undated notes last, in path order
            ("Notes/zebra.md", None),
        ]
        assert [n.path for n in AgentApi(ws).list_notes(since="2026-10-03", until="2026-10-03")] == [
            "Memory/Alpha.md",
            "Memory/Boiler.md",
        ]
    finally:
        ws.close()


def test_memory_query_has_each_retrieval_path(api: AgentApi) -> None:
    assert [f.path for f in api.memory_query("exact", "Ingrid")] == ["People/Ingrid Olsen.md"]
    assert api.memory_query("exact", "nobody by that name") == []
    assert [f.path for f in api.memory_query("type", "entity")] == ["Memory/Nowak Renovations.md"]
    assert api.memory_query("lexical", "chalet deposit")[0].path == "Conversations/2026-10-05 Ski trip.md"
    assert api.memory_query("hybrid", "chalet deposit")[0].path == "Conversations/2026-10-05 Ski trip.md"
    graph = [f.path for f in api.memory_query("graph", "Nowak Renovations")]
    assert graph[0] == "Projects/Kitchen Renovation.md" and "People/Ingrid Olsen.md" in graph


def test_context_fits_the_budget(api: AgentApi) -> None:
    assembled, _counter = api.context("what is the kitchen budget?", budget=300)
    assert assembled.tokens <= 300 and "18,500" in assembled.text


def test_a_new_note_is_seen_once_indexed(api: AgentApi, tmp_path: Path) -> None:
    write(tmp_path / "vault", "People/Tom.md", "---\naliases: [Tommy]\n---\nTom is Alice's partner.\n")
    api.workspace.catch_up()
    assert api.read("Tommy").path == "People/Tom.md"


@pytest.mark.parametrize(
    ("call", "field", "says"),
    [
        (lambda a: a.read("../outside.md"), "note", "leaves the vault"),
        (lambda a: a.read("/etc/passwd"), "note", "absolute path"),
        (lambda a: a.read("C:\\Windows\\win.ini"), "note", "absolute path"),
        (lambda a: a.read("Nobody"), "note", "no note called 'Nobody'"),
        (lambda a: a.read(""), "note", "is empty"),
        (lambda a: a.read(42), "note", "expected text, got int"),
        (lambda a: a.read("bad \udcff name"), "note", "not valid text"),
        (lambda a: a.search("x" * 10_000_001), "query", "at most 10000"),
        (lambda a: a.search("kitchen", k=0), "k", "between 1 and 100"),
        (lambda a: a.search("kitchen", k=True), "k", "expected a whole number"),
        (lambda a: a.search("kitchen", since="last tuesday"), "since", "not a date"),
        (lambda a: a.search("kitchen", as_of="soon"), "as_of", "not an ISO-8601 moment"),
        (lambda a: a.search("kitchen", where={"type": ["a", "b"]}), "where", "single text"),
        (lambda a: a.graph("Ingrid", hops=9), "hops", "between 1 and 4"),
        (lambda a: a.memory_query("psychic", "x"), "mode", "exact, type, lexical, hybrid, graph"),
        (lambda a: a.list_notes(folder="../up"), "folder", "not a folder inside the vault"),
        (lambda a: a.recall_recent(hours=-1), "hours", "more than 0"),
    ],
)
def test_bad_input_names_the_argument(api: AgentApi, call: object, field: str, says: str) -> None:
    with pytest.raises(AgentInputError) as caught:
        call(api)  # type: ignore[operator]
    assert caught.value.field == field
    assert says in caught.value.reason


def test_a_follow_up_can_name_what_the_last_search_surfaced(api: AgentApi) -> None:
    found = api.search("kitchen renovation budget", k=3)
    assert len(found) >= 2 and all(f.match for f in found)
    assert api.read("@1").path == found[0].path
    assert api.links("@2").path == found[1].path
    assert api.read("@last").path == found[1].path or api.read("@last").path == found[0].path
    with pytest.raises(AgentInputError, match=f"listed {len(found)} notes"):
        api.read("@7")
    typed = api.memory_query("type", "entity")
    assert api.read("@1").path == typed[0].path == "Memory/Nowak Renovations.md"


def test_the_surfaced_notes_expire(api: AgentApi, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    api.search("chalet deposit", k=3)
    later = time.monotonic() + 11 * 60
    monkeypatch.setattr(time, "monotonic", lambda: later)  # the clock the recent-context cache reads
    with pytest.raises(AgentInputError, match="no search or timeline in the last 10 minutes"):
        api.read("@1")


def test_what_the_api_returns_is_redacted_and_a_snippet_is_cut_after_redaction(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *(f"MIIEkeyline{n:02d}" + "Q" * 40 for n in range(6))])
    write(
        vault,
        "Ops/Deploy key.md",
        f"---\ntype: fact\npassword: Field-Pw-5517\n---\n# Deploy key\n\nThe zebracorn deploy key:\n{key}\n"
        "-----END RSA PRIVATE KEY-----\n\nThe rent IBAN is DE89 3704 0044 0532 0130 00.\n",
    )
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        api = AgentApi(ws)
        # A snippet shorter than the key: cut first, the key's start would be left without its end, unrecognised.
        found = api.search("zebracorn deploy key", k=1, snippet_chars=120)
        assert found[0].path == "Ops/Deploy key.md" and "[REDACTED:private_key]" in found[0].snippet
        note = api.read("Ops/Deploy key.md")
        markdown = api.markdown("Ops/Deploy key.md")
        line = api.timeline(note="Ops/Deploy key.md", before=0, after=0)
        shown = " ".join([found[0].snippet, note.body, str(note.frontmatter), markdown, str(line.as_json())])
        assert not [s for s in ("MIIEkeyline", "Field-Pw-5517", "DE89 3704") if s in shown], shown
        assert note.frontmatter["password"] == "[REDACTED:secret]" and "[REDACTED:iban]" in markdown
        # The file itself is the user's, as written.
        assert "MIIEkeyline00" in (vault / "Ops/Deploy key.md").read_text(encoding="utf-8")
    finally:
        ws.close()
