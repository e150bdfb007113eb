"""Merging one note into another: the kept note's new text, and every link to the dropped note rewritten.

Planning only reads. What `merge_edits` returns is applied (and undone) like any other plan by the `Curator`, which
also decides where the dropped note goes (Obsidian's trash setting).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.config import CompanionConfig
from companion.curation.plans import PlannedWrite, decode_note, parse_for_edit
from companion.curation.relink import rewrite_lines, rewrite_string
from companion.errors import CurationError
from companion.vault.audit import sha256_hex
from companion.vault.frontmatter_edit import line_ending, properties, remove_field, set_field, split_body
from companion.vault.links import frontmatter_tags, merge_tags
from companion.vault.notes import FileStat, Note
from companion.vault.parse import title_of
from companion.vault.reader import ObsidianVault
from companion.vault.resolve import LinkResolver


@dataclass(frozen=True)
class MergeEdits:
    """The writes of a merge but the dropped note's removal, and what they amount to."""

    keep: str
    """The note that stays."""
    drop: str
    """The note merged into it."""
    keep_write: PlannedWrite
    """The kept note's new text."""
    relinked: tuple[PlannedWrite, ...]
    """Other notes whose links to the dropped note now name the kept one."""
    keep_target: str
    """How links now name the kept note (its file name, or its path when another note shares the name)."""
    added_tags: tuple[str, ...]
    """Tags of the dropped note that the kept one gains."""
    added_aliases: tuple[str, ...]
    """Aliases the kept one gains (the dropped note's name and aliases)."""
    link_count: int
    """Links rewritten, in every note."""
    relinked_notes: int
    """Notes whose links were rewritten (the kept note included)."""
    unread: int
    """Notes that could not be read, so were not checked for links."""

    def summary(self, where: str) -> str:
        """One line for the confirmation and the audit log; `where` says where the dropped note goes."""
        drop_stem = title_of(self.drop)
        parts = [f"Merge {self.drop} into {self.keep}: its text is appended under '## Merged from {drop_stem}'"]
        if self.added_tags:
            parts.append(f"tags {' '.join('#' + tag for tag in self.added_tags)} are added")
        if self.added_aliases:
            parts.append(f"aliases {', '.join(self.added_aliases)} are added")
        if self.link_count:
            links = f"{self.link_count} link{'s' if self.link_count != 1 else ''}"
            notes = f"{self.relinked_notes} note{'s' if self.relinked_notes != 1 else ''}"
            parts.append(f"{links} in {notes} now point to [[{self.keep_target}]]")
        parts.append(f"{self.drop} is {where}")
        if self.unread:
            parts.append(f"{self.unread} unreadable note{'s' if self.unread != 1 else ''} not checked for links")
        return "; ".join(parts)


@dataclass(frozen=True)
class _Relinker:
    """Which links name the dropped note (resolved as the vault is now), and how they are rewritten so that they
    lead to the kept note once the dropped one is gone."""

    keep: str
    drop: str
    keep_target: str
    before: LinkResolver
    after: LinkResolver

    def names_drop(self, target: str, source: str) -> bool:
        # A link reaching `drop` through one of its aliases is left alone: `keep` takes over the aliases. A link
        # already written as `keep_target` needs no change (keep and drop can share a name).
        written = _link_path(target)
        name = written.rsplit("/", 1)[-1]
        return (
            self.before.resolve(target, source) == self.drop
            and name == title_of(self.drop).casefold()
            and written != self.keep_target.casefold()
        )

    def relink(self, rel: str, text: str, *, links_from: str, body_only: bool = False) -> tuple[str, int]:
        # `links_from` is where the rewritten links will stand: drop's body ends up in keep.
        if self.after.resolve(self.keep_target, links_from) != self.keep:
            raise CurationError(
                f"{rel}: a link to [[{self.keep_target}]] would not lead to {self.keep} from this note; "
                "rename one of the notes sharing that name first; nothing was written"
            )
        target = self.keep_target
        return _relink(rel, text, lambda t: target if t.strip() and self.names_drop(t, rel) else None, body_only)


def merge_edits(
    root: Path, keep: str, drop: str, keep_raw: bytes, drop_raw: bytes, read: Callable[[str], bytes]
) -> MergeEdits:
    """The writes that merge `drop` into `keep` (both vault-relative, read as `keep_raw` and `drop_raw`), `read`
    giving any other note's bytes; see `Curator.plan_merge`."""
    keep_note, drop_note = parse_for_edit(keep, keep_raw), parse_for_edit(drop, drop_raw)
    vault = ObsidianVault(root, CompanionConfig())
    files = vault.scan_all()
    notes = vault.read_all_notes(files)
    unread = {path for path, _ in vault.problems if path.endswith(".md")}
    new_aliases = _merged_aliases(keep_note, drop_note)
    relinker = _relinker(files, notes, keep, drop, new_aliases)

    relinked: list[PlannedWrite] = []
    link_count = 0
    for rel in sorted(notes):
        if rel in (keep, drop) or not any(relinker.names_drop(link.target, rel) for link in notes[rel].links):
            continue
        raw = read(rel)
        new_text, count = relinker.relink(rel, decode_note(rel, raw), links_from=rel)
        if count:
            relinked.append(PlannedWrite(rel, sha256_hex(raw), new_text.encode("utf-8")))
            link_count += count

    keep_text, own = relinker.relink(keep, decode_note(keep, keep_raw), links_from=keep)
    drop_text, _ = relinker.relink(drop, decode_note(drop, drop_raw), links_from=keep, body_only=True)
    keep_text, added_tags = _union_tags(keep, keep_text, keep_note, drop_note)
    keep_text, added_aliases = _set_aliases(keep, keep_text, keep_note, new_aliases)
    keep_text = _append_section(keep_text, f"## Merged from {title_of(drop)}", split_body(drop_text))
    return MergeEdits(
        keep=keep,
        drop=drop,
        keep_write=PlannedWrite(keep, sha256_hex(keep_raw), keep_text.encode("utf-8")),
        relinked=tuple(relinked),
        keep_target=relinker.keep_target,
        added_tags=tuple(added_tags),
        added_aliases=tuple(added_aliases),
        link_count=link_count + own,
        relinked_notes=len(relinked) + (1 if own else 0),
        unread=len(unread),
    )


