"""Curating the vault: pin, retag, retype, archive, delete and merge notes, each one undoable.

Every curation is planned first and applied second. Planning only reads: it returns a `Plan` with a summary for a
confirmation and the exact bytes each file will get, together with the digest of the bytes it was computed from.
`Curator.apply` refuses a plan when any of those files changed since (Obsidian saved, the agent wrote), so a
confirmation never applies to a note the user has not seen. Before anything is written, the audit log keeps a copy of
every file's bytes before and after, which is what `Curator.undo` restores from. Each file is checked again as it is
written, through the file itself (`companion.curation.applying`): a note edited while a curation runs stops it, and
what was already written is put back.

Every read and write of a note goes through folders held open by descriptor (`HeldFolder`), opened one name at a
time without following a symbolic link: a folder swapped for a link while a curation runs can make it fail, never
make it read or write outside the vault. A note keeps its permission bits wherever it goes (archive, the trash) and
when an undo brings it back, and an undo removes the folders its curation created once they are empty again.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from companion.atomic import HeldFolder, LinkRefused, fit_name
from companion.config import CompanionConfig
from companion.curation.applying import Snapshot, Step, StepWriter
from companion.curation.merge import merge_edits, relink_note
from companion.curation.plans import Plan, PlannedWrite, decode_note
from companion.curation.relink import retargeting
from companion.errors import CompanionError, CurationError, NotFoundError, NothingToUndoError
from companion.folderlock import folder_lock
from companion.vault.audit import AuditEntry, AuditLog, FileChange, sha256_hex
from companion.vault.frontmatter_edit import properties, remove_field, set_field
from companion.vault.naming import NoteNames
from companion.vault.reader import ObsidianVault, _inside, _unsafe_reason, valid_name

__all__ = ["CurationError", "Curator", "Plan", "PlannedWrite", "obsidian_uri"]

TRASH_FOLDER = ".trash"
"""Obsidian's vault-local trash folder."""

_TAG = re.compile(r"[\w/-]+")
_TRASH_OPTIONS = ("system", "local", "none")


