"""Frontmatter YAML read the way Obsidian reads it, with a loader that cannot be turned against us.

YAML 1.2 scalars (`14:03` is a string, `yes` is a string, `0123` is 123), keys that PyYAML would refuse (a
template's `{{date}}`) kept as their source text, and alias bombs refused before anything is expanded. Values come
out JSON-safe.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_FRONTMATTER_BYTES = 256 * 1024
"""Frontmatter larger than this is refused: properties are metadata, not content."""
MAX_ALIASES = 100
"""More YAML alias references than this in one frontmatter block is treated as an alias bomb."""
MAX_EXPANDED_VALUES = 100_000
"""Aliases may not expand a frontmatter block past this many values (the billion-laughs guard)."""

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class AliasBombError(yaml.YAMLError):
    """Raised while composing when a frontmatter block uses too many aliases."""


class NotAMappingError(ValueError):
    """The frontmatter is YAML, but a list or a single value rather than a mapping of properties."""


class FrontmatterLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` with YAML 1.2 core scalars (as Obsidian reads them) and an alias budget.

    YAML 1.1, PyYAML's default, reads `time: 14:03` as the integer 843 and `answer: no` as False,
    which would corrupt session times and free text; Obsidian's parser follows YAML 1.2, so this
    loader does too.
    """

    def __init__(self, stream: str, first_line: int = 0) -> None:
        super().__init__(stream)
        self.alias_count = 0
        # Messages name file lines, so the loader knows where in the file its text starts.
        self.first_line = first_line

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        """Count alias references as they are composed and stop at `MAX_ALIASES`."""
        if self.check_event(yaml.AliasEvent):
            self.alias_count += 1
            if self.alias_count > MAX_ALIASES:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                line = self.first_line + mark.line + 1
                raise AliasBombError(
                    f"frontmatter uses more than {MAX_ALIASES} YAML aliases (line {line}); "
                    "refused as a possible alias bomb"
                )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        """Build a mapping; unhashable keys (`{{date}}` in templates) become their source text."""
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, f"expected a mapping, but found {node.id}", node.start_mark)
        self.flatten_mapping(node)
        mapping: dict[Hashable, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable) or isinstance(key, tuple):
                key = _source_text(key_node)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _source_text(node: Node) -> str:
    buffer = node.start_mark.buffer
    if buffer is None:
        return str(node.value)
    return str(buffer[node.start_mark.index : node.end_mark.index])


def _construct_int(loader: yaml.SafeLoader, node: ScalarNode) -> int:
    text = loader.construct_scalar(node).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    try:
        if digits[:2].lower() in ("0x", "0o", "0b"):
            return sign * int(digits, 0)
        return sign * int(digits, 10)
    except ValueError as exc:
        raise ConstructorError(None, None, f"{text!r} is not an integer", node.start_mark) from exc


def _construct_float(loader: yaml.SafeLoader, node: ScalarNode) -> float:
    text = loader.construct_scalar(node).replace("_", "").lower()
    special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
    if text in special:
        return special[text]
    try:
        return float(text)
    except ValueError as exc:
        raise ConstructorError(None, None, f"{text!r} is not a number", node.start_mark) from exc


def _construct_bool(loader: yaml.SafeLoader, node: ScalarNode) -> bool:
    return loader.construct_scalar(node).lower() == "true"


def _construct_timestamp(loader: yaml.SafeLoader, node: ScalarNode) -> Any:
    # An impossible date such as 2023-02-30 stays the text it is, as it does in Obsidian.
    try:
        return loader.construct_yaml_timestamp(node)
    except (ValueError, AttributeError, TypeError):
        return loader.construct_scalar(node)


FrontmatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT, _FLOAT, _BOOL)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
FrontmatterLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
FrontmatterLoader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
FrontmatterLoader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)
FrontmatterLoader.add_constructor(_INT, _construct_int)
FrontmatterLoader.add_constructor(_FLOAT, _construct_float)
FrontmatterLoader.add_constructor(_BOOL, _construct_bool)
FrontmatterLoader.add_constructor(_TIMESTAMP, _construct_timestamp)


