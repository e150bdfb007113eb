"""Merging one note into another: the kept note's new text, and every link to the dropped note rewritten.

Planning only reads. What `merge_edits` returns is applied (and undone) like any other plan by the `Curator`, which
also decides where the dropped note goes (Obsidian's trash setting). A note without a link to the dropped note is not
written at all, and in a note that is, only the links change: a property is rewritten in place, so its quoting,
layout and comments stay as written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.config import CompanionConfig
from companion.curation.nesting import leading_title, nest
from companion.curation.plans import PlannedWrite, decode_note, parse_for_edit
from companion.curation.relink import Replace, alias_part, replace_lines, replace_string, with_target
from companion.errors import CurationError
from companion.vault.audit import sha256_hex
from companion.vault.frontmatter_edit import (
    line_ending,
    properties,
    remove_field,
    rewrite_field,
    set_field,
    split_body,
)
from companion.vault.links import frontmatter_tags, merge_tags, parse_link_text
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
    inside: int = 0
    """Links in the kept note's own text that named the dropped note and now lead to the merged section."""

    def summary(self, where: str, *, done: bool = False) -> str:
        """One line for the confirmation (`done` False: what will happen) or the audit log (`done`: what did);
        `where` says where the dropped note goes (`will be moved to .trash/...`, `was moved to ...`).

        What a merge does, as the line sums it up: the dropped note's body is appended to the kept note under
        `## Merged from <its name>`, its headings two levels deeper (H1 becomes H3, ... at most H6) so they sit under
        that heading, and without its opening H1 when that only repeats its name. Its tags and its name and aliases
        are added to the kept note's. Links to it from other notes now name the kept note. A link to it inside the
        kept note (in the kept note's own text, or in the text merged in) would become a link of the note to itself;
        it points to the merged section instead, as `[[#Merged from <name>|<text shown before>]]`, so it still reads
        as it did and still leads to that text (a link to one of its headings or blocks leads there: `[[#Heading]]`).
        An embed of it there (`![[Drop]]`) becomes such a link, since its text now stands in the note.
        """
        drop_stem = title_of(self.drop)
        verb = ("were", "was") if done else ("are", "is")
        merge = "Merged" if done else "Merge"
        parts = [
            f"{merge} {self.drop} into {self.keep}: its text {verb[1]} appended under '## Merged from {drop_stem}'"
        ]
        if self.added_tags:
            parts.append(f"tags {' '.join('#' + tag for tag in self.added_tags)} {verb[0]} added")
        if self.added_aliases:
            parts.append(f"aliases {', '.join(self.added_aliases)} {verb[0]} added")
        if self.link_count:
            links = f"{self.link_count} link{'s' if self.link_count != 1 else ''}"
            notes = f"{self.relinked_notes} note{'s' if self.relinked_notes != 1 else ''}"
            inside = " (inside it, to the merged section)" if self.inside else ""
            parts.append(f"{links} in {notes} now point to [[{self.keep_target}]]{inside}")
        parts.append(f"{self.drop} {where}")
        if self.unread:
            parts.append(f"{self.unread} unreadable note{'s' if self.unread != 1 else ''} not checked for links")
        return "; ".join(parts)


