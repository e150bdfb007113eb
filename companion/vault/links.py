"""Obsidian's link syntax as markdown-it-py rules, and the facts a note's text yields.

Wikilinks, tags, block ids and `%% comments %%` are parsed by rules inside markdown-it's own inline
and block parsers rather than by regular expressions over the raw text: markdown-it has already
decided what is a code span, a fenced or indented code block or an HTML block, so a `[[link]]` or
`#tag` inside code is never seen by these rules, just as Obsidian ignores it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline import image as md_image
from markdown_it.rules_inline import link as md_link
from markdown_it.token import Token

from companion.vault.notes import Heading, Link

InlineRule = Callable[[StateInline, bool], bool]

_WIKILINK_IN_TEXT = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# Obsidian's tag characters: letters and digits of any script, `_`, `-` and `/` for nesting.
_TAG_BODY = re.compile(r"[\w/-]+")
_BLOCK_ID_AT_END = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*\Z")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class BodyFacts:
    """What the Markdown body of a note says about its place in the graph."""

    links: tuple[Link, ...]
    """Wikilinks, embeds and Markdown links to local files, in file order."""
    tags: tuple[str, ...]
    """Body tags without `#`, in file order, de-duplicated case-insensitively."""
    block_ids: tuple[str, ...]
    """Block ids (`^id` ending a paragraph or list item), in file order."""
    headings: tuple[Heading, ...]
    """Headings in file order."""


def parse_link_text(inner: str, *, embed: bool = False, line: int = 0, property: str | None = None) -> Link:
    """A `Link` from the text inside `[[ ]]`: `target#heading|alias` or `target#^block`."""
    target_part, bar, alias = inner.partition("|")
    # Inside tables Obsidian users write `[[a\|b]]`; outside a table the backslash is left on the
    # target.
    target_part = target_part.rstrip("\\")
    target, _, fragment = target_part.partition("#")
    heading: str | None = None
    block: str | None = None
    fragment = fragment.strip()
    if fragment.startswith("^"):
        block = fragment[1:].strip() or None
    elif fragment:
        heading = fragment
    return Link(
        target=target.strip(),
        heading=heading,
        block=block,
        alias=(alias.strip() or None) if bar else None,
        embed=embed,
        line=line,
        property=property,
    )


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule for `[[...]]` and `![[...]]`, run before markdown-it's `link` rule."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    start = pos + 1 if embed else pos
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2, state.posMax)
    if end < 0:
        return False
    inner = src[start + 2 : end]
    if not inner.strip() or "\n" in inner or "[[" in inner:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = inner
        token.meta = {"embed": embed, "offset": pos}
    state.pos = end + 2
    return True


def _tag_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule for `#tag` and `#nested/tag`, seen only after whitespace or at a line start."""
    src, pos = state.src, state.pos
    if src[pos] != "#" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    match = _TAG_BODY.match(src, pos + 1, state.posMax)
    if match is None:
        return False
    tag = match.group(0).rstrip("/")
    # `#123` is an issue number, not a tag: Obsidian wants at least one character that is not a
    # digit.
    if not tag or all(ch.isdigit() or ch in "/-" for ch in tag):
        return False
    if not silent:
        token = state.push("obsidian_tag", "", 0)
        token.content = tag
        token.meta = {"offset": pos}
    state.pos = match.end()
    return True


def _block_id_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule for a `^block-id` that ends the block's text."""
    src, pos = state.src, state.pos
    if src[pos] != "^" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    match = _BLOCK_ID_AT_END.match(src[: state.posMax], pos)
    if match is None:
        return False
    if not silent:
        token = state.push("block_id", "", 0)
        token.content = match.group(1)
        token.meta = {"offset": pos}
    state.pos = state.posMax
    return True


