"""Obsidian link syntax: every link form, tags, block ids, headings, and what must not count."""

from __future__ import annotations

from companion.vault.links import (
    extract,
    frontmatter_links,
    frontmatter_tags,
    links_as_text,
    make_markdown,
    parse_link_text,
)
from companion.vault.notes import Heading, Link


def targets(body: str) -> list[str]:
    return [link.target for link in extract(body).links]


def test_plain_alias_heading_block_and_same_note_links() -> None:
    facts = extract("See [[Alpha]], [[Beta|the beta]], [[Gamma#Intro]], [[Delta#^quote-1]], [[#Local]].")
    assert facts.links == (
        Link(target="Alpha"),
        Link(target="Beta", alias="the beta"),
        Link(target="Gamma", heading="Intro"),
        Link(target="Delta", block="quote-1"),
        Link(target="", heading="Local"),
    )


def test_embeds_are_links_marked_as_embeds() -> None:
    facts = extract("![[diagram.png|300]] and ![[Books.base#Author]] and ![[Note]]")
    assert [(link.target, link.embed) for link in facts.links] == [
        ("diagram.png", True),
        ("Books.base", True),
        ("Note", True),
    ]
    assert facts.links[0].alias == "300"
    assert facts.links[1].heading == "Author"


def test_heading_and_alias_together_and_nested_heading_path() -> None:
    (link,) = extract("[[Note#Part one#Detail|shown]]").links
    assert link == Link(target="Note", heading="Part one#Detail", alias="shown")


def test_links_in_code_spans_and_code_blocks_are_not_links() -> None:
    body = "\n".join(
        [
            "Inline `[[InCode]]` and ``a [[InDouble]] b`` but [[Real]].",
            "",
            "```markdown",
            "[[InFence]] #fencetag",
            "```",
            "",
            "~~~",
            "![[InTildeFence]]",
            "~~~",
            "",
            "    [[InIndented]]",
            "",
            "After.",
        ]
    )
    assert targets(body) == ["Real"]
    assert extract(body).tags == ()


def test_escaped_brackets_and_unclosed_links_are_text() -> None:
    assert targets(r"\[[Escaped]] and [[Unclosed and [[ ]] and [[multi" + "\nline]]") == []


def test_links_in_lists_quotes_tables_and_headings() -> None:
    body = "\n".join(
        [
            "# About [[InHeading]]",
            "- item [[InList]]",
            "> quoted [[InQuote]]",
            "",
            "| a | b |",
            "|---|---|",
            r"| [[InTable\|shown]] | x |",
        ]
    )
    facts = extract(body)
    assert [link.target for link in facts.links] == ["InHeading", "InList", "InQuote", "InTable"]
    assert facts.links[-1].alias == "shown"


def test_markdown_links_to_local_notes_count_but_urls_do_not() -> None:
    body = (
        "[one](Some%20Note.md) [two](folder/note.md#Part) [three](<Other Note.md>) "
        "[web](https://example.com/x.md) [mail](mailto:a@b.c) [proto](//cdn.example.com/a.md) "
        "[obs](obsidian://open?vault=x) ![pic](images/cat%20photo.png) [here](#Local%20heading)"
    )
    links = extract(body).links
    assert [(link.target, link.heading, link.embed) for link in links] == [
        ("Some Note.md", None, False),
        ("folder/note.md", "Part", False),
        ("Other Note.md", None, False),
        ("images/cat photo.png", None, True),
        ("", "Local heading", False),
    ]
    assert links[0].alias == "one"


def test_reference_links_resolve_to_the_definition_given_elsewhere_in_the_note() -> None:
    body = "Plain words first.\n\nSee [the plan][plan] and [later].\n\n[plan]: Projects/Plan.md\n[later]: Later.md\n"
    links = extract(body).links
    assert [(link.target, link.alias, link.line) for link in links] == [
        ("Projects/Plan.md", "the plan", 2),
        ("Later.md", "later", 2),
    ]


def test_obsidian_comments_hold_no_links() -> None:
    body = "\n".join(
        [
            "Before %% inline [[Hidden1]] %% after [[Shown1]].",
            "",
            "%%",
            "[[Hidden2]]",
            "",
            "[[Hidden3]] across a blank line",
            "%%",
            "[[Shown2]]",
            "",
            "%% one-line block [[Hidden4]] %%",
            "",
            "Text then %% unclosed [[Hidden5]]",
        ]
    )
    assert targets(body) == ["Shown1", "Shown2"]


