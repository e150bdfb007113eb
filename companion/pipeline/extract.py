"""The memory notes of an `extract` processor: facts, decisions and tasks found by offline rules (no model).

The pipeline calls `extract_agent` with the entries as redaction left them, so nothing redaction removes reaches a
note. Each sentence of an entry's text (status replies such as `HEARTBEAT_OK`, questions and very short or long
sentences left out) is matched against the rules below; a match becomes a note `<folder>/<title>.md` with typed
frontmatter and a link back to the agent's summary note (or its log). Nothing here writes: the pipeline writes the
notes atomically and records them in the audit log.

Deduplicated by default (`AGENT_VAULT_DEDUPE=0` turns it off): a sentence already in one of the agent's extracted
notes is skipped, and a note whose title exists already is appended to, never duplicated. Only notes this processor
made (frontmatter `extracted_by: rules-...`) are ever touched; a same-titled note of the user's is left alone with a
warning. `AGENT_VAULT_AUTO_WRITE=off` derives nothing, `research` (the default) only facts and decisions of confidence
0.6 or more, `aggressive` every configured kind. `max_notes` caps the notes created or updated in one run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from companion.atomic import unused_path
from companion.errors import CompanionError
from companion.pipeline.history import Entry
from companion.pipeline.processors import ExtractProcessor, SummarizeProcessor
from companion.pipeline.summarize import AUTO_WRITE_ENV, auto_write_mode, dedupe_enabled, entry_texts, split_sentences
from companion.secrets import redact_text
from companion.specs import output_problems
from companion.vault.frontmatter_edit import properties, scalar
from companion.vault.paths import inside_vault, vault_relative

EXTRACTED_BY = "rules-v1"
"""The `extracted_by` value of the notes: the marker that a note is the processor's to update."""

RESEARCH_KINDS = ("fact", "decision")
"""The kinds `AGENT_VAULT_AUTO_WRITE=research` (the default) writes."""

RESEARCH_CONFIDENCE = 0.6
"""The least confidence `AGENT_VAULT_AUTO_WRITE=research` writes."""

TITLE_CHARS = 60
"""The longest note title."""

