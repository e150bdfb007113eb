"""Importing agents' sessions into the vault: find each agent's transcripts, read those that changed since the last
import, and write one conversation note per session, atomically, never over a note edited by hand.

A session whose files have the size and modification time the last import recorded is not read at all, so a second
import changes no file; a transcript that grew is read again whole (line by line) and only its session's note is
rewritten, and only when its bytes differ. Nothing is written with `dry_run`, in the vault or the data directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Literal

from companion.atomic import NAME_BYTES, fit_name, make_folders, write_atomic
from companion.errors import TranscriptError
from companion.locations import DataPaths
from companion.pipeline.imports import claude, codex, gemini
from companion.pipeline.imports.records import Session
from companion.pipeline.imports.render import IMPORTED_BY, read_existing, render_note, safe_name, title_of
from companion.pipeline.imports.state import ImportState, Seen, signature
from companion.pipeline.processors import Redactor
from companion.secrets import RULES_VERSION
from companion.vault.paths import inside_vault, vault_relative

AGENTS = ("claude-code", "codex", "gemini")
"""The agents whose sessions can be imported."""

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}
"""Each agent's name as its users know it, for messages."""

Action = Literal["created", "updated", "unchanged", "skipped"]
"""What an import did with a session's note."""


@dataclass(frozen=True)
class ImportRequest:
    """What to import, and where from."""

    agent: str
    """One of `AGENTS`."""
    root: Path
    """Its transcripts: a folder, or one file."""
    folder: str
    """The notes' folder pattern (`{agent}`, `{project}`)."""
    since: date | None = None
    """Only sessions active on or after this day."""
    project: str | None = None
    """Only sessions whose project or working folder holds this text (any case)."""


@dataclass(frozen=True)
class NoteOutcome:
    """What became of one session."""

    agent: str
    """The agent."""
    session_id: str
    """The agent's id of the session."""
    project: str
    """The project's name."""
    note: str
    """The note, vault-relative."""
    action: Action
    """`created`, `updated`, `unchanged`, or `skipped` (see `reason`)."""
    turns: int = 0
    """Turns the note holds."""
    reason: str = ""
    """Why it was skipped."""


@dataclass
class ImportReport:
    """What an import did (or, with a dry run, would do)."""

    notes: list[NoteOutcome] = field(default_factory=list)
    """One per session read (and per session skipped as unchanged, with `unchanged`)."""
    problems: list[str] = field(default_factory=list)
    """What could not be read, each naming the file and line; and the notes left alone."""
    not_read: int = 0
    """Sessions not read at all: their files had not changed since the last import."""
    dry_run: bool = False
    """Whether nothing was written."""

    @property
    def written(self) -> list[str]:
        """The notes written (or that would be), vault-relative."""
        return [n.note for n in self.notes if n.action in ("created", "updated")]


def default_root(agent: str, home: Path, environ: Mapping[str, str]) -> Path:
    """Where the agent keeps its sessions."""
    if agent == "claude-code":
        return claude.default_root(home)
    if agent == "codex":
        return codex.default_root(home, environ)
    return gemini.default_root(home)


def _sessions(agent: str, root: Path) -> Iterator[tuple[Path, list[Path], Callable[[], Session]]]:
    """Each session's main file, the files whose stats tell it changed, and how to read it."""
    if agent == "claude-code":
        for main in claude.session_files(root):
            sides = sorted((main.parent / main.stem / "subagents").glob("*.jsonl"))
            yield main, [main, *sides], lambda main=main: claude.read_session(main)  # type: ignore[misc]
    elif agent == "codex":
        for path in codex.session_files(root):
            yield path, [path], lambda path=path: codex.read_session(path)  # type: ignore[misc]
    else:
        for path in gemini.session_files(root):
            yield path, [path], lambda path=path: gemini.read_session(path)  # type: ignore[misc]


def import_sessions(
    vault_root: Path, data_dir: Path, requests: list[ImportRequest], *, dry_run: bool = False
) -> ImportReport:
    """Import every session the requests name; the state is saved once, at the end (never on a dry run)."""
    state = ImportState.load(DataPaths(data_dir).imports)
    redactor = Redactor()
    report = ImportReport(dry_run=dry_run)
    home = Path.home()
    for request in requests:
        for main, files, read in _sessions(request.agent, request.root):
            _one(vault_root, request, main, files, read, state, redactor.text, report, home, dry_run)
    if not dry_run and (report.written or state.seen):
        state.save()
    return report


