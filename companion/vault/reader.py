"""An Obsidian vault on disk: its files, safe note reads, sessions and the link graph.

Nothing here raises on one bad file during a walk: problems (unreadable folders, symlink loops,
links out of the vault, files that vanish mid-walk, broken notes) are collected in
`ObsidianVault.problems` as `(path, reason)` pairs so the caller can show them and go on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import stat
from pathlib import Path

from companion.config import CompanionConfig, compile_globs, load_config
from companion.errors import NoteError, VaultError
from companion.retention import RetentionPolicy
from companion.vault.graph import VaultGraph
from companion.vault.notes import FileStat, Link, Note
from companion.vault.parse import KindRules, parse_note, too_large_reason
from companion.vault.resolve import LinkResolver
from companion.vault.sessionfiles import Stamp, session_files
from companion.vault.sessions import SessionSummary, local_moment, partition_hot, read_session, window_start

_SESSION_CACHE = 4096  # parsed session summaries kept between calls
_READ_CHUNK = 1 << 20


def _unsafe_reason(rel: str) -> str | None:
    """Why a vault-relative path may not be used, or None if it stays inside the vault on paper."""
    if not rel or rel.strip() in ("", "."):
        return "is empty"
    if "\x00" in rel:
        return "contains a NUL byte"
    if rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        return "is absolute; vault paths are relative to the vault root"
    if ".." in re.split(r"[\\/]", rel):
        return "climbs out of its folder with '..'; vault paths may not"
    return None


class ObsidianVault:
    """A vault folder read the way Obsidian reads it, confined to its root."""

    def __init__(self, root: Path, config: CompanionConfig | None = None) -> None:
        """Open the vault at `root`; without `config`, its `.companion/companion.yaml` is read."""
        root = root.expanduser()
        if not root.is_dir():
            raise VaultError(f"{root}: not a folder; point --vault or AGENT_VAULT_PATH at a vault")
        self.root = root.resolve()
        """The vault's absolute, symlink-free root."""
        self.config = config if config is not None else load_config(self.root)
        """The vault's settings."""
        self.problems: list[tuple[str, str]] = []
        """`(path, reason)` for everything skipped; each scan starts the list afresh."""
        self._setup_problems: list[tuple[str, str]] = []
        self._ignore_prefixes, self._ignore_patterns = self._load_ignore_filters()
        self.template_folders: tuple[str, ...] = () if self.config.index.templates else self._load_template_folders()
        """Folders of Obsidian's Templates and Templater plugins (with a trailing `/`), left out of the index."""
        self._templates = tuple(folder.casefold() for folder in self.template_folders)
        self.left_out: dict[str, int] = {}
        """Notes the last `scan` left out of the index, counted by reason (hidden files are not counted)."""
        self.problems.extend(self._setup_problems)
        self._rules = KindRules(
            sessions_folder=self.config.sessions.folder,
            conversation_folders=self.config.index.conversation_folders,
        )
        self._include = compile_globs(self.config.index.include)
        self._exclude = compile_globs(self.config.index.exclude)
        # Session summaries are indexed by their own rule, whatever the globs say of the folder they sit in.
        sessions = re.escape(self.config.sessions.folder.strip("/"))
        self._summary = (
            re.compile(rf"{sessions}/\d{{4}}-\d{{2}}-\d{{2}}/[^/]+\.md") if self.config.sessions.recall else None
        )
        # Archived notes stay in the vault but leave recall: the archive folder is never indexed, in any letter case
        # (curation treats `Archive/` and `archive/` as one folder, as case-insensitive file systems do).
        self._archive = self.config.curation.archive_folder.strip("/").casefold() + "/"
        self._graph: VaultGraph | None = None
        self._session_cache: dict[str, tuple[Stamp, SessionSummary]] = {}
        self._session_links: dict[str, tuple[Stamp, tuple[str, ...]]] = {}

    # -- what is in the vault
    # -------------------------------------------------------------------------

    def _load_ignore_filters(self) -> tuple[tuple[str, ...], tuple[re.Pattern[str], ...]]:
        """`userIgnoreFilters` of `.obsidian/app.json`: path prefixes, or `/regex/` entries."""
        app = self.root / ".obsidian" / "app.json"
        try:
            data = json.loads(app.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return (), ()
        except (OSError, ValueError) as exc:
            self._setup_problems.append((".obsidian/app.json", f"unreadable, ignored ({exc})"))
            return (), ()
        raw = data.get("userIgnoreFilters") if isinstance(data, dict) else None
        prefixes: list[str] = []
        patterns: list[re.Pattern[str]] = []
        for entry in raw if isinstance(raw, list) else []:
            if not isinstance(entry, str) or not entry:
                continue
            if len(entry) > 2 and entry.startswith("/") and entry.endswith("/"):
                try:
                    patterns.append(re.compile(entry[1:-1]))
                except re.error as exc:
                    self._setup_problems.append(
                        (
                            ".obsidian/app.json",
                            f"ignore filter {entry!r} is not a valid regex ({exc})",
                        )
                    )
            else:
                prefixes.append(entry)
        return tuple(prefixes), tuple(patterns)

    def _load_template_folders(self) -> tuple[str, ...]:
        """The templates folder of Obsidian's core plugin (`.obsidian/templates.json`) and of Templater."""
        sources = (
            (self.root / ".obsidian" / "templates.json", "folder"),
            (self.root / ".obsidian" / "plugins" / "templater-obsidian" / "data.json", "templates_folder"),
        )
        folders: list[str] = []
        for path, key in sources:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # no such plugin, or a settings file Obsidian itself would not read
            folder = data.get(key) if isinstance(data, dict) else None
            if isinstance(folder, str) and folder.strip("/ ") and _unsafe_reason(folder.strip("/ ")) is None:
                folders.append(folder.strip("/ ") + "/")
        return tuple(dict.fromkeys(folders))

    def _why_left_out(self, rel: str) -> str:
        if rel.startswith(self._ignore_prefixes) or any(p.search(rel) for p in self._ignore_patterns):
            return "Obsidian's excluded files (userIgnoreFilters in .obsidian/app.json)"
        folded = rel.casefold()
        for folder, key in zip(self.template_folders, self._templates, strict=True):
            if folded.startswith(key):
                return f"the templates folder {folder} (index.templates: false)"
        if folded.startswith(self._archive):
            return f"the archive folder {self.config.curation.archive_folder.strip('/')}/"
        if self._exclude.fullmatch(rel) is not None:
            return "index.exclude"
        return "not in index.include"

    def scan_all(self) -> dict[str, FileStat]:
        """Every file Obsidian would list (notes and attachments), keyed by vault path.

        Dot-folders and dot-files are skipped; files matching `userIgnoreFilters` are kept, since
        Obsidian still resolves links to them (see `is_ignored`). Symlinks are followed only while
        they stay inside the vault; a folder reached twice (a symlink loop, or a second link to one
        folder) is walked once, by its real path when it has one.
        """
        problems = list(self._setup_problems)
        files: dict[str, FileStat] = {}
        root_stat = os.stat(self.root)
        seen_folders = {(root_stat.st_dev, root_stat.st_ino)}
        stack: list[tuple[str, str]] = [(str(self.root), "")]
        # Folders reached through a symlink wait until every real folder is walked, so a file is
        # listed under its real path rather than under whichever link the walk happened to meet
        # first.
        linked: list[tuple[str, str]] = []
        while True:
            while stack:
                folder, rel = stack.pop()
                self._walk_folder(folder, rel, files, problems, stack, linked, seen_folders)
            if not linked:
                break
            folder, rel = linked.pop(0)
            try:
                info = os.stat(folder)
            except OSError as exc:
                problems.append((rel, f"cannot stat: {exc.strerror or exc}"))
                continue
            if (info.st_dev, info.st_ino) in seen_folders:
                problems.append((rel, "symbolic link to a folder already in the vault (a loop?); skipped"))
                continue
            seen_folders.add((info.st_dev, info.st_ino))
            stack.append((folder, rel))
        self.problems = problems
        return files

    def _walk_folder(
        self,
        folder: str,
        rel: str,
        files: dict[str, FileStat],
        problems: list[tuple[str, str]],
        stack: list[tuple[str, str]],
        linked: list[tuple[str, str]],
        seen_folders: set[tuple[int, int]],
    ) -> None:
        """List one folder: files into `files`, folders onto `stack`, linked ones onto `linked`."""
        try:
            with os.scandir(folder) as iterator:
                entries = list(iterator)
        except FileNotFoundError:
            problems.append((rel or ".", "folder vanished during the scan"))
            return
        except OSError as exc:
            problems.append((rel or ".", f"cannot read folder: {exc.strerror or exc}"))
            return
        root = str(self.root)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            if not valid_name(child):
                problems.append((child.encode("utf-8", "backslashreplace").decode(), "file name is not valid UTF-8"))
                continue
            try:
                is_link = entry.is_symlink()
                if is_link and not _inside(os.path.realpath(entry.path), root):
                    problems.append((child, "symbolic link to outside the vault; skipped"))
                    continue
                info = entry.stat()
            except FileNotFoundError:
                problems.append((child, "vanished during the scan"))
                continue
            except OSError as exc:
                problems.append((child, f"cannot stat: {exc.strerror or exc}"))
                continue
            if stat.S_ISDIR(info.st_mode):
                if is_link:
                    linked.append((entry.path, child))
                else:
                    seen_folders.add((info.st_dev, info.st_ino))
                    stack.append((entry.path, child))
            elif stat.S_ISREG(info.st_mode):
                files[child] = FileStat(mtime_ns=info.st_mtime_ns, size=info.st_size)

    def scan(self) -> dict[str, FileStat]:
        """Notes to index: `.md` files passing `userIgnoreFilters` and the include/exclude globs; what it leaves out
        is counted by reason in `left_out`."""
        wanted: dict[str, FileStat] = {}
        left_out: dict[str, int] = {}
        for rel, info in self.scan_all().items():
            if self._wanted(rel):
                wanted[rel] = info
            elif rel.endswith(".md"):
                reason = self._why_left_out(rel)
                left_out[reason] = left_out.get(reason, 0) + 1
        self.left_out = left_out
        return wanted

    def is_ignored(self, rel: str) -> bool:
        """True for paths Obsidian hides: dot entries, `userIgnoreFilters`, or outside paths."""
        if _unsafe_reason(rel) is not None:
            return True
        if any(part.startswith(".") for part in rel.split("/")):
            return True
        if rel.startswith(self._ignore_prefixes):
            return True
        return any(pattern.search(rel) for pattern in self._ignore_patterns)

    def is_indexable(self, rel: str) -> bool:
        """True when a path is a note the index should hold (for scans and watcher events)."""
        return not self.is_ignored(rel) and self._wanted(rel)

    def is_summary(self, rel: str) -> bool:
        """Whether a path is a session summary the index holds (`sessions.recall`)."""
        return self._summary is not None and self._summary.fullmatch(rel) is not None

    def _wanted(self, rel: str) -> bool:
        # The checks a path from our own walk still needs (it is safe and has no dot entries):
        # on 10k notes this is most of `scan`'s cost, hence the pre-compiled patterns.
        return (
            rel.endswith(".md")
            and (
                (self._include.fullmatch(rel) is not None and self._exclude.fullmatch(rel) is None)
                or (self._summary is not None and self._summary.fullmatch(rel) is not None)
            )
            and not rel.casefold().startswith(self._archive)
            and not (self._templates and rel.casefold().startswith(self._templates))
            and not rel.startswith(self._ignore_prefixes)
            and not any(pattern.search(rel) for pattern in self._ignore_patterns)
        )

    # -- reading
    # --------------------------------------------------------------------------------------

    def resolve_path(self, rel: str) -> Path:
        """The absolute path of a vault path; `VaultError` if it could lead outside the vault.

        Every read and every future write goes through here, so a note title can never traverse out.
        """
        reason = _unsafe_reason(rel)
        if reason is None:
            candidate = self.root / rel
            if _inside(os.path.realpath(candidate), str(self.root)):
                return candidate
            reason = "leads outside the vault through a symbolic link"
        raise VaultError(f"{rel!r} {reason}")

    def read_note(self, rel: str) -> Note:
        """Read and parse one note; `NoteError`, naming the reason, for anything that fails."""
        if not valid_name(rel):
            raise NoteError(rel.encode("utf-8", "backslashreplace").decode(), "file name is not valid UTF-8")
        reason = _unsafe_reason(rel)
        if reason is not None:
            raise NoteError(rel, reason)
        try:
            path = self.resolve_path(rel)
        except VaultError as exc:
            raise NoteError(rel, "leads outside the vault through a symbolic link") from exc
        raw = self._read_bytes(rel, path)
        return parse_note(rel, raw, rules=self._rules, max_bytes=self.config.max_note_bytes)

    def _read_bytes(self, rel: str, path: Path) -> bytes:
        limit = self.config.max_note_bytes
        # O_NONBLOCK keeps a FIFO with an .md name from blocking the open; fstat then refuses it.
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError as exc:
            raise NoteError(rel, "vanished before it could be read (deleted or renamed)") from exc
        except PermissionError as exc:
            raise NoteError(rel, "permission denied; check the file's owner and mode") from exc
        except OSError as exc:
            raise NoteError(rel, f"cannot be opened: {exc.strerror or exc}") from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise NoteError(rel, "is not a regular file (a folder, FIFO, socket or device)")
            if info.st_size > limit:
                raise NoteError(rel, too_large_reason(info.st_size, limit))
            chunks: list[bytes] = []
            remaining = limit + 1
            while remaining > 0:
                chunk = os.read(fd, min(remaining, _READ_CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
        except OSError as exc:
            raise NoteError(rel, f"could not be read: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)
        return b"".join(chunks)

    def sessions(self, since: dt.date | None = None, until: dt.date | None = None) -> list[SessionSummary]:
        """Session summaries under `<sessions folder>/<YYYY-MM-DD>/`, the days from `since` to `until` (each open
        when None), newest first by (date, time).

        Folders whose name is not a date are skipped; broken notes are skipped and added to `problems`, as are
        summaries whose properties were read line by line (they are kept). Summaries are kept between calls and
        re-read only when their file's stat changes, so recall can ask for the hot window on every question.
        """
        base = self.config.sessions.folder.strip("/")
        try:
            folder = self.resolve_path(base)
        except VaultError as exc:
            self.problems.append((base, str(exc)))
            return []
        summaries: list[SessionSummary] = []
        for rel, stamp in session_files(base, folder, since, self.problems, until):
            cached = self._session_cache.get(rel)
            if cached is not None and cached[0] == stamp:
                summaries.append(cached[1])
                continue
            try:
                note = self.read_note(rel)
            except NoteError as exc:
                self.problems.append((exc.path, exc.reason))
                continue
            if note.frontmatter_problem:
                # Kept, its properties read line by line; said once, while its file stays as it is.
                self.problems.append((rel, note.frontmatter_problem))
            summary = read_session(rel, note)
            if len(self._session_cache) >= _SESSION_CACHE:
                self._session_cache.clear()
            self._session_cache[rel] = (stamp, summary)
            summaries.append(summary)
        summaries.sort(key=lambda s: (s.when or dt.datetime.min, s.date, s.time, s.path), reverse=True)
        return summaries

    def session_links(self) -> dict[str, tuple[str, ...]]:
        """Every session summary's link targets by vault path, all days: each target once, as written, in file order
        (what the index keeps of a note's links).

        The index leaves the sessions folder out, yet a note a session links to has that session among its
        backlinks. Only the targets are kept (for every session: a few short strings each), and a file is parsed
        again only when its stat changed, so a caller can ask before every graph it draws; a file that cannot be
        read is added to `problems` and left out."""
        base = self.config.sessions.folder.strip("/")
        try:
            folder = self.resolve_path(base)
        except VaultError as exc:
            self.problems.append((base, str(exc)))
            return {}
        found: dict[str, tuple[str, ...]] = {}
        kept = self._session_links
        for rel, stamp in session_files(base, folder, None, self.problems):
            cached = kept.get(rel)
            if cached is None or cached[0] != stamp:
                try:
                    links = self.read_note(rel).links
                    cached = (stamp, tuple(dict.fromkeys(link.target for link in links if link.target)))
                except NoteError as exc:
                    self.problems.append((exc.path, exc.reason))
                    continue
                kept[rel] = cached
            found[rel] = cached[1]
        if len(kept) > len(found):
            self._session_links = {rel: kept[rel] for rel in found}
        return found

    def recent_sessions(
        self,
        user_id: str,
        policy: RetentionPolicy,
        *,
        chat_id: str | None = None,
        now: dt.datetime | None = None,
    ) -> list[SessionSummary]:
        """The hot tier: the user's newest `policy.hot_limit` sessions of the last
        `policy.hot_window_days` days (2 = today and yesterday), newest first.

        With `chat_id`, only that session key (`user_id + chat_id`) counts; without it the user's
        chats are pooled. `now` is a parameter so callers replay the past (`--as-of`) and tests freeze time;
        sessions dated after `now` are not yet "recent".
        """
        # Session stamps are written in the agent's local time without a zone: compare in local time.
        moment = local_moment(now)
        recent = self.sessions(since=window_start(policy, moment))
        return list(partition_hot(recent, policy, moment, user_id=user_id, chat_id=chat_id).hot)

    async def get_recent_sessions(
        self, user_id: str, policy: RetentionPolicy, *, chat_id: str | None = None, now: dt.datetime | None = None
    ) -> list[SessionSummary]:
        """The async form of `recent_sessions`; the file reads run in a worker thread."""
        return await asyncio.to_thread(self.recent_sessions, user_id, policy, chat_id=chat_id, now=now)

    # -- links
    # ----------------------------------------------------------------------------------------

    def read_all_notes(self, files: dict[str, FileStat] | None = None) -> dict[str, Note]:
        """Parse every `.md` file (not only indexable ones); broken notes go to `problems`."""
        files = self.scan_all() if files is None else files
        notes: dict[str, Note] = {}
        for rel in files:
            if not rel.endswith(".md"):
                continue
            try:
                notes[rel] = self.read_note(rel)
            except NoteError as exc:
                self.problems.append((exc.path, exc.reason))
        return notes

    def graph(self, refresh: bool = False) -> VaultGraph:
        """The vault's link graph, built on first use (or when `refresh` is set) and then kept."""
        if self._graph is None or refresh:
            files = self.scan_all()
            notes = self.read_all_notes(files)
            aliases = {rel: note.aliases for rel, note in notes.items() if note.aliases}
            self._graph = VaultGraph(notes, LinkResolver(files, aliases))
        return self._graph

    def resolver(self) -> LinkResolver:
        """A fresh `LinkResolver` over every file of the vault and the aliases of every note."""
        return self.graph(refresh=True).resolver

    def outlinks(self, rel: str) -> list[tuple[Link, str | None]]:
        """The links of a note with their resolved targets (None when unresolved)."""
        return self.graph().outlinks(rel)

    def backlinks(self, rel: str) -> list[str]:
        """The notes that link to `rel`."""
        return self.graph().backlinks(rel)


def valid_name(rel: str) -> bool:
    """False for names the OS gave us with undecodable bytes (surrogates): no index or log can store them."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _inside(real_path: str, root: str) -> bool:
    return real_path == root or real_path.startswith(root.rstrip(os.sep) + os.sep)
