"""libyaml's fast path must read every frontmatter exactly as the pure-Python loader does."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest

from companion.demo.build import write_demo_vault
from companion.vault import yamlsafe
from tests.helpers.files import KEPANO

FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def _blocks(root: Path) -> list[str]:
    found = (FRONT.match(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.md")))
    return [m.group(1) for m in found if m]


@pytest.mark.skipif(yamlsafe._CLoader is None, reason="PyYAML built without libyaml")
def test_fast_and_python_loaders_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_demo_vault(tmp_path / "demo", now=datetime(2026, 3, 1, 9, 30))
    blocks = _blocks(tmp_path / "demo") + (_blocks(KEPANO) if KEPANO.exists() else [])
    blocks += ["time: 14:03\nanswer: no\nzip: 01234\nratio: .5\nwhen: 2023-02-30\n", "a: 0x1F\nb: -.inf\n"]
    fast = [yamlsafe.load_frontmatter(b, 3) for b in blocks]
    assert sum(1 for b in blocks if not yamlsafe._NEEDS_PYTHON.search(b)) > len(blocks) // 2
    monkeypatch.setattr(yamlsafe, "_CLoader", None)
    slow = [yamlsafe.load_frontmatter(b, 3) for b in blocks]
    assert fast == slow
