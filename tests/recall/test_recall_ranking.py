"""How recall ranks and places what it finds, on small vaults of their own: the bonus for holding every word, the
dense share that follows the question's coverage, the heading or block a result opens at, unspaced scripts and exact
titles, and a multilingual model's own weights (real files, a real index, hashing embedder)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from companion.config import RecallConfig
from companion.recall.fusion import default_model
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


def test_a_known_item_search_finds_the_note_holding_every_word(tmp_path: Path) -> None:
    # Four words typed on purpose, each in the target once; two decoys repeat half of them many times, so BM25 and
    # the embeddings rank them first, and only the bonus for holding every word brings the target up.
    root = tmp_path / "vault"
    filler = "We talked about the weather and the week ahead, nothing else of note. " * 6
    write(root, "Notes/target.md", f"{filler}\nThe lantern by the harbour.\n{filler}\nQuinoa and sourdough.\n")
    write(root, "Notes/lanterns.md", "Lantern harbour. " * 30)
    write(root, "Notes/bread.md", "Quinoa sourdough. " * 30)
    for i in range(20):
        write(root, f"Notes/other {i}.md", f"Other note {i} about the garden and the week.\n")
    ws = workspace(root)
    try:
        ws.indexer().sync()
        query = "lantern harbour quinoa sourdough"
        without = [h.path for h in ws.searcher().search(query, 3, every_word_weight=0.0)]
        assert without[0] != "Notes/target.md"
        hits = ws.searcher().search(query, 3)
        assert hits[0].path == "Notes/target.md" and hits[0].words == pytest.approx(1.0)
        assert all(h.words == 0.0 for h in hits[1:])
        # Recall leaves a date the question names out of the words a note must hold.
        dated = f"{query} yesterday"
        assert ws.searcher().search(dated, 3)[0].words == 0.0
        assert ws.searcher().search(dated, 3, every_word_query=query)[0].path == "Notes/target.md"
        item = next(i for i in ws.recall().recall(query, as_of=NOW).results if i.path == "Notes/target.md")
        assert item.explanation is not None
        assert "words +1.000 (holds every word of the question)" not in item.explanation.lines()
        weighted = ws.recall()
        weighted.settings = RecallConfig(fusion="weighted")
        item = next(i for i in weighted.recall(query, as_of=NOW).results if i.path == "Notes/target.md")
        assert item.explanation is not None
        assert "words +1.000 (holds every word of the question)" in item.explanation.lines()
        # The learned fusion weighs holding every word among its features.
        learned = next(i for i in ws.recall().recall(query, as_of=NOW).results if i.path == "Notes/target.md")
        assert learned.explanation is not None and dict(learned.explanation.fusion)["every_word"] > 0
    finally:
        ws.close()


def test_the_dense_share_follows_how_much_of_the_question_one_note_holds(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Notes/boiler.md", "The boiler pressure gauge read 1.5 bar after the plumber bled the radiators.\n")
    write(root, "Notes/garden.md", "Tomatoes went in late this year; the basil bolted in the heat.\n")
    for i in range(10):
        write(root, f"Notes/other {i}.md", f"Note {i} about the week, the weather and nothing much.\n")
    ws = workspace(root)
    try:
        ws.indexer().sync()
        recall = ws.recall()
        recall.settings = RecallConfig(fusion="weighted")
        # One note holds every word: lexical evidence is strong, BM25 gets the larger share.
        held = recall.recall("boiler pressure gauge", k=3).results[0]
        assert held.path == "Notes/boiler.md"
        assert held.explanation is not None
        assert held.explanation.coverage == pytest.approx(1.0)
        assert held.explanation.dense_weight == pytest.approx(0.75 * (1 - 0.6))
        assert "holds 100% of the question's words" in " ".join(held.explanation.lines())
        # The words are spread over two notes and one is in none: the best note holds a part, the share moves less.
        spread = recall.recall("boiler tomatoes zeppelin", k=3).results[0].explanation
        assert spread is not None and 0.0 < spread.coverage < 0.6
        assert 0.3 < spread.dense_weight < 0.75
        # Each piece of the relevance uses the share it reports.
        assert spread.relevance == pytest.approx(
            spread.dense_weight * spread.dense_norm + (1 - spread.dense_weight) * spread.lexical_norm
        )
        # lexical_trust 0 keeps the configured share for every question.
        recall.settings = replace(recall.settings, lexical_trust=0.0)
        fixed = recall.recall("boiler pressure gauge", k=3).results[0].explanation
        assert fixed is not None and fixed.dense_weight == 0.75
        words, candidates = ["boiler", "tomato", "zeppelin"], ["Notes/boiler.md", "Notes/garden.md"]
        expected = {"Notes/boiler.md": {"boiler"}, "Notes/garden.md": {"tomato"}}
        assert ws.manifest.holding(words, candidates) == expected
        # Knowing how many notes hold each word picks the faster query per word (a word's whole list of notes when
        # it is short, else the candidates one by one); the answer is the same either way, other notes left out.
        frequencies = ws.manifest.doc_frequencies(words)
        assert ws.manifest.holding(words, candidates, frequencies) == expected
        assert ws.manifest.holding(words, candidates, dict.fromkeys(words, 10**9)) == expected
        assert ws.manifest.holding(words, ["Notes/garden.md"], frequencies) == {"Notes/garden.md": {"tomato"}}
        assert ws.manifest.holding(words, candidates, dict.fromkeys(words, 0)) == expected  # unknown to the index
    finally:
        ws.close()


def test_words_sharing_a_stem_each_hold_what_the_stem_holds(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Notes/garden.md", "Tomatoes went in late this year; one tomato plant bolted in the heat.\n")
    write(root, "Notes/shed.md", "The shed roof leaks over the files box.\n")
    ws = workspace(root)
    try:
        ws.indexer().sync()
        # "files" and "file" (or "tomatoes" and "tomato") stem alike: asked together, neither counts as a word no
        # note holds, which would make the question look off-topic and its keyword matches weaker.
        found = ws.manifest.doc_frequencies(["files", "file", "tomatoes", "tomato", "zeppelin"])
        assert found == {"files": 1, "file": 1, "tomatoes": 1, "tomato": 1}
    finally:
        ws.close()


def test_results_name_the_heading_or_block_obsidian_opens_and_the_passage(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    filler = "\n\n".join(f"Paragraph {i} about the garden shed and the week ahead." for i in range(40))
    write(
        root,
        "Home/House.md",
        f"# House\n\n{filler}\n\n## Boiler\n\nThe boiler pressure gauge should read 1.5 bar; top it up at the "
        "filling loop.\n",
    )
    write(root, "Chats/Plumber.md", "user: the plumber said to bleed the radiators twice a year ^bleed-advice\n")
    ws = workspace(root)
    try:
        ws.indexer().sync()
        engine = ws.recall()
        item = next(
            i for i in engine.recall("boiler pressure gauge filling loop", k=5).results if i.path == "Home/House.md"
        )
        assert "~" in item.anchor  # the index's own id for the chunk, not something to show a person
        place = engine.locate(item)
        assert (place.link, place.heading) == ("[[House#Boiler]]", "Boiler")
        assert place.snippet.startswith("The boiler pressure gauge should read 1.5 bar")
        chat = engine.recall("plumber bleed radiators", k=5).results[0]
        located = engine.locate(chat)
        assert located.link == "[[Plumber#^bleed-advice]]" and "^bleed-advice" not in located.snippet
    finally:
        ws.close()


def test_unspaced_scripts_and_exact_titles_are_found_in_any_language(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "中文/东京.md", "我们去了东京大学的图书馆，图书馆很大。\n")
    write(root, "中文/北京.md", "北京的天气今天很好，我们去公园散步。\n")
    write(root, "日本語/図書館.md", "図書館の開館時間は午前九時から午後五時までです。\n")
    write(root, "ไทย/ตลาด.md", "ตลาดน้ำเปิดทุกวันเสาร์และอาทิตย์\n")
    write(root, "ខ្មែរ/ផ្សារ.md", "ផ្សារធំថ្មីបើកពីម៉ោងប្រាំមួយព្រឹក\n")
    write(root, "Deutsch/Die Verwandlung.md", "Gregor Samsa erwacht als Käfer.\n")
    write(root, "People/Ingrid Olsen.md", "---\naliases: [Tante Ingrid]\n---\nShe files the tax return.\n")
    for i in range(15):
        write(
            root,
            f"Deutsch/Notiz {i}.md",
            f"Die Verwandlung der Stadt im Jahr {2000 + i}, die Verwandlung geht weiter.\n",
        )
    ws = workspace(root)
    try:
        ws.indexer().sync()
        recall = ws.recall()

        def first(query: str) -> str:
            return recall.recall(query, k=5).results[0].path

        assert first("东京大学图书馆") == "中文/东京.md"
        assert first("北京天气") == "中文/北京.md"
        assert first("図書館の開館時間") == "日本語/図書館.md"
        assert first("ตลาดน้ำ") == "ไทย/ตลาด.md"
        # An exact title or alias names its note, however many notes share its words.
        assert first("Die Verwandlung") == "Deutsch/Die Verwandlung.md"
        assert first("tante ingrid") == "People/Ingrid Olsen.md"
    finally:
        ws.close()


def test_a_multilingual_model_ranks_with_its_own_weights_over_their_span(
    indexed: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    recall = indexed.recall()
    assert not recall.multilingual and recall.fusion == default_model()
    spans: list[float] = []
    search = recall.index.search

    def spying(*args: object, **kwargs: object) -> object:
        spans.append(kwargs["dense_span"])  # type: ignore[arg-type]
        return search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recall.index, "search", spying)
    recall.recall("sourdough starter", as_of=NOW)
    assert spans and set(spans) == {RecallConfig().dense_span}
    spans.clear()
    recall.multilingual = True  # what a workspace whose config names a multilingual model builds
    shipped = default_model(multilingual=True)
    assert recall.fusion == shipped and shipped.dense_span is not None
    recall.recall("sourdough starter", as_of=NOW)
    assert spans and set(spans) == {shipped.dense_span}
    # The embeddings alone (dense_weight 1) rank without the learned weights: the setting's span scales them.
    recall.settings = replace(recall.settings, dense_weight=1.0)
    assert recall.dense_span == RecallConfig().dense_span