_CLoader: Any = None
if getattr(yaml, "__with_libyaml__", False):

    class _CFrontmatterLoader(yaml.CSafeLoader):
        """The same rules on libyaml's parser, about five times faster; used only where it cannot differ."""

        construct_mapping = FrontmatterLoader.construct_mapping

        def __init__(self, stream: str, first_line: int = 0) -> None:
            super().__init__(stream)
            self.alias_count = 0
            self.first_line = first_line

    _CFrontmatterLoader.yaml_implicit_resolvers = FrontmatterLoader.yaml_implicit_resolvers
    _CFrontmatterLoader.yaml_constructors = dict(FrontmatterLoader.yaml_constructors)
    _CLoader = _CFrontmatterLoader

# libyaml composes aliases out of our sight, and its marks do not keep the source text that unhashable keys
# fall back to; so text with anchors, aliases, flow mappings or flow/complex keys takes the pure-Python path.
_NEEDS_PYTHON = re.compile(r"[&*{]|^[ \t-]*[\[?]", re.MULTILINE)


@dataclass(frozen=True)
class Frontmatter:
    """Parsed frontmatter: JSON-safe properties and the file line of each top-level property."""

    data: dict[str, Any]
    """Properties with JSON-safe values."""
    key_lines: dict[str, int]
    """0-based file line of each top-level property, given the line the YAML started on."""
    problem: str | None = None
    """Set when the block is not valid YAML and its properties were read line by line: what is wrong, where, and
    what to do (`companion.vault.frontmatter_lenient`)."""


def load_frontmatter(text: str, first_line: int = 0) -> Frontmatter:
    """Parse one frontmatter block; raises `yaml.YAMLError` or `ValueError`.

    `first_line` is the file line of the block's first line, so lines in errors and `key_lines` are
    file lines.
    """
    fast = _CLoader is not None and not _NEEDS_PYTHON.search(text)
    loader: Any = _CLoader(text, first_line) if fast else FrontmatterLoader(text, first_line)
    try:
        node = loader.get_single_node()
        if node is None:
            return Frontmatter({}, {})
        if not isinstance(node, MappingNode):
            kind = "a list" if isinstance(node, SequenceNode) else "a single value"
            raise NotAMappingError(f"frontmatter is {kind}, not a mapping of properties")
        if loader.alias_count:
            _check_expansion(node, first_line)
        data = loader.construct_document(node)
        if not isinstance(data, dict):
            raise NotAMappingError(f"frontmatter is tagged {node.tag}, not a mapping of properties")
    finally:
        loader.dispose()
    key_lines = {
        str(key.value): first_line + key.start_mark.line for key, _ in node.value if isinstance(key, ScalarNode)
    }
    return Frontmatter({_json_key(k): json_safe(v) for k, v in data.items()}, key_lines)


def _check_expansion(root: Node, first_line: int) -> None:
    """Refuse aliases that would expand past `MAX_EXPANDED_VALUES`, or that refer to themselves."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Node) -> int:
        ident = id(node)
        if ident in sizes:
            return sizes[ident]
        if ident in open_nodes:
            line = first_line + node.start_mark.line + 1
            raise ValueError(f"line {line}: a YAML alias refers to its own anchor")
        open_nodes.add(ident)
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(key) + size(value) for key, value in node.value)
        open_nodes.discard(ident)
        if total > MAX_EXPANDED_VALUES:
            raise ValueError(
                f"YAML aliases expand the frontmatter past {MAX_EXPANDED_VALUES:,} values; refused as an alias bomb"
            )
        sizes[ident] = total
        return total

    size(root)


def json_safe(value: Any) -> Any:
    """A copy of a YAML value `json.dumps` accepts: dates become ISO strings, oddities text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {_json_key(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((json_safe(item) for item in value), key=str)
    return str(value)


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, dt.date):
        return key.isoformat()
    return str(key)
