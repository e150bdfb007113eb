"""Token counts for context budgets, from the embedding model's own WordPiece tokenizer (offline).

Only `tokenizer.json` is loaded (tens of milliseconds), not the model; counts leave out [CLS] and [SEP], which
belong to the model's input, not to the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from companion.errors import ModelError

if TYPE_CHECKING:
    from tokenizers import Tokenizer


class TokenCounter:
    """Counts the tokens of a text; callable, so it can be passed where `Callable[[str], int]` is wanted."""

    def __init__(self, model_dir: Path | None = None) -> None:
        from tokenizers import Tokenizer

        from companion.embedding.modelbuild import ensure_model

        folder = ensure_model() if model_dir is None else Path(model_dir)
        try:
            tokenizer: Tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises a bare Exception on a missing or bad file
            raise ModelError(f"Cannot load the tokenizer in {folder}: {exc}") from exc
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer
        self.name = f"wordpiece:{folder.parent.name or folder.name}"
        """Which tokenizer counts (for reports)."""

    def __call__(self, text: str) -> int:
        """Tokens in `text`, special tokens excluded."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
