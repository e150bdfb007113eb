"""A note whose frontmatter is not valid YAML is indexed from properties read line by line, but never edited from
them: every curation and agent write that would edit it is refused, naming the note and the line, and leaves its
bytes as they were."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from companion.agent.writes import AgentWriter, WriteSource
from companion.curation.curator import CurationError, Curator, Plan
from companion.errors import CompanionError
from companion.vault.audit import AuditLog
from tests.helpers.files import file_tree, write
from tests.helpers.workspaces import workspace

BROKEN = "Projects/TuCRMIA.md"
TEXT = """---
title: TuCRMIA
updated: 2026-08-17 iteraciones 33-35 (siguiente: las TRES unidades)
tags: [hub, crm]
---
El CRM de la casa. Ver [[Old plan]].
"""


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", '{"trashOption": "local"}')
    write(root, BROKEN, TEXT)
    write(root, "Keep.md", "---\ntags: [plan]\n---\nThe plan.\n")
    write(root, "Old plan.md", "---\ntags: [plan]\n---\nThe old plan.\n")
    return root


def curator(vault: Path, tmp_path: Path) -> Curator:
    return Curator(vault, AuditLog(tmp_path / "data"), source="test")


REFUSED: dict[str, Callable[[Curator], Plan]] = {
    "pin": lambda c: c.plan_pin(BROKEN),
    "unpin": lambda c: c.plan_pin(BROKEN, pinned=False),
    "tags": lambda c: c.plan_tags(BROKEN, ["crm"]),
    "type": lambda c: c.plan_type(BROKEN, "entity"),
    "supersede": lambda c: c.plan_supersede(BROKEN, "Keep.md"),
    "relink": lambda c: c.plan_relink(BROKEN, "Old plan", "Keep"),
    "merge-into-it": lambda c: c.plan_merge(BROKEN, "Keep.md"),
    "merge-it-away": lambda c: c.plan_merge("Keep.md", BROKEN),
}


@pytest.mark.parametrize("action", sorted(REFUSED))
def test_an_edit_of_the_note_is_refused_naming_it_and_the_line(vault: Path, tmp_path: Path, action: str) -> None:
    before = file_tree(vault)
    with pytest.raises(CurationError) as caught:
        curator(vault, tmp_path).apply(REFUSED[action](curator(vault, tmp_path)))
    message = str(caught.value)
    assert message.startswith(f"{BROKEN}: ") and "line 3" in message and "nothing was written" in message
    assert file_tree(vault) == before


def test_a_merge_leaves_its_links_alone_as_for_an_unreadable_note(vault: Path, tmp_path: Path) -> None:
    cur = curator(vault, tmp_path)
    plan = cur.plan_merge("Keep.md", "Old plan.md")
    assert BROKEN not in {write.path for write in plan.writes}
    cur.apply(plan)
    assert (vault / BROKEN).read_text(encoding="utf-8") == TEXT


def test_an_agent_update_of_the_note_is_refused(vault: Path, tmp_path: Path) -> None:
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        assert ws.manifest.note(BROKEN) is not None  # indexed, so the agent's write finds it by its title
        before = file_tree(vault)
        agent = AgentWriter(ws, WriteSource("test-agent"), allowed=True, environ={})
        with pytest.raises(CompanionError, match=re.escape(BROKEN) + r": the frontmatter does not parse.*line 3"):
            agent.write("TuCRMIA", "Replaced text.", folder="Projects")
        assert file_tree(vault) == before
    finally:
        ws.close()
