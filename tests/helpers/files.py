"""Files in temporary vaults: writing notes, reading a whole tree back, and the shared real vault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SHARED = Path(__file__).resolve().parents[3] / "shared"
KEPANO = SHARED / "vaults" / "kepano-obsidian"


def write(root: Path, rel: str, text: str) -> Path:
    """Write a note (creating folders) and return its path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Frontmatter (read with PyYAML's YAML 1.1 loader, the strictest common reader) and body."""
    assert text.startswith("---\n")
    end = text.index("\n---\n", 4)
    data = yaml.safe_load(text[4:end])
    assert isinstance(data, dict)
    return data, text[end + 5 :]


def file_tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative POSIX path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


FILLER_WORDS = (
    "kitchen",
    "boiler",
    "permit",
    "budget",
    "chalet",
    "ski",
    "trip",
    "garden",
    "piano",
    "tax",
    "jazz",
    "bass",
    "alpine",
    "lake",
    "harbour",
)
"""Words to fill generated notes with, each note a different mix of them (the index's damage tests)."""
