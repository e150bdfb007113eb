"""parse_note: every Note field, Obsidian's YAML, kinds, and each bad single-file input."""

from __future__ import annotations

import hashlib
import json

import pytest

from companion.errors import NoteError
from companion.vault.notes import Heading, Link
from companion.vault.parse import (
    MAX_ALIASES,
    KindRules,
    classify,
    load_frontmatter,
    parse_note,
)

NOTE = b"""---
type: Fact
aliases: Shorty
tags: [alpha, "#beta"]
related: "[[Other]]"
created: 2023-09-12
updated: 2023-09-12 10:30:00
time: 14:03
answer: no
zip: 01234
ratio: .5
---
# Title

Body with [[Link|alias]] and #gamma.
A block ^blk
"""


def test_parse_note_fills_every_field() -> None:
    note = parse_note("Folder/My Note.md", NOTE)
    assert note.path == "Folder/My Note.md"
    assert note.title == "My Note"
    assert note.body_line == 12
    assert note.body.startswith("# Title\n")
    assert note.content_hash == hashlib.sha256(NOTE).hexdigest()
    assert note.kind == "memory"
    assert note.note_type == "fact"
    assert note.aliases == ("Shorty",)
    assert note.tags == ("alpha", "beta", "gamma")
    assert note.headings == (Heading(1, "Title", 12),)
    assert note.block_ids == ("blk",)
    assert note.links == (
        Link(target="Other", line=4, property="related"),
        Link(target="Link", alias="alias", line=14),
    )


def test_frontmatter_is_json_safe_and_read_as_yaml_1_2() -> None:
    fm = parse_note("n.md", NOTE).frontmatter
    json.dumps(fm, allow_nan=False)
    assert fm["created"] == "2023-09-12"
    assert fm["updated"] == "2023-09-12T10:30:00"
    # YAML 1.1 would give 843, False and 668 (octal); Obsidian, like YAML 1.2, does not.
    assert fm["time"] == "14:03"
    assert fm["answer"] == "no"
    assert fm["zip"] == 1234
    assert fm["ratio"] == 0.5


def test_odd_yaml_values_become_text() -> None:
    text = "nan: .nan\ninf: -.inf\nbad_date: 2023-02-30\nblob: !!binary aGk=\n2024: year key\n"
    data = load_frontmatter(text).data
    assert data == {
        "nan": "nan",
        "inf": "-inf",
        "bad_date": "2023-02-30",
        "blob": "aGk=",
        "2024": "year key",
    }


def test_template_placeholders_do_not_break_the_note() -> None:
    # kepano's templates hold `created: {{date}}`, a mapping with a mapping as key in YAML.
    note = parse_note("Templates/T.md", b"---\ncreated: {{date}}\ntags: [t]\n---\n")
    assert note.frontmatter["created"] == {"{date}": None}
    assert note.tags == ("t",)


def test_no_frontmatter_and_unclosed_frontmatter() -> None:
    plain = parse_note("a.md", b"Just text [[A]]\n")
    assert (plain.frontmatter, plain.body_line, plain.links[0].line) == ({}, 0, 0)
    unclosed = parse_note("b.md", b"---\ntitle: x\nno closing line [[B]]\n")
    assert unclosed.frontmatter == {}
    assert unclosed.body_line == 0
    assert [link.target for link in unclosed.links] == ["B"]


def test_empty_file_and_empty_frontmatter_are_valid() -> None:
    empty = parse_note("empty.md", b"")
    assert (empty.body, empty.frontmatter, empty.links, empty.title) == ("", {}, (), "empty")
    assert empty.content_hash == hashlib.sha256(b"").hexdigest()
    only_fm = parse_note("fm.md", b"---\n---\n")
    assert (only_fm.frontmatter, only_fm.body, only_fm.body_line) == ({}, "", 2)
    comments = parse_note("c.md", b"---\n# just a comment\n---\nbody\n")
    assert comments.frontmatter == {}


def test_crlf_and_bom_are_accepted() -> None:
    note = parse_note("w.md", b"\xef\xbb\xbf---\r\ntype: fact\r\n---\r\nline [[A]]\r\n")
    assert note.note_type == "fact"
    assert note.links[0].line == 3


def test_aliases_as_list_and_type_as_list() -> None:
    note = parse_note("k.md", b"---\naliases: [One, Two]\ntype: []\n---\n")
    assert note.aliases == ("One", "Two")
    assert note.note_type is None
    assert note.kind == "note"


