"""Vault Companion: see, tune and curate what an AI agent remembers in an Obsidian vault.

The package root stays light: importing it never loads Textual, Chroma or the embedding model.
"""

__version__ = "0.1.0"