def _relinker(
    files: dict[str, FileStat], notes: dict[str, Note], keep: str, drop: str, new_aliases: tuple[str, ...]
) -> _Relinker:
    """Link resolution before the merge and after it (drop gone, keep with its new aliases)."""
    aliases = {rel: note.aliases for rel, note in notes.items() if note.aliases}
    before = LinkResolver(files, aliases)
    after_aliases = {rel: names for rel, names in aliases.items() if rel != drop}
    after_aliases[keep] = new_aliases
    after = LinkResolver([rel for rel in files if rel != drop], after_aliases)
    keep_stem = title_of(keep)
    same_name = [
        rel
        for rel in files
        if rel != drop and rel.lower().endswith(".md") and title_of(rel).casefold() == keep_stem.casefold()
    ]
    keep_target = keep_stem if len(same_name) <= 1 else keep[:-3]
    return _Relinker(keep, drop, keep_target, before, after)


def _relink(rel: str, text: str, retarget: Callable[[str], str | None], body_only: bool) -> tuple[str, int]:
    """Retarget the links of one note's text (body lines, then property values) and check the result parses back."""
    note = parse_for_edit(rel, text.encode("utf-8"))
    lines = {link.line for link in note.links if link.property is None and retarget(link.target) is not None}
    new_text, count = rewrite_lines(text, lines, retarget)
    if not body_only:
        named = {link.property for link in note.links if link.property and retarget(link.target)}
        # A nested value is named by its dotted path; its top-level property is the key that path starts with.
        keys = {key for key in note.frontmatter if any(n == key or n.startswith(f"{key}.") for n in named)}
        for key in sorted(keys):
            value = note.frontmatter.get(key)
            new_value: Any
            if isinstance(value, str):
                new_value, changed = rewrite_string(value, retarget)
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                pairs = [rewrite_string(item, retarget) for item in value]
                new_value, changed = [item for item, _ in pairs], sum(n for _, n in pairs)
            else:
                raise CurationError(
                    f"{rel}: the property '{key}' links to the merged note inside a nested value, which the companion "
                    "cannot rewrite safely; change that link in Obsidian first; nothing was written"
                )
            new_text = set_field(new_text, key, new_value, path=rel)
            count += changed
    after = parse_for_edit(rel, new_text.encode("utf-8"))
    left = [link for link in after.links if (link.property is None or not body_only) and retarget(link.target)]
    if left or len(after.links) != len(note.links):
        raise CurationError(
            f"{rel}: its links to the merged note could not be rewritten safely (line {left[0].line + 1 if left else 1}"
            "); change them in Obsidian first; nothing was written"
        )
    return new_text, count


def _merged_aliases(keep: Note, drop: Note) -> tuple[str, ...]:
    """Keep's aliases as they are, then drop's name and aliases that keep's name or aliases do not already cover
    (compared in any case, as Obsidian resolves links)."""
    seen = {title_of(keep.path).casefold(), *(alias.casefold() for alias in keep.aliases)}
    merged = list(keep.aliases)
    for alias in (title_of(drop.path), *drop.aliases):
        if alias.casefold() not in seen:
            seen.add(alias.casefold())
            merged.append(alias)
    return tuple(merged)


def _link_path(target: str) -> str:
    """A link target compared the way Obsidian matches it: without `.md`, `/` as separator, in any case."""
    written = target.strip().replace("\\", "/").lstrip("/")
    return (written[:-3] if written.lower().endswith(".md") else written).casefold()


def _union_tags(rel: str, text: str, keep: Note, drop: Note) -> tuple[str, list[str]]:
    """Keep's text with the `tags` property holding keep's tags then drop's, and the tags that were added."""
    keep_tags = list(merge_tags(frontmatter_tags(keep.frontmatter)))
    union = list(merge_tags(keep_tags, frontmatter_tags(drop.frontmatter)))
    added = union[len(keep_tags) :]
    if not added:
        return text, []
    for key in properties(text, rel):
        if key.lower() in ("tags", "tag") and key != "tags":
            text = remove_field(text, key, path=rel)
    return set_field(text, "tags", union, path=rel), added


def _set_aliases(rel: str, text: str, keep: Note, aliases: tuple[str, ...]) -> tuple[str, list[str]]:
    """Keep's text with its `aliases` property set to `aliases` (when they differ), and the aliases added."""
    added = [alias for alias in aliases if alias not in keep.aliases]
    if not added:
        return text, []
    for key in properties(text, rel):
        if key.lower() in ("aliases", "alias") and key != "aliases":
            text = remove_field(text, key, path=rel)
    return set_field(text, "aliases", list(aliases), path=rel), added


def _append_section(text: str, heading: str, body: str) -> str:
    """The text with a blank line, `heading`, a blank line and `body` appended, in the text's line endings."""
    newline = line_ending(text)
    body = body.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip("\n").rstrip()
    if newline != "\n":
        body = body.replace("\n", newline)
    if text and not text.endswith(("\n", "\r")):
        text += newline
    if text.strip() and not text.endswith(newline * 2):
        text += newline
    section = f"{heading}{newline}"
    if body:
        section += f"{newline}{body}{newline}"
    return text + section
