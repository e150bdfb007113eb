"""set_field / remove_field: only the edited property's lines change, and the result reads back as intended."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import CurationError
from companion.vault.frontmatter_edit import properties, remove_field, rewrite_field, scalar, set_field, split_body
from companion.vault.parse import parse_note
from tests.helpers.yamlish import YAMLISH

NOTE = """---
title: Hello world
# a comment about the tags
tags:
- alpha
- beta

status: draft
---
Body with [[Link]] and `code`.
"""


def read_back(text: str) -> dict[str, object]:
    """The frontmatter as the project's parser reads the bytes of the note."""
    return parse_note("note.md", text.encode("utf-8")).frontmatter


# -- set_field
# -----------------------------------------------------------------------------------------------------------------


def test_replacing_a_scalar_changes_only_its_line() -> None:
    out = set_field(NOTE, "status", "done")
    assert out == NOTE.replace("status: draft", "status: done")


def test_replacing_a_list_keeps_the_style_it_was_written_in() -> None:
    out = set_field(NOTE, "tags", ["gamma", "delta"])
    assert out == NOTE.replace("tags:\n- alpha\n- beta\n", "tags:\n- gamma\n- delta\n")  # column zero stays
    assert read_back(out)["tags"] == ["gamma", "delta"]
    deep = "---\ntags:\n    - a\n---\nbody\n"
    assert set_field(deep, "tags", ["a", "b"]) == "---\ntags:\n    - a\n    - b\n---\nbody\n"
    flow = "---\ntags: [a, b]\nx: 1\n---\nbody\n"
    assert set_field(flow, "tags", ["a", "b", "c,d"]) == '---\ntags: [a, b, "c,d"]\nx: 1\n---\nbody\n'
    assert read_back(set_field(flow, "tags", ["a", "c,d"]))["tags"] == ["a", "c,d"]


def test_replacing_an_indented_list_and_a_block_scalar() -> None:
    text = "---\ntags:\n  - a\n  - b\nnote: |\n  line one\n\n  line two\nafter: x\n---\nbody\n"
    out = set_field(text, "note", "short")
    assert out == "---\ntags:\n  - a\n  - b\nnote: short\nafter: x\n---\nbody\n"
    out = set_field(text, "tags", [])
    assert out == text.replace("tags:\n  - a\n  - b\n", "tags: []\n")


def test_a_property_already_so_is_left_as_written() -> None:
    text = "---\npinned: True  # by hand\ntags: ['a', \"b\"]\ntitle: 'Quoted'\n---\nbody\n"
    assert set_field(text, "pinned", True) == text
    assert set_field(text, "tags", ["a", "b"]) == text
    assert set_field(text, "title", "Quoted") == text


def test_a_list_that_gains_items_keeps_its_items_as_written() -> None:
    block = "---\naliases:\n  - 'Alpha'  # the old name\n  - \"Beta\"\nstatus: draft\n---\nbody\n"
    assert set_field(block, "aliases", ["Alpha", "Beta", "Gamma"]) == block.replace(
        '  - "Beta"\n', '  - "Beta"\n  - Gamma\n'
    )
    flow = "---\ntags: ['x', \"y\" ]  # mine\n---\nbody\n"
    assert set_field(flow, "tags", ["x", "y", "z", "a,b"]) == '---\ntags: [\'x\', "y", z, "a,b" ]  # mine\n---\nbody\n'
    # Not only items added: written anew, in the list's style.
    assert set_field(flow, "tags", ["y", "x"]) == "---\ntags: [y, x]\n---\nbody\n"


def test_rewrite_field_changes_a_value_where_it_stands() -> None:
    text = "---\nup: '[[Old]]'  # parent\nrelated:\n  - '[[Old|the old one]]'\n  - \"[[Other]]\"\n---\nbody\n"
    out = rewrite_field(
        text, "related", lambda lines: lines.replace("[[Old", "[[New"), ["[[New|the old one]]", "[[Other]]"]
    )
    assert out == text.replace("'[[Old|the old one]]'", "'[[New|the old one]]'")
    # Edited text that would not read back as the value (a quote inside single quotes): written anew instead.
    out = rewrite_field(text, "up", lambda lines: lines.replace("Old", "it's"), "[[it's]]")
    assert out == text.replace("up: '[[Old]]'  # parent", 'up: "[[it\'s]]"')