def _inline_comment_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule for `%% comment %%`; an unclosed `%%` hides the rest of the block."""
    src, pos = state.src, state.pos
    if not src.startswith("%%", pos):
        return False
    close = src.find("%%", pos + 2, state.posMax)
    end = state.posMax if close < 0 else close + 2
    if not silent:
        token = state.push("obsidian_comment", "", 0)
        token.content = src[pos:end]
    state.pos = end
    return True


def _block_comment_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule for a `%%` comment opening a line; it may span blank lines until `%%`."""
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    if not state.src.startswith("%%", begin):
        return False
    if silent:
        return True
    close = state.src.find("%%", begin + 2)
    line = start_line
    if close < 0:
        line = end_line - 1
    else:
        while line < end_line - 1 and state.eMarks[line] < close:
            line += 1
    token = state.push("obsidian_comment", "", 0)
    token.map = [start_line, line + 1]
    token.content = state.getLines(start_line, line + 1, state.blkIndent, False)
    state.line = line + 1
    return True


def _remember_offset(rule: InlineRule, token_types: tuple[str, ...]) -> InlineRule:
    """Wrap markdown-it's `link`/`image` rule so the token it opens records where it started.

    markdown-it keeps no column for inline tokens; the offset is what lets a Markdown link report
    its line.
    """

    def wrapped(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        matched = rule(state, silent)
        if matched and not silent:
            for token in state.tokens[count:]:
                if token.type in token_types:
                    token.meta = {**(token.meta or {}), "offset": start}
                    break
        return matched

    return wrapped


# Render rules keep `md.render()` meaningful for callers that show notes as HTML.
def _render_wikilink(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    link = parse_link_text(tokens[idx].content)
    text = link.alias or tokens[idx].content.split("|", 1)[0]
    return f'<a class="wikilink" data-target="{_escape(link.target)}">{_escape(text)}</a>'


def _render_nothing(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    return ""


def _render_tag(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="tag">#{_escape(tokens[idx].content)}</span>'


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def obsidian_plugin(md: MarkdownIt) -> None:
    """Teach a `MarkdownIt` parser Obsidian's wikilinks, embeds, tags, block ids, comments."""
    md.inline.ruler.before("link", "obsidian_comment", _inline_comment_rule)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "obsidian_tag", _tag_rule)
    md.inline.ruler.before("link", "block_id", _block_id_rule)
    md.inline.ruler.at("link", _remember_offset(md_link, ("link_open",)))
    md.inline.ruler.at("image", _remember_offset(md_image, ("image",)))
    md.block.ruler.before("paragraph", "obsidian_comment", _block_comment_rule, {"alt": ["paragraph"]})
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("obsidian_tag", _render_tag)
    md.add_render_rule("obsidian_comment", _render_nothing)
    md.add_render_rule("block_id", _render_nothing)


def make_markdown() -> MarkdownIt:
    """A CommonMark parser with tables, strikethrough and the rules of `obsidian_plugin`."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.use(obsidian_plugin)
    return md


_MD = make_markdown()
_BLOCKS = make_markdown().disable(["inline", "text_join"])
"""The same parser without its inline pass, which `extract` runs only where a link, tag or block id can be."""
_INLINE_MARKS = re.compile(r"[\[#^]")
"""What every link (`[[`, `![[`, `[`, `![`), tag (`#`) and block id (`^`) starts with."""


def extract(body: str, line_offset: int = 0) -> BodyFacts:
    """Links, tags, block ids and headings of a body; `line_offset` is its first file line."""
    links: list[Link] = []
    tags: list[str] = []
    block_ids: list[str] = []
    headings: list[Heading] = []
    env: dict[str, Any] = {}
    tokens = _BLOCKS.parse(body, env)
    for token in tokens:
        # Most paragraphs hold no link, tag or block id: their inline pass (half of parsing a note, in Python)
        # would find nothing this reads. `env` carries the reference definitions the block pass collected.
        if token.type == "inline" and _INLINE_MARKS.search(token.content):
            token.children = []
            _BLOCKS.inline.parse(token.content, _BLOCKS, env, token.children)
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            headings.append(
                Heading(
                    level=int(token.tag[1]),
                    text=tokens[index + 1].content.strip(),
                    line=line_offset + token.map[0],
                )
            )
        if token.type != "inline" or token.map is None or not token.children:
            continue
        in_paragraph = index > 0 and tokens[index - 1].type == "paragraph_open"
        base = line_offset + token.map[0]
        children = token.children
        for pos, child in enumerate(children):
            offset = (child.meta or {}).get("offset")
            line = base + token.content.count("\n", 0, offset) if offset is not None else base
            if child.type == "wikilink":
                links.append(parse_link_text(child.content, embed=child.meta["embed"], line=line))
            elif child.type == "obsidian_tag":
                tags.append(child.content)
            elif child.type == "block_id" and in_paragraph:
                block_ids.append(child.content)
            elif child.type in ("link_open", "image"):
                attr = "href" if child.type == "link_open" else "src"
                text = child.content if child.type == "image" else _link_text(children, pos)
                link = markdown_link(str(child.attrGet(attr) or ""), text, child.type == "image", line)
                if link is not None:
                    links.append(link)
    return BodyFacts(tuple(links), _dedupe(tags), tuple(block_ids), tuple(headings))


def _link_text(children: list[Token], start: int) -> str:
    parts: list[str] = []
    for child in children[start + 1 :]:
        if child.type == "link_close":
            break
        parts.append(child.content)
    return "".join(parts)


def markdown_link(href: str, text: str, embed: bool, line: int) -> Link | None:
    """A `Link` for a Markdown link or image into the vault; None for URLs with a scheme."""
    href = href.strip()
    if not href or href.startswith("//") or _SCHEME.match(href):
        return None
    path, _, fragment = unquote(href).partition("#")
    heading: str | None = None
    block: str | None = None
    if fragment.startswith("^"):
        block = fragment[1:] or None
    elif fragment:
        heading = fragment
    return Link(
        target=path.strip(),
        heading=heading,
        block=block,
        alias=text or None,
        embed=embed,
        line=line,
    )


def links_as_text(text: str) -> str:
    """`text` with each wikilink as a reader sees it: its alias, else its target's name (`[[People/Ann|Ann]]` and
    `[[Ann]]` both read `Ann`)."""

    def shown(match: re.Match[str]) -> str:
        link = parse_link_text(match.group(2))
        return link.alias or link.target.rsplit("/", 1)[-1]

    return _WIKILINK_IN_TEXT.sub(shown, text)


def frontmatter_links(frontmatter: Mapping[str, Any], key_lines: Mapping[str, int] | None = None) -> list[Link]:
    """Wikilinks in property values (strings, lists, nested mappings), tagged with the property.

    A nested value is named by its dotted path (`source.author`); `key_lines` gives the file line of
    each top-level property, which becomes the link's line.
    """
    links: list[Link] = []
    lines = key_lines or {}

    def walk(value: Any, name: str, line: int) -> None:
        if isinstance(value, str):
            for match in _WIKILINK_IN_TEXT.finditer(value):
                embed = match.group(1) == "!"
                links.append(parse_link_text(match.group(2), embed=embed, line=line, property=name))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, f"{name}.{key}", line)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item, name, line)

    for key, value in frontmatter.items():
        walk(value, str(key), lines.get(str(key), 0))
    return links


def frontmatter_tags(frontmatter: Mapping[str, Any]) -> list[str]:
    """Tags from the `tags` / `tag` properties: a list, or a string split on commas/spaces."""
    found: list[str] = []
    for key, value in frontmatter.items():
        if str(key).lower() not in ("tags", "tag"):
            continue
        items: Iterable[Any] = value if isinstance(value, list) else [value]
        for item in items:
            if item is None or isinstance(item, dict | list):
                continue
            for piece in re.split(r"[,\s]+", str(item)):
                tag = piece.strip().lstrip("#").rstrip("/")
                if tag:
                    found.append(tag)
    return found


def merge_tags(*groups: Iterable[str]) -> tuple[str, ...]:
    """Concatenate tag lists, keeping the first spelling of tags that differ only in case."""
    return _dedupe([tag for group in groups for tag in group])


def _dedupe(tags: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for tag in tags:
        key = tag.casefold()
        if key not in seen:
            seen.add(key)
            out.append(tag)
    return tuple(out)
