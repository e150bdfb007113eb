"""Synthetic vaults of any size, for benchmarks: fast, deterministic, and varied enough to rank.

`write_synthetic_vault` writes about 70% conversation notes (4 to 20 turns of about 30 tokens,
speaker names kept), 20% typed memory notes of all six types and 10% other notes (a hub note per
topic, then loose notes), all wikilinked and dated over the two years before `now`, plus one
`ops/sessions/` summary per ten notes. Every note is about one of up to 300 topics; a topic has its
own keywords, person, place, product code and number, drawn from the word lists in `synth_words`,
so BM25 and embeddings have something to tell apart.

Speed matters more than prose here: sentences are filled from pre-split templates and frontmatter is
written by hand (JSON strings are valid YAML), which keeps 50k notes well under a minute.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from companion.demo.synth_words import (
    ADJECTIVES,
    AGENT_TEMPLATES,
    CODE_LETTERS,
    FIRST_NAMES,
    LAST_NAMES,
    MONTHS,
    NOUNS,
    PLACES,
    THEMES,
    USER_TEMPLATES,
    VERBS,
    Template,
)
from companion.errors import VaultError

MARKER = ".companion/synth.json"
"""Vault-relative marker that says a folder holds a synthetic vault (so it may be regenerated)."""

MEMORY_TYPES = ("fact", "entity", "experience", "belief", "reflection", "recipe")
"""The memory note types, cycled so all six are present in equal numbers."""
AGENT = "sentinel"
"""The agent's speaker name."""
MAX_TOPICS = 300
"""At most this many topics; fewer when the vault has fewer other notes than that (one hub each)."""
SPAN_DAYS = 730
"""Notes are dated over this many days before `now`."""
_FOLDERS = ("Conversations", "Memory", "Topics", "Notes", "ops")
_GENERATOR = "vault-companion synth"


@dataclass(frozen=True)
class _Topic:
    title: str
    theme: str
    keywords: tuple[str, ...]
    theme_words: tuple[str, ...]
    person: str
    place: str
    code: str
    number: int
    pools: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)


