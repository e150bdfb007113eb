"""A small vault an agent works on: people, a project, typed memories and two conversations, linked together."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.files import write


def write_agent_vault(root: Path, *, hashing: bool = True) -> Path:
    """Write the vault under `root` (with the hashing embedder configured unless `hashing` is off)."""
    if hashing:
        write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(
        root,
        "People/Ingrid Olsen.md",
        "---\ntype: person\naliases: [Ingrid]\ntags: [family]\n---\n"
        "Ingrid is Bob's sister; she files the household tax return every April.\n",
    )
    write(
        root,
        "Projects/Kitchen Renovation.md",
        "---\ntype: project\ndate: 2026-09-01\ntags: [home]\n---\n"
        "The kitchen renovation with [[Nowak Renovations]]. Budget in [[Kitchen budget]]; "
        "ask [[Ingrid]] about the permit. See also [[Missing Note]].\n",
    )
    write(root, "Memory/Nowak Renovations.md", "---\ntype: entity\n---\nThe contractor for [[Kitchen Renovation]].\n")
    write(
        root,
        "Memory/Kitchen budget.md",
        "---\ntype: fact\nconfidence: 0.9\ndate: 2026-09-03\n---\n"
        "The kitchen budget is 18,500 euros, worktop included.\n",
    )
    write(
        root,
        "Conversations/2026-10-01 Boiler pressure.md",
        "---\ntype: conversation\ndate: 2026-10-01\n---\n"
        "user: the boiler pressure gauge dropped to 0.6 bar again\n\n"
        "assistant: Top it up to 1.5 bar at the filling loop, then bleed the radiators.\n",
    )
    write(
        root,
        "Conversations/2026-10-05 Ski trip.md",
        "---\ntype: conversation\ndate: 2026-10-05\n---\n"
        "user: book the chalet in Chamonix for the February ski trip\n\n"
        "assistant: The chalet host is Madame Favre; the deposit is due in December.\n",
    )
    return root