def test_a_missing_key_is_appended_at_the_end_of_the_block() -> None:
    out = set_field(NOTE, "pinned", True)
    assert out == NOTE.replace("status: draft\n---", "status: draft\npinned: true\n---")
    assert read_back(out)["pinned"] is True


def test_a_note_without_frontmatter_gets_a_block() -> None:
    assert set_field("Just text.\n", "type", "fact") == "---\ntype: fact\n---\nJust text.\n"
    assert set_field("", "pinned", False) == "---\npinned: false\n---\n"


def test_empty_frontmatter_block() -> None:
    assert set_field("---\n---\nbody\n", "pinned", True) == "---\npinned: true\n---\nbody\n"


def test_a_quoted_key_is_found() -> None:
    text = '---\n"pinned": false # was pinned once\nother: 1\n---\n'
    assert set_field(text, "pinned", True) == "---\npinned: true\nother: 1\n---\n"


def test_crlf_and_bom_are_kept() -> None:
    text = "\ufeff---\r\ntitle: x\r\nstatus: a\r\n---\r\nbody\r\nmore\r\n"
    out = set_field(text, "status", "b")
    assert out == "\ufeff---\r\ntitle: x\r\nstatus: b\r\n---\r\nbody\r\nmore\r\n"
    out = set_field(text, "tags", ["p", "q"])
    assert out == "\ufeff---\r\ntitle: x\r\nstatus: a\r\ntags:\r\n  - p\r\n  - q\r\n---\r\nbody\r\nmore\r\n"
    assert set_field("\ufeffbody\r\n", "pinned", True) == "\ufeff---\r\npinned: true\r\n---\r\nbody\r\n"


@pytest.mark.parametrize(
    "value",
    [
        "yes",
        "no",
        "on",
        "off",
        "null",
        "~",
        "true",
        "False",
        "12",
        "0123",
        "1.5",
        "1e3",
        ".inf",
        "0x1f",
        "2026-01-01",
        "2026-01-01 10:00",
        "14:03",
        "a: b",
        "a #b",
        "#tag",
        "[[Note]]",
        "- item",
        "? q",
        "*alias",
        "&anchor",
        "!tag",
        "|",
        ">",
        "'quoted'",
        '"quoted"',
        "%x",
        "@x",
        "`x`",
        "{a}",
        "",
        " padded",
        "padded ",
        "two\nlines",
        "tab\there",
        "nel\x85ls\u2028ps\u2029",
        "bom\ufeff",
        "bell\x07",
        "=",
        "<<",
    ],
)
def test_strings_other_types_would_take_are_quoted(value: str) -> None:
    rendered = scalar(value)
    assert rendered.startswith('"'), rendered
    out = set_field("---\na: 1\n---\n", "k", value)
    assert read_back(out) == {"a": 1, "k": value}
    # YAML 1.1 readers (PyYAML's default) read it as the same string too.
    assert yaml.safe_load(out.split("---\n")[1]) == {"a": 1, "k": value}


@pytest.mark.parametrize(
    "value",
    [
        "draft",
        "hello world",
        "Ünïcödé text",
        "a-b_c/d",
        "x,y",
        "v1.2.3",
        "2026 plan",
        'back\\slash "and" quote',
        "emoji 🧠",
    ],
)
def test_plain_strings_stay_plain(value: str) -> None:
    assert scalar(value) == value
    assert read_back(set_field("", "k", value))["k"] == value


def test_bools_and_lists_read_back() -> None:
    out = set_field(NOTE, "flag", False)
    assert read_back(out)["flag"] is False
    out = set_field(out, "items", ["yes", "2026-01-01", "plain", "a: b"])
    assert read_back(out)["items"] == ["yes", "2026-01-01", "plain", "a: b"]
    assert 'items:\n  - "yes"\n  - "2026-01-01"\n  - plain\n  - "a: b"\n' in out


