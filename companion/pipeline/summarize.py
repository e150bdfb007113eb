"""The rolling summary note of a `summarize` processor: extractive and offline by default, a model when configured.

The pipeline calls `summarize_agent` with the entries as redaction left them, so nothing redaction removes reaches the
note or the endpoint. What a model returns is only a proposal: it is checked (non-empty plain text
under `max_chars`) and, when it is unusable or the endpoint cannot be reached, the extractive summary is used instead
and a warning says why. Nothing here writes: the pipeline writes the note atomically and records it in the audit log.

The note is one per agent, updated in place (`AGENT_VAULT_DEDUPE=0`: a new note per run instead). Everything below the
marker line `%% companion: end of summary %%` is the user's and is kept as it is; if the user edited the summary above
the marker, that text is moved below the marker instead of being overwritten; a note without the marker is not the
companion's and is left alone. `AGENT_VAULT_AUTO_WRITE=off` derives nothing.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import re
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from companion.atomic import unused_path
from companion.errors import CurationError, ProcessError, SummarizeError
from companion.pipeline.forward import cleartext_host, shown_url
from companion.pipeline.history import Entry
from companion.pipeline.processors import SummarizeProcessor
from companion.specs import output_problems
from companion.vault.frontmatter_edit import properties, scalar, split_body
from companion.vault.paths import inside_vault, vault_relative
from companion.words import STOPWORDS

MARKER = "%% companion: end of summary %%"
"""The line that ends the companion's part of a summary note; everything below it is the user's and is kept."""

PROMPT_VERSION = "summarize-v1"
"""The version of the prompt sent to a model, recorded in the note and the audit log with the model's name."""

AUTO_WRITE_ENV = "AGENT_VAULT_AUTO_WRITE"
"""`off` (derive nothing into the vault), `research` (the default) or `aggressive`."""

DEDUPE_ENV = "AGENT_VAULT_DEDUPE"
"""`0` turns deduplication off: each run writes a new summary note instead of updating the agent's note in place."""

_OUR_KEYS = ("type", "agent", "date", "source", "entries", "generated_by", "prompt", "summary_sha", "updated")
META_KEYS = frozenset(
    {"id", "ts", "agent", "model", "role", "type", "status", "system", "name", "tool_call_id"}
    | {"user_id", "chat_id", "markdown", "session_note"}  # a session note's entry: who, and its whole text again
)
"""Fields that address or describe an entry rather than say something (`system` holds the same prompt every time)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'\-]*")
# Status words such as HEARTBEAT_OK or NO_REPLY: a poll's answer, not something worth remembering.
_STATUS_WORD = re.compile(r"[A-Z][A-Z0-9_]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MODEL_INPUT_CHARS = 24_000
_ENTRY_CHARS = 1_000


@dataclass(frozen=True)
class SummaryReport:
    """What a `summarize` processor did (or, in a dry run, would do) for one agent."""

    path: Path
    """The summary note."""
    entries: int
    """How many entries the summary covers."""
    generated_by: str
    """`extractive`, or the model's name."""
    action: Literal["write", "unchanged", "skip"]
    """Whether the note is (or would be) written, is already up to date, or is left alone (see `reason`)."""
    content: bytes = b""
    """The note's new bytes (the text a dry run would write)."""
    before: bytes | None = None
    """The note's bytes before, when it existed."""
    reason: str | None = None
    """Why nothing is written, when `action` is `skip`."""
    warnings: tuple[str, ...] = ()
    """Problems worth telling (an endpoint down, a rejected reply, a note left alone), each naming what to do."""
    written: bool = False
    """True once the pipeline has written the note."""


def auto_write_mode(environ: Mapping[str, str]) -> str:
    """The `AGENT_VAULT_AUTO_WRITE` mode; `ProcessError` for a value that is none of off, research, aggressive."""
    value = environ.get(AUTO_WRITE_ENV, "").strip().lower() or "research"
    if value not in ("off", "research", "aggressive"):
        raise ProcessError(
            f"{AUTO_WRITE_ENV}={environ.get(AUTO_WRITE_ENV)!r} is not a mode; nothing was written. Set it to off, "
            "research (the default) or aggressive"
        )
    return value


