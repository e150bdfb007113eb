"""What a merge leaves as it was: no link of the kept note to itself, the merged headings under their section, and every
byte of YAML it has no link to change."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.curation.curator import Curator
from companion.vault.audit import AuditLog
from tests.helpers.files import file_tree, write

KEEP = """---
aliases: ['K']
tags: ["project"]   # the quoting is mine
up: '[[Drop]]'
---
# Keep

About [[Drop]], [[Drop|the draft]], [[Drop#Plan]], [[Drop#^b1]], ![[Drop]] and [[Dropped one]].

| a | b |
| - | - |
| [[Drop]] | [[Drop\\|x]] |
"""

DROP = """---
aliases: [Dropped one]
tags: [idea]
---
# Drop

Intro, see [[Drop#Plan]].

## Plan

Steps. ^b1

### Detail

Setext one
==========

##### Five

###### Six

```
# not a heading
```

> # quoted heading
"""

OTHER = """---
status: 'draft'   # keep my quotes
related: ['[[Drop]]', '[[Else]]'] # two
---
See [[Drop#Drop]] and [[Drop]].
"""

BODY_ONLY = """---
title:   "Spaced"   # odd spacing, kept
when: 2026-01-02
list: [ 'a',  "b" ]
---
Only the body links: [[Drop]].
"""

ALIAS_ONLY = """---
title: 'Quoted'
list: [ 'a' ]
---
Links to [[Dropped one]] only, through the alias the kept note takes over.
"""

NO_LINK = """---
title: 'Quoted'   # a comment
tags: ["x"]
---
Nothing to rewrite here.
"""


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "Keep.md", KEEP)
    write(root, "Drop.md", DROP)
    write(root, "notes/Other.md", OTHER)
    write(root, "notes/Body only.md", BODY_ONLY)
    write(root, "notes/Alias only.md", ALIAS_ONLY)
    write(root, "notes/No link.md", NO_LINK)
    return root


def merged(vault: Path, tmp_path: Path) -> str:
    cur = Curator(vault, AuditLog(tmp_path / "data"), source="test")
    cur.apply(cur.plan_merge("Keep.md", "Drop.md"))
    return (vault / "Keep.md").read_text(encoding="utf-8")


def test_a_link_in_the_kept_note_to_the_dropped_one_leads_to_the_merged_section(vault: Path, tmp_path: Path) -> None:
    keep = merged(vault, tmp_path)
    head, _, section = keep.partition("## Merged from Drop\n")
    assert head == (
        "---\n"
        "aliases: ['K', Drop, Dropped one]\n"
        'tags: ["project", idea]   # the quoting is mine\n'
        "up: '[[#Merged from Drop|Drop]]'\n"
        "---\n"
        "# Keep\n\n"
        "About [[#Merged from Drop|Drop]], [[#Merged from Drop|the draft]], [[#Plan]], [[#^b1]], "
        "[[#Merged from Drop|Drop]] and [[#Merged from Drop|Dropped one]].\n\n"
        "| a | b |\n"
        "| - | - |\n"
        "| [[#Merged from Drop\\|Drop]] | [[#Merged from Drop\\|x]] |\n\n"
    )
    assert "see [[#Plan]]" in section
    assert "[[Keep" not in keep and "[[Drop" not in keep


def test_the_merged_headings_sit_under_the_section(vault: Path, tmp_path: Path) -> None:
    keep = merged(vault, tmp_path)
    assert keep.partition("## Merged from Drop\n")[2] == (
        "\n"
        "Intro, see [[#Plan]].\n\n"
        "#### Plan\n\n"
        "Steps. ^b1\n\n"
        "##### Detail\n\n"
        "### Setext one\n\n"
        "###### Five\n\n"
        "###### Six\n\n"
        "```\n# not a heading\n```\n\n"
        "> # quoted heading\n"
    )
    # The title heading is gone, so a link to it from elsewhere leads to the section that took its place.
    other = (vault / "notes" / "Other.md").read_text(encoding="utf-8")
    assert other.endswith("See [[Keep#Merged from Drop]] and [[Keep]].\n")


def test_a_leading_h1_that_is_not_the_title_stays_as_an_h3(vault: Path, tmp_path: Path) -> None:
    write(vault, "Drop.md", "# Kitchen plans\n\nText.\n")
    assert merged(vault, tmp_path).endswith("## Merged from Drop\n\n### Kitchen plans\n\nText.\n")


def test_a_merge_leaves_yaml_it_has_no_link_to_change_byte_for_byte(vault: Path, tmp_path: Path) -> None:
    before = file_tree(vault)
    cur = Curator(vault, AuditLog(tmp_path / "data"), source="test")
    plan = cur.plan_merge("Keep.md", "Drop.md")
    assert {w.path for w in plan.writes} == {
        "Keep.md",
        "Drop.md",
        ".trash/Drop.md",
        "notes/Other.md",
        "notes/Body only.md",
    }
    cur.apply(plan)
    after = file_tree(vault)
    # No link to rewrite: not written at all.
    assert after["notes/Alias only.md"] == before["notes/Alias only.md"]
    assert after["notes/No link.md"] == before["notes/No link.md"]
    # Body links only: the frontmatter keeps every byte.
    assert after["notes/Body only.md"].decode() == BODY_ONLY.replace("[[Drop]]", "[[Keep]]")
    # A property link changed: only the link's own text, quoting and comments as written.
    assert after["notes/Other.md"].decode() == (
        "---\n"
        "status: 'draft'   # keep my quotes\n"
        "related: ['[[Keep]]', '[[Else]]'] # two\n"
        "---\n"
        "See [[Keep#Merged from Drop]] and [[Keep]].\n"
    )
    cur.undo()
    assert file_tree(vault) == before
