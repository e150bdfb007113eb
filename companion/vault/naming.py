"""A note as a person names it when asked for one: its vault path, its title (the file name) or one of its aliases.

The order is Obsidian's when it resolves a link: a path first, then the file name, then aliases, each in any case.
Where Obsidian silently picks the note with the shortest path among several that share a name, a person asked "which
note?" is told which notes share it and asked for a path instead: a curation must never act on a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from companion.errors import AmbiguousNoteError, NotFoundError
from companion.vault.parse import title_of

AliasSource = Callable[[], Mapping[str, Iterable[str]]]
"""Gives every note's aliases by vault path; called only when a name is not a path or a title (reading every note's
frontmatter can take a while in a large vault)."""

_SHOWN = 5
"""Notes named in an ambiguity message before it says "and more"."""


class NoteNames:
    """The notes of a vault by path, title and alias, to find the one a typed name means and to offer completions."""

    def __init__(self, paths: Iterable[str], aliases: Mapping[str, Iterable[str]] | AliasSource | None = None) -> None:
        """Name the `.md` notes among `paths` (other files are left out), with their `aliases` (or a function giving
        them when first needed)."""
        self._paths = sorted((path for path in paths if path.lower().endswith(".md")), key=lambda p: (p.casefold(), p))
        self._by_lower: dict[str, list[str]] = {}
        self._by_title: dict[str, list[str]] = {}
        for path in self._paths:
            self._by_lower.setdefault(path.casefold(), []).append(path)
            self._by_title.setdefault(title_of(path).casefold(), []).append(path)
        self._alias_source = aliases
        self._by_alias: dict[str, list[str]] | None = None

    def find(self, name: str) -> str:
        """The vault path of the note `name` means: a path (`.md` optional, any case), the end of a path
        (`Projects/Kitchen`), a title or an alias, in that order.

        Raises `AmbiguousNoteError` naming the notes when several share the name, and `NotFoundError` when none has it.
        """
        text = name.strip().replace("\\", "/").lstrip("/")
        if not text:
            raise NotFoundError("give a note: its path inside the vault, its title or one of its aliases")
        stem = text[:-3] if text.lower().endswith(".md") else text
        path = f"{stem}.md"
        if path in self._by_lower.get(path.casefold(), ()):
            return path
        ways: tuple[tuple[Callable[[], list[str]], str], ...] = (
            (lambda: self._by_lower.get(path.casefold(), []), "path"),
            (lambda: self._ending_with(path) if "/" in stem else [], "path"),
            (lambda: self._by_title.get(stem.casefold(), []), "name"),
            (lambda: self._aliases().get(text.casefold(), []), "alias"),
        )
        for way, what in ways:
            matches = way()  # one at a time: the aliases are read only when the others name nothing
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise _ambiguous(text, what, matches)
        raise NotFoundError(f"{path if '/' in stem else text}: no such note in the vault; {self._hint(stem)}")

    def completions(self, *, leave_out: Iterable[str] = ()) -> list[str]:
        """What to offer as someone types a note: titles, then aliases, then paths, each only where it names one note
        (a name several notes share is offered by their paths), notes in `leave_out` not at all."""
        skip = set(leave_out)
        titles = [title_of(paths[0]) for paths in self._by_title.values() if len(paths) == 1 and paths[0] not in skip]
        taken = {title.casefold() for title in self._by_title}
        aliases = [
            alias
            for key, (alias, paths) in self._alias_spellings().items()
            if len(paths) == 1 and paths[0] not in skip and key not in taken
        ]
        return _unique([*sorted(titles, key=str.casefold), *sorted(aliases, key=str.casefold)]) + [
            path for path in self._paths if path not in skip
        ]

    def _hint(self, stem: str) -> str:
        """What to try for a name that names no note: the notes with its last part as their name, else the forms a
        name can take."""
        found = self._by_title.get(title_of(stem).casefold(), [])
        if found:
            shown = ", ".join(f"'{path}'" for path in found[:_SHOWN])
            return f"did you mean {shown}{' (and more)' if len(found) > _SHOWN else ''}?"
        return "give its path as Obsidian shows it ('Projects/Kitchen.md'), its title or one of its aliases"

    def _ending_with(self, path: str) -> list[str]:
        """Notes whose path ends with `path` at a folder boundary, as Obsidian resolves `[[folder/Note]]`."""
        tail = "/" + path.casefold()
        return [p for p in self._paths if ("/" + p.casefold()).endswith(tail)]

    def _aliases(self) -> dict[str, list[str]]:
        if self._by_alias is None:
            self._by_alias = {key: paths for key, (_alias, paths) in self._alias_spellings().items()}
        return self._by_alias

    def _alias_spellings(self) -> dict[str, tuple[str, list[str]]]:
        """Each alias in lower case: its first spelling and the notes that have it."""
        source = self._alias_source
        given = source() if callable(source) else (source or {})
        known = set(self._paths)
        out: dict[str, tuple[str, list[str]]] = {}
        for path in sorted(given):
            if path not in known:
                continue
            for alias in given[path]:
                clean = alias.strip() if isinstance(alias, str) else ""
                if not clean:
                    continue
                holders = out.setdefault(clean.casefold(), (clean, []))[1]
                if path not in holders:
                    holders.append(path)
        if callable(source):
            # Read once: the function may read every note.
            self._alias_source = {path: [a for a in given[path] if isinstance(a, str)] for path in given}
        return out


def _ambiguous(name: str, what: str, paths: list[str]) -> AmbiguousNoteError:
    shown = ", ".join(f"'{path}'" for path in paths[:_SHOWN])
    more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    return AmbiguousNoteError(
        f"{name}: {len(paths)} notes share this {what} ({shown}{more}); give the path of the one you mean",
        tuple(paths),
    )


def _unique(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if name.casefold() not in seen:
            seen.add(name.casefold())
            out.append(name)
    return out