@dataclass(frozen=True)
class _Relinker:
    """Which links name the dropped note (resolved as the vault is now), and how they are rewritten so that they
    lead to the kept note once the dropped one is gone, or within the kept note to the merged section."""

    keep: str
    drop: str
    keep_target: str
    before: LinkResolver
    after: LinkResolver
    section: str
    """The heading the dropped note's text lands under, without its `##`."""
    title_dropped: bool
    """The dropped note's opening H1 (its name) is not carried over: links to that heading lead to the section."""

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
        if links_from == self.keep:
            # Through an alias too: keep takes the aliases over, so any link to drop here would lead to keep itself.
            def inside(target: str) -> bool:
                return bool(target.strip()) and self.before.resolve(target, rel) == self.drop

            return relink_note(rel, text, inside, self._to_section(inside), body_only)

        def named(target: str) -> bool:
            return bool(target.strip()) and self.names_drop(target, rel)

        return relink_note(rel, text, named, self._to_keep(named), body_only)

    def _to_keep(self, named: Callable[[str], bool]) -> Replace:
        """Links from another note: the target becomes keep's name, the rest stays as written."""

        def replace(inner: str, embed: bool, in_table: bool) -> str | None:
            link = parse_link_text(inner)
            if not named(link.target):
                return None
            bang = "!" if embed else ""
            if self._is_dropped_title(link.heading):
                return f"{bang}[[{self.keep_target}#{self.section}{alias_part(inner)}]]"
            return f"{bang}[[{with_target(inner, self.keep_target)}]]"

        return replace

    def _to_section(self, named: Callable[[str], bool]) -> Replace:
        """Links within the merged note: to the merged section (or the heading or block inside it), never to itself.

        The text shown stays what it was: an alias as written, else the target as written. In a table the bar is
        escaped, as Obsidian needs there. A section name Obsidian cannot link to leaves the text shown, as plain text.
        """

        def replace(inner: str, embed: bool, in_table: bool) -> str | None:
            link = parse_link_text(inner)
            if not named(link.target):
                return None
            bar = "\\|" if in_table else "|"
            shown = alias_part(inner) or f"{bar}{link.target}"
            if link.block is not None:
                return f"[[#^{link.block}{alias_part(inner)}]]"
            if link.heading is not None and not self._is_dropped_title(link.heading):
                return f"[[#{link.heading}{alias_part(inner)}]]"
            if any(ch in self.section for ch in "#|^[]"):
                return link.alias or link.target
            return f"[[#{self.section}{shown}]]"

        return replace

    def _is_dropped_title(self, heading: str | None) -> bool:
        return self.title_dropped and heading is not None and heading.casefold() == title_of(self.drop).casefold()


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
    # A note whose properties were read line by line is never rewritten: its links are left as they are, as for a
    # note that cannot be read at all.
    unread |= {path for path, note in notes.items() if note.frontmatter_problem and path not in (keep, drop)}
    new_aliases = _merged_aliases(keep_note, drop_note)
    title_dropped = leading_title(_plain_lines(split_body(decode_note(drop, drop_raw))), title_of(drop))
    relinker = _relinker(files, notes, keep, drop, new_aliases, title_dropped)

    relinked: list[PlannedWrite] = []
    link_count = 0
    for rel in sorted(notes):
        if (
            rel in (keep, drop)
            or rel in unread
            or not any(relinker.names_drop(link.target, rel) for link in notes[rel].links)
        ):
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
    body = nest(_plain_lines(split_body(drop_text)), title_of(drop))
    keep_text = _append_section(keep_text, f"## {relinker.section}", body)
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
        inside=own,
    )


def _relinker(
    files: dict[str, FileStat],
    notes: dict[str, Note],
    keep: str,
    drop: str,
    new_aliases: tuple[str, ...],
    title_dropped: bool,
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
    return _Relinker(keep, drop, keep_target, before, after, f"Merged from {title_of(drop)}", title_dropped)


def relink_note(
    rel: str,
    text: str,
    named: Callable[[str], bool],
    replace: Replace,
    body_only: bool,
    what: str = "the merged note",
) -> tuple[str, int]:
    """Rewrite the links of one note's text that `named` picks by their target (body lines, then property values)
    with `replace`, and check the result parses back with none of them left (`what` names the links' old target in
    an error)."""
    note = parse_for_edit(rel, text.encode("utf-8"))
    lines = {link.line for link in note.links if link.property is None and named(link.target)}
    new_text, count = replace_lines(text, lines, replace)
    if not body_only:
        properties_named = {link.property for link in note.links if link.property and named(link.target)}
        # A nested value is named by its dotted path; its top-level property is the key that path starts with.
        keys = {key for key in note.frontmatter if any(n == key or n.startswith(f"{key}.") for n in properties_named)}
        for key in sorted(keys):
            value = note.frontmatter.get(key)
            new_value: Any
            if isinstance(value, str):
                new_value, changed = replace_string(value, replace)
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                pairs = [replace_string(item, replace) for item in value]
                new_value, changed = [item for item, _ in pairs], sum(n for _, n in pairs)
            else:
                raise CurationError(
                    f"{rel}: the property '{key}' links to {what} inside a nested value, which the companion "
                    "cannot rewrite safely; change that link in Obsidian first; nothing was written"
                )
            # The link's text is changed where it stands, so the property's quoting and comments stay.
            new_text = rewrite_field(
                new_text, key, lambda lines: replace_string(lines, replace)[0], new_value, path=rel
            )
            count += changed
    after = parse_for_edit(rel, new_text.encode("utf-8"))
    left = [link for link in after.links if (link.property is None or not body_only) and named(link.target)]
    if left or len(after.links) != len(note.links):
        raise CurationError(
            f"{rel}: its links to {what} could not be rewritten safely (line {left[0].line + 1 if left else 1}"
            "); change them in Obsidian first; nothing was written"
        )
    return new_text, count


def _plain_lines(text: str) -> str:
    """The text without a BOM and with `\\n` line endings, as the merged section is built (and parsed) in."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


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
