"""Link resolution by Obsidian's rules: names, shortest path, folders, aliases, files."""

from __future__ import annotations

from companion.vault.resolve import LinkResolver

FILES = [
    "Home.md",
    "Projects/Plan.md",
    "Projects/Alpha/Plan.md",
    "Archive/2020/Plan.md",
    "Archive/Plan.md",
    "People/Ada Lovelace.md",
    "Attachments/diagram.png",
    "Attachments/report.pdf",
    "Views/Books.base",
    "Notes/Version 1.2.md",
    "Notes/Readme",
    "Notes/Readme.md",
    "Deep/a/b/Target.md",
]


def resolver() -> LinkResolver:
    return LinkResolver(FILES, {"People/Ada Lovelace.md": ["Ada", "Countess of Lovelace"]})


def test_bare_name_means_md_and_is_case_insensitive() -> None:
    r = resolver()
    assert r.resolve("Home", "Projects/Plan.md") == "Home.md"
    assert r.resolve("home", "Projects/Plan.md") == "Home.md"
    assert r.resolve("Home.md", "x.md") == "Home.md"
    assert r.resolve("ada lovelace", "x.md") == "People/Ada Lovelace.md"


def test_shortest_path_wins_among_files_with_one_name() -> None:
    # Plan.md exists in Projects/, Projects/Alpha/, Archive/ and Archive/2020/: fewest folders wins,
    # then alphabetical order (Archive/ before Projects/).
    assert resolver().resolve("Plan", "Home.md") == "Archive/Plan.md"


def test_a_file_in_the_source_folder_wins() -> None:
    r = resolver()
    assert r.resolve("Plan", "Projects/Alpha/Notes.md") == "Projects/Alpha/Plan.md"
    assert r.resolve("Plan", "Archive/2020/x.md") == "Archive/2020/Plan.md"
    assert r.resolve("Plan", "Projects/x.md") == "Projects/Plan.md"


def test_folder_qualified_targets() -> None:
    r = resolver()
    assert r.resolve("Projects/Alpha/Plan", "Home.md") == "Projects/Alpha/Plan.md"
    assert r.resolve("/Archive/Plan", "Home.md") == "Archive/Plan.md"
    assert r.resolve("archive/2020/plan", "Home.md") == "Archive/2020/Plan.md"
    # A path suffix: `Alpha/Plan` is only `Projects/Alpha/Plan.md`.
    assert r.resolve("Alpha/Plan", "Home.md") == "Projects/Alpha/Plan.md"
    assert r.resolve("b/Target", "Home.md") == "Deep/a/b/Target.md"
    assert r.resolve("Nowhere/Plan", "Home.md") is None


def test_relative_targets() -> None:
    r = resolver()
    assert r.resolve("./Alpha/Plan", "Projects/x.md") == "Projects/Alpha/Plan.md"
    assert r.resolve("../Home", "Projects/x.md") == "Home.md"
    assert r.resolve("../../Home", "Projects/Alpha/x.md") == "Home.md"
    assert r.resolve("../Alpha/Plan", "Projects/Beta/x.md") == "Projects/Alpha/Plan.md"
    assert r.resolve("2020/Plan", "Archive/x.md") == "Archive/2020/Plan.md"


def test_attachments_and_other_extensions_resolve_as_written() -> None:
    r = resolver()
    assert r.resolve("diagram.png", "Home.md") == "Attachments/diagram.png"
    assert r.resolve("Attachments/report.pdf", "Home.md") == "Attachments/report.pdf"
    assert r.resolve("Books.base", "Home.md") == "Views/Books.base"
    assert r.resolve("Version 1.2", "Home.md") == "Notes/Version 1.2.md"
    # Without an extension the note wins over a file literally called `Readme`.
    assert r.resolve("Readme", "Home.md") == "Notes/Readme.md"


def test_aliases_resolve_when_no_file_matches() -> None:
    r = resolver()
    assert r.resolve("Ada", "Home.md") == "People/Ada Lovelace.md"
    assert r.resolve("countess of lovelace", "Home.md") == "People/Ada Lovelace.md"


def test_unresolved_and_same_note_targets() -> None:
    r = resolver()
    assert r.resolve("Does not exist", "Home.md") is None
    assert r.resolve("missing.png", "Home.md") is None
    assert r.resolve("", "Projects/Plan.md") == "Projects/Plan.md"


def test_incremental_add_remove_and_alias_update() -> None:
    r = resolver()
    r.add("Plan.md")
    assert r.resolve("Plan", "Home.md") == "Plan.md"
    r.remove("Plan.md")
    assert r.resolve("Plan", "Home.md") == "Archive/Plan.md"
    r.add("People/Ada Lovelace.md", ["Enchantress"])
    assert r.resolve("Ada", "Home.md") is None
    assert r.resolve("Enchantress", "Home.md") == "People/Ada Lovelace.md"
    r.remove("People/Ada Lovelace.md")
    assert r.resolve("Enchantress", "Home.md") is None
    assert r.resolve("Ada Lovelace", "Home.md") is None
    r.remove("never-there.md")
    assert "Home.md" in r
    assert len(r) == len(FILES) - 1
