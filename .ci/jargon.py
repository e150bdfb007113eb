#!/usr/bin/env python3
"""Fail when the repository's text speaks of the internal planning documents it was built from.

The project names its features, not the documents they came from: a reader of the code, the tests, the
messages or the tool descriptions has never seen those documents, so a reference to one (its file name, a
numbered section of it, a numbered item of the tracker) tells them nothing. This check finds such words:

1. the word for a planned item (whole word, any case; the plural too when a number or a slash follows it);
2. the upper-case name of the requirements document, its file name in any case, and a section sign followed
   by a number;
3. a tracker item with its number ("... 12", "... #12", "...#12").

With no arguments it reads every file git knows of (tracked, and untracked but not ignored) from the
repository root; given folders or files, it reads those instead, without git. Binary files (a NUL byte, or
not UTF-8) and anything under `.venv` are skipped. Every hit is printed as `path:line: ...`; the exit code
is 1 when there is one and 0 otherwise. The patterns below are spelled with character classes so that this
file passes its own check.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = frozenset({".venv", ".git"})
HINT = "name the feature instead"

# Letters or digits on either side make it part of a longer word; an underscore does not, so that an
# identifier such as `rng_<word>` is caught too.
_ALONE_BEFORE = r"(?<![A-Za-z0-9])"
_ALONE_AFTER = r"(?![A-Za-z0-9])"

PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(_ALONE_BEFORE + r"s[e]ed" + _ALONE_AFTER, re.IGNORECASE),
    re.compile(_ALONE_BEFORE + r"s[e]eds(?=/|[ \t_#-]?\d)", re.IGNORECASE),
    re.compile(r"\bS[P]EC\b"),
    re.compile(r"\bs[p]ec\.md\b", re.IGNORECASE),
    re.compile("\N{SECTION SIGN}" + r"\s*\d"),
    re.compile(r"\bi[s]sues?[ \t]*#?[ \t]*\d", re.IGNORECASE),
)


def git_files(root: Path) -> list[Path]:
    """The files git knows of under `root`: tracked ones, and untracked ones that are not ignored."""
    listed: list[Path] = []
    seen: set[str] = set()
    for extra in ([], ["--others", "--exclude-standard"]):
        out = subprocess.run(
            ["git", "ls-files", "-z", *extra], cwd=root, check=True, capture_output=True
        ).stdout.decode("utf-8", errors="surrogateescape")
        for name in out.split("\0"):
            if name and name not in seen:
                seen.add(name)
                listed.append(Path(name))
    return listed


def walk(paths: Iterable[Path]) -> Iterator[Path]:
    """Every file under the given folders (and the given files themselves), in a stable order."""
    for path in paths:
        if path.is_dir():
            yield from (p for p in sorted(path.rglob("*")) if p.is_file())
        elif path.is_file():
            yield path


def skipped(path: Path) -> bool:
    """Whether `path` lies under a folder the check never reads."""
    return any(part in SKIPPED_DIRS for part in path.parts)


def read_text(path: Path) -> str | None:
    """The file's text, or None when it is binary, not UTF-8, missing, or a folder (a submodule)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def hits(text: str) -> Iterator[tuple[int, str]]:
    """(line number, offending word) for every forbidden word in `text`."""
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern in PATTERNS:
            for match in pattern.finditer(line):
                yield number, match.group(0)


def check(files: Iterable[Path], shown_from: Path | None = None) -> int:
    """Print every hit in `files` and return how many there were (paths relative to `shown_from` if given)."""
    count = 0
    for path in files:
        if skipped(path):
            continue
        text = read_text(path if shown_from is None else shown_from / path)
        if text is None:
            continue
        for number, word in hits(text):
            count += 1
            print(f"{path}:{number}: the word {word!r} is internal planning jargon; {HINT}")
    return count


def main(argv: Sequence[str]) -> int:
    """Check the given folders and files, or the whole repository when none are given; 1 on any hit."""
    found = check(walk(Path(arg) for arg in argv)) if argv else check(git_files(ROOT), shown_from=ROOT)
    if found:
        print(f"{found} forbidden word(s) found; {HINT}.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