class _Writer:
    """Creates each folder once; most of the time for small files goes to syscalls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: set[Path] = set()
        self.count = 0

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        if path.parent not in self.made:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.made.add(path.parent)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        if rel.endswith(".md"):
            self.count += 1


def write_synthetic_vault(dest: Path, notes: int, *, variant: int = 0, now: datetime) -> int:
    """Write `notes` notes plus `notes // 10` session summaries into `dest`.

    Returns the number of Markdown files written (notes and session summaries). `dest` must be
    missing, empty, or a synthetic vault written earlier (its generated folders are then replaced);
    any other non-empty folder raises `VaultError`. The same `(notes, variant, now)` gives the same
    bytes.
    """
    if notes < 0:
        raise ValueError(f"notes must be 0 or more, not {notes}")
    dest = Path(dest)
    _prepare(dest)
    rng = random.Random(variant)
    now = now.replace(tzinfo=None, microsecond=0)
    n_other = max(1, round(notes * 0.1)) if notes else 0
    n_memory = min(round(notes * 0.2), notes - n_other)
    n_conv = notes - n_other - n_memory
    topics = _topics(rng, min(MAX_TOPICS, n_other))
    out = _Writer(dest)
    # The marker goes first: a run cut short leaves a folder the next run recognises and redoes.
    marker = {"generator": _GENERATOR, "notes": notes, "variant": variant, "now": now.isoformat()}
    out.write(MARKER, json.dumps(marker) + "\n")
    out.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": []}) + "\n")
    memory_titles = [_memory_title(j, topics) for j in range(n_memory)]
    for i in range(n_conv):
        _conversation(out, rng, i, topics, memory_titles, now)
    for j, title in enumerate(memory_titles):
        _memory(out, rng, j, title, topics, memory_titles, now)
    for k, topic in enumerate(topics):
        _hub(out, rng, topic, memory_titles[k :: len(topics)][:5], now)
    for k in range(n_other - len(topics)):
        _loose(out, rng, k, topics, now)
    for s in range(notes // 10):
        _session(out, rng, s, topics, now, recent=s < max(4, notes // 200))
    return out.count


def append_paragraph(path: Path, text: str) -> None:
    """Append `text` as a new paragraph to the note at `path`, atomically (temp file, `os.replace`).

    Readers and watchers see the old file or the new one, never half of it, as with Obsidian's
    own saves.
    """
    path = Path(path)
    old = path.read_bytes()
    sep = b"" if not old or old.endswith(b"\n\n") else b"\n" if old.endswith(b"\n") else b"\n\n"
    new = old + sep + text.strip("\n").encode("utf-8") + b"\n"
    mode = stat.S_IMODE(path.stat().st_mode)
    # The temp file sits next to the note so os.replace stays a rename on one file system; the
    # leading dot and .tmp suffix keep it from ever looking like a note.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(new)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# -- the destination ---------------------------------------------------------------------------


def _prepare(dest: Path) -> None:
    """Refuse a foreign non-empty folder; clear the generated folders of an earlier synth vault."""
    if dest.exists() and not dest.is_dir():
        raise VaultError(f"{dest}: is a file, not a folder; choose a folder for the synthetic vault")
    if not dest.exists() or not any(dest.iterdir()):
        return
    try:
        marker = json.loads((dest / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        marker = None
    if not isinstance(marker, dict) or marker.get("generator") != _GENERATOR:
        raise VaultError(
            f"{dest}: the folder is not empty and is not a synthetic vault; refusing to write "
            "into it. Choose an empty or new folder."
        )
    for name in _FOLDERS:
        folder = dest / name
        # A symlinked folder could point anywhere: never delete through it.
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)


# -- content -----------------------------------------------------------------------------------


def _topics(rng: random.Random, count: int) -> list[_Topic]:
    themes = sorted(THEMES)
    topics: list[_Topic] = []
    seen: set[str] = set()
    for i in range(count):
        theme = themes[i % len(themes)]
        words = THEMES[theme]
        keywords = tuple(rng.sample(words, 6))
        place = rng.choice(PLACES)
        title = f"{keywords[0].capitalize()} {keywords[1]} in {place}"
        if title.lower() in seen:
            title = f"{title} {i}"
        seen.add(title.lower())
        letters = rng.choice(CODE_LETTERS) + rng.choice(CODE_LETTERS)
        code = f"{letters}-{rng.randint(100, 999)}"
        person = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        number = rng.randint(12, 4800)
        topic = _Topic(title, theme, keywords, words, person, place, code, number)
        topic.pools.update(_pools(rng, topic))
        topics.append(topic)
    return topics


def _pools(rng: random.Random, topic: _Topic) -> dict[str, tuple[str, ...]]:
    """Per-slot word pools biased to the topic, so a topic's notes share its specific words.

    Repeating the topic's own words in a pool sets how often they come up (about two thirds of
    the time) while filling a slot stays one uniform pick, the cheapest thing `random` does.
    """
    names = tuple(f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(12))
    numbers = tuple(str(rng.randint(2, 2000)) for _ in range(24))
    return {
        "w": topic.keywords * 7 + topic.theme_words,
        "P": (topic.person,) * 24 + names,
        "L": (topic.place,) * 24 + tuple(PLACES[:10]) + tuple(rng.sample(PLACES, 10)),
        "n": (str(topic.number),) * 24 + numbers,
        "v": VERBS,
        "a": ADJECTIVES,
        "g": NOUNS,
        "c": (topic.code,),
        "d": tuple(str(d) for d in range(1, 29)),
        "m": MONTHS,
    }


def _sentences(
    rng: random.Random,
    pools: dict[str, tuple[str, ...]],
    templates: tuple[Template, ...],
    count: int,
) -> str:
    r = rng.random
    out: list[str] = []
    for _ in range(count):
        for lit, slot in templates[int(r() * len(templates))]:
            out.append(lit)
            if slot:
                pool = pools[slot]
                out.append(pool[int(r() * len(pool))])
        out.append(" ")
    return "".join(out[:-1])


def _when(rng: random.Random, now: datetime, recent: bool = False) -> datetime:
    """A moment in the two years before `now`, or since the start of yesterday when `recent`.

    Recent moments fall in the default hot window, so the hot tier has something to show.
    """
    if recent:
        start = datetime.combine(now.date() - timedelta(days=1), datetime.min.time())
        span = int((now - start).total_seconds())
    else:
        span = SPAN_DAYS * 86400
    return now - timedelta(seconds=rng.randrange(span))


def _q(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def _pick_topic(rng: random.Random, topics: list[_Topic]) -> int:
    """A topic index, skewed so a few topics are popular and most are rare, as in a real vault."""
    return int(len(topics) * rng.random() ** 1.6)


def _memory_title(j: int, topics: list[_Topic]) -> str:
    """Memory note `j` is about topic `j % len(topics)`, so a topic's memory notes are known."""
    topic = topics[j % len(topics)]
    return f"{topic.keywords[2].capitalize()} {topic.keywords[3]} {MEMORY_TYPES[j % 6]} {j:05d}"


def _memory_of(k: int, topics: list[_Topic], memory_titles: list[str]) -> list[str]:
    return memory_titles[k :: len(topics)] if topics else []