_MIN_CHARS, _MAX_CHARS = 20, 300
_MIN_WORDS = 4
# Characters no file name may hold on some system, plus what Obsidian gives a meaning in links (#, ^, [, ], |).
_UNSAFE = re.compile(r"[\\/:*?\"<>|#^\[\]{}\x00-\x1f]")
_HEARTBEAT = re.compile(r"HEARTBEAT|NO_REPLY|\bpoll(?:ing)?\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_COPULA = re.compile(r"\s(?:is|are|was|were|costs?|equals?|has|have)\s", re.IGNORECASE)
_NUMBER = re.compile(r"\d")

Kind = Literal["fact", "decision", "task"]

# "We"/"I" as the subject of a decision, but not after if/whether/unless: "if we decided to switch, ..." weighs a
# choice, it does not record one. Negations need no rule of their own: every phrase wants its verb right after the
# subject (or at the sentence's start), so "we haven't decided" and "undecided" never match.
_SUBJECT = r"(?<!\bif )(?<!\bwhether )(?<!\bunless )\b(?:we|i)"

_RULE_TEXTS: tuple[tuple[Kind, float, str], ...] = (
    # Strongest first: an explicit label beats a phrase, a phrase beats a guess from the sentence's shape.
    ("decision", 0.9, r"^decision\s*[:\-]\s*"),
    ("decision", 0.85, _SUBJECT + r"(?:'ve| have)?\s+(?:decided|agreed)\b"),
    # Note-style forms that leave the subject out ("Agreed: ...", "Decided to ..."): a little less sure than a label.
    ("decision", 0.8, r"^(?:agreed|decided)\s*[:\-]\s*"),
    ("decision", 0.75, r"^(?:decided|agreed)\s+(?:to|on|upon|that|against)\b"),
    ("decision", 0.75, r"^(?:let's|lets|let us)\s+go\s+with\b"),
    ("decision", 0.7, _SUBJECT + r"(?:'re| are| will|'ll)?\s+(?:going\s+with|chose|settled\s+on)\b"),
    ("decision", 0.7, _SUBJECT + r"(?:'ll| will|'re going to| are going to)\s+go\s+with\b"),
    ("task", 0.9, r"^(?:todo|to-do|task|action item)\b\s*[:\-]?\s*"),
    ("task", 0.8, r"\bremind me to\b"),
    ("task", 0.6, r"\b(?:i|we)\s+(?:need|have)\s+to\b"),
    ("fact", 0.85, r"^(?:please\s+)?remember\s+that\s+"),
    ("fact", 0.7, r"^(?:my|our)\s+[\w' \-]{1,40}?\s(?:is|are|was)\s"),
)
_RULES = tuple((kind, confidence, re.compile(text, re.IGNORECASE)) for kind, confidence, text in _RULE_TEXTS)
_LABEL = re.compile(
    r"^(?:decision|agreed|decided|todo|to-do|task|action item|note)\s*[:\-]\s*"
    r"|^(?:please\s+)?remember\s+that\s+|^remind me to\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Finding:
    """One sentence a rule matched."""

    kind: Kind
    """fact, decision or task."""
    confidence: float
    """How sure the rule is (0.5-0.9): labels highest, shapes lowest."""
    sentence: str
    """The sentence as it stands in the entry (whitespace collapsed)."""
    title: str
    """The note's title (and file name), clean and at most `TITLE_CHARS` characters."""
    entry: Entry
    """The entry it came from."""


@dataclass(frozen=True)
class ExtractedNote:
    """One note an `extract` processor writes (or, in a dry run, would write)."""

    path: Path
    """The note."""
    finding: Finding
    """What it says."""
    action: Literal["create", "append"]
    """A new note, or the sentence appended to the processor's existing note of the same title."""
    content: bytes
    """The note's new bytes."""
    before: bytes | None = None
    """The note's bytes before, when it existed."""
    written: bool = False
    """True once the pipeline has written the note."""


@dataclass(frozen=True)
class ExtractReport:
    """What an `extract` processor did (or would do) for one agent."""

    folder: Path
    """Where its notes go."""
    notes: tuple[ExtractedNote, ...] = ()
    """The notes to write, within the budget."""
    found: int = 0
    """Sentences the rules matched (of the kinds the mode and config allow)."""
    known: int = 0
    """Of those, how many are already in an extracted note (skipped)."""
    over_budget: int = 0
    """Notes left for a later run because of `max_notes`."""
    reason: str | None = None
    """Why nothing was derived at all, when that is so."""
    warnings: tuple[str, ...] = ()
    """Notes left alone (the user's, unreadable, not writable), each naming the note and what to do."""


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def classify(sentence: str) -> tuple[Kind, float] | None:
    """The kind and confidence of a sentence, or none when no rule fits (or it is a question or a status line)."""
    if len(sentence) < _MIN_CHARS or len(sentence) > _MAX_CHARS or sentence.rstrip().endswith("?"):
        return None
    words = _WORD.findall(sentence)
    if len(words) < _MIN_WORDS or _HEARTBEAT.search(sentence):
        return None
    # Typographic apostrophes (as many editors and chat apps write them) read as plain ones: "We’re going with".
    plain = sentence.replace("\u2019", "'")
    for kind, confidence, pattern in _RULES:
        if pattern.search(plain):
            return kind, confidence
    # "X is Y" with something specific in it: a number, a proper noun (a capitalized word past the first), or both.
    if not _COPULA.search(sentence):
        return None
    number = bool(_NUMBER.search(sentence))
    proper = any(w[0].isupper() and w != "I" for w in words[1:])
    if number and proper:
        return "fact", 0.7
    if number:
        return "fact", 0.6
    if proper:
        return "fact", 0.5
    return None


def make_title(sentence: str) -> str:
    """A clean, file-name-safe title of at most `TITLE_CHARS` characters (cut at a word); empty when nothing is left.

    Built from the sentence with the built-in redaction applied, even when the list has no `redact`: a file name is
    copied into links, the index, the audit log and sync tools, where no later redaction reaches it.
    """
    text = _LABEL.sub("", redact_text(sentence.strip()))
    text = _UNSAFE.sub(" ", text)
    text = " ".join(text.split()).strip(" .,;!-'`")
    if len(text) > TITLE_CHARS:
        cut = text[: TITLE_CHARS + 1].rsplit(" ", 1)[0] if " " in text[:TITLE_CHARS] else text[:TITLE_CHARS]
        text = cut[:TITLE_CHARS].rstrip(" .,;!-'`")
    text = text.lstrip(".")  # no hidden files
    return text[:1].upper() + text[1:]


def find(entries: Sequence[Entry], kinds: Sequence[str]) -> list[Finding]:
    """The findings of the allowed `kinds` in the entries, in time order; a sentence repeated counts once."""
    out: list[Finding] = []
    seen: set[str] = set()
    for _, entry in sorted(enumerate(entries), key=lambda item: (item[1].ts, item[0])):
        for text in entry_texts(entry.data):
            for sentence in split_sentences(text):
                found = classify(sentence)
                key = _normal(sentence)
                if found is None or found[0] not in kinds or key in seen:
                    continue
                title = make_title(sentence)
                if title:
                    seen.add(key)
                    out.append(Finding(found[0], found[1], sentence, title, entry))
    return out


@dataclass(frozen=True)
class _Existing:
    path: Path
    text: str
    ours: bool
    agent: str | None


def _read_folder(folder: Path) -> tuple[dict[str, _Existing], list[str]]:
    """The notes of the folder by their title (case-folded), and warnings for those that cannot be read."""
    notes: dict[str, _Existing] = {}
    warnings: list[str] = []
    if not folder.is_dir():
        return notes, warnings
    for path in sorted(folder.glob("*.md")):
        try:
            text = path.read_bytes().decode("utf-8")
            props = properties(text, str(path))
        except UnicodeDecodeError:
            notes[path.stem.casefold()] = _Existing(path, "", False, None)
            continue
        except OSError as exc:
            warnings.append(f"{path}: cannot read the note ({exc.strerror or exc}); left as it is")
            continue
        except CompanionError:
            notes[path.stem.casefold()] = _Existing(path, "", False, None)
            continue
        marker = props.get("extracted_by")
        ours = isinstance(marker, str) and marker.startswith("rules-")
        agent = props.get("agent")
        notes[path.stem.casefold()] = _Existing(path, text, ours, agent if isinstance(agent, str) else None)
    return notes, warnings


def _link(summary: SummarizeProcessor | None, agent: str, source: str, entry_id: str) -> str:
    if summary is not None:
        target = summary.spec.output.replace("{agent}", agent).removesuffix(".md")
        return f"From [[{target}]] · entry {entry_id} of {source}"
    return f"From {source} · entry {entry_id}"


def render(finding: Finding, agent: str, source: str, link: str) -> str:
    """A new extracted note: typed frontmatter, the title, the sentence and the link back."""
    fields = {
        "type": finding.kind,
        "agent": scalar(agent),
        "date": finding.entry.ts.date().isoformat(),
        "source": scalar(source),
        "entry": scalar(finding.entry.id),
        "confidence": f"{finding.confidence:.2f}",
        "extracted_by": EXTRACTED_BY,
    }
    head = "\n".join(f"{key}: {value}" for key, value in fields.items())
    return f"---\n{head}\n---\n# {finding.title}\n\n- {finding.sentence}\n\n{link}\n"


def _free(path: Path, taken: set[Path]) -> Path:
    # Deduplication off (or an unreadable same-named file): a new name, never an overwrite.
    return unused_path(path, lambda n: path.with_name(f"{path.stem} {n}.md"), taken)


def extract_agent(
    processor: ExtractProcessor,
    agent: str,
    source: Path,
    entries: Sequence[Entry],
    *,
    environ: Mapping[str, str],
    summary: SummarizeProcessor | None = None,
) -> ExtractReport:
    """The notes to write for the agent's entries (nothing written); `summary` is the list's summarize processor,
    which the notes link back to. Never raises but for a bad auto-write mode."""
    spec = processor.spec
    mode = auto_write_mode(environ)
    folder = processor.folder(agent)
    if mode == "off":
        return ExtractReport(folder, reason=f"{AUTO_WRITE_ENV}=off: nothing extracted")
    relative = spec.folder.replace("{agent}", agent)
    problems = output_problems(relative + "/x.md")
    if not problems and not inside_vault(processor.vault_root, folder):
        problems = ["the folder leads out of the vault (a symlink)"]
    if problems:
        return ExtractReport(folder, reason="folder refused", warnings=(f"{folder}: {problems[0]}; nothing extracted",))
    kinds = [k for k in spec.kinds if mode == "aggressive" or k in RESEARCH_KINDS]
    findings = find(entries, kinds)
    if mode != "aggressive":
        findings = [f for f in findings if f.confidence >= RESEARCH_CONFIDENCE]
    dedupe = dedupe_enabled(environ)
    existing, warnings = _read_folder(folder)
    mine = [_normal(e.text) for e in existing.values() if e.ours and e.agent == agent]
    source_rel = vault_relative(processor.vault_root, source)
    notes: list[ExtractedNote] = []
    # Notes this run already plans, by title: a second sentence with the same title appends to the planned note.
    planned: dict[str, int] = {}
    known = over = 0
    for finding in findings:
        key = _normal(finding.sentence)
        if dedupe and any(key in text for text in mine):
            known += 1
            continue
        link = _link(summary, agent, source_rel, finding.entry.id)
        title_key = finding.title.casefold()
        if dedupe and title_key in planned:
            index = planned[title_key]
            old = notes[index]
            text = old.content.decode("utf-8") + f"- {finding.sentence} ({link})\n"
            notes[index] = ExtractedNote(old.path, old.finding, old.action, text.encode("utf-8"), old.before)
            mine.append(key)
            continue
        if len(notes) >= spec.max_notes:
            over += 1
            continue
        there = existing.get(title_key)
        if there is not None and dedupe:
            if not there.ours:
                warnings.append(
                    f"{there.path}: a note of this title exists and was not made by the extract processor (no "
                    f"extracted_by), so it was left as it is; the {finding.kind} {finding.sentence!r} was not written"
                )
                continue
            text = there.text if there.text.endswith("\n") else there.text + "\n"
            content = (text + f"- {finding.sentence} ({link})\n").encode("utf-8")
            note = ExtractedNote(there.path, finding, "append", content, there.text.encode("utf-8"))
        else:
            path = _free(folder / f"{finding.title}.md", {n.path for n in notes})
            content = render(finding, agent, source_rel, link).encode("utf-8")
            note = ExtractedNote(path, finding, "create", content)
        planned[title_key] = len(notes)
        notes.append(note)
        mine.append(key)
    return ExtractReport(folder, tuple(notes), len(findings), known, over, None, tuple(warnings))
