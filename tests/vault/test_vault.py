"""ObsidianVault on real folders: walk, ignore rules, confinement, bad files, graph."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from companion.config import CompanionConfig, IndexConfig, SessionsConfig
from companion.errors import NoteError, VaultError
from companion.vault.reader import ObsidianVault


def write(root: Path, rel: str, text: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    return vault


def note_error(vault: ObsidianVault, rel: str) -> str:
    with pytest.raises(NoteError) as caught:
        vault.read_note(rel)
    assert caught.value.path == rel
    return caught.value.reason


def test_scan_all_lists_every_file_but_dot_entries(root: Path) -> None:
    for rel in ["a.md", "Sub/b.md", "Sub/img.png", "Views/x.base", ".hidden.md", "Sub/.draft.md"]:
        write(root, rel, "x")
    for rel in [".obsidian/app.json", ".trash/old.md", ".git/HEAD", ".companion/companion.yaml"]:
        write(root, rel, "{}")
    files = ObsidianVault(root).scan_all()
    assert sorted(files) == ["Sub/b.md", "Sub/img.png", "Views/x.base", "a.md"]
    stat = (root / "a.md").stat()
    assert (files["a.md"].size, files["a.md"].mtime_ns) == (1, stat.st_mtime_ns)


def test_scan_applies_include_exclude_and_ignore_filters(root: Path) -> None:
    for rel in [
        "a.md",
        "img.png",
        "ops/sessions/2026-01-01/s.md",
        "ops/logs/2026-01-01.md",
        "Templates/T.md",
        "Drafts/x.md",
        "Chats/c.md",
        "Archive/old.md",
        "Notes/scratch-1.md",
    ]:
        write(root, rel, "x")
    write(
        root,
        ".obsidian/app.json",
        json.dumps({"userIgnoreFilters": ["Templates/", "Drafts", "/scratch-\\d/", "/[/"]}),
    )
    config = CompanionConfig(index=IndexConfig(exclude=("ops/**", "Archive/**")))
    vault = ObsidianVault(root, config)
    # Session summaries are indexed by their own rule; the rest of an excluded folder is not.
    assert sorted(vault.scan()) == ["Chats/c.md", "a.md", "ops/sessions/2026-01-01/s.md"]
    off = ObsidianVault(root, replace(config, sessions=SessionsConfig(recall=False)))
    assert sorted(off.scan()) == ["Chats/c.md", "a.md"]
    # Excluded and ignored files stay in scan_all: Obsidian still resolves links to them.
    assert "Templates/T.md" in vault.scan_all()
    assert vault.problems == [
        (".obsidian/app.json", vault.problems[0][1]),
    ]
    assert "not a valid regex" in vault.problems[0][1]
    assert vault.is_ignored("Templates/T.md")
    assert vault.is_ignored("Drafts/x.md")
    assert vault.is_ignored("DraftsAndMore/x.md")  # Obsidian's filters are plain path prefixes
    assert vault.is_ignored("Notes/scratch-1.md")
    assert vault.is_ignored(".obsidian/workspace.json")
    assert vault.is_ignored("Sub/.hidden/x.md")
    assert vault.is_ignored("../outside.md")
    assert not vault.is_ignored("Notes/real.md")
    assert vault.is_indexable("Notes/real.md")
    assert not vault.is_indexable("Notes/real.txt")
    assert vault.is_indexable("ops/sessions/2026-01-01/s.md")
    assert not vault.is_indexable("ops/logs/2026-01-01.md")
    assert not vault.is_indexable("Archive/x/y.md")


def test_broken_app_json_is_a_problem_not_a_crash(root: Path) -> None:
    write(root, ".obsidian/app.json", "{broken")
    write(root, "a.md")
    vault = ObsidianVault(root)
    assert list(vault.scan()) == ["a.md"]
    assert vault.problems[0][0] == ".obsidian/app.json"


def test_not_a_folder_is_a_vault_error(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="not a folder"):
        ObsidianVault(tmp_path / "missing")


def test_resolve_path_refuses_everything_outside_the_root(root: Path, tmp_path: Path) -> None:
    vault = ObsidianVault(root)
    assert vault.resolve_path("Sub/new note.md") == root.resolve() / "Sub/new note.md"
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside)
    for bad, why in [
        ("../x.md", "'..'"),
        ("Sub/../../x.md", "'..'"),
        ("..\\x.md", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/x.md", "absolute"),
        ("", "empty"),
        ("a\x00b.md", "NUL"),
        ("escape/new.md", "symbolic link"),
    ]:
        with pytest.raises(VaultError, match=why):
            vault.resolve_path(bad)


def test_symlink_out_of_the_vault_is_skipped_and_unreadable(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md", "secret")
    (root / "linkdir").symlink_to(outside)
    (root / "link.md").symlink_to(outside / "secret.md")
    write(root, "ok.md")
    vault = ObsidianVault(root)
    assert sorted(vault.scan_all()) == ["ok.md"]
    assert sorted(vault.problems) == [
        ("link.md", "symbolic link to outside the vault; skipped"),
        ("linkdir", "symbolic link to outside the vault; skipped"),
    ]
    assert "outside the vault" in note_error(vault, "link.md")
    assert "outside the vault" in note_error(vault, "linkdir/secret.md")
    assert "'..'" in note_error(vault, "../outside/secret.md")
    assert "absolute" in note_error(vault, str(outside / "secret.md"))


def test_symlinks_inside_the_vault_are_followed_once(root: Path) -> None:
    write(root, "Real/a.md", "x")
    (root / "Alias").symlink_to(root / "Real")
    (root / "Shared").mkdir()
    (root / "Shared/b.md").symlink_to(root / "Real/a.md")
    vault = ObsidianVault(root)
    files = vault.scan_all()
    # The folder link leads to a folder already walked by its real path: listed once, reported once.
    assert sorted(files) == ["Real/a.md", "Shared/b.md"]
    assert [p for p, _ in vault.problems] == ["Alias"]
    assert vault.read_note("Alias/a.md").content_hash == vault.read_note("Real/a.md").content_hash


def test_symlink_loops_end_and_are_reported(root: Path) -> None:
    write(root, "A/note.md", "x")
    (root / "A/loop").symlink_to(root)
    (root / "A/self").symlink_to(root / "A/self")
    (root / "A/ping").symlink_to(root / "A/pong")
    (root / "A/pong").symlink_to(root / "A/ping")
    vault = ObsidianVault(root)
    assert sorted(vault.scan_all()) == ["A/note.md"]
    reported = dict(vault.problems)
    assert set(reported) == {"A/loop", "A/self", "A/ping", "A/pong"}
    assert "already in the vault" in reported["A/loop"]
    assert "note" not in reported


def test_broken_symlink_is_reported(root: Path) -> None:
    (root / "gone.md").symlink_to(root / "nothing.md")
    vault = ObsidianVault(root)
    assert vault.scan_all() == {}
    assert [p for p, _ in vault.problems] == ["gone.md"]


def test_file_vanishing_between_scan_and_read(root: Path) -> None:
    write(root, "soon gone.md", "bye")
    vault = ObsidianVault(root)
    assert "soon gone.md" in vault.scan()
    (root / "soon gone.md").unlink()
    assert "vanished" in note_error(vault, "soon gone.md")


def test_folder_is_not_a_note(root: Path) -> None:
    (root / "folder.md").mkdir()
    assert "not a regular file" in note_error(ObsidianVault(root), "folder.md")


def test_fifo_with_md_name_does_not_block(root: Path) -> None:
    os.mkfifo(root / "pipe.md")
    vault = ObsidianVault(root)
    assert vault.scan_all() == {}
    started = time.perf_counter()
    assert "not a regular file" in note_error(vault, "pipe.md")
    assert time.perf_counter() - started < 1


def test_bad_notes_raise_note_errors_naming_the_problem(root: Path) -> None:
    (root / "bin.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    (root / "empty.md").write_bytes(b"")
    write(root, "yaml.md", "---\na: [\n---\n")
    vault = ObsidianVault(root)
    assert "NUL byte" in note_error(vault, "bin.md")
    assert "offset 3" in note_error(vault, "latin.md")
    # Not valid YAML: the note is read all the same, its properties line by line, and says so.
    assert "line 3" in (vault.read_note("yaml.md").frontmatter_problem or "")
    assert vault.read_note("empty.md").body == ""


def test_enormous_note_is_refused_without_reading_it_all(root: Path) -> None:
    with open(root / "huge.md", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: 50 MiB on paper, nothing on disk
    write(root, "small.md", "x" * 2000)
    config = CompanionConfig(index=IndexConfig(max_note_mb=0.001))
    vault = ObsidianVault(root, config)
    assert "52,428,800 bytes" in note_error(vault, "huge.md")
    assert "over the 1,048-byte limit" in note_error(vault, "small.md")
    assert "huge.md" in vault.scan()  # listed; reading it is what fails


def run_as_nobody(action: Callable[[], str]) -> str:
    """Run `action` in a forked child with the uid of `nobody` and return what it returns."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        result = "the child failed before it could report"
        try:
            os.setgid(65534)
            os.setuid(65534)
            result = action()
        finally:
            # Whatever happened, the child ends here and never unwinds into pytest's own frames.
            os.write(write_end, result.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        output = handle.read().decode()
    os.waitpid(pid, 0)
    return output


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A vault outside pytest's private temp folder, so an unprivileged child can walk to it."""
    base = Path(tempfile.mkdtemp(prefix="companion-perm-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        for folder, dirs, _ in os.walk(base):
            for name in dirs:
                (Path(folder) / name).chmod(0o755)
        shutil.rmtree(base)


def test_permission_errors_are_reported(shared_root: Path) -> None:
    write(shared_root, "open.md", "fine")
    write(shared_root, "locked.md", "secret")
    write(shared_root, "Closed/inner.md", "x")
    (shared_root / "locked.md").chmod(0o000)
    (shared_root / "Closed").chmod(0o000)
    vault = ObsidianVault(shared_root)

    def attempt() -> str:
        files = sorted(vault.scan_all())
        try:
            vault.read_note("locked.md")
        except NoteError as exc:
            return f"{files} | {vault.problems} | {exc.reason}"
        return f"{files} | {vault.problems} | read it"

    # Tests run as root here, and root reads mode-000 files; an unprivileged child cannot.
    output = attempt() if os.geteuid() != 0 else run_as_nobody(attempt)
    files, problems, reason = output.split(" | ")
    assert files == "['locked.md', 'open.md']"
    assert "('Closed', 'cannot read folder: Permission denied')" in problems
    assert reason == "permission denied; check the file's owner and mode"


def test_graph_outlinks_backlinks_neighbours_and_unresolved(root: Path) -> None:
    write(
        root,
        "Hub.md",
        "---\nrelated: '[[People/Ada]]'\n---\n[[Spoke A]] [[Spoke B|b]] [[Ghost]] ![[pic.png]]",
    )
    write(root, "Spokes/Spoke A.md", "Back to [[Hub]] and [[Spoke B]] and [[#Self]]")
    write(root, "Spokes/Spoke B.md", "---\naliases: [SB]\n---\nnothing")
    write(root, "People/Ada.md", "[[Far]]")
    write(root, "Far.md", "end")
    write(root, "Attachments/pic.png", "png")
    write(root, "Other.md", "[[SB]]")
    vault = ObsidianVault(root)
    assert [(link.target, target) for link, target in vault.outlinks("Hub.md")] == [
        ("People/Ada", "People/Ada.md"),
        ("Spoke A", "Spokes/Spoke A.md"),
        ("Spoke B", "Spokes/Spoke B.md"),
        ("Ghost", None),
        ("pic.png", "Attachments/pic.png"),
    ]
    assert vault.backlinks("Spokes/Spoke B.md") == ["Hub.md", "Other.md", "Spokes/Spoke A.md"]
    assert vault.backlinks("Spokes/Spoke A.md") == ["Hub.md"]
    assert vault.backlinks("Attachments/pic.png") == ["Hub.md"]
    graph = vault.graph()
    assert graph.neighbours("Spokes/Spoke A.md", hops=1) == {
        "Hub.md": 1,
        "Spokes/Spoke B.md": 1,
    }
    assert graph.neighbours("Spokes/Spoke A.md") == {
        "Hub.md": 1,
        "Spokes/Spoke B.md": 1,
        "Attachments/pic.png": 2,
        "Other.md": 2,
        "People/Ada.md": 2,
    }
    assert [(src, link.target) for src, link in graph.unresolved()] == [("Hub.md", "Ghost")]


def test_graph_updates_incrementally(root: Path) -> None:
    write(root, "A.md", "[[B]] [[C]]")
    write(root, "B.md", "x")
    vault = ObsidianVault(root)
    graph = vault.graph()
    assert [t for _, t in graph.outlinks("A.md")] == ["B.md", None]
    write(root, "C.md", "[[A]]")
    graph.resolver.add("C.md")
    graph.update(vault.read_note("C.md"))
    graph.relink()
    assert [t for _, t in graph.outlinks("A.md")] == ["B.md", "C.md"]
    assert graph.backlinks("A.md") == ["C.md"]
    graph.remove("A.md")
    assert graph.backlinks("B.md") == []
    assert "A.md" not in graph


def test_broken_notes_do_not_stop_the_graph(root: Path) -> None:
    write(root, "good.md", "[[bad]]")
    (root / "bad.md").write_bytes(b"\xff\xfe\x00")
    vault = ObsidianVault(root)
    assert [t for _, t in vault.outlinks("good.md")] == ["bad.md"]
    assert [p for p, _ in vault.problems] == ["bad.md"]


def test_a_scan_lists_ten_thousand_notes_in_nested_folders(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for folder in range(100):
        sub = root / f"Folder {folder:03}" / "Inner"
        sub.mkdir(parents=True)
        for index in range(100):
            target = sub if index % 2 else sub.parent
            (target / f"note {index:03}.md").write_text("x")
    vault = ObsidianVault(root)
    first = vault.scan()
    assert len(first) == 10_000
    assert vault.scan() == first  # its speed is measured by `companion bench`, never asserted here


def test_templates_and_excluded_files_stay_out_of_the_index_and_are_counted(tmp_path: Path) -> None:
    from companion.config import CompanionConfig, IndexConfig
    from companion.vault.reader import ObsidianVault

    root = tmp_path / "vault"
    write(root, ".obsidian/templates.json", '{"folder": "Meta/Templates"}')
    write(root, ".obsidian/plugins/templater-obsidian/data.json", '{"templates_folder": "Templater"}')
    write(root, ".obsidian/app.json", '{"userIgnoreFilters": ["Private/"]}')
    write(root, "Meta/Templates/Daily.md", "# {{date}}\n")
    write(root, "Templater/Meeting.md", "<% tp.date.now() %>\n")
    write(root, "Private/Diary.md", "Dear diary.\n")
    write(root, "Notes/Real.md", "A real note linking to [[Daily]].\n")
    vault = ObsidianVault(root)
    assert set(vault.scan()) == {"Notes/Real.md"}
    assert vault.left_out == {
        "the templates folder Meta/Templates/ (index.templates: false)": 1,
        "the templates folder Templater/ (index.templates: false)": 1,
        "Obsidian's excluded files (userIgnoreFilters in .obsidian/app.json)": 1,
    }
    assert not vault.is_indexable("Meta/Templates/Weekly.md")
    kept = ObsidianVault(root, CompanionConfig(index=IndexConfig(templates=True)))
    assert set(kept.scan()) == {"Notes/Real.md", "Meta/Templates/Daily.md", "Templater/Meeting.md"}


def test_a_link_to_a_template_still_resolves_in_the_index_graph(tmp_path: Path) -> None:
    from indexer.graphs import manifest_graph
    from tests.helpers.workspaces import workspace

    root = tmp_path / "vault"
    write(root, ".obsidian/templates.json", '{"folder": "Templates"}')
    write(root, "Templates/Book.md", "---\ntype: template\n---\n")
    write(root, "Notes/Reading.md", "Made from [[Book]].\n")
    ws = workspace(root, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        graph = manifest_graph(ws.manifest.notes(), ws.vault.scan_all())
        assert [target for _link, target in graph.outlinks("Notes/Reading.md")] == ["Templates/Book.md"]
    finally:
        ws.close()