def _conversation(
    out: _Writer,
    rng: random.Random,
    i: int,
    topics: list[_Topic],
    memory_titles: list[str],
    now: datetime,
) -> None:
    k = _pick_topic(rng, topics)
    topic = topics[k]
    when = _when(rng, now)
    user = FIRST_NAMES[rng.randrange(12)].lower()
    chat = f"{user}-{rng.randrange(3)}"
    paragraphs = []
    for t in range(rng.randint(4, 20)):
        # Two short sentences make about 30 tokens, the turn length the benchmarks assume.
        n = 1 if rng.random() < 0.2 else 2
        if t % 2 == 0:
            paragraphs.append(f"**{user}:** {_sentences(rng, topic.pools, USER_TEMPLATES, n)}")
        else:
            text = _sentences(rng, topic.pools, AGENT_TEMPLATES, n)
            if rng.random() < 0.1:
                text += f" See [[{topic.title}]]."
            paragraphs.append(f"**{AGENT}:** {text}")
    day, clock = when.strftime("%Y-%m-%d"), when.strftime("%H:%M:%S")
    name = f"{topic.keywords[0].capitalize()} {topic.keywords[1]}"
    title = f"{day} {name} {i:05d}"
    mine = _memory_of(k, topics, memory_titles)
    links = [topic.title, *(mine[rng.randrange(len(mine))] for _ in range(min(2, len(mine))))]
    head = (
        f"---\ntype: conversation\ndate: {day}\ntime: {_q(clock)}\nuser_id: {user}\n"
        f"chat_id: {chat}\nsession: {_q(f'{user}:{chat}:{day}T{clock}')}\n"
        f"participants: [{user}, {AGENT}]\ntags: [conversation, {topic.theme}]\n---\n\n"
    )
    footer = "Filed under " + ", ".join(f"[[{link}]]" for link in dict.fromkeys(links)) + "."
    body = "\n\n".join([f"# {name}", *paragraphs, footer])
    out.write(f"Conversations/{day[:4]}/{day[5:7]}/{title}.md", head + body + "\n")


def _memory(
    out: _Writer,
    rng: random.Random,
    j: int,
    title: str,
    topics: list[_Topic],
    memory_titles: list[str],
    now: datetime,
) -> None:
    topic = topics[j % len(topics)]
    kind = MEMORY_TYPES[j % 6]
    text = _sentences(rng, topic.pools, AGENT_TEMPLATES, rng.randint(2, 5))
    other = memory_titles[rng.randrange(len(memory_titles))]
    links = f"See [[{topic.title}]]" + (f" and [[{other}]]." if other != title else ".")
    day = _when(rng, now).strftime("%Y-%m-%d")
    head = (
        f"---\ntype: {kind}\nconfidence: {rng.randint(30, 99) / 100}\ncreated: {day}\n"
        f"tags: [{topic.theme}, {kind}]\nrelated: [{_q(f'[[{topic.title}]]')}]\n---\n\n"
    )
    out.write(f"Memory/{kind}/{title}.md", f"{head}# {title}\n\n{text}\n\n{links}\n")


def _hub(out: _Writer, rng: random.Random, topic: _Topic, memory: list[str], now: datetime) -> None:
    day = _when(rng, now).strftime("%Y-%m-%d")
    alias = f"{topic.keywords[0]} {topic.keywords[1]}"
    head = f"---\ntype: topic\ncreated: {day}\naliases: [{_q(alias)}]\ntags: [topic, {topic.theme}]\n---\n\n"
    facts = (
        f"- Person: {topic.person}\n- Place: {topic.place}\n- Code: {topic.code}\n"
        f"- Number: {topic.number}\n- Keywords: {', '.join(topic.keywords)}"
    )
    notes = "".join(f"\n- [[{m}]]" for m in memory)
    text = _sentences(rng, topic.pools, AGENT_TEMPLATES, 3)
    body = f"# {topic.title}\n\n{text}\n\n{facts}\n" + (f"\n## Memory\n{notes}\n" if notes else "")
    out.write(f"Topics/{topic.theme}/{topic.title}.md", head + body)


def _loose(out: _Writer, rng: random.Random, k: int, topics: list[_Topic], now: datetime) -> None:
    topic = topics[_pick_topic(rng, topics)]
    day = _when(rng, now).strftime("%Y-%m-%d")
    title = f"{topic.keywords[4].capitalize()} {rng.choice(NOUNS)} {k:05d}"
    text = _sentences(rng, topic.pools, USER_TEMPLATES, rng.randint(3, 6))
    others = {topics[_pick_topic(rng, topics)].title for _ in range(2)} - {topic.title}
    links = ", ".join(f"[[{t}]]" for t in [topic.title, *sorted(others)])
    head = f"---\ncreated: {day}\ntags: [{topic.theme}]\n---\n\n"
    out.write(f"Notes/{title}.md", f"{head}# {title}\n\n{text}\n\nLinks {links}\n")


def _session(out: _Writer, rng: random.Random, s: int, topics: list[_Topic], now: datetime, recent: bool) -> None:
    topic = topics[_pick_topic(rng, topics)]
    when = _when(rng, now, recent)
    user = FIRST_NAMES[rng.randrange(12)].lower()
    day, clock = when.strftime("%Y-%m-%d"), when.strftime("%H:%M:%S")
    user_msg = _sentences(rng, topic.pools, USER_TEMPLATES, 1)
    agent_msg = _sentences(rng, topic.pools, AGENT_TEMPLATES, 2)
    head = (
        f"---\ndate: {day}\nuser_id: {user}\nchat_id: {user}-{rng.randrange(3)}\n"
        f"time: {_q(clock)}\nuser_msg: {_q(user_msg)}\nsentinel_msg: {_q(agent_msg)}\n---\n\n"
    )
    slug = f"{topic.keywords[0]}-{s:05d}"
    rel = f"ops/sessions/{day}/{when.strftime('%H%M%S')}-{slug}.md"
    out.write(rel, f"{head}{user} asked about the {topic.keywords[0]}. [[{topic.title}]]\n")
