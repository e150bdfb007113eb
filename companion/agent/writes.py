"""What an agent writes: typed memories (`remember`), notes (`vault_write`) and deletions (`vault_delete`).

Write safety: what the agent sends is a proposal. It is checked (types, sizes, a title that is a name and
not a path and fits a file name in bytes, text that is valid Unicode without control characters and carries no
frontmatter of its own) and held against the policy (writes allowed at all, `AGENT_VAULT_AUTO_WRITE`, the daily and
per-session budgets, the overlap dedupe) before anything is written. A write is a curation plan applied by the
`Curator`: atomic, refused with nothing written when the file changed since it was read (an edit in Obsidian at the
same moment is never overwritten), recorded in the audit log with the agent's name, version and the prompt and model
versions it passed, and undoable with `companion undo`. Every refusal is recorded too, with its reason, so the audit
log holds every decision.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from companion.agent.api import AgentApi
from companion.agent.fields import (
    NOT_IN_NAMES,
    check_no_control,
    checked_line,
    checked_tags,
    checked_title,
    title_from_text,
)
from companion.atomic import NAME_BYTES
from companion.config import AgentWritesConfig
from companion.curation.curator import Curator
from companion.curation.plans import Plan, PlannedWrite
from companion.errors import AgentInputError, CompanionError
from companion.vault.audit import AuditLog, sha256_hex
from companion.vault.frontmatter_edit import set_field, split_body
from companion.vault.links import extract
from companion.vault.notes import MEMORY_TYPE_NAMES
from companion.vault.paths import existing_folder
from companion.workspace import Workspace

MEMORY_TYPES = MEMORY_TYPE_NAMES
"""The types of memory `remember` writes."""
WRITE_ACTIONS = ("remember", "write", "delete")
"""Audit actions of accepted agent writes (what the budgets count)."""
FOLDER_BYTES = 1000
"""The longest folder path an agent may name, in bytes of UTF-8 (each of its names at most 255 bytes), so the
note's whole path stays well inside what the system lets a program open."""

_WORD = re.compile(r"\w+")
_FRONTMATTER_START = re.compile(r"\A\ufeff?---[ \t]*\r?\n")


class WriteRefused(AgentInputError):
    """The policy refused a write (read-only, off, a budget, a duplicate); names what to change, as `field`."""


@dataclass(frozen=True)
class WriteSource:
    """Who proposes a write, as the audit log records it."""

    client: str
    """The client's name and version (`claude-code 2.1.0`), or `cli`."""
    model: str = ""
    """The model version the client says produced the write."""
    prompt: str = ""
    """The prompt version the client says produced the write."""

    def details(self) -> list[tuple[str, str]]:
        """The audit log's details for this source."""
        pairs = [("client", self.client), ("model", self.model), ("prompt", self.prompt)]
        return [(name, value) for name, value in pairs if value]