# -- remove_field
# --------------------------------------------------------------------------------------------------------------


def test_remove_keeps_everything_else() -> None:
    assert remove_field(NOTE, "tags") == NOTE.replace("tags:\n- alpha\n- beta\n", "")
    assert remove_field(NOTE, "status") == NOTE.replace("status: draft\n", "")
    assert remove_field(NOTE, "title") == NOTE.replace("title: Hello world\n", "")


def test_remove_a_missing_key_or_without_frontmatter_changes_nothing() -> None:
    assert remove_field(NOTE, "absent") == NOTE
    assert remove_field("no frontmatter\n", "pinned") == "no frontmatter\n"


def test_set_then_remove_gives_the_original_back() -> None:
    for original in ("Plain note.\n", "\ufeffBOM note\r\n", "", NOTE):
        assert remove_field(set_field(original, "pinned", True), "pinned") == original


def test_remove_keeps_a_block_that_still_holds_comments() -> None:
    assert remove_field("---\n# keep me\npinned: true\n---\nx\n", "pinned") == "---\n# keep me\n---\nx\n"


def test_remove_with_crlf() -> None:
    text = "---\r\npinned: true\r\ntype: fact\r\n---\r\nbody\r\n"
    assert remove_field(text, "pinned") == "---\r\ntype: fact\r\n---\r\nbody\r\n"


# -- refusals
# ------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("---\na: [1\n---\nbody\n", "does not parse"),
        ("---\n- a\n- b\n---\n", "does not parse"),
        ("---\na: &x 1\nb: *x\n---\n", "too unusual"),
        ("---\n{a: 1, b: 2}\n---\n", "too unusual"),
        ("---\na: 1\na: 2\n---\n", "too unusual"),
        ("---\na: 1\nno closing line\n", "never closed"),
    ],
)
def test_unusual_or_broken_frontmatter_is_refused(text: str, words: str) -> None:
    with pytest.raises(CurationError) as caught:
        set_field(text, "a", "new", path="Notes/odd.md")
    message = str(caught.value)
    assert message.startswith("Notes/odd.md: ")
    assert words in message
    assert "nothing was written" in message


def test_remove_refused_when_the_key_comes_from_a_merge() -> None:
    text = "---\nbase: &b {type: fact}\n<<: *b\n---\n"
    with pytest.raises(CurationError, match="too unusual"):
        remove_field(text, "type", path="m.md")


def test_bad_values_are_refused() -> None:
    with pytest.raises(CurationError):
        set_field(NOTE, "k", 3)  # type: ignore[arg-type]
    with pytest.raises(CurationError):
        set_field(NOTE, "k", ["a", 1])  # type: ignore[list-item]
    with pytest.raises(CurationError):
        set_field(NOTE, " ", "x")


def test_helpers() -> None:
    assert properties(NOTE) == {"title": "Hello world", "tags": ["alpha", "beta"], "status": "draft"}
    assert split_body(NOTE) == "Body with [[Link]] and `code`.\n"
    assert split_body("\ufeffno block\n") == "no block\n"


# -- property
# ------------------------------------------------------------------------------------------------------------------

OTHER_KEYS = ["title", "status", "source", "created", "aliases"]
LINE_ENDINGS = st.sampled_from(["\n", "\r\n"])
VALUES = st.one_of(
    st.booleans(),
    st.text(max_size=30),
    st.lists(st.text(max_size=15), max_size=4),
)
# Hand-written existing values are JSON strings, which YAML reads too, except for JSON's surrogate-pair escapes of
# characters beyond the Basic Multilingual Plane: those stay out of them.
BMP_TEXT = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=12)
EXISTING = st.one_of(st.booleans(), BMP_TEXT, st.lists(BMP_TEXT, max_size=4))