@pytest.mark.parametrize(
    ("path", "frontmatter", "expected"),
    [
        ("ops/sessions/2026-06-11/turn.md", {"type": "fact"}, ("session", "fact")),
        ("Chats/x.md", {"type": "conversation"}, ("conversation", "conversation")),
        ("Threads/x.md", {}, ("conversation", None)),
        ("Threads", {}, ("conversation", None)),
        ("Threadsx/x.md", {}, ("note", None)),
        ("Mem/x.md", {"type": "Belief"}, ("memory", "belief")),
        ("Mem/y.md", {"type": "recipe"}, ("memory", "recipe")),
        ("Mem/z.md", {"type": ["fact"]}, ("note", None)),
        ("Notes/a.md", {"type": "book"}, ("note", "book")),
        ("Notes/b.md", {"type": "  "}, ("note", None)),
    ],
)
def test_classify(path: str, frontmatter: dict[str, object], expected: tuple[str, str]) -> None:
    rules = KindRules(sessions_folder="ops/sessions/", conversation_folders=("Threads",))
    assert classify(path, frontmatter, rules) == expected


def test_kind_argument_overrides_classification() -> None:
    assert parse_note("a.md", b"---\ntype: fact\n---\n", kind="note").kind == "note"


def reason(raw: bytes, **kwargs: int | bool) -> str:
    with pytest.raises(NoteError) as caught:
        parse_note("Bad/note.md", raw, **kwargs)  # type: ignore[arg-type]
    assert caught.value.path == "Bad/note.md"
    assert str(caught.value).startswith("Bad/note.md: ")
    return caught.value.reason


def test_malformed_yaml_names_the_file_line() -> None:
    text = reason(b"---\ntitle: ok\nlist: [a, b\nnext: x\n---\nbody\n", strict=True)
    # File line 1 is `---`; the flow list opened on line 3 breaks on line 4.
    assert "malformed YAML frontmatter at line 4" in text


def test_bad_indentation_names_the_line() -> None:
    text = reason(b"---\na: 1\n  b: 2\n---\n", strict=True)
    assert "line 3" in text


def test_frontmatter_that_is_not_a_mapping() -> None:
    assert "a list, not a mapping" in reason(b"---\n- a\n- b\n---\n", strict=True)
    assert "a single value, not a mapping" in reason(b"---\njust text\n---\n", strict=True)


def test_alias_bomb_by_count_is_refused() -> None:
    refs = ", ".join(["*a"] * (MAX_ALIASES + 1))
    text = reason(f"---\nbase: &a x\nmany: [{refs}]\n---\n".encode())
    assert f"more than {MAX_ALIASES} YAML aliases" in text


def test_billion_laughs_with_few_aliases_is_refused() -> None:
    lines = ["---", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    text = reason(("\n".join([*lines, "---", ""])).encode())
    assert "alias bomb" in text


def test_recursive_alias_is_refused() -> None:
    assert "refers to its own anchor" in reason(b"---\na: &a [x, *a]\n---\n")


def test_merge_key_bomb_is_refused() -> None:
    lines = ["---", "m0: &m0 {k: 1}"]
    for i in range(1, 40):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}")
    assert "alias bomb" in reason(("\n".join([*lines, "---", ""])).encode())


def test_modest_aliases_are_fine() -> None:
    note = parse_note("a.md", b"---\nbase: &b [x, y]\ncopy: *b\n---\n")
    assert note.frontmatter == {"base": ["x", "y"], "copy": ["x", "y"]}


def test_huge_frontmatter_is_refused() -> None:
    big = "---\n" + "".join(f"key{i}: {'v' * 60}\n" for i in range(5000)) + "---\nbody\n"
    assert "over the 256 KiB limit" in reason(big.encode())


def test_non_utf8_names_the_byte_offset() -> None:
    text = reason("---\ntitle: café\n---\n".encode("latin-1"))
    assert "not valid UTF-8" in text
    assert "offset 14" in text  # 4 bytes of the opening line, 10 of `title: caf`
    assert "0xe9" in text


def test_binary_content_with_md_name() -> None:
    assert "NUL byte at offset 4" in reason(b"\x89PNG\x00\x00\x00\rIHDR")
    assert "binary" in reason("UTF-16 text".encode("utf-16"))


def test_enormous_note_is_refused_before_decoding() -> None:
    assert "over the 1,000-byte limit" in reason(b"x" * 1001, max_bytes=1000)
    assert parse_note("ok.md", b"x" * 1000, max_bytes=1000).body == "x" * 1000


def test_deeply_nested_frontmatter_is_a_note_error() -> None:
    text = reason(b"---\na: " + b"[" * 5000 + b"]" * 5000 + b"\n---\n", strict=True)
    assert "nested too deeply" in text or "frontmatter" in text


def test_explicit_tags_that_cannot_be_built_are_note_errors() -> None:
    assert "not an integer" in reason(b"---\na: !!int abc\n---\n", strict=True)
    assert "malformed" in reason(b"---\na: !!python/object:os.system x\n---\n", strict=True)
    assert "malformed" in reason(b"---\na: !!map [a, b]\n---\n", strict=True)
    assert "not a mapping" in reason(b"---\n!!set {a: 1}\n---\n", strict=True)
