"""A note's properties as plain text: what recall shows and the index embeds for a note made of properties alone
(a book, a film, a trip whose facts are all in its frontmatter, as Obsidian's Bases vaults keep them)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from companion.vault.links import links_as_text

_URL = re.compile(r"^[a-z][a-z0-9+.-]*://\S*$", re.IGNORECASE)


def properties_text(frontmatter: Mapping[str, object], *, plain: bool = False) -> str:
    """A note's properties as lines of `name: value` (a list as its items joined by commas), those with no value
    and those holding a table left out. `plain` gives what a model reads: each link as its text, and addresses
    (a cover image's URL) left out, since they say nothing of what the note is about."""
    lines: list[str] = []
    for key, value in frontmatter.items():
        values = value if isinstance(value, list | tuple) else [value]
        items = [str(v).strip() for v in values if v is not None and not isinstance(v, dict | list) and str(v).strip()]
        if plain:
            items = [links_as_text(item) for item in items if not _URL.match(item)]
        if items:
            lines.append(f"{key}: {', '.join(items)}")
    return "\n".join(lines)
