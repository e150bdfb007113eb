"""A narrow scope (a chat, a field, a week) is searched exactly over its chunks' stored vectors, which are kept for
the scopes asked last: kept answers must never outlive a change of the index."""

from __future__ import annotations

from pathlib import Path

from companion.recall.scope import Scope
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


def _chat(root: Path, name: str, chat: str, text: str) -> None:
    write(root, f"Chats/{name}.md", f"---\ntype: conversation\nchat_id: {chat}\n---\n**user**: {text}\n")


def test_a_scope_asked_again_answers_from_its_kept_vectors_until_the_index_changes(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _chat(root, "boiler", "home", "the boiler pressure dropped to 0.6 bar overnight")
    _chat(root, "garden", "home", "tomatoes need staking before the storm")
    _chat(root, "work", "office", "the boiler room at the office floods in spring")
    ws = workspace(root, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        searcher = ws.searcher()
        home = Scope((("chat_id", "home"),))
        first = [h.path for h in searcher.search("boiler pressure", 5, scope=home, dense_weight=1.0)]
        assert first[0] == "Chats/boiler.md" and "Chats/work.md" not in first
        reads: list[int] = []
        store = searcher._store
        assert store is not None
        original = store.embeddings

        def counted(ids: list[str]) -> dict[str, object]:
            reads.append(len(ids))
            return original(ids)  # type: ignore[return-value]

        store.embeddings = counted  # type: ignore[method-assign]
        again = [h.path for h in searcher.search("boiler pressure gauge", 5, scope=home, dense_weight=1.0)]
        assert again[0] == "Chats/boiler.md" and reads == []  # the same scope: its vectors were kept
        # A new note in the scope changes the index: the scope's vectors are read again and the note is found.
        _chat(root, "radiator", "home", "bleed the radiator when the boiler pressure is low")
        ws.indexer().sync()
        found = [h.path for h in searcher.search("radiator boiler pressure", 5, scope=home, dense_weight=1.0)]
        assert "Chats/radiator.md" in found and reads and "Chats/work.md" not in found
    finally:
        ws.close()