def _one(
    vault_root: Path,
    request: ImportRequest,
    main: Path,
    files: list[Path],
    read: Callable[[], Session],
    state: ImportState,
    redact: Callable[[str], str],
    report: ImportReport,
    home: Path,
    dry_run: bool,
) -> None:
    key = ImportState.key(request.agent, main)
    rules = f"{IMPORTED_BY} {RULES_VERSION} {request.folder}"
    stats = signature(files, rules)
    seen = state.seen.get(key)
    if seen is not None and seen.signature == stats and (vault_root / seen.note).exists():
        report.not_read += 1
        return
    if request.since is not None and _modified_before(main, request.since):
        return
    try:
        session = read()
    except OSError as exc:
        report.problems.append(f"{main}: cannot read the transcript ({exc.strerror or exc}); skipped")
        return
    report.problems += session.problems
    if not session.turns or not _wanted(session, request):
        return
    title = title_of(session, redact)
    started = session.started()
    day = started.astimezone().date().isoformat() if started is not None else "undated"
    existing_note = (seen.note if seen is not None else None) or state.note_of(session.agent, session.session_id)
    path = _note_path(vault_root, request.folder, session, day, title, redact, existing_note)
    if path is None:
        report.problems.append(f"{main}: the notes' folder {request.folder!r} leads out of the vault; not imported")
        return
    rel = vault_relative(vault_root, path)
    source = _shown(main, home)
    try:
        outcome = _write(vault_root, path, session, title, source, redact, dry_run)
    except OSError as exc:
        # One note that cannot be written (a full disk, a folder swapped for a link) stops neither the sessions
        # after it nor the record of the notes written before it.
        report.problems.append(f"{path}: cannot write the note ({exc.strerror or exc}); {main} was not imported")
        return
    report.notes.append(NoteOutcome(session.agent, redact(session.session_id), redact(session.project), rel, *outcome))
    if outcome[0] == "skipped":
        report.problems.append(outcome[2])
    elif not dry_run:
        state.seen[key] = Seen(stats, rel, session.session_id)


def _modified_before(path: Path, since: date) -> bool:
    """Whether the file was last written before `since` began (such a session cannot reach it)."""
    try:
        modified = datetime.fromtimestamp(path.stat().st_mtime).date()
    except OSError:
        return False
    return modified < since


def _wanted(session: Session, request: ImportRequest) -> bool:
    if request.project and request.project.casefold() not in f"{session.project}\0{session.cwd}".casefold():
        return False
    ended = session.ended()
    return request.since is None or (ended is not None and ended.astimezone().date() >= request.since)


def _shown(path: Path, home: Path) -> str:
    """A transcript's path as the note shows it: under the home folder as `~/...`."""
    try:
        return "~/" + path.resolve().relative_to(home.resolve()).as_posix()
    except ValueError:
        return str(path)


def _note_path(
    vault_root: Path,
    pattern: str,
    session: Session,
    day: str,
    title: str,
    redact: Callable[[str], str],
    existing: str | None,
) -> Path | None:
    """Where the session's note goes: where it already is, else `<folder>/<date> <title>.md`, with the session id's
    start added when that name holds another session's note."""
    if existing is not None:
        path = vault_root / existing
    else:
        project = safe_name(redact(session.project), "project")
        folder = pattern.replace("{agent}", session.agent).replace("{project}", project).strip("/")
        stem = f"{day} {safe_name(title, 'session')}"
        # The title is cut to 80 characters, but a file name is limited in bytes (80 CJK characters take 240), with
        # room kept for the session id's start that tells two sessions of one title apart.
        stem = fit_name(stem, limit=NAME_BYTES - 12).rstrip(" .")
        path = vault_root / folder / f"{stem}.md"
        if _held_by_other(path, session.session_id):
            path = vault_root / folder / f"{stem} {safe_name(session.session_id[:8], 'x')}.md"
    return path if inside_vault(vault_root, path.parent) else None


def _held_by_other(path: Path, session_id: str) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        return True
    try:
        return read_existing(path, text).session_id != session_id
    except TranscriptError:
        return True


def _write(
    vault_root: Path,
    path: Path,
    session: Session,
    title: str,
    source: str,
    redact: Callable[[str], str],
    dry_run: bool,
) -> tuple[Action, int, str]:
    """Write the note when its bytes change; the action, the turns, and why it was skipped."""
    before: bytes | None = None
    extra: dict[str, object] = {}
    tail = ""
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        pass
    except OSError as exc:
        return "skipped", 0, f"{path}: cannot read the note ({exc.strerror or exc}); left as it is"
    if before is not None:
        try:
            existing = read_existing(path, before.decode("utf-8"))
        except UnicodeDecodeError:
            return "skipped", 0, f"{path}: the note is not UTF-8, so it was left as it is"
        except TranscriptError as exc:
            return "skipped", 0, str(exc)
        extra, tail = existing.extra, existing.tail
    text, turns = render_note(session, title, source, redact, extra, tail)
    content = text.encode("utf-8", "replace")
    if content == before:
        return "unchanged", turns, ""
    if not dry_run:
        if _current(path) != before:
            return "skipped", turns, f"{path}: the note changed while the import was reading, so it was left as it is"
        make_folders(path.parent)
        write_atomic(path, content, root=vault_root)
    return ("created" if before is None else "updated"), turns, ""


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
