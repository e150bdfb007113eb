"""Which local model embeds a vault when its config names none: the English model for a vault in English, the
multilingual one for a vault with a real share of notes in other languages.

all-MiniLM-L6-v2 reads English; in a vault written in Spanish its vectors add nothing over the words, and an English
question never meets a Spanish note. multilingual-e5-small reads about a hundred languages but costs about twice as
much to embed with. So a vault gets the multilingual model when at least `OTHER_LANGUAGES_SHARE` of its notes are
in another language than English (guessed from each note's opening, as recall guesses it), and the English model
otherwise.

The model in use is the one the index's vectors were made with, whatever the languages now want: only a writer that
starts with nothing loaded (`companion index`, `index --watch`) moves a vault to the model its languages want, since
every note is then embedded again. The move goes one way: a vault embedded with the multilingual model keeps it (it
reads English too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from companion.embedding.modelbuild import E5_MODEL_ID, MODEL_ID, MODEL_IDS, MULTILINGUAL
from companion.embedding.weights import E5_WHEEL
from companion.errors import NoteError
from companion.vault.boilerplate import exchange_text
from companion.vault.reader import ObsidianVault
from companion.vault.sessions import read_session
from indexer.manifest import Manifest
from indexer.openings import opening_language

OTHER_LANGUAGES_SHARE = 0.1
"""The share of a vault's notes in other languages than English from which it is embedded with the multilingual
model. The English vaults measured here have none or about one in fifty (a note quoting Italian), the Spanish agent
vault 99% and Obsidian's help vault 88%; a tenth already means many notes an English question cannot reach."""
SAMPLE_NOTES = 400
"""How many notes, spread evenly over the vault's paths, a vault not yet indexed is judged on (a fraction of a
second to read)."""
COVERED = 0.9
"""The share of the index's notes whose language must be known for the index's counts to judge the vault (an
interrupted sync or an older index may not know them all); below it the vault's notes are sampled."""
ENGLISH = "en"
"""The language code `language_of` gives English."""


@dataclass(frozen=True)
class ModelChoice:
    """The model a vault is embedded with and why, in words a user reads."""

    model_id: str
    """The local model in use (one of `companion.embedding.modelbuild.MODEL_IDS`)."""
    wanted: str
    """The local model the vault's languages want; differs from `model_id` until a writer moves the vault."""
    reason: str
    """Why, for `doctor` and the first lines of `companion index`."""
    other_share: float
    """The share of notes in other languages than English it was judged on."""
    hint: str | None = None
    """What the user could do for a better model (its weights are missing, or a move waits), or None."""


def wanted_model(vault: ObsidianVault, manifest: Manifest, made_with: str | None) -> ModelChoice:
    """The local model this vault's languages want: the multilingual one when `made_with` is multilingual (it is
    never left) or when enough notes are in other languages and its weights are installed, else the English one.

    The share is read from the index when it knows most notes' languages, else from a sample of the vault's notes
    (a vault indexed for the first time must have its model before its notes are cut into chunks)."""
    counts = manifest.derived.language_counts() if manifest.note_count() else {}
    if sum(counts.values()) < COVERED * manifest.note_count() or not counts:
        counts = _sampled_languages(vault)
    total = sum(counts.values())
    share = (total - counts.get(ENGLISH, 0)) / total if total else 0.0
    # Rounded down, so a share just under the threshold never reads as the threshold itself.
    said = f"{math.floor(share * 100)}% of its notes are in other languages than English"
    if made_with in MULTILINGUAL:
        kept = said if share >= OTHER_LANGUAGES_SHARE else f"{said}; it was embedded with this model (it reads English)"
        return ModelChoice(made_with, made_with, kept, share)
    if share < OTHER_LANGUAGES_SHARE:
        return ModelChoice(MODEL_ID, MODEL_ID, said, share)
    if E5_WHEEL.installed() is None:
        hint = (
            "`companion setup` installs the multilingual model, which finds a note in one language from a question "
            "in another"
        )
        return ModelChoice(MODEL_ID, MODEL_ID, f"{said}, but the multilingual model is not installed", share, hint)
    return ModelChoice(E5_MODEL_ID, E5_MODEL_ID, said, share)


def model_in_use(vault: ObsidianVault, manifest: Manifest, made_with: str | None) -> ModelChoice:
    """The local model a process embeds with: the one the index's vectors were made with when it is a local one
    (a move to the wanted one is a writer's, see `wanted_model`), else the wanted one."""
    wanted = wanted_model(vault, manifest, made_with)
    if made_with is None or made_with not in MODEL_IDS or made_with == wanted.model_id:
        return wanted
    hint = f"`companion index` embeds every note again with {wanted.model_id} (the words index is kept meanwhile)"
    return ModelChoice(
        made_with, wanted.model_id, f"{wanted.reason}; the index holds {made_with}'s vectors", wanted.other_share, hint
    )


def _sampled_languages(vault: ObsidianVault) -> dict[str, int]:
    paths = sorted(vault.scan())
    picked = (
        [paths[i * len(paths) // SAMPLE_NOTES] for i in range(SAMPLE_NOTES)] if len(paths) > SAMPLE_NOTES else paths
    )
    counts: dict[str, int] = {}
    for rel in picked:
        try:
            note = vault.read_note(rel)
        except NoteError:
            continue  # the sync names it; a note that cannot be read says nothing of the vault's languages
        # A session summary says what was said in its properties, and the index reads it there: its body alone can
        # be empty or a line of boilerplate, which would count a Spanish exchange as English.
        text = note.body
        if note.kind == "session":
            summary = read_session(note.path, note)
            text = exchange_text(summary.user_msg, summary.sentinel_msg, note.body)
        language = opening_language(note.title, text)
        counts[language] = counts.get(language, 0) + 1
    return counts
