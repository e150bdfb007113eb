"""Convert a vault of conversation notes into a vault of session summaries only, with its questions remapped.

Many agents keep no conversation notes at all: they write one short summary per exchange under
`ops/sessions/<YYYY-MM-DD>/` (the format is in docs/sessions.md) and nothing else. To measure how well the
companion recalls old sessions for such an agent, an evaluation set written as conversation notes is rewritten
here the way that agent would have left it.

Run it from the project's root with the project's Python:

    python eval/to_summaries.py SRC_VAULT QUESTIONS.jsonl OUT_DIR [--session-level]

What it reads:

- SRC_VAULT: conversation notes (frontmatter `type: conversation`, `date`, `time`, `user_id`, `chat_id`,
  `session`; one paragraph per turn, `**Speaker**: text` or `Speaker: text`, optionally ending in an Obsidian
  block id such as ` ^D3-7`). Headings are left out; a paragraph that is not a turn belongs to the turn before it.
- QUESTIONS.jsonl: questions in `companion eval`'s format (`id`, `query`, `evidence`, ...), optionally with
  `evidence_turns`, the block ids of the turns that hold the answer.

What it writes:

- OUT_DIR/vault/: the turns of each conversation note taken two by two as exchanges (turns 1+2, 3+4, ...; an odd
  last turn is an exchange with an empty reply), one summary each at
  `ops/sessions/<date>/<chat>-<session>-<nn>.md`. Its frontmatter holds the note's `date`, `user_id` and
  `chat_id`, a `time` of the note's time plus nn minutes (so the exchanges of a note sort in order), `user_msg`
  (`Speaker: text` of the first turn) and `sentinel_msg` (of the second). Block ids are dropped; the body is
  empty. Every other file of the vault is copied as it is (hidden folders such as `.obsidian` are not).
- OUT_DIR/<the questions file's name>: the questions with `evidence` remapped to summaries: to those holding one
  of the question's `evidence_turns`, or, for a question without them (or with `--session-level`), to every
  summary of its evidence notes. Every other key is kept. A question whose turns cannot all be found falls back
  to its notes' summaries, with a warning.

Run it again with another questions file and the same OUT_DIR to convert that file too: the summaries are
written again, identically. A summary folder holding files this conversion would not write is refused.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from companion.errors import CompanionError, NoteError
from companion.vault.dates import note_day, session_datetime
from companion.vault.parse import parse_note

SESSIONS_FOLDER = "ops/sessions"
"""Where summaries go, the companion's default `sessions.folder`."""

_BOLD_TURN = re.compile(
    r"^(?:\*\*|__)(?P<speaker>[^*_\n]{1,60}?)(?::(?:\*\*|__)|(?:\*\*|__)\s*:)[ \t]*(?P<text>.*)", re.S
)
_PLAIN_TURN = re.compile(r"^(?P<speaker>[A-Za-z][\w .'@-]{0,40}?)\s*:[ \t]+(?P<text>.*)", re.S)
_BLOCK_ID = re.compile(r"\s*\^(?P<id>[A-Za-z0-9-]+)\s*$")
_HEADING = re.compile(r"^#{1,6}\s")
_TURN_REF = re.compile(r"^D(?P<session>[^-\s]+)-(?P<turn>\d+)$")
_NAME_UNSAFE = re.compile(r"[^\w.-]+")
_DAY_IN_NAME = re.compile(r"\d{4}-\d{2}-\d{2}")
_LAST_MINUTE = dt.time(23, 59)