def dedupe_enabled(environ: Mapping[str, str]) -> bool:
    """Whether derived notes update in place (the default) rather than being written anew each run."""
    return environ.get(DEDUPE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


# -- extractive ------------------------------------------------------------------------------------------------------


def entry_texts(value: Any, key: str | None = None) -> list[str]:
    """The strings of an entry's data worth summarizing (recursively), skipping addressing and metadata fields."""
    if key in META_KEYS:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in entry_texts(item)]
    if isinstance(value, dict):
        return [text for k, item in value.items() for text in entry_texts(item, str(k))]
    return []


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, whitespace collapsed, boilerplate (status words, fragments) left out."""
    out = []
    for piece in _SENTENCE_END.split(text):
        sentence = " ".join(piece.split()).strip(" -*#>")
        if len(sentence) < 12 or len(sentence) > 400 or _STATUS_WORD.fullmatch(sentence):
            continue
        if len(_words(sentence)) < 3:
            continue
        out.append(sentence)
    return out


def _words(text: str) -> list[str]:
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in STOPWORDS and len(w) > 1]


def extractive(entries: Sequence[Entry], count: int) -> list[tuple[Entry, str]]:
    """The `count` most informative sentences of the entries (TF-IDF over entries), in time order.

    Exact repeats count once, and a sentence found in more than half of several entries (a system prompt, a poll) is
    boilerplate and left out.
    """
    candidates: list[tuple[int, int, Entry, str]] = []
    occurrences: Counter[str] = Counter()
    df: Counter[str] = Counter()
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        sentences = [s for text in entry_texts(entry.data) for s in split_sentences(text)]
        df.update({w for s in sentences for w in _words(s)})
        occurrences.update({s.lower() for s in sentences})
        for position, sentence in enumerate(sentences):
            key = sentence.lower()
            if key not in seen:
                seen.add(key)
                candidates.append((index, position, entry, sentence))
    total = len(entries)
    scored = []
    for index, position, entry, sentence in candidates:
        if total >= 4 and occurrences[sentence.lower()] * 2 > total:
            continue
        words = _words(sentence)
        tf = Counter(words)
        score = sum(n * math.log(1 + total / df[w]) for w, n in tf.items()) / math.sqrt(len(words))
        scored.append((score, index, position, entry, sentence))
    best = sorted(scored, key=lambda item: (-item[0], item[1], item[2]))[:count]
    return [(entry, sentence) for _, _, _, entry, sentence in sorted(best, key=lambda item: (item[1], item[2]))]


def extractive_section(entries: Sequence[Entry], count: int) -> str:
    """The extractive summary as Markdown bullets, each with its entry's time."""
    picked = extractive(entries, count)
    if not picked:
        return f"No informative text in the last {len(entries)} entries (only status replies or repeats)."
    return "\n".join(f"- {entry.ts:%Y-%m-%d %H:%M} · {sentence}" for entry, sentence in picked)


# -- model -----------------------------------------------------------------------------------------------------------


def _endpoint(url: str) -> str:
    return url if url.rstrip("/").endswith("/chat/completions") else url.rstrip("/") + "/chat/completions"


def model_input(entries: Sequence[Entry]) -> str:
    """The entries as lines for the model, newest kept when they exceed the budget."""
    lines = []
    for entry in entries:
        text = " ".join(" ".join(s for t in entry_texts(entry.data) for s in split_sentences(t)).split())
        if text:
            lines.append(f"{entry.ts.isoformat()}: {text[:_ENTRY_CHARS]}")
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 1
        if size > _MODEL_INPUT_CHARS:
            break
        kept.append(line)
    return "\n".join(reversed(kept))


