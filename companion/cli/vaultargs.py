"""The options every vault command takes, and the workspace they name."""

from __future__ import annotations

import argparse

from companion.workspace import Workspace


def add_vault_arguments(parser: argparse.ArgumentParser, *, store: bool = True) -> None:
    """The options every vault command takes; without `store`, no `--chroma-url` (for commands that never open the
    index, so their help does not offer an option they ignore)."""
    parser.add_argument("--vault", help="the vault folder (else AGENT_VAULT_PATH, Obsidian, ~/.agent_vault)")
    parser.add_argument(
        "--data-dir",
        help="root of the companion's data (else COMPANION_DATA_DIR, else the platform data dir)",
    )
    if not store:
        return
    parser.add_argument(
        "--chroma-url",
        help="use a Chroma server (e.g. http://127.0.0.1:8000) instead of the embedded store",
    )


def open_workspace(args: argparse.Namespace) -> Workspace:
    """The workspace the command line names (`--vault`, `--data-dir`, `--chroma-url`, where the command has them)."""
    return Workspace.open(
        getattr(args, "vault", None),
        data_dir=getattr(args, "data_dir", None),
        chroma_url=getattr(args, "chroma_url", None),
    )