def test_link_lines_are_file_lines() -> None:
    body = "first\nsecond [[A]]\n\n- x\n- y [[B]]\n\n[md](c.md) on\na line [[D]]"
    facts = extract(body, line_offset=5)
    assert [(link.target, link.line) for link in facts.links] == [
        ("A", 6),
        ("B", 9),
        ("c.md", 11),
        ("D", 12),
    ]


def test_tags_in_body() -> None:
    body = "\n".join(
        [
            "#start of line, mid #nested/tag/deep and #with-dash_und",
            "not a tag: #123 or bug#4 or http://x.com/page#frag or [l](http://y.com/#f)",
            "#y1984 counts, and `#incode` does not, nor \\#escaped",
            "## Heading #inheading",
            "#Start again (case duplicate of #start)",
        ]
    )
    assert extract(body).tags == ("start", "nested/tag/deep", "with-dash_und", "y1984", "inheading")


def test_heading_markers_are_not_tags() -> None:
    facts = extract("# Title\n\n## Second\n\n####### seven hashes is a paragraph")
    assert facts.tags == ()
    assert facts.headings == (Heading(1, "Title", 0), Heading(2, "Second", 2))


def test_headings_with_levels_lines_and_setext() -> None:
    body = "intro\n\n### Third *level*\n\nSetext\n======\n\n```\n# not a heading\n```\n"
    assert extract(body, line_offset=3).headings == (
        Heading(3, "Third *level*", 5),
        Heading(1, "Setext", 7),
    )


def test_block_ids_end_paragraphs_and_list_items() -> None:
    body = "\n".join(
        [
            "A paragraph ^para-1",
            "",
            "- first item ^item-a",
            "- second item",
            "",
            "Two lines",
            "end here ^two-lines",
            "",
            "not at the end ^mid of the line",
            "",
            "x^notid and `code ^incode`",
            "",
            "## Heading ^not-a-block",
        ]
    )
    assert extract(body).block_ids == ("para-1", "item-a", "two-lines")


def test_frontmatter_property_links_strings_lists_and_nested() -> None:
    frontmatter = {
        "related": "[[X]]",
        "categories": ["[[Books]]", "plain", "[[People|folks]]"],
        "source": {"author": "[[Kevin Kelly]] and [[Steph Ango#Bio]]"},
        "cover": "https://example.com/a.png",
        "year": 2017,
        "embed": "![[Pic.png]]",
    }
    links = frontmatter_links(frontmatter, {"related": 1, "categories": 2, "source": 5})
    assert links == [
        Link(target="X", line=1, property="related"),
        Link(target="Books", line=2, property="categories"),
        Link(target="People", alias="folks", line=2, property="categories"),
        Link(target="Kevin Kelly", line=5, property="source.author"),
        Link(target="Steph Ango", heading="Bio", line=5, property="source.author"),
        Link(target="Pic.png", embed=True, line=0, property="embed"),
    ]


def test_frontmatter_tags_string_or_list_with_or_without_hash() -> None:
    assert frontmatter_tags({"tags": ["#a", "b/c", None]}) == ["a", "b/c"]
    assert frontmatter_tags({"tags": "one, #two three"}) == ["one", "two", "three"]
    assert frontmatter_tags({"tag": "single"}) == ["single"]
    assert frontmatter_tags({"tags": []}) == []


def test_parse_link_text_keeps_a_trailing_table_escape_off_the_target() -> None:
    assert parse_link_text("Note\\|shown") == Link(target="Note", alias="shown")
    assert parse_link_text("Note|") == Link(target="Note")


def test_rendering_shows_links_and_tags_and_hides_comments() -> None:
    html = make_markdown().render("see [[A#h|b]] and [[C]] #t %%hidden%% end ^blk\n")
    assert html == (
        '<p>see <a class="wikilink" data-target="A">b</a> and '
        '<a class="wikilink" data-target="C">C</a> <span class="tag">#t</span>  end </p>\n'
    )


def test_links_read_as_a_reader_sees_them() -> None:
    text = "[[Ridley Scott]], [[People/Ann|Annie]], [[People/Bob]], [[Note#Heading]] and [[Day#^b1]]"
    assert links_as_text(text) == "Ridley Scott, Annie, Bob, Note and Day"