def ask_model(processor: SummarizeProcessor, agent: str, entries: Sequence[Entry], environ: Mapping[str, str]) -> str:
    """The model's proposed summary text (unchecked); `SummarizeError` when the endpoint cannot give one."""
    spec = processor.spec
    url = _endpoint(spec.url or "")
    headers = {"Content-Type": "application/json", "User-Agent": "vault-companion"}
    token = None
    if spec.token_env is not None:
        token = environ.get(spec.token_env, "")
        if not token:
            raise SummarizeError(
                f"{url}: the environment variable {spec.token_env} (token_env) is not set; set it to the endpoint's "
                "token and run again"
            )
        host = cleartext_host(url)
        if host is not None:
            raise SummarizeError(
                f"{shown_url(url)}: the endpoint would get the bearer token (token_env {spec.token_env}) over plain "
                f"http to {host}, readable by anyone on the way, so it was not asked; use https, or a loopback address"
            )
    system = (
        f"You summarize the session history of the AI agent '{agent}' for its long-term memory. Answer in plain "
        f"text only, at most {spec.sentences} sentences: what was done, decided and learned. No headings, no "
        "Markdown, no preamble."
    )
    body = {
        "model": spec.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": model_input(entries)}],
        "temperature": 0,
    }
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
    if token:
        # Not copied onto a redirect (see `companion.pipeline.forward`).
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=spec.timeout_s) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        exc.close()
        raise SummarizeError(
            f"{url}: the endpoint answered HTTP {exc.code} {exc.reason}; check url, model and token_env"
        ) from None
    except (OSError, http.client.HTTPException) as exc:  # URLError, refused connections, timeouts, bad replies
        reason = str(getattr(exc, "reason", None) or exc) or type(exc).__name__
        raise SummarizeError(f"{url}: cannot reach the endpoint ({reason}); check it is up and reachable") from None
    try:
        content = json.loads(raw)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise SummarizeError(f"{url}: the reply is not an OpenAI-style chat completion") from None
    if not isinstance(content, str):
        raise SummarizeError(f"{url}: the reply's message content is not text")
    return content


def check_reply(reply: str, max_chars: int) -> str:
    """The reply as the note's text when it is acceptable; `SummarizeError` saying why not otherwise."""
    text = reply.strip()
    if not text:
        raise SummarizeError("the model's reply is empty")
    if len(text) > max_chars:
        raise SummarizeError(f"the model's reply is {len(text)} characters, more than max_chars ({max_chars})")
    if _CONTROL.search(text):
        raise SummarizeError("the model's reply holds control characters")
    # `%%` would hide text in Obsidian (or fake the marker), `---` lines and fences are structure, not plain text.
    if "%%" in text or "```" in text or any(line.strip() == "---" for line in text.splitlines()):
        raise SummarizeError("the model's reply is not plain text (it holds %%, --- or ``` )")
    return text


# -- the note --------------------------------------------------------------------------------------------------------


