"""Curating the vault: pin, retag, retype, archive, delete and merge notes, each one undoable.

Every curation is planned first and applied second. Planning only reads: it returns a `Plan` with a summary for a
confirmation and the exact bytes each file will get, together with the digest of the bytes it was computed from.
`Curator.apply` refuses a plan when any of those files changed since (Obsidian saved, the agent wrote), so a
confirmation never applies to a note the user has not seen. Before anything is written, the audit log keeps a copy of
every file's bytes before and after, which is what `Curator.undo` restores from. Each file is checked again as it is
written, through the file itself (`companion.curation.applying`): a note edited while a curation runs stops it, and
what was already written is put back.

Every read (`companion.curation.reading`) and write of a note goes through folders held open by descriptor
(`HeldFolder`), opened one name at a time without following a symbolic link: a folder swapped for a link while a
curation runs can make it fail, never make it read or write outside the vault. A note keeps its permission bits wherever
it goes (archive, the trash) and when an undo brings it back, and an undo removes the folders its curation created once
they are empty again.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from companion.curation.applying import Step, StepWriter
from companion.curation.merge import merge_edits, relink_note
from companion.curation.plans import Plan, PlannedWrite, decode_note
from companion.curation.reading import TRASH_FOLDER, VaultFiles, note_path, snapshot_mode
from companion.curation.relink import retargeting
from companion.errors import CurationError, NotFoundError, NothingToUndoError
from companion.folderlock import folder_lock
from companion.vault.audit import AuditEntry, AuditLog, FileChange, sha256_hex
from companion.vault.frontmatter_edit import properties, remove_field, set_field
from companion.vault.reader import _unsafe_reason

__all__ = ["TRASH_FOLDER", "CurationError", "Curator", "Plan", "PlannedWrite", "obsidian_uri"]

_TAG = re.compile(r"[\w/-]+")


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
        self._files = VaultFiles(self.root)
        self._writer = StepWriter(self.root, self._files.scope_problem)

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
        newer_rel = note_path(newer)
        self._files.read(newer_rel)  # the replacement must exist now, not only when the queue was read
        link = self._files.link_name(newer_rel)
        return self._edit_plan(
            "supersede",
            path,
            f"Mark {note_path(path)} as superseded by {newer_rel}",
            lambda text: set_field(text, "superseded_by", f"[[{link}]]", path=path),
        )

    def plan_relink(self, path: str, target: str, new_target: str) -> Plan:
        """Point a note's links to `target` (a link that resolves to no note) at the note `new_target` names (a
        path, title or alias), keeping each link's heading, block and alias parts as written."""
        new_target = self._files.link_name(self.note_named(new_target))
        rel = note_path(path)
        raw = self._files.read(rel)
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
        rel = note_path(path)
        raw = self._files.read(rel)
        text = decode_note(rel, raw)
        new = edit(text)
        if new == text:
            return Plan(action, f"{summary}: already so, nothing to change", False, ())
        return Plan(action, summary, False, (PlannedWrite(rel, sha256_hex(raw), new.encode("utf-8")),))

    # -- moving notes
    # ---------------------------------------------------------------------------------------------------------

    def plan_archive(self, path: str) -> Plan:
        """Move a note to `<archive folder>/<its path>`; refused when it is archived already or the place is taken."""
        rel = note_path(path)
        if rel.casefold().startswith(self.archive_folder.casefold() + "/"):
            raise CurationError(f"{rel}: already in the archive folder '{self.archive_folder}/'; nothing to do")
        raw = self._files.read(rel)
        destination = f"{self.archive_folder}/{rel}"
        if self._files.state(destination) is not None:
            raise CurationError(
                f"{destination}: already exists, so {rel} cannot be archived there; rename or remove one of them first"
            )
        writes = (PlannedWrite(destination, None, raw, like=rel), PlannedWrite(rel, sha256_hex(raw), None))
        return Plan("archive", f"Archive {rel}: move it to {destination}", True, writes)

    def trash_option(self) -> str:
        """The vault's `trashOption` from `.obsidian/app.json`: `system` (also when unset or unreadable), `local`
        or `none`."""
        return self._files.trash_option()

    def plan_delete(self, path: str) -> Plan:
        """Delete a note the way the vault's Obsidian settings say (`trashOption` in `.obsidian/app.json`).

        `local` moves it to `.trash/<file name>` (` 1`, ` 2`… added before `.md` when the name is taken). `system`,
        Obsidian's default, would move it to the operating system's trash; the companion never writes outside the
        vault, so it uses `.trash/` as well. `none` removes the file for good, though undo can still restore it
        from the audit log's copy.
        """
        rel = note_path(path)
        raw = self._files.read(rel)
        writes, will, was = self._removal(rel, raw)
        return Plan("delete", f"Delete {rel}: it {will}", True, writes, done=f"Deleted {rel}: it {was}")

    def _removal(self, rel: str, raw: bytes) -> tuple[tuple[PlannedWrite, ...], str, str]:
        """The writes that delete a note as the vault's trash setting says, and where it goes: said before (`will
        be moved to ...`, for the confirmation) and after (`was moved to ...`)."""
        removal = PlannedWrite(rel, sha256_hex(raw), None)
        if self.trash_option() == "none":
            why = "(the vault's trash setting is 'none'; undo can still restore it)"
            return (removal,), f"will be removed for good {why}", f"was removed for good {why}"
        destination = self._files.trash_path(rel)
        where = f"{destination} (Obsidian's trash)"
        writes = (PlannedWrite(destination, None, raw, like=rel), removal)
        return writes, f"will be moved to {where}", f"was moved to {where}"

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
        keep = note_path(keep)
        drop = note_path(drop)
        if keep == drop:
            raise CurationError(f"{keep}: cannot merge a note into itself; choose two different notes")
        keep_raw, drop_raw = self._files.read(keep), self._files.read(drop)
        if os.path.samefile(self._files.absolute(keep), self._files.absolute(drop)):
            # Two spellings of one file (a case-insensitive file system).
            raise CurationError(f"{keep} and {drop} are the same file; a note cannot be merged into itself")
        edits = merge_edits(self.root, keep, drop, keep_raw, drop_raw, self._files.read)
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
        current = self._files.as_planned(plan)
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
            Step(write.path, write.content, self._files.mode_like(write, current), current[write.path])
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
        current = self._files.as_recorded(entry)
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
            FileChange(path=c.path, before=c.after, after=c.before, mode=snapshot_mode(current[c.path]))
            for c in entry.changes
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

    # -- reads
    # ---------------------------------------------------------------------------------------------------------

    def note_named(self, name: str) -> str:
        """The vault path of the note a person names: its path (`.md` optional, any case), the end of its path, its
        title (the file name) or one of its aliases, resolved as Obsidian resolves a link (see `NoteNames.find`).

        `AmbiguousNoteError` names the notes when several share the name; `NotFoundError` when none has it. A path
        into a hidden folder is returned as written, for the plan to refuse with the reason.
        """
        return self._files.note_named(name)

    def current(self, rel: str) -> bytes | None:
        """A vault file's bytes as they are now, or None when there is none, read the way a curation reads it (never
        through a symbolic link); `CurationError` when the path may not be curated or cannot be read."""
        return self._files.current(rel)


def obsidian_uri(vault_root: Path, path: str) -> str:
    """The `obsidian://open` URI that opens a note in Obsidian (vault by folder name, file without `.md`)."""
    # The folder name as the user opened it (a symbolic link's own name, not its target's).
    name = Path(os.path.abspath(vault_root.expanduser())).name
    file = path[:-3] if path.endswith(".md") else path
    return f"obsidian://open?vault={quote(name, safe='')}&file={quote(file, safe='')}"


# -- helpers
# -------------------------------------------------------------------------------------------------------------


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
