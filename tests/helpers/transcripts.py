"""The hand-written agent transcripts of `tests/fixtures/transcripts`, copied with their planted secrets filled in (the
files hold placeholders, so no secret-shaped text is kept in the repository)."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"

SECRETS = {
    "<<CLAUDE_SECRET>>": "ghp_" + "Zq8Rt2Lm5Nx7Vb4Hc1Kd9Wf3Jp6Ys0Ge2Ua5",
    "<<CODEX_SECRET>>": "sk-proj-" + "Tn4Hq8Wz2Lc6Rv9Pm3Kx7Jd5",
    "<<GEMINI_SECRET>>": "AIza" + "Sy7Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6Lz9Xc",
}
"""Placeholder to the secret planted in its place."""


def copy_transcripts(part: str, dest: Path) -> Path:
    """Copy `part` of the fixtures (`claude-code`, `codex/sessions`, or "" for all) to `dest`, secrets planted."""
    shutil.copytree(FIXTURES / part, dest)
    for path in dest.rglob("*.json*"):
        text = path.read_text(encoding="utf-8")
        for placeholder, secret in SECRETS.items():
            text = text.replace(placeholder, secret)
        path.write_text(text, encoding="utf-8")
    return dest