def _digest(section: str) -> str:
    return hashlib.sha256(section.strip().encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class _Existing:
    props: dict[str, Any]
    section: str
    tail: str


def _split_note(text: str, path: Path) -> _Existing:
    """The frontmatter, the companion's section and the user's tail of an existing note."""
    try:
        props = properties(text, str(path))
    except CurationError as exc:
        raise SummarizeError(f"{exc}; the note was left as it is") from None
    lines = split_body(text).splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == MARKER:
            return _Existing(props, "".join(lines[:i]), "".join(lines[i + 1 :]))
    raise SummarizeError(
        f"{path}: the note has no line {MARKER!r}, so it was left as it is (it may hold your own text); put that line "
        "under the summary, or move the note elsewhere, and run again"
    )


def _section_of(text: str) -> str:
    """The summary text of a section (its heading left out), for the edit check."""
    return re.sub(r"\A\s*# [^\n]*\n", "", text).strip()


def render_note(fields: dict[str, Any], extra: dict[str, Any], agent: str, section: str, tail: str) -> str:
    """A summary note: our frontmatter fields, the user's other properties, the summary, the marker, the user's tail."""
    lines = ["---"]
    for key, value in fields.items():
        # Numbers and the date plain, so they read back as a number and a date (what recall sorts summaries by).
        plain = isinstance(value, int) or key == "date"
        lines.append(f"{key}: {value if plain else scalar(str(value))}")
    if extra:
        lines.append(yaml.safe_dump(extra, allow_unicode=True, sort_keys=False, default_flow_style=False).rstrip())
    lines += ["---", f"# Summary of {agent}", "", section.strip(), "", MARKER]
    return "\n".join(lines) + "\n" + tail


def _target(processor: SummarizeProcessor, agent: str, dedupe: bool, now: datetime) -> Path:
    path = processor.note_path(agent)
    relative = processor.spec.output.replace("{agent}", agent)
    problems = output_problems(relative)
    if not problems and not inside_vault(processor.vault_root, path.parent):
        problems = ["the folder leads out of the vault (a symlink)"]
    if problems:
        raise SummarizeError(f"{path}: the summary note of agent '{agent}' cannot go there: {problems[0]}")
    if dedupe or not path.exists():
        return path
    # Deduplication off: a new note per run, never an overwrite of an earlier one.
    stamped = f"{path.stem} {now:%Y-%m-%d %H%M%S}"
    return unused_path(path.with_name(f"{stamped}.md"), lambda n: path.with_name(f"{stamped}-{n}.md"))


def summarize_agent(
    processor: SummarizeProcessor,
    agent: str,
    source: Path,
    entries: Sequence[Entry],
    now: datetime,
    *,
    environ: Mapping[str, str],
    dry_run: bool = False,
) -> SummaryReport:
    """The agent's summary note as it should now read (not written); never raises but for a bad auto-write mode."""
    spec = processor.spec
    mode = auto_write_mode(environ)
    chosen = sorted(enumerate(entries), key=lambda item: (item[1].ts, item[0]))[-spec.max_entries :]
    recent = [entry for _, entry in chosen]
    path = processor.note_path(agent)
    generated_by = spec.model if spec.url and spec.model else "extractive"

    def skip(reason: str, warnings: tuple[str, ...] = ()) -> SummaryReport:
        return SummaryReport(path, len(recent), generated_by, "skip", reason=reason, warnings=warnings)

    if mode == "off":
        return skip(f"{AUTO_WRITE_ENV}=off: no summary derived")
    if not recent:
        return skip("no entries to summarize")
    try:
        path = _target(processor, agent, dedupe_enabled(environ), now)
        before = path.read_bytes() if path.exists() else None
        existing = _split_note(before.decode("utf-8"), path) if before is not None else None
    except UnicodeDecodeError:
        return skip("note unreadable", (f"{path}: the note is not UTF-8, so it was left as it is",))
    except OSError as exc:
        return skip("note unreadable", (f"{path}: cannot read the note ({exc.strerror or exc}); left as it is",))
    except SummarizeError as exc:
        return skip("note left alone", (str(exc),))

    warnings: list[str] = []
    section = None
    if spec.url and not dry_run:
        try:
            section = check_reply(ask_model(processor, agent, recent, environ), spec.max_chars)
        except SummarizeError as exc:
            warnings.append(f"{exc}; the extractive summary was written instead")
            generated_by = "extractive"
    if section is None:
        section = extractive_section(recent, spec.sentences)

    tail = ""
    extra: dict[str, Any] = {}
    if existing is not None:
        extra = {k: v for k, v in existing.props.items() if k not in _OUR_KEYS}
        tail = existing.tail
        old = _section_of(existing.section)
        recorded = existing.props.get("summary_sha")
        if old and isinstance(recorded, str) and recorded != _digest(old):
            # The user edited the summary itself: their text moves below the marker rather than being overwritten.
            stamp = existing.props.get("updated", "an earlier run")
            kept = f"\n%% companion: your edit of the summary of {stamp}, kept %%\n{old}\n"
            tail = kept + tail

    fields: dict[str, Any] = {
        "type": "summary",
        "agent": agent,
        "date": max(e.ts for e in recent).date().isoformat(),
        "source": vault_relative(processor.vault_root, source),
        "entries": len(recent),
        "generated_by": generated_by,
    }
    if generated_by != "extractive":
        fields["prompt"] = PROMPT_VERSION
    fields["summary_sha"] = _digest(section)
    if existing is not None and before is not None:
        # Unchanged but for the time: leave the note alone, so a run with nothing new rewrites nothing.
        same = render_note({**fields, "updated": existing.props.get("updated", "")}, extra, agent, section, tail)
        if same.encode("utf-8") == before:
            return SummaryReport(path, len(recent), generated_by, "unchanged", before, before, warnings=tuple(warnings))
    fields["updated"] = now.isoformat(timespec="seconds")
    content = render_note(fields, extra, agent, section, tail).encode("utf-8")
    return SummaryReport(path, len(recent), generated_by, "write", content, before, warnings=tuple(warnings))
