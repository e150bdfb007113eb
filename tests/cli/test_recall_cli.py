"""`recall`, `recall --batch`, `recent`, `context` and `graph` as a user runs them: real processes (`eval` and
`fusion` are in test_recall_cli_eval.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from companion.agent.views import Found
from companion.cli.args import item_json
from companion.recall.results import RecallItem
from indexer.manifest import Manifest
from tests.helpers.cli import run_companion
from tests.helpers.conversations import conversation_path, write_vault
from tests.helpers.files import file_tree, write
from tests.helpers.recallcli import AS_OF
from tests.helpers.recallcli import run_on as _run
from tests.helpers.workspaces import workspace


def test_recall_json_has_tiers_scores_and_explanations(vault: Path, data_dir: str) -> None:
    out = _run(vault, data_dir, "recall", "sourdough starter hydration", "--as-of", AS_OF, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    first = data["results"][0]
    assert first["path"] == conversation_path(-60, "sourdough") and first["tier"] == "warm"
    assert set(first["explanation"]) >= {"dense", "lexical", "graph", "date", "decay", "final"}
    assert first["score"] == pytest.approx(first["explanation"]["final"], abs=1e-5)
    assert {s["user_id"] for s in data["hot"]} == {"alice", "bob"}
    assert data["as_of"] == AS_OF


def test_a_score_far_below_the_first_keeps_its_digits_in_json() -> None:
    # The final score is relative to the first result, to the sixth power: 3e-09 is an order, not zero.
    item = RecallItem("a.md", "a", "warm", 3.14159265e-9, "note", None, None, "", None)
    assert item_json(item)["score"] == 3.14159e-9
    found = Found("a.md", "a", 3.14159265e-9, "warm", None, None, "")
    assert found.as_json()["score"] == 3.14159e-9


def test_the_list_shows_each_notes_relevance_not_the_relative_final_score(vault: Path, data_dir: str) -> None:
    # The final score is relative to the first result (to the sixth power): a list of them says nothing past the
    # first; each note's relevance is on one scale, the one the relevance floor is held to.
    for question, matches in (("kitchen", True), ("budget", False)):
        query = ("recall", question, "--as-of", AS_OF)
        data = json.loads(_run(vault, data_dir, *query, "--json").stdout)
        text = _run(vault, data_dir, *query).stdout
        scored = [r for r in data["results"] if r["tier"] == "warm"]
        assert len(scored) >= 2 and all(r["match"] is matches for r in scored)
        assert data["no_good_match"] is not matches
        for result in scored:
            assert f"{result['relevance']:.3f} warm     {result['path']}" in text
        assert "<0.001" not in text


def test_recall_where_and_path_filters(vault: Path, data_dir: str) -> None:
    out = _run(vault, data_dir, "recall", "kitchen", "--where", "user_id=bob", "--as-of", AS_OF, "--json")
    data = json.loads(out.stdout)
    assert data["results"] and all(r["path"].startswith("Conversations/") for r in data["results"])
    bad = _run(vault, data_dir, "recall", "kitchen", "--where", "no-equals-sign")
    assert bad.returncode == 2 and "FIELD=VALUE" in bad.stderr


def test_recall_text_output_explains(vault: Path, data_dir: str) -> None:
    out = _run(vault, data_dir, "recall", "chalet host Favre", "--as-of", AS_OF, "--explain")
    assert out.returncode == 0, out.stderr
    assert "Memory/Chalet Les Praz.md" in out.stdout
    assert "decay" in out.stdout and "final" in out.stdout


def test_batch_answers_every_line_in_order_and_reports_bad_lines(vault: Path, data_dir: str) -> None:
    lines = [
        {"id": "a", "query": "sourdough starter hydration", "as_of": AS_OF},
        {"id": "b", "query": "kitchen worktop", "k": 2, "where": {"user_id": "bob"}, "as_of": AS_OF},
        "not json",
        {"id": "d", "query": 42},
        {"id": "e", "query": "chalet", "as_of": "yesterday-ish"},
        {"id": "g", "query": "  "},  # refused as a single empty QUERY is
        {"id": "f", "query": "train tickets Lyon", "as_of": AS_OF},
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    out = _run(vault, data_dir, "recall", "--batch", "-", stdin=text)
    assert out.returncode == 1, "a failed line makes the exit code non-zero"
    assert "4 of 7 batch lines failed" in out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["a", "b", "line 3", "d", "e", "g", "f"]
    assert "`query` is empty" in rows[5]["error"]
    del rows[5]
    assert rows[0]["results"][0]["path"] == conversation_path(-60, "sourdough")
    assert len(rows[1]["results"]) <= 2
    assert all(
        r["path"] in {conversation_path(-20, "kitchen"), conversation_path(0, "snags")} for r in rows[1]["results"]
    )
    for bad in rows[2:5]:
        assert bad["error"] and bad["results"] == []
    for row in (rows[0], rows[1], rows[5]):
        found = [r["path"] for r in row["results"]]
        assert len(found) == len(set(found)), "distinct notes"
        assert all(r["tier"] in {"hot", "warm", "temporal"} and isinstance(r["score"], float) for r in row["results"])
        scores = [r["score"] for r in row["results"] if r["tier"] == "warm"]
        assert scores == sorted(scores, reverse=True)


def test_batch_file_gives_the_same_answers_as_single_recalls(vault: Path, data_dir: str, tmp_path: Path) -> None:
    questions = ["chalet Chamonix February", "oak worktop", "backup restore"]
    batch = tmp_path / "q.jsonl"
    batch.write_text("".join(json.dumps({"id": q, "query": q, "as_of": AS_OF}) + "\n" for q in questions))
    out = _run(vault, data_dir, "recall", "--batch", str(batch))
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    for q, row in zip(questions, rows, strict=True):
        single = json.loads(_run(vault, data_dir, "recall", q, "--as-of", AS_OF, "--json").stdout)
        assert [r["path"] for r in row["results"]] == [r["path"] for r in single["results"]]


def test_a_listing_records_no_access_but_record_and_a_context_count_the_matches(vault: Path, tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")

    def counted() -> int:
        files = list(Path(data_dir).rglob("access.sqlite"))
        return sum(sqlite3.connect(f).execute("SELECT count(*) FROM access").fetchone()[0] for f in files)

    _run(vault, data_dir, "recall", "--batch", "-", stdin=json.dumps({"id": "x", "query": "sourdough"}) + "\n")
    _run(vault, data_dir, "recall", "sourdough", "--as-of", AS_OF)
    _run(vault, data_dir, "recall", "sourdough", "--as-of", AS_OF, "--record")  # a replay never counts
    _run(vault, data_dir, "context", "sourdough", "--as-of", AS_OF)
    _run(vault, data_dir, "recall", "sourdough", "--k", "2")  # a listing is not a use
    assert counted() == 0
    shown = json.loads(_run(vault, data_dir, "recall", "sourdough", "--k", "2", "--record", "--json").stdout)
    assert counted() == len([r for r in shown["results"] if r["match"]]) > 0
    _run(vault, data_dir, "context", "oak worktop for the kitchen", "--budget", "2000")
    assert counted() > len(shown["results"])


def test_a_question_about_nothing_in_the_vault_says_no_good_match(vault: Path, data_dir: str) -> None:
    data = json.loads(_run(vault, data_dir, "recall", "zeppelin hangar xylophone", "--as-of", AS_OF, "--json").stdout)
    assert data["no_good_match"] and 1 <= len(data["results"]) <= 3
    assert not any(r["match"] for r in data["results"])
    text = _run(vault, data_dir, "recall", "zeppelin hangar xylophone", "--as-of", AS_OF).stdout
    assert text.startswith("no good match") or "\nno good match" in text
    matched = json.loads(_run(vault, data_dir, "recall", "sourdough starter", "--as-of", AS_OF, "--json").stdout)
    assert not matched["no_good_match"] and all(r["match"] for r in matched["results"])


def test_recent_lists_completed_sessions_newest_first(vault: Path, data_dir: str) -> None:
    out = _run(vault, data_dir, "recent", "--hours", "24", "--as-of", AS_OF, "--json")
    assert out.returncode == 0, out.stderr
    sessions = json.loads(out.stdout)["sessions"]
    assert [s["path"] for s in sessions][:2] == [conversation_path(0, "snags"), conversation_path(0, "packing")]
    assert all(s["summary"] for s in sessions)


def test_context_respects_the_budget_and_keeps_policy(vault: Path, data_dir: str) -> None:
    for budget in ("60", "400"):
        out = _run(vault, data_dir, "context", "what did the chalet cost?", "--budget", budget, "--json")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["tokens"] <= int(budget)
        kinds = [p["kind"] for p in data["kept"]]
        assert kinds[:2] == ["policy", "instruction"]
        assert data["tokenizer"].startswith("wordpiece")
    too_small = _run(vault, data_dir, "context", "hello", "--budget", "5")
    assert too_small.returncode == 2 and "over the budget" in too_small.stderr


def test_graph_shows_links_backlinks_and_unresolved(vault: Path, data_dir: str) -> None:
    write(vault, "Projects/Dangling.md", "Links to [[Nowhere]] and [[Projects/Kitchen]].\n")
    out = _run(vault, data_dir, "graph", "Dangling", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["note"] == "Projects/Dangling.md"
    assert {(o["target"], o["resolved"]) for o in data["outlinks"]} == {("Nowhere", False), ("Projects/Kitchen", True)}
    chalet = json.loads(_run(vault, data_dir, "graph", "Memory/Chalet Les Praz.md", "--json").stdout)
    assert "Projects/Kitchen.md" in chalet["backlinks"]
    assert any(n["path"] == "Projects/Dangling.md" and n["hops"] == 2 for n in chalet["neighbours"])
    missing = _run(vault, data_dir, "graph", "No such note")
    assert missing.returncode == 2 and "no note called" in missing.stderr


def test_query_commands_never_write_to_the_vault(vault: Path, data_dir: str) -> None:
    before = file_tree(vault)
    _run(vault, data_dir, "recall", "chalet")
    _run(vault, data_dir, "recent")
    _run(vault, data_dir, "context", "chalet")
    _run(vault, data_dir, "graph", "Memory/Chalet Les Praz.md")
    assert file_tree(vault) == before


def test_an_index_from_schema_1_is_upgraded_without_re_embedding(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_vault(root)
    ws = workspace(root)
    try:
        ws.indexer().sync()
        path = ws.manifest.path
        ws.close()
        db = sqlite3.connect(path)
        db.execute("DROP INDEX notes_title_key")
        for column in ("fields", "links", "title_key"):
            db.execute(f"ALTER TABLE notes DROP COLUMN {column}")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
        db.commit()
        db.close()
        Manifest(path).close()
        report = ws.indexer().sync()
        assert report.chunks_embedded == 0 and report.notes_indexed > 0
        record = ws.manifest.note("Memory/Chalet Les Praz.md")
        assert record is not None and record.frontmatter["confidence"] == 0.9 and record.link_targets
    finally:
        ws.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("recall", "x", "--as-of", "0001-01-01"), "year between 1900 and 9000"),
        (("recall", "x", "--as-of", "soon"), "ISO-8601"),
        (("recent", "--hours", "inf"), "--hours"),
        (("recent", "--hours", "nan"), "--hours"),
        (("recall", "x", "--since", "2026-05-01", "--until", "2026-04-01"), "after --until"),
        (("graph", ""), "give a note"),
        (("eval", "missing.jsonl"), "cannot read the questions"),
    ],
)
def test_bad_arguments_are_clear_errors(vault: Path, data_dir: str, args: tuple[str, ...], message: str) -> None:
    out = _run(vault, data_dir, *args)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


def test_a_batch_file_that_is_not_utf8_is_refused_before_indexing(vault: Path, tmp_path: Path) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_bytes(b'{"id": "a", "query": "caf\xe9"}\n')
    out = _run(vault, str(tmp_path / "fresh"), "recall", "--batch", str(batch))
    assert out.returncode == 2 and "not UTF-8" in out.stderr
    assert not list((tmp_path / "fresh").rglob("manifest.sqlite")), "nothing was indexed for a batch that failed"


def test_a_batch_line_with_a_bad_as_of_names_its_line(vault: Path, data_dir: str) -> None:
    text = json.dumps({"id": "a", "query": "x", "as_of": "0001-01-01"}) + "\n"
    out = _run(vault, data_dir, "recall", "--batch", "-", stdin=text)
    row = json.loads(out.stdout)
    assert out.returncode == 1 and "stdin, line 1" in row["error"] and "1900" in row["error"]


def test_an_empty_query_or_a_misspelt_filter_says_so(vault: Path, data_dir: str, tmp_path: Path) -> None:
    empty = _run(vault, data_dir, "recall", "   ")
    assert empty.returncode == 2 and "the QUERY is empty" in empty.stderr
    misspelt = _run(vault, data_dir, "recall", "chalet", "--where", "user_idd=alice")
    assert misspelt.returncode == 0
    assert "no indexed note has the field 'user_idd'" in misspelt.stdout and "indexed?" not in misspelt.stdout
    no_match = _run(vault, data_dir, "recall", "chalet", "--where", "user_id=nobody")
    assert "no notes found within user_id=nobody" in no_match.stdout
    unindexed = tmp_path / "other"
    write(unindexed, "Note.md", "Some words about a chalet.\n")
    bare = _run(unindexed, str(tmp_path / "other-data"), "recall", "chalet", "--no-sync")
    assert "the index is empty" in bare.stdout


def test_json_commands_print_their_errors_as_json(vault: Path, data_dir: str) -> None:
    bad = _run(vault, data_dir, "recall", "chalet", "--as-of", "soon", "--json")
    assert bad.returncode == 2
    assert json.loads(bad.stdout) == {
        "error": "--as-of 'soon': expected an ISO-8601 moment such as 2026-11-20T10:00:00",
        "exit_code": 2,
    }
    missing = _run(vault, data_dir, "vault", "read", "Nobody", "--json")
    assert missing.returncode == 2 and json.loads(missing.stdout)["field"] == "note"


def test_recall_shows_the_heading_and_the_passage_not_the_chunk_id(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(root, "Home/House.md", "# House\n\nIntro.\n\n## Boiler\n\nThe boiler pressure gauge should read 1.5 bar.\n")
    where = ["--vault", str(root), "--data-dir", str(tmp_path / "data")]
    text = run_companion("recall", "boiler pressure gauge", *where)
    assert text.returncode == 0, text.stderr
    assert "Home/House.md  › Boiler" in text.stdout and "~" not in text.stdout
    assert "The boiler pressure gauge should read 1.5 bar." in text.stdout
    data = json.loads(run_companion("recall", "boiler pressure gauge", "--json", *where).stdout)
    assert data["results"][0]["link"] == "[[House#Boiler]]"


def test_k_has_a_short_form(vault: Path, data_dir: str) -> None:
    out = _run(vault, data_dir, "recall", "kitchen", "-k", "1", "--as-of", AS_OF, "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["results"]) == 1


def test_a_folder_without_notes_is_named_and_a_vault_explained(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    write(empty, "scans/receipt.txt", "not a note\n")
    out = run_companion("recall", "chalet", "--vault", str(empty), "--data-dir", str(tmp_path / "data"))
    assert out.returncode == 0, out.stderr
    assert f"no notes found: {empty} holds no notes" in out.stdout
    assert "a folder of Markdown notes (`.md` files" in out.stdout
    assert "companion index" not in out.stdout and "--no-sync" not in out.stdout