class ConversionError(CompanionError):
    """The conversion cannot go on; the message says which file and what to do."""

    exit_code = 2


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation note."""

    speaker: str
    """Who spoke, as written."""
    text: str
    """What was said, without its block id."""
    block_id: str
    """The Obsidian block id that ended the paragraph, empty when none."""

    @property
    def line(self) -> str:
        """`Speaker: text`, the way a summary quotes it."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Conversation:
    """A conversation note, cut into exchanges."""

    path: str
    """Vault path of the note."""
    session: str
    """The note's `session` property as text (the file name when it has none)."""
    turns: tuple[Turn, ...]
    """Its turns in order."""
    summaries: tuple[str, ...]
    """The vault path of the summary of each exchange, in order."""
    skipped: int
    """Paragraphs before the first turn that were left out (a title heading)."""
    joined: int
    """Paragraphs that were not turns and were joined to the turn before them."""

    def summary_of_turn(self, index: int) -> str:
        """The summary holding the 0-based turn `index`."""
        return self.summaries[index // 2]


@dataclass(frozen=True)
class Converted:
    """The whole output vault, planned before anything is written."""

    files: dict[str, bytes]
    """Vault path to content: summaries and copied files."""
    conversations: dict[str, Conversation]
    """The conversation notes by vault path."""
    copied: int
    """How many other files were copied."""
    warnings: tuple[str, ...]
    """What was odd in the source (turnless notes, notes without a time...)."""


class _SummaryDumper(yaml.SafeDumper):
    """`yaml.SafeDumper` that writes a `_Quoted` string in single quotes, as summaries write their `time`."""


class _Quoted(str):
    """A string always written in single quotes."""


def _represent_quoted(dumper: yaml.SafeDumper, data: _Quoted) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="'")


_SummaryDumper.add_representer(_Quoted, _represent_quoted)


def split_turns(body: str) -> tuple[list[Turn], int, int]:
    """The turns of a conversation body, the paragraphs skipped before the first turn, and those joined to a turn.

    A note with any `**Speaker**:` paragraph takes only those as turns, so that a plain `Note: ...` paragraph in
    it is not mistaken for one.
    """
    paragraphs = [p.strip() for p in re.split(r"\n[ \t]*\n", body) if p.strip()]
    pattern = _BOLD_TURN if any(_BOLD_TURN.match(p) for p in paragraphs) else _PLAIN_TURN
    turns: list[Turn] = []
    skipped = joined = 0
    for paragraph in paragraphs:
        text, block_id = _without_block_id(paragraph)
        match = pattern.match(text)
        if match:
            turns.append(Turn(match["speaker"].strip(), match["text"].strip(), block_id))
        elif turns and not _HEADING.match(text):
            last = turns[-1]
            turns[-1] = Turn(last.speaker, f"{last.text}\n\n{text}", block_id or last.block_id)
            joined += 1
        else:
            skipped += 1
    return turns, skipped, joined


def _without_block_id(paragraph: str) -> tuple[str, str]:
    match = _BLOCK_ID.search(paragraph)
    if match is None:
        return paragraph, ""
    return paragraph[: match.start()].rstrip(), match["id"]


def _name_part(value: str, fallback: str) -> str:
    part = _NAME_UNSAFE.sub("-", value).strip("-.")
    return part or fallback


def _times(start: dt.datetime, count: int) -> list[str]:
    """`HH:MM` of exchanges 1..count, one minute apart after `start`, kept inside its day."""
    last_allowed = dt.datetime.combine(start.date(), _LAST_MINUTE)
    # A note late in the evening is moved back rather than spilling exchanges into the next day.
    first = min(start + dt.timedelta(minutes=1), last_allowed - dt.timedelta(minutes=count - 1))
    first = max(first, dt.datetime.combine(start.date(), dt.time()))
    return [(first + dt.timedelta(minutes=n)).strftime("%H:%M") for n in range(count)]


