"""A vault with known curation problems planted among ordinary notes, to measure the review queue.

`write_planted_vault` writes `ordinary` typed memory notes (each on its own subject, in its own words, linked to
two others and linked from at least one: no problem to find), then, `per_kind` of each, notes with a known problem:

- near-duplicates: a note that repeats another of its type, with a sentence more or less;
- changed facts: a newer note saying what an older one says with another value (a number, a date, a name);
- stale notes: nothing links to them, and their only use was long ago (`Planted.stale_uses` says when, for the
  caller to record in the access statistics);
- orphans: notes that link nowhere and that nothing links to;
- broken links: a note linking to a misspelt title of an existing note;
- missing types: memory notes with no `type`, or one that is no memory type.

`Planted` is the truth each kind is scored against. The same arguments write the same bytes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from companion.demo.synth_words import theme_words

_TYPES = ("fact", "entity", "experience", "belief", "reflection", "recipe")
_NAMES = [
    "Amira",
    "Castell",
    "Dorian",
    "Elsbeth",
    "Fenwick",
    "Gisela",
    "Halvard",
    "Ilse",
    "Joaquin",
    "Kasimir",
    "Leontyne",
    "Marisol",
    "Nikolai",
    "Ottilie",
    "Perpetua",
    "Quirin",
    "Rosalind",
    "Severin",
    "Theodora",
    "Ulrich",
    "Valentina",
    "Wendeline",
    "Xavier",
    "Yolanda",
    "Zephyrine",
]
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_UNITS = ("bar", "euros", "minutes", "kilos", "litres", "days", "metres", "volts")


@dataclass(frozen=True)
class Planted:
    """What was planted where: the truth a review is scored against (paths are vault-relative)."""

    duplicates: tuple[tuple[str, str], ...]
    """Pairs of notes that say the same thing."""
    changed: tuple[tuple[str, str], ...]
    """Pairs (older, newer) whose newer note says otherwise."""
    stale: tuple[str, ...]
    """Notes nothing links to, used once long ago."""
    stale_uses: dict[str, str]
    """When each stale note was used (ISO moment), to record in the access statistics."""
    orphans: tuple[str, ...]
    """Notes with no links in or out."""
    broken: tuple[tuple[str, str], ...]
    """(note, misspelt target) of each broken link."""
    untyped: tuple[str, ...]
    """Memory notes without a valid type."""

    def as_dict(self) -> dict[str, object]:
        """The truth as JSON-ready data."""
        return {
            "duplicate": [list(p) for p in self.duplicates],
            "changed_fact": [list(p) for p in self.changed],
            "stale": list(self.stale),
            "orphan": list(self.orphans),
            "broken_link": [list(p) for p in self.broken],
            "missing_type": list(self.untyped),
            "stale_uses": self.stale_uses,
        }


class _Words:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool = theme_words()

    def sentence(self, *, value: bool = True) -> str:
        words = self.rng.sample(self.pool, self.rng.randint(7, 12))
        text = " ".join(words).capitalize()
        if value and self.rng.random() < 0.5:
            text += f" near {self.rng.randint(2, 950)} {self.rng.choice(_UNITS)}"
        return text + "."


def write_planted_vault(dest: Path, *, ordinary: int, per_kind: int, now: datetime, variant: int = 0) -> Planted:
    """Write the vault into the empty (or missing) folder `dest` and return what was planted."""
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise FileExistsError(f"{dest}: not empty; a planted vault is written into an empty folder")
    (dest / ".obsidian").mkdir()
    rng = random.Random(variant)
    words = _Words(rng)
    notes: dict[str, tuple[dict[str, object], str]] = {}
    titles: list[str] = []

    def add(path: str, front: dict[str, object], body: str) -> None:
        notes[path] = (front, body)

    def day(days_ago: int) -> str:
        return (now - timedelta(days=days_ago)).date().isoformat()

    for i in range(ordinary):
        note_type = _TYPES[i % len(_TYPES)]
        title = f"{words.pool[i % len(words.pool)].capitalize()} {rng.choice(_NAMES)} {i}"
        titles.append(title)
        body = " ".join(words.sentence() for _ in range(rng.randint(3, 5)))
        add(f"Memory/{note_type}/{title}.md", {"type": note_type, "created": day(rng.randint(1, 700))}, body)
    paths = list(notes)
    # Each ordinary note links to the next two, so every one is linked from two others: none is an orphan.
    for n, path in enumerate(paths):
        front, body = notes[path]
        links = [titles[(n + 1) % len(titles)], titles[(n + 2) % len(titles)]]
        notes[path] = (front, body + "\n\nSee " + " and ".join(f"[[{t}]]" for t in links) + ".")
    hub_links: list[str] = []

    duplicates = []
    for k in range(per_kind):
        note_type = _TYPES[k % len(_TYPES)]
        sentences = [words.sentence(value=False) for _ in range(4)]
        if k % 2:  # the same value in both: a repeat, not a change
            sentences[0] = sentences[0][:-1] + f" on {rng.randint(1, 28)} {rng.choice(_MONTHS)}."
        first, second = f"Memory/{note_type}/Kept {k}.md", f"Memory/{note_type}/Repeat {k}.md"
        add(first, {"type": note_type, "created": day(40)}, " ".join(sentences))
        add(second, {"type": note_type, "created": day(10)}, "I will remember this. " + " ".join(sentences[:3]))
        duplicates.append((first, second))
        hub_links += [f"Kept {k}", f"Repeat {k}"]

    changed = []
    for k in range(per_kind):
        subject = f"{rng.choice(words.pool)} {rng.choice(words.pool)}"
        unit = rng.choice(_UNITS)
        before, after = rng.sample(range(3, 900), 2)
        shared = [words.sentence(value=False) for _ in range(2)]
        older, newer = f"Memory/fact/Setting {k} old.md", f"Memory/fact/Setting {k} new.md"
        if k % 3 == 0:
            was, now_is = f"set to {before} {unit}", f"set to {after} {unit}"
        elif k % 3 == 1:
            month, later = rng.sample(_MONTHS, 2)
            was, now_is = f"due on {before % 28 + 1} {month}", f"due on {after % 28 + 1} {later}"
        else:
            who, other = rng.sample(_NAMES, 2)
            was, now_is = f"looked after by {who}", f"looked after by {other}"
        add(older, {"type": "fact", "created": day(200)}, f"The {subject} is {was}. " + " ".join(shared))
        add(newer, {"type": "fact", "created": day(5)}, f"The {subject} is {now_is}. " + " ".join(shared))
        changed.append((older, newer))
        hub_links += [f"Setting {k} old", f"Setting {k} new"]

    stale, uses = [], {}
    for k in range(per_kind):
        path = f"Memory/experience/Faded {k}.md"
        add(path, {"type": "experience", "created": day(500)}, words.sentence() + f" See [[{titles[k]}]].")
        stale.append(path)
        uses[path] = (now - timedelta(days=400 + k)).isoformat()

    orphans = []
    for k in range(per_kind):
        path = f"Notes/Loose {k}.md"
        add(path, {"created": day(90 + k)}, " ".join(words.sentence() for _ in range(2)))
        orphans.append(path)

    broken = []
    for k in range(per_kind):
        target = _misspelt(rng, titles[(k * 7) % len(titles)])
        path = f"Memory/reflection/Pointer {k}.md"
        add(path, {"type": "reflection", "created": day(30)}, words.sentence() + f" It follows from [[{target}]].")
        broken.append((path, target))
        hub_links.append(f"Pointer {k}")

    untyped = []
    for k in range(per_kind):
        path = f"Memory/Inbox/Unsorted {k}.md"
        properties: dict[str, object] = {"created": day(20)} if k % 2 else {"type": "thing", "created": day(20)}
        add(path, properties, words.sentence() + f" See [[{titles[(k * 3) % len(titles)]}]].")
        untyped.append(path)
        hub_links.append(f"Unsorted {k}")

    # One hub links the planted notes that should not look like orphans or stale notes.
    add("Index.md", {}, "Planted notes: " + ", ".join(f"[[{t}]]" for t in hub_links) + f". Start at [[{titles[0]}]].")
    for path, (properties, body) in notes.items():
        file = dest / path
        file.parent.mkdir(parents=True, exist_ok=True)
        head = "".join(f"{key}: {json.dumps(value)}\n" for key, value in properties.items())
        file.write_text((f"---\n{head}---\n" if head else "") + body + "\n", encoding="utf-8")
    return Planted(tuple(duplicates), tuple(changed), tuple(stale), uses, tuple(orphans), tuple(broken), tuple(untyped))


def _misspelt(rng: random.Random, title: str) -> str:
    """The title with two neighbouring letters of its first word swapped (a typo)."""
    word, _, rest = title.partition(" ")
    if len(word) < 4:
        return title + "s"
    i = rng.randint(1, len(word) - 3)
    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if swapped == word:
        swapped = word[:-1]
    return f"{swapped} {rest}"
