"""A vault whose agents' session summaries link notes: one note is linked only from a session, one from nothing."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.files import write

LONELY = "Ideas/Lonely Idea.md"
"""Linked from a session summary alone."""
FORGOTTEN = "Ideas/Forgotten.md"
"""Linked from nothing, linking nowhere: an orphan."""
GARDEN = "Projects/Garden.md"
"""Linked from both sessions."""
SESSION = "ops/sessions/2026-11-22/090000-garden.md"
"""The session that links the lonely note and the garden."""
EARLIER = "ops/sessions/2026-11-20/140000-barrels.md"
"""An earlier session, linking the garden only."""


def session_text(day: str, time: str, said: str, body: str) -> str:
    """A session summary as an agent writes it."""
    return (
        f"---\ndate: {day}\nuser_id: alice\nchat_id: tg\ntime: '{time}'\n"
        f"user_msg: {said}\nsentinel_msg: Noted.\n---\n\n{body}\n"
    )


def write_session_links_vault(root: Path) -> Path:
    """Write the vault under `root` (hashing embedder; the sessions folder left out of the index, as by default)."""
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(root, LONELY, "---\ndate: 2024-01-10\n---\nRain barrels under every downpipe of the shed.\n")
    write(root, FORGOTTEN, "---\ndate: 2024-01-11\n---\nA sketch of a bird table nobody ever built.\n")
    write(root, GARDEN, "---\ndate: 2024-01-12\n---\nThe garden plan: beds, paths and the compost corner.\n")
    write(
        root,
        SESSION,
        session_text(
            "2026-11-22", "09:00:00", "What about water?", "We talked about [[Lonely Idea]] for the [[Garden]]."
        ),
    )
    write(root, EARLIER, session_text("2026-11-20", "14:00:00", "Garden beds?", "Raised beds for the [[Garden]]."))
    return root