def _summary_text(frontmatter: dict[str, Any]) -> bytes:
    head = yaml.dump(frontmatter, Dumper=_SummaryDumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    return f"---\n{head}---\n".encode()


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _conversation(
    rel: str, frontmatter: dict[str, Any], body: str, files: dict[str, bytes], warnings: list[str]
) -> Conversation:
    day = note_day(frontmatter.get("date"))
    if day is None:
        named = _DAY_IN_NAME.search(Path(rel).name)
        if named is None:
            raise ConversionError(f"{rel}: a conversation note without a readable `date`; add one and run again")
        day = dt.date.fromisoformat(named.group())
        warnings.append(f"{rel}: no readable `date`, the day in its file name ({day}) is used")
    time_text = _text(frontmatter.get("time"))
    start = session_datetime(day.isoformat(), time_text) or dt.datetime.combine(day, dt.time())
    if not time_text:
        warnings.append(f"{rel}: no `time`, its exchanges start at 00:01")
    user_id, chat_id = _text(frontmatter.get("user_id")), _text(frontmatter.get("chat_id"))
    session = _text(frontmatter.get("session")) or Path(rel).stem
    turns, skipped, joined = split_turns(body)
    if not turns:
        warnings.append(f"{rel}: a conversation note without `Speaker: text` turns gives no summary")
    count = (len(turns) + 1) // 2
    width = max(2, len(str(count)))
    stem = f"{_name_part(chat_id or user_id, 'chat')}-{_name_part(session, 'session')}"
    summaries: list[str] = []
    for n, time in enumerate(_times(start, count), 1):
        path = f"{SESSIONS_FOLDER}/{day.isoformat()}/{stem}-{n:0{width}d}.md"
        if path in files:
            raise ConversionError(
                f"{rel}: its summary {path} is also another note's; give the notes of one chat and day "
                "different `session` values"
            )
        first = turns[2 * n - 2]
        reply = turns[2 * n - 1].line if 2 * n - 1 < len(turns) else ""
        files[path] = _summary_text(
            {
                "date": day,
                "time": _Quoted(time),
                "user_id": user_id,
                "chat_id": chat_id,
                "user_msg": first.line,
                "sentinel_msg": reply,
            }
        )
        summaries.append(path)
    return Conversation(rel, session, tuple(turns), tuple(summaries), skipped, joined)


def _vault_files(root: Path) -> Iterable[tuple[str, Path]]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        yield rel.as_posix(), path


def convert_vault(source: Path) -> Converted:
    """Plan the summaries vault of `source` in memory: summaries for conversation notes, other files as they are."""
    if not source.is_dir():
        raise ConversionError(f"{source}: no such vault folder; give the folder that holds the conversation notes")
    files: dict[str, bytes] = {}
    conversations: dict[str, Conversation] = {}
    copies: list[tuple[str, bytes]] = []
    warnings: list[str] = []
    for rel, path in _vault_files(source):
        raw = path.read_bytes()
        if not rel.endswith(".md"):
            copies.append((rel, raw))
            continue
        try:
            note = parse_note(rel, raw)
        except NoteError as exc:
            warnings.append(f"{exc}; copied as it is")
            copies.append((rel, raw))
            continue
        if note.note_type == "conversation":
            conversations[rel] = _conversation(rel, note.frontmatter, note.body, files, warnings)
        else:
            copies.append((rel, raw))
    for rel, raw in copies:
        if rel in files:
            raise ConversionError(f"{rel}: the source vault already has a note where a summary goes; move it")
        files[rel] = raw
    return Converted(files, conversations, len(copies), tuple(warnings))


def _turn_index(conversation: Conversation, ref: str) -> int | None:
    """The 0-based turn a reference names: its block id, or `D<session>-<turn>` in a note without block ids."""
    for index, turn in enumerate(conversation.turns):
        if turn.block_id == ref:
            return index
    if any(turn.block_id for turn in conversation.turns):
        return None
    match = _TURN_REF.match(ref)
    if match is None or match["session"] != conversation.session:
        return None
    index = int(match["turn"]) - 1
    return index if 0 <= index < len(conversation.turns) else None


def remap_evidence(
    question: dict[str, Any], converted: Converted, *, session_level: bool = False
) -> tuple[list[str], str]:
    """The question's evidence as summary paths, and how it was found: `turns`, `notes`, or `notes (fallback)`."""
    evidence = [e for e in question.get("evidence") or [] if isinstance(e, str)]
    refs = question.get("evidence_turns")
    notes = [converted.conversations[e] for e in evidence if e in converted.conversations]
    others = [e for e in evidence if e not in converted.conversations]
    how = "notes"
    if refs and not session_level:
        found: set[str] = set()
        for ref in refs:
            places = [c.summary_of_turn(i) for c in notes if (i := _turn_index(c, str(ref))) is not None]
            if not places:
                how = "notes (fallback)"
                break
            found.update(places)
        else:
            how = "turns"
            ordered = [s for c in notes for s in c.summaries if s in found]
            return _unique([*ordered, *others]), how
    return _unique([*(s for c in notes for s in c.summaries), *others]), how


def _unique(paths: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(paths))


@dataclass(frozen=True)
class Remapped:
    """The converted questions."""

    questions: list[dict[str, Any]]
    """Each question with its evidence remapped, in the order read."""
    by_turn: int
    """How many of them have the summaries of their evidence turns as evidence (the others: of their notes)."""
    warnings: list[str]
    """Questions left out, placed by note instead of by turn, or naming evidence the vault lacks."""


def convert_questions(lines: Iterable[str], converted: Converted, *, session_level: bool = False) -> Remapped:
    """The questions with their evidence remapped to summaries."""
    out: list[dict[str, Any]] = []
    warnings: list[str] = []
    by_turn = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            question = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConversionError(f"line {number}: not JSON ({exc.msg}); fix the questions file") from exc
        if not isinstance(question, dict):
            raise ConversionError(f"line {number}: expected a JSON object")
        evidence_in = [e for e in question.get("evidence") or [] if isinstance(e, str)]
        missing = [e for e in evidence_in if e not in converted.files and e not in converted.conversations]
        if missing:
            warnings.append(f"{question.get('id')}: evidence not in the vault, kept as written: {', '.join(missing)}")
        evidence, how = remap_evidence(question, converted, session_level=session_level)
        if how == "notes (fallback)":
            warnings.append(
                f"{question.get('id')}: a turn of evidence_turns is in none of its notes; "
                "every summary of those notes is its evidence"
            )
        if not evidence:
            warnings.append(f"{question.get('id')}: no summary holds its evidence; left out")
            continue
        by_turn += how == "turns"
        out.append({**question, "evidence": evidence})
    return Remapped(out, by_turn, warnings)


def write_vault(converted: Converted, target: Path) -> None:
    """Write the planned files under `target`, refusing a folder that holds files this conversion would not write."""
    if target.exists():
        strangers = [rel for rel, _ in _vault_files(target) if rel not in converted.files]
        if strangers:
            shown = ", ".join(strangers[:3])
            raise ConversionError(
                f"{target}: holds {len(strangers)} file(s) this conversion does not write ({shown}); "
                "remove the folder or choose another output folder"
            )
    for rel, raw in converted.files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: convert, write, and print what was done."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path, help="the vault of conversation notes")
    parser.add_argument("questions", type=Path, help="the questions, JSONL in companion eval's format")
    parser.add_argument("out", type=Path, help="output folder: vault/ and the remapped questions go there")
    parser.add_argument(
        "--session-level", action="store_true", help="every summary of the evidence notes is evidence, turns ignored"
    )
    args = parser.parse_args(argv)
    try:
        converted = convert_vault(args.vault)
        try:
            lines = args.questions.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConversionError(
                f"{args.questions}: cannot be read ({exc.strerror}); give the questions file"
            ) from exc
        remapped = convert_questions(lines, converted, session_level=args.session_level)
        out_questions = args.out / args.questions.name
        if out_questions.resolve() == args.questions.resolve():
            raise ConversionError(f"{out_questions}: would overwrite the questions read; choose another output folder")
        write_vault(converted, args.out / "vault")
        out_questions.write_text(
            "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in remapped.questions), encoding="utf-8"
        )
    except ConversionError as exc:
        print(f"to_summaries: {exc}", file=sys.stderr)
        return exc.exit_code
    for warning in (*converted.warnings, *remapped.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    summaries = sum(len(c.summaries) for c in converted.conversations.values())
    total = len(remapped.questions)
    print(
        f"{len(converted.conversations)} conversation notes -> {summaries} summaries, {converted.copied} other files "
        f"copied, into {args.out / 'vault'}\n{total} questions ({remapped.by_turn} by turn, "
        f"{total - remapped.by_turn} by note) -> {out_questions}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