@dataclass(frozen=True)
class Written:
    """One accepted write."""

    path: str
    """The note written, updated or deleted."""
    action: str
    """`created`, `updated` or `deleted`."""
    entry: str
    """The audit log entry's id (what `companion undo ID` takes)."""
    unresolved: tuple[str, ...] = field(default=())
    """Wikilink targets in the text that name no note (written as they are, reported so the agent can fix them)."""
    moved_to: str | None = None
    """Where a deleted note went (Obsidian's `.trash/`), None when it was removed."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "action": self.action,
            "audit_entry": self.entry,
            "unresolved_links": list(self.unresolved),
            "moved_to": self.moved_to,
        }


class AgentWriter:
    """Writes for one agent session (one MCP connection, one command): checks, budgets, dedupe, audit."""

    def __init__(
        self,
        workspace: Workspace,
        source: WriteSource,
        *,
        allowed: bool,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = workspace
        """The vault and its index."""
        self.source = source
        """Who writes."""
        self.allowed = allowed
        """Writes are offered at all (`companion mcp --allow-writes`, or a command the user typed)."""
        self.policy = _effective(workspace.config.agent_writes, os.environ if environ is None else environ)
        """The write policy with the environment's overrides applied."""
        self.session_writes = 0
        """Writes accepted in this session."""
        self._reader = AgentApi(workspace, record=False)
        self._audit = AuditLog(workspace.data_dir)

    # -- the three writes ------------------------------------------------------------------------

    def remember(
        self,
        memory_type: str,
        text: str,
        *,
        title: str | None = None,
        confidence: float | None = None,
        tags: Sequence[str] = (),
        session: str | None = None,
        ignore_dedupe: bool = False,
    ) -> Written:
        """`remember`: a typed memory note in the memory folder, with its type, confidence, source,
        creation time, tags and a link back to the session it came from."""
        try:
            if memory_type not in MEMORY_TYPES:
                raise AgentInputError(
                    "type", f"{memory_type!r} is not a memory type; use one of {', '.join(MEMORY_TYPES)}"
                )
            body = self._content("text", text)
            name = checked_title(title) if title is not None else title_from_text(body)
            if confidence is not None and (
                isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1
            ):
                raise AgentInputError("confidence", "must be a number from 0 to 1")
            clean_tags = checked_tags(tags)
            back = None
            if session is not None:
                back = self._reader.resolve(session, "session")
            fields: dict[str, Any] = {"type": memory_type}
            if confidence is not None:
                fields["confidence"] = float(confidence)
            fields["source"] = self.source.client
            fields["created"] = _now()
            if clean_tags:
                fields["tags"] = clean_tags
            if back is not None:
                fields["session"] = f"[[{back.removesuffix('.md')}]]"
                body = f"{body.rstrip()}\n\nFrom [[{back.removesuffix('.md')}]].\n"
            folder = existing_folder(self.workspace.vault.root, self.policy.memory_folder.strip().strip("/"))
            return self._create_or_update("remember", folder, name, body, fields, ignore_dedupe)
        except AgentInputError as exc:
            self.refused("remember", exc)
            raise

    def write(
        self,
        title: str,
        content: str,
        *,
        folder: str | None = None,
        note_type: str | None = None,
        tags: Sequence[str] = (),
        ignore_dedupe: bool = False,
    ) -> Written:
        """`vault_write`: a note by canonical title; the same title again updates that note in place
        (dedupe is skipped), new content overlapping another note is refused naming it unless `ignore_dedupe`."""
        try:
            name = checked_title(title)
            body = self._content("content", content)
            where = self._folder(folder) if folder is not None else self.policy.notes_folder.strip().strip("/")
            where = existing_folder(self.workspace.vault.root, where)
            fields: dict[str, Any] = {}
            if note_type is not None:
                fields["type"] = checked_line("type", note_type)
            clean_tags = checked_tags(tags)
            if clean_tags:
                fields["tags"] = clean_tags
            fields["source"] = self.source.client
            return self._create_or_update("write", where, name, body, fields, ignore_dedupe)
        except AgentInputError as exc:
            self.refused("write", exc)
            raise

    def delete(self, note: str) -> Written:
        """`vault_delete`: the note goes to Obsidian's trash (`.trash/`), as the app's delete does."""
        try:
            path = self._reader.resolve(note)
            self._admit("delete")
            curator = self._curator()
            try:
                plan = curator.plan_delete(path)
            except CompanionError as exc:  # its folder is a link, it vanished: refused, and recorded as such
                raise WriteRefused("note", str(exc)) from exc
            entry = self._apply(curator, plan)
            moved = next((c.path for c in entry.changes if c.after is not None and c.path != path), None)
            return Written(path, "deleted", entry.id, moved_to=moved)
        except AgentInputError as exc:
            self.refused("delete", exc)
            raise

    # -- the steps -------------------------------------------------------------------------------

    def _create_or_update(
        self, action: str, folder: str, name: str, body: str, fields: dict[str, Any], ignore_dedupe: bool
    ) -> Written:
        self._admit(action)
        existing = self._samechecked_title(name, folder)
        unresolved = self._unresolved(body, existing or f"{folder}/{name}.md")
        curator = self._curator()
        if existing is not None:
            # The same title: an update in place, the note's other properties and its layout kept.
            # Read as the curator writes: never through a folder link, which could lead out of the vault.
            try:
                raw = curator.current(existing)
            except CompanionError as exc:
                raise WriteRefused("note", str(exc)) from exc
            if raw is None:
                raise WriteRefused("note", f"{existing}: was moved or deleted just now; nothing was written, try again")
            text = _decoded(existing, raw)
            head = text[: len(text) - len(split_body(text))]
            new = head + body if head else body
            for key, value in fields.items():
                if key in ("type", "tags", "source"):
                    new = set_field(new, key, value, path=existing)
            new = set_field(new, "updated", _now(), path=existing)
            plan = Plan(
                action, f"Agent update of {existing}", False, (PlannedWrite(existing, sha256_hex(raw), _b(new)),)
            )
            entry = self._apply(curator, plan)
            return Written(existing, "updated", entry.id, unresolved)
        path = f"{folder}/{name}.md"
        if self.policy.dedupe and not ignore_dedupe:
            similar = self._similar(body)
            if similar is not None:
                raise WriteRefused(
                    "content",
                    f"overlaps {similar} ({self.policy.overlap:.0%} or more of its word triples): update that note "
                    "(vault_write with its title), or pass ignore_dedupe to write a new edition",
                )
        text = _with_frontmatter(fields, body)
        plan = Plan(action, f"Agent {action} of {path}", False, (PlannedWrite(path, None, _b(text)),))
        entry = self._apply(curator, plan)
        return Written(path, "created", entry.id, unresolved)

    def _apply(self, curator: Curator, plan: Plan) -> Any:
        try:
            entry = curator.apply(plan, details=self.source.details())
        except CompanionError as exc:
            if isinstance(exc, AgentInputError):
                raise
            # Most often the file changed between reading and writing (an edit in Obsidian): nothing was written.
            raise WriteRefused("note", str(exc)) from exc
        self.session_writes += 1
        # Searchable at once, unless another process keeps the index (it sees the file within its batch time).
        self.workspace.catch_up()
        return entry

    def _admit(self, action: str) -> None:
        """Refuse when writes are not offered, are off, or a budget is spent."""
        if not self.allowed:
            raise WriteRefused(
                "mode", "this server is read-only; start it with `companion mcp --allow-writes` to let agents write"
            )
        if self.policy.auto_write == "off":
            raise WriteRefused("mode", "agent writes are off (AGENT_VAULT_AUTO_WRITE=off); nothing was written")
        scale = 4 if self.policy.auto_write == "aggressive" else 1
        if self.session_writes >= self.policy.session_budget * scale:
            raise WriteRefused(
                "budget", f"this session's budget of {self.policy.session_budget * scale} writes is spent"
            )
        today = dt.datetime.now(dt.UTC).date().isoformat()
        done = sum(
            1
            for e in self._audit.entries()
            if e.at.startswith(today) and e.source.startswith("agent:") and e.action in WRITE_ACTIONS
        )
        if done >= self.policy.daily_budget * scale:
            raise WriteRefused("budget", f"today's budget of {self.policy.daily_budget * scale} agent writes is spent")

    def refused(self, action: str, exc: AgentInputError) -> None:
        """Record a refused write with its reason (every decision is logged)."""
        # If the log cannot be written the refusal still stands: the agent gets its error either way.
        with contextlib.suppress(OSError):
            self._audit.record(
                source=f"agent:{self.source.client}",
                action="refused",
                summary=f"Refused agent {action}: {exc.field}: {exc.reason}"[:500],
                changes=(),
                details=[*self.source.details(), ("field", exc.field), ("tool", action)],
            )

    def _curator(self) -> Curator:
        ws = self.workspace
        return Curator(
            ws.vault.root,
            self._audit,
            source=f"agent:{self.source.client}",
            archive_folder=ws.config.curation.archive_folder,
        )

    def _content(self, field_name: str, text: object) -> str:
        if not isinstance(text, str):
            raise AgentInputError(field_name, f"expected text, got {type(text).__name__}")
        if not text.strip():
            raise AgentInputError(field_name, "is empty")
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise AgentInputError(field_name, "is not valid Unicode (a lone surrogate); nothing was written") from exc
        most = self.policy.max_note_kb * 1024
        if size > most:
            raise AgentInputError(field_name, f"is {size:,} bytes; an agent may write at most {most:,}")
        check_no_control(field_name, text)
        if _FRONTMATTER_START.match(text):
            raise AgentInputError(
                field_name, "starts with a frontmatter block (---); pass type and tags as arguments instead"
            )
        return text if text.endswith("\n") else text + "\n"

    def _folder(self, folder: object) -> str:
        raw = checked_line("folder", folder)
        name = raw.strip("/")
        parts = name.replace("\\", "/").split("/")
        absolute = raw.startswith(("/", "\\")) or (len(raw) > 1 and raw[1] == ":")
        if not name or absolute or ".." in parts or any(p.startswith(".") for p in parts):
            raise AgentInputError("folder", f"{folder!r} is not a visible folder inside the vault")
        if "\\" in name or NOT_IN_NAMES.search(name):
            raise AgentInputError("folder", f"{folder!r} holds characters a folder name cannot have")
        longest = max(len(part.encode("utf-8")) for part in parts)
        if longest > NAME_BYTES:
            raise AgentInputError(
                "folder", f"has a name of {longest} bytes (UTF-8); each folder name may take at most {NAME_BYTES} bytes"
            )
        size = len(name.encode("utf-8"))
        if size > FOLDER_BYTES:
            raise AgentInputError("folder", f"is {size} bytes long (UTF-8); at most {FOLDER_BYTES} bytes")
        return name

    def _samechecked_title(self, name: str, folder: str) -> str | None:
        """The note that already has this title (in the folder first), or None."""
        if (self.workspace.vault.root / folder / f"{name}.md").is_file():
            return f"{folder}/{name}.md"
        found = self.workspace.manifest.titled([name]).get(name.casefold(), [])
        found = [p for p in found if (self.workspace.vault.root / p).is_file()]
        return found[0] if len(found) == 1 else None

    def _unresolved(self, body: str, path: str) -> tuple[str, ...]:
        resolver = self._reader.link_graph().resolver
        targets = dict.fromkeys(link.target for link in extract(body).links if link.target)
        return tuple(t for t in targets if resolver.resolve(t, path) is None)

    def _similar(self, body: str) -> str | None:
        """An indexed note holding `overlap` or more of the new text's word triples, or None."""
        mine = _triples(body)
        if not mine:
            return None
        words = sorted(set(_WORD.findall(body.lower())), key=len, reverse=True)[:12]
        match = " OR ".join(f'"{w}"' for w in words)
        for path, _score in self.workspace.manifest.lexical(match, 10) if match else []:
            try:
                theirs = _triples(split_body(_decoded(path, (self.workspace.vault.root / path).read_bytes())))
            except (OSError, AgentInputError):
                continue
            if len(mine & theirs) / len(mine) >= self.policy.overlap:
                return path
        return None


def _effective(config: AgentWritesConfig, environ: Mapping[str, str]) -> AgentWritesConfig:
    mode = environ.get("AGENT_VAULT_AUTO_WRITE", "").strip().lower()
    dedupe = environ.get("AGENT_VAULT_DEDUPE", "").strip()
    changes: dict[str, Any] = {}
    if mode in ("off", "research", "aggressive"):
        changes["auto_write"] = mode
    if dedupe in ("0", "false", "off", "no"):
        changes["dedupe"] = False
    return AgentWritesConfig(**{**config.__dict__, **changes}) if changes else config


def _with_frontmatter(fields: Mapping[str, Any], body: str) -> str:
    # safe_dump quotes whatever needs quoting: a title or tag cannot end the block or add a property.
    head = yaml.safe_dump(dict(fields), allow_unicode=True, sort_keys=False, default_flow_style=False)
    return f"---\n{head}---\n{body}"


def _decoded(path: str, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentInputError("note", f"{path} is not UTF-8 text, so it is not edited") from exc


def _triples(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _b(text: str) -> bytes:
    return text.encode("utf-8")
