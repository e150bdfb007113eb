"""Link targets to vault files, by Obsidian's rules.

A target without an extension means a `.md` note. A target with a folder part is tried as a
vault-absolute path, then relative to the linking note's folder, then as the tail of any path. A
bare name is looked up by file name, case-insensitively as Obsidian does; when several files share
the name, a file in the linking note's own folder wins, else the shortest path (fewest folders, then
alphabetical, so the choice is stable). Aliases from frontmatter come last. Indexes are dictionaries
keyed by lower-case name, so adding or removing one file is cheap for a watcher.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


class LinkResolver:
    """Resolves link targets against a vault's files (notes and attachments) and note aliases."""

    def __init__(self, paths: Iterable[str] = (), aliases: Mapping[str, Iterable[str]] | None = None) -> None:
        self._paths: set[str] = set()
        self._by_path: dict[str, set[str]] = {}
        self._by_name: dict[str, set[str]] = {}
        self._by_alias: dict[str, set[str]] = {}
        self._aliases_of: dict[str, tuple[str, ...]] = {}
        alias_map = aliases or {}
        for path in paths:
            self.add(path, alias_map.get(path, ()))
        for path, names in alias_map.items():
            if path not in self._paths:
                self.add(path, names)

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __len__(self) -> int:
        return len(self._paths)

    def add(self, path: str, aliases: Iterable[str] = ()) -> None:
        """Add a file (or replace the aliases of one already known)."""
        if path in self._paths:
            self._drop_aliases(path)
        else:
            self._paths.add(path)
            self._by_path.setdefault(path.lower(), set()).add(path)
            self._by_name.setdefault(_name(path).lower(), set()).add(path)
        names = tuple(dict.fromkeys(a.strip() for a in aliases if a.strip()))
        self._aliases_of[path] = names
        for alias in names:
            self._by_alias.setdefault(alias.lower(), set()).add(path)

    def remove(self, path: str) -> None:
        """Forget a file; unknown paths are ignored."""
        if path not in self._paths:
            return
        self._paths.discard(path)
        _discard(self._by_path, path.lower(), path)
        _discard(self._by_name, _name(path).lower(), path)
        self._drop_aliases(path)
        del self._aliases_of[path]

    def _drop_aliases(self, path: str) -> None:
        for alias in self._aliases_of.get(path, ()):
            _discard(self._by_alias, alias.lower(), path)

    def resolve(self, link_target: str, source_path: str) -> str | None:
        """The vault path a link from `source_path` points to, or None when it is unresolved.

        An empty target (`[[#heading]]`) is the source note itself.
        """
        target = link_target.strip().replace("\\", "/")
        if not target:
            return source_path
        source_folder = _folder(source_path)
        for candidate in self._with_extension(target.lstrip("/")):
            found = self._by_file(candidate, target, source_folder)
            if found is not None:
                return found
        return self._pick(self._by_alias.get(target.lower(), set()), source_folder)

    @staticmethod
    def _with_extension(target: str) -> list[str]:
        # Obsidian reads `[[Note]]` as `Note.md`, but `[[image.png]]` or `[[Books.base]]` as
        # written.
        if target.lower().endswith(".md"):
            return [target]
        return [target + ".md", target]

    def _by_file(self, candidate: str, target: str, source_folder: str) -> str | None:
        if "/" not in candidate:
            return self._pick(self._by_name.get(candidate.lower(), set()), source_folder)
        if not target.startswith(("./", "../")):
            exact = self._exact(posixpath.normpath(candidate))
            if exact is not None:
                return exact
        relative = posixpath.normpath(posixpath.join(source_folder, candidate))
        if not relative.startswith("../"):
            found = self._exact(relative)
            if found is not None:
                return found
        tail = "/" + posixpath.normpath(candidate).lstrip("./").lower()
        with_name = self._by_name.get(_name(candidate).lower(), set())
        return self._pick({p for p in with_name if ("/" + p.lower()).endswith(tail)}, source_folder)

    def _exact(self, path: str) -> str | None:
        if path in self._paths:
            return path
        matches = self._by_path.get(path.lower())
        return min(matches) if matches else None

    @staticmethod
    def _pick(paths: set[str], source_folder: str) -> str | None:
        """Obsidian's shortest-path rule among files that match equally well."""
        if not paths:
            return None
        if len(paths) == 1:
            return next(iter(paths))
        same_folder = [p for p in paths if _folder(p) == source_folder]
        if same_folder:
            return min(same_folder)
        return min(paths, key=lambda p: (p.count("/"), p))


def _discard(index: dict[str, set[str]], key: str, path: str) -> None:
    bucket = index.get(key)
    if bucket is None:
        return
    bucket.discard(path)
    if not bucket:
        del index[key]
