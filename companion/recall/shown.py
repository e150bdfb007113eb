"""What an agent is shown of a recalled note: its passage read whole, redacted, and only then cut to length.

A passage cut first could end inside a secret (a private key without its closing line, the first half of a token),
which no rule recognises any more; redacted first, a cut can only shorten a tag. The app shows a note as its file
holds it and does not come through here.
"""

from __future__ import annotations

from dataclasses import replace

from companion.recall.engine import Recall
from companion.recall.passages import cut
from companion.recall.results import Located, RecallItem
from companion.secrets import redact_output, redact_text

WHOLE = 1_000_000
"""A length no passage reaches: the engine's own cut never applies before redaction."""


def located(engine: Recall, item: RecallItem, snippet_chars: int = 160) -> Located:
    """Where an item's best chunk sits (link, heading) and its passage, as `Recall.locate` gives them, redacted."""
    place = redact_output(engine.locate(item, WHOLE))
    return replace(place, snippet=cut(place.snippet, snippet_chars))


def passage(engine: Recall, item: RecallItem, max_chars: int = 1200) -> str:
    """The text of an item's best chunk, as `Recall.passage` gives it, redacted."""
    return cut(redact_text(engine.passage(item, WHOLE)), max_chars)