class Curator:
    """Plans curations of one vault, applies them with an audit trail, and undoes them."""

    def __init__(
        self,
        vault_root: Path,
        audit: AuditLog,
        *,
        source: str,
        read_only: bool = False,
        archive_folder: str = "archive",
    ) -> None:
        """Curate the vault at `vault_root`, recording to `audit` as `source` (`app`, `cli`).

        In read-only mode plans can still be made, but `apply` and `undo` refuse and nothing is ever written.
        """
        root = vault_root.expanduser()
        if not root.is_dir():
            raise CurationError(f"{root}: not a folder; point --vault or AGENT_VAULT_PATH at a vault")
        self.root = root.resolve()
        """The vault's absolute, symlink-free root."""
        self.audit = audit
        """Where applied curations are recorded."""
        self.source = source
        """Who the audit entries name as having made the change."""
        self.read_only = read_only
        """When set, `apply` and `undo` refuse."""
        folder = archive_folder.strip().strip("/")
        reason = _unsafe_reason(folder) or (None if posixpath.normpath(folder) == folder else "is not a plain path")
        if reason is not None:
            raise CurationError(f"the archive folder {archive_folder!r} {reason}; choose a folder inside the vault")
        self.archive_folder = folder
        """Vault-relative folder that archived notes move into, keeping their relative path."""
        self._lock = threading.Lock()
        self._writer = StepWriter(self.root, self._scope_problem)

    # -- frontmatter curations
    # ---------------------------------------------------------------------------------------------------------

    def plan_pin(self, path: str, pinned: bool = True) -> Plan:
        """Pin a note (`pinned: true` in its frontmatter) or unpin it (the property is removed)."""
        if pinned:
            return self._edit_plan("pin", path, f"Pin {path}", lambda text: set_field(text, "pinned", True, path=path))
        return self._edit_plan("unpin", path, f"Unpin {path}", lambda text: remove_field(text, "pinned", path=path))

    def plan_tags(self, path: str, tags: Sequence[str]) -> Plan:
        """Replace a note's `tags` property; an empty list removes it. Tags in the body are left alone.

        Tags are given without `#` (a leading `#` is dropped), must be Obsidian tags (letters, digits, `_`, `-`,
        `/` for nesting, not only digits) and are de-duplicated case-insensitively. A legacy `tag` property (or a
        `Tags` spelled differently) is folded into `tags`, as Obsidian reads them all as one.
        """
        clean = _clean_tags(tags)

        def edit(text: str) -> str:
            for key in properties(text, path):
                if key.lower() in ("tags", "tag") and key != "tags":
                    text = remove_field(text, key, path=path)
            return set_field(text, "tags", clean, path=path) if clean else remove_field(text, "tags", path=path)

        shown = " ".join(f"#{tag}" for tag in clean)
        summary = f"Set the tags of {path} to {shown}" if clean else f"Remove the tags of {path}"
        return self._edit_plan("tag", path, summary, edit)

    def plan_type(self, path: str, note_type: str) -> Plan:
        """Set a note's `type` property (`fact`, `entity`, `experience`, `belief`, `reflection`, `recipe`, …)."""
        value = note_type.strip() if isinstance(note_type, str) else ""
        if not value or "\n" in value or "\r" in value:
            raise CurationError(f"{path}: the type must be one line of text, not {note_type!r}")
        return self._edit_plan(
            "type", path, f"Set the type of {path} to {value}", lambda text: set_field(text, "type", value, path=path)
        )

    def plan_supersede(self, path: str, newer: str) -> Plan:
        """Mark a note as replaced by a newer one (`superseded_by: "[[newer]]"`): it stays in the vault, and recall
        ranks it below its replacement."""
        newer_rel = self._note_path(newer)
        self._read(newer_rel)  # the replacement must exist now, not only when the queue was read
        link = self._link_name(newer_rel)
        return self._edit_plan(
            "supersede",
            path,
            f"Mark {self._note_path(path)} as superseded by {newer_rel}",
            lambda text: set_field(text, "superseded_by", f"[[{link}]]", path=path),
        )

    def _link_name(self, rel: str) -> str:
        """How a wikilink names a note: its title when that finds it, else its path (a name several notes share
        would resolve to another one)."""
        title = posixpath.basename(rel).removesuffix(".md")
        try:
            if self.note_named(title) == rel:
                return title
        except CompanionError:
            pass  # a name several notes share: the path names this one
        return rel.removesuffix(".md")

    def plan_relink(self, path: str, target: str, new_target: str) -> Plan:
        """Point a note's links to `target` (a link that resolves to no note) at the note `new_target` names (a
        path, title or alias), keeping each link's heading, block and alias parts as written."""
        new_target = self._link_name(self.note_named(new_target))
        rel = self._note_path(path)
        raw = self._read(rel)
        text = decode_note(rel, raw)
        wanted = target.casefold()

        def named(found: str) -> bool:
            return found.casefold() == wanted

        new, count = relink_note(
            rel, text, named, retargeting(lambda found: new_target if named(found) else None), False, f"[[{target}]]"
        )
        if not count:
            return Plan("relink", f"{rel} has no link to [[{target}]]: nothing to change", False, ())
        summary = f"Point {count} link{'s' if count > 1 else ''} to [[{target}]] in {rel} at [[{new_target}]]"
        return Plan("relink", summary, False, (PlannedWrite(rel, sha256_hex(raw), new.encode("utf-8")),))

    def _edit_plan(self, action: str, path: str, summary: str, edit: Callable[[str], str]) -> Plan:
        rel = self._note_path(path)
        raw = self._read(rel)
        text = decode_note(rel, raw)
        new = edit(text)
        if new == text:
            return Plan(action, f"{summary}: already so, nothing to change", False, ())
        return Plan(action, summary, False, (PlannedWrite(rel, sha256_hex(raw), new.encode("utf-8")),))

    # -- moving notes
    # ---------------------------------------------------------------------------------------------------------

    def plan_archive(self, path: str) -> Plan:
        """Move a note to `<archive folder>/<its path>`; refused when it is archived already or the place is taken."""
        rel = self._note_path(path)
        if rel.casefold().startswith(self.archive_folder.casefold() + "/"):
            raise CurationError(f"{rel}: already in the archive folder '{self.archive_folder}/'; nothing to do")
        raw = self._read(rel)
        destination = f"{self.archive_folder}/{rel}"
        if self._state(destination) is not None:
            raise CurationError(
                f"{destination}: already exists, so {rel} cannot be archived there; rename or remove one of them first"
            )
        writes = (PlannedWrite(destination, None, raw, like=rel), PlannedWrite(rel, sha256_hex(raw), None))
        return Plan("archive", f"Archive {rel}: move it to {destination}", True, writes)

    def trash_option(self) -> str:
        """The vault's `trashOption` from `.obsidian/app.json`: `system` (also when unset or unreadable), `local`
        or `none`."""
        try:
            data = json.loads((self.root / ".obsidian" / "app.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "system"
        option = data.get("trashOption") if isinstance(data, dict) else None
        return option if option in _TRASH_OPTIONS else "system"

    def plan_delete(self, path: str) -> Plan:
        """Delete a note the way the vault's Obsidian settings say (`trashOption` in `.obsidian/app.json`).

        `local` moves it to `.trash/<file name>` (` 1`, ` 2`… added before `.md` when the name is taken). `system`,
        Obsidian's default, would move it to the operating system's trash; the companion never writes outside the
        vault, so it uses `.trash/` as well. `none` removes the file for good, though undo can still restore it
        from the audit log's copy.
        """
        rel = self._note_path(path)
        raw = self._read(rel)
        writes, will, was = self._removal(rel, raw)
        return Plan("delete", f"Delete {rel}: it {will}", True, writes, done=f"Deleted {rel}: it {was}")

    def _removal(self, rel: str, raw: bytes) -> tuple[tuple[PlannedWrite, ...], str, str]:
        """The writes that delete a note as the vault's trash setting says, and where it goes: said before (`will
        be moved to ...`, for the confirmation) and after (`was moved to ...`)."""
        removal = PlannedWrite(rel, sha256_hex(raw), None)
        if self.trash_option() == "none":
            why = "(the vault's trash setting is 'none'; undo can still restore it)"
            return (removal,), f"will be removed for good {why}", f"was removed for good {why}"
        destination = self._trash_path(rel)
        where = f"{destination} (Obsidian's trash)"
        writes = (PlannedWrite(destination, None, raw, like=rel), removal)
        return writes, f"will be moved to {where}", f"was moved to {where}"

    def _trash_path(self, rel: str) -> str:
        name = rel.rsplit("/", 1)[-1]
        stem, suffix = (name[:-3], ".md") if name.endswith(".md") else (name, "")
        candidate = f"{TRASH_FOLDER}/{name}"
        number = 0
        while self._state(candidate) is not None:
            number += 1
            # A long name with a number added could pass the file system's limit: the stem gives way.
            candidate = f"{TRASH_FOLDER}/{fit_name(stem, f' {number}{suffix}')}"
        return candidate

    # -- merging
    # ---------------------------------------------------------------------------------------------------------

    def plan_merge(self, keep: str, drop: str) -> Plan:
        """Merge note `drop` into note `keep`, then delete `drop` as `plan_delete` would.

        `keep` gets `drop`'s body (without its frontmatter) under `## Merged from <drop's name>`; its `tags` become
        the union of both (keep's first) and its `aliases` gain drop's name and drop's aliases, so links through
        them still resolve. Every wikilink naming `drop` (`[[Drop]]`, `[[Drop|text]]`, `[[Drop#Heading]]`,
        `![[Drop]]`, `[[folder/Drop]]`, in any case, in the body or a property) is rewritten to name `keep` (its
        file name, or its path when another note shares the name), the heading and alias parts kept as written.
        """
        keep = self._note_path(keep)
        drop = self._note_path(drop)
        if keep == drop:
            raise CurationError(f"{keep}: cannot merge a note into itself; choose two different notes")
        keep_raw, drop_raw = self._read(keep), self._read(drop)
        if os.path.samefile(self._absolute(keep), self._absolute(drop)):
            # Two spellings of one file (a case-insensitive file system).
            raise CurationError(f"{keep} and {drop} are the same file; a note cannot be merged into itself")
        edits = merge_edits(self.root, keep, drop, keep_raw, drop_raw, self._read)
        removal, will, was = self._removal(drop, drop_raw)
        writes = (edits.keep_write, *removal, *edits.relinked)
        return Plan("merge", edits.summary(will), True, writes, done=edits.summary(was, done=True))

    # -- applying and undoing
    # ---------------------------------------------------------------------------------------------------------

    def apply(self, plan: Plan, *, details: Sequence[tuple[str, str]] = ()) -> AuditEntry:
        """Write a plan and record it; refused (nothing written) in read-only mode or when a file changed since.

        The audit log keeps every file's bytes before and after first; then new and changed files are written
        atomically (temp file, fsync, rename, fsync of the folder) and only then are notes moved (renamed, so an edit
        that reaches a note as it moves goes with it) or removed, so a crash part way leaves a note in two places
        rather than in none. Every file is checked again as it is written; a file found changed, or a failed write,
        stops the curation, and what was already written is put back. One curation at a time per vault, across
        threads and processes (the app and the command line).
        """
        self._refuse_read_only(plan.action)
        with self._exclusive():
            return self._apply(plan, details)

    def _apply(self, plan: Plan, details: Sequence[tuple[str, str]] = ()) -> AuditEntry:
        if not plan.writes:
            raise CurationError(f"nothing to change: {plan.summary}")
        paths = [write.path for write in plan.writes]
        if len(set(paths)) != len(paths):
            raise CurationError(f"the plan '{plan.summary}' writes one file twice; make the plan again")
        current: dict[str, Snapshot] = {}
        for write in plan.writes:
            current[write.path] = self._snapshot(write.path)
            found = _digest(_bytes(current[write.path]))
            if found != write.expected:
                raise CurationError(
                    f"{write.path}: {_changed_since(write.expected, found)} since the plan was made, so "
                    f"'{plan.summary}' was not applied; nothing was written. Look at the note again and retry"
                )
        changes: list[FileChange] = []
        try:
            for write in plan.writes:
                before = current[write.path]
                changes.append(
                    FileChange(
                        path=write.path,
                        before=None if before is None else self.audit.store_blob(before[0]),
                        after=None if write.content is None else self.audit.store_blob(write.content),
                        mode=None if before is None else before[1],
                    )
                )
        except OSError as exc:
            raise CurationError(
                f"{self.audit.blob_folder}: cannot save the copies undo needs ({exc.strerror or exc}); "
                "nothing was written in the vault"
            ) from exc
        steps = [
            Step(write.path, write.content, self._mode_like(write, current), current[write.path])
            for write in plan.writes
        ]
        return self._write_and_record(steps, lambda: (plan.action, plan.outcome, changes, None), details, plan.summary)

    def undo(self, entry_id: str | None = None) -> AuditEntry:
        """Put back every file an entry changed (by default the newest one not yet undone) and record the undo.

        Refused, with nothing written, in read-only mode, for an entry already undone or that is itself an undo, and
        when any of its files changed after it (undoing would lose that later edit).
        """
        self._refuse_read_only("undo")
        with self._exclusive():
            return self._undo(entry_id)

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold this curator's thread lock and an exclusive `flock` on the vault's folder together.

        Without them two curations of one note (a quick `*` then `u`, or the app and the command line at once) both
        pass the digest check and the second silently undoes the first's write. The folder itself is locked, so no
        lock file is created anywhere (a refused curation leaves no trace) and every curator of the vault agrees.
        """
        with self._lock, folder_lock(self.root):
            yield

    def _undo(self, entry_id: str | None) -> AuditEntry:
        if entry_id is None:
            entry = self.audit.last_undoable()
            if entry is None:
                raise NothingToUndoError(f"{self.audit.nothing_to_undo()} (the audit log is {self.audit.log_path})")
        else:
            found = self.audit.find(entry_id)
            if found is None:
                raise NotFoundError(f"{self.audit.log_path}: no entry '{entry_id}'; list the audit log to find its id")
            entry = found
        if entry.action == "undo" or entry.undoes is not None:
            raise CurationError(f"'{entry.summary}' ({entry.id}) is itself an undo and cannot be undone")
        if entry.id in self.audit.undone_ids():
            raise CurationError(f"'{entry.summary}' ({entry.id}) was already undone")
        current: dict[str, Snapshot] = {}
        for change in entry.changes:
            current[change.path] = self._snapshot(change.path)
            if _digest(_bytes(current[change.path])) != change.after:
                raise CurationError(
                    f"{change.path}: changed after '{entry.summary}', so undoing it would lose that later edit; "
                    "nothing was written. Undo it by hand if you still want to"
                )
        # A file brought back gets its permission bits again; one still there keeps its own.
        restore = [
            Step(
                c.path,
                None if c.before is None else self.audit.blob(c.before),
                c.mode if current[c.path] is None else None,
                current[c.path],
            )
            for c in entry.changes
        ]
        reverse = [
            FileChange(path=c.path, before=c.after, after=c.before, mode=_mode(current[c.path])) for c in entry.changes
        ]
        done = self._write_and_record(restore, lambda: ("undo", f"Undo: {entry.summary}", reverse, entry.id))
        self._writer.remove_folders(entry.folders)
        return done

    def _refuse_read_only(self, action: str) -> None:
        if self.read_only:
            raise CurationError(
                f"{self.root}: read-only mode, so '{action}' was refused and nothing was written; "
                "start the companion without --read-only to curate"
            )

    def _write_and_record(
        self,
        steps: Sequence[Step],
        entry: Callable[[], tuple[str, str, list[FileChange], str | None]],
        details: Sequence[tuple[str, str]] = (),
        what: str = "",
    ) -> AuditEntry:
        """Write the steps (see `StepWriter.write_all`), then record `entry()` (action, summary, changes, undoes)
        with the folders the writes created; `what` names the curation in a refusal (by default the summary).

        When a write or the record fails, or a file changed while being written, what was already written is put back
        (and the folders made for it are removed), so the vault never holds a change the audit log does not know
        about.
        """
        action, summary, changes, undoes = entry()
        done, created = self._writer.write_all(steps, what or summary)
        try:
            return self.audit.record(
                source=self.source,
                action=action,
                summary=summary,
                changes=changes,
                undoes=undoes,
                details=details,
                folders=created,
            )
        except OSError as exc:
            raise CurationError(
                f"{self.audit.log_path}: cannot record the change ({exc.strerror or exc}); "
                f"{self._writer.roll_back(done, created)}"
            ) from exc

    # -- paths and reads
    # ---------------------------------------------------------------------------------------------------------

    def note_named(self, name: str) -> str:
        """The vault path of the note a person names: its path (`.md` optional, any case), the end of its path, its
        title (the file name) or one of its aliases, resolved as Obsidian resolves a link (see `NoteNames.find`).

        `AmbiguousNoteError` names the notes when several share the name; `NotFoundError` when none has it. A path
        into a hidden folder is returned as written, for the plan to refuse with the reason.
        """
        text = name.strip() if isinstance(name, str) else ""
        if any(part.startswith(".") and part not in (".", "..") for part in text.replace("\\", "/").split("/")):
            return text if text.lower().endswith(".md") else f"{text}.md"
        vault = ObsidianVault(self.root, CompanionConfig())
        files = vault.scan_all()

        def aliases() -> dict[str, tuple[str, ...]]:
            return {rel: note.aliases for rel, note in vault.read_all_notes(files).items() if note.aliases}

        return NoteNames(files, aliases).find(text)

    def _note_path(self, path: str) -> str:
        """A vault path that may be curated as a note: relative, normalised, visible, ending in `.md`."""
        if not isinstance(path, str) or not valid_name(path):
            raise CurationError(f"{path!r}: not a usable vault path")
        reason = _unsafe_reason(path)
        if reason is not None:
            raise CurationError(f"{path!r} {reason}")
        if posixpath.normpath(path) != path or "\\" in path:
            raise CurationError(f"{path!r}: not a plain vault path; write it as Obsidian shows it ('folder/Note.md')")
        if any(part.startswith(".") for part in path.split("/")):
            raise CurationError(f"{path}: in a hidden folder or file, which Obsidian does not show as a note")
        if not path.endswith(".md"):
            raise CurationError(f"{path}: not a note; only Markdown notes ending in '.md' can be curated")
        return path

    def _absolute(self, rel: str) -> Path:
        """The absolute path of a vault path, refused when it could lead outside the vault or is a symbolic link."""
        reason = _unsafe_reason(rel)
        if reason is not None:
            raise CurationError(f"{rel!r} {reason}")
        problem = self._scope_problem(rel)
        if problem is not None:
            raise CurationError(f"{rel}: {problem}; nothing was written")
        return self.root / rel

    def _scope_problem(self, rel: str) -> str | None:
        """Why a vault path may not be read or written as it is now (outside the vault, a link), or None."""
        reason = _unsafe_reason(rel)
        if reason is not None:
            return reason
        candidate = self.root / rel
        try:
            real = os.path.realpath(candidate.parent)
            link = candidate.is_symlink()
        except OSError as exc:  # a link on the way vanished while it was followed, a name too long
            return f"cannot be checked ({exc.strerror or exc})"
        if not _inside(real, str(self.root)):
            return "leads outside the vault through a symbolic link"
        if link:
            return "is a symbolic link; curate the file it points to instead"
        return None

    def current(self, rel: str) -> bytes | None:
        """A vault file's bytes as they are now, or None when there is none, read the way a curation reads it (never
        through a symbolic link); `CurationError` when the path may not be curated or cannot be read."""
        return _bytes(self._snapshot(rel))

    def _snapshot(self, rel: str) -> Snapshot:
        """A file's bytes and permission bits as they are now, or None when it does not exist."""
        self._absolute(rel)
        folder, _, name = rel.rpartition("/")
        try:
            with HeldFolder.inside(self.root, folder) as held:
                try:
                    return held.read(name)
                except LinkRefused as exc:
                    raise CurationError(
                        f"{rel}: is a symbolic link; curate the file it points to instead (nothing was written)"
                    ) from exc
        except FileNotFoundError:
            return None
        except LinkRefused as exc:
            raise CurationError(
                f"{rel}: the folder '{exc.filename}' on its way is a symbolic link, which curations never follow (it "
                "could lead outside the vault); curate the note in its real folder. Nothing was written"
            ) from exc
        except IsADirectoryError as exc:
            raise CurationError(f"{rel}: is not a regular file (a folder?); nothing was written") from exc
        except OSError as exc:
            raise CurationError(f"{rel}: cannot be read ({exc.strerror or exc}); nothing was written") from exc

    def _mode_like(self, write: PlannedWrite, current: Mapping[str, Snapshot]) -> int | None:
        """The permission bits a planned file is written with: those of the file it moves (`like`), else the usual
        (an existing file keeps its own)."""
        if write.like is None or write.content is None:
            return None
        source = current[write.like] if write.like in current else self._snapshot(write.like)
        return _mode(source)

    def _state(self, rel: str) -> str | None:
        """The digest of a file's bytes, or None when it does not exist."""
        return _digest(self.current(rel))

    def _read(self, rel: str) -> bytes:
        raw = self.current(rel)
        if raw is None:
            raise CurationError(f"{rel}: no such note in the vault; it may have been moved or deleted, look again")
        return raw


def obsidian_uri(vault_root: Path, path: str) -> str:
    """The `obsidian://open` URI that opens a note in Obsidian (vault by folder name, file without `.md`)."""
    # The folder name as the user opened it (a symbolic link's own name, not its target's).
    name = Path(os.path.abspath(vault_root.expanduser())).name
    file = path[:-3] if path.endswith(".md") else path
    return f"obsidian://open?vault={quote(name, safe='')}&file={quote(file, safe='')}"


# -- helpers
# -------------------------------------------------------------------------------------------------------------


def _digest(content: bytes | None) -> str | None:
    return None if content is None else sha256_hex(content)


def _bytes(snapshot: Snapshot) -> bytes | None:
    return None if snapshot is None else snapshot[0]


def _mode(snapshot: Snapshot) -> int | None:
    return None if snapshot is None else snapshot[1]


def _changed_since(expected: str | None, found: str | None) -> str:
    if expected is None:
        return "appeared"
    if found is None:
        return "was moved or deleted"
    return "changed"


def _clean_tags(tags: Sequence[str]) -> list[str]:
    if isinstance(tags, str):
        raise CurationError(f"tags must be a list of tags, not the single string {tags!r}")
    clean: list[str] = []
    for raw in tags:
        tag = raw.strip().removeprefix("#") if isinstance(raw, str) else ""
        if not tag:
            raise CurationError(f"{raw!r} is not a tag: a tag cannot be empty")
        if not _TAG.fullmatch(tag):
            raise CurationError(
                f"'{raw}' is not an Obsidian tag: use letters, digits, '_', '-' and '/' only (no spaces)"
            )
        if all(ch.isdigit() or ch in "/-" for ch in tag) or tag.startswith("/") or tag.endswith("/") or "//" in tag:
            raise CurationError(f"'{raw}' is not an Obsidian tag: it needs a letter and no empty nesting level")
        if tag.casefold() not in {t.casefold() for t in clean}:
            clean.append(tag)
    return clean
