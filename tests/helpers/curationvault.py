"""The small vault the curator's tests share: its notes, a writer for text or bytes, and a curator over it."""

from __future__ import annotations

import json
from pathlib import Path

from companion.curation.curator import Curator
from companion.vault.audit import AuditLog

KEEP = """---
tags:
  - project
aliases: [K]
---
# Keep

Keep's text, about [[Drop]] too.
"""

DROP = """---
tags: [idea, project]
aliases:
  - Dropped one
status: draft
---
# Drop

## Heading

Drop's text, see [[Drop#Heading]] and `[[Drop]]` in code.
"""

OTHER = """Links: [[Drop]], [[drop|shown text]], [[Drop#Heading]], ![[Drop]], [[people/Drop]], [[people/Drop.md|p]].
Through an alias: [[Dropped one]]. Elsewhere: [[Keep]] and [[Unrelated]].

```
[[Drop]] in a fenced block stays
```

Inline `[[Drop]]` stays, and so does \\[[Drop]].
"""

PROP = """---
up: "[[Drop]]"
related:
  - "[[people/Drop|the drop]]"
  - "[[Unrelated]]"
---
Property links only.
"""


def write(root: Path, rel: str, content: str | bytes) -> Path:
    """Write `content` to `root/rel` (creating folders): text as UTF-8, bytes as they are (CRLF, BOM, binaries)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def folder_tree(root: Path) -> set[str]:
    """Every folder under `root`, by relative POSIX path (empty ones included, which `file_tree` cannot show)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir() and not p.is_symlink()}


def curator(vault: Path, data: Path, *, read_only: bool = False) -> Curator:
    """A curator of `vault` that keeps its audit log under `data`."""
    return Curator(vault, AuditLog(data), source="test", read_only=read_only)


def set_trash(vault: Path, option: str | None, raw: str | None = None) -> None:
    """Set Obsidian's deletion setting in `.obsidian/app.json`: `option`, none at all (None), or `raw` text as is."""
    app = vault / ".obsidian" / "app.json"
    if raw is not None:
        app.write_text(raw, encoding="utf-8")
    elif option is None:
        app.write_text("{}", encoding="utf-8")
    else:
        app.write_text(json.dumps({"trashOption": option}), encoding="utf-8")