def _other_entry(key: str, value: str, as_list: bool, nl: str) -> list[str]:
    if as_list:
        return [f"{key}:{nl}", f"  - {json.dumps(value)}{nl}"]
    return [f"{key}: {json.dumps(value)}{nl}"]


def _without_key(lines: list[str], key: str) -> list[str]:
    """The lines without the top-level `key:` line and the lines that continue it."""
    out: list[str] = []
    skipping = False
    for line in lines:
        if line.startswith(f"{key}:"):
            skipping = True
            continue
        if skipping and line.startswith("  "):
            continue
        skipping = False
        out.append(line)
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    others=st.lists(
        st.tuples(st.sampled_from(OTHER_KEYS), BMP_TEXT, st.booleans()),
        max_size=4,
        unique_by=lambda item: item[0],
    ),
    existing=st.one_of(st.none(), EXISTING),
    position=st.integers(min_value=0, max_value=4),
    value=VALUES,
    nl=LINE_ENDINGS,
    bom=st.booleans(),
)
def test_set_field_changes_only_its_own_lines(
    others: list[tuple[str, str, bool]],
    existing: str | bool | list[str] | None,
    position: int,
    value: str | bool | list[str],
    nl: str,
    bom: bool,
) -> None:
    groups = [_other_entry(key, text, as_list, nl) for key, text, as_list in others]
    if existing is not None:
        # The existing value is written by hand (JSON strings are YAML strings), not by the code under test.
        if isinstance(existing, bool):
            own = [f"pick: {'true' if existing else 'false'}{nl}"]
        elif isinstance(existing, str):
            own = [f"pick: {json.dumps(existing)}{nl}"]
        elif existing:
            own = [f"pick:{nl}", *(f"  - {json.dumps(item)}{nl}" for item in existing)]
        else:
            own = [f"pick: []{nl}"]
        groups.insert(min(position, len(groups)), own)
    lines = [line for group in groups for line in group]
    body = f"Body line{nl}[[Link]] here{nl}"
    text = ("\ufeff" if bom else "") + f"---{nl}" + "".join(lines) + f"---{nl}" + body

    out = set_field(text, "pick", value)

    assert out.startswith(("\ufeff" if bom else "") + f"---{nl}")
    assert out.endswith(f"---{nl}{body}")
    new_lines = out.removeprefix("\ufeff").splitlines(keepends=True)
    old_lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    assert _without_key(new_lines, "pick") == _without_key(old_lines, "pick")
    assert all(line.endswith(nl) for line in new_lines)
    parsed = read_back(out)
    assert parsed["pick"] == value
    assert {k: v for k, v in parsed.items() if k != "pick"} == {
        key: ([text] if as_list else text) for key, text, as_list in others
    }
    # Removing it again leaves exactly the other lines (a block left empty goes, as Obsidian does it).
    expected = _without_key(old_lines, "pick")
    if expected[:2] == [f"---{nl}", f"---{nl}"]:
        expected = expected[2:]
    assert remove_field(out, "pick").removeprefix("\ufeff").splitlines(keepends=True) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frontmatter=YAMLISH, value=VALUES, nl=LINE_ENDINGS)
def test_any_frontmatter_is_edited_correctly_or_refused(
    frontmatter: str, value: str | bool | list[str], nl: str
) -> None:
    text = f"---{nl}{frontmatter.replace(chr(10), nl)}{nl}---{nl}body{nl}"
    try:
        before = properties(text)
    except CurationError:
        before = None
    for edit in (lambda t: set_field(t, "a", value), lambda t: remove_field(t, "a")):
        try:
            out = edit(text)
        except CurationError as exc:
            assert "nothing was written" in str(exc)
            continue
        assert before is not None
        after = properties(out)
        assert {k: v for k, v in after.items() if k != "a"} == {k: v for k, v in before.items() if k != "a"}
        # A block left with nothing in it goes (see `remove_field`); otherwise the body follows the block untouched.
        assert out.endswith(f"---{nl}body{nl}") or (not after and out == f"body{nl}")
