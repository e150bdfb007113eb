"""The configuration reference, written from the dataclasses that validate `.companion/companion.yaml`.

Every key, its type, its default and its description come from the schema itself (a field's type, its default,
and the docstring under it), so the reference cannot drift from what the loader accepts: adding a setting is
adding a field, and the next `make docs` lists it. `python -m companion.configdoc` prints the page.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from companion.config import CompanionConfig
from companion.specs import spec_types


@dataclass(frozen=True)
class Key:
    """One setting as the reference shows it."""

    name: str
    """Its dotted name from the top of the file, such as `retention.hot_limit` (`[]` marks a list's items)."""
    kind: str
    """What YAML value it takes, in words (`an integer`, `one of "a", "b"`, `a list of processors`...)."""
    default: str
    """Its default as YAML, or empty for a section."""
    description: str
    """The field's docstring, as one paragraph."""


@dataclass(frozen=True)
class Section:
    """A group of keys under one heading: a top-level section, or one processor type."""

    title: str
    """The heading (the section's key, or `processor: <type>`)."""
    summary: str
    """The section's own description (its class docstring)."""
    keys: tuple[Key, ...]
    """Its settings, in the order the schema declares them."""


def sections() -> tuple[Section, ...]:
    """Every section of the config file, then one section per processor type, in the schema's order."""
    found: list[Section] = []
    for top in dataclasses.fields(CompanionConfig):
        hint = _hints(CompanionConfig)[top.name]
        found.append(Section(top.name, _field_doc(CompanionConfig, top.name), tuple(_keys(hint, top.name))))
    for name, cls in spec_types().items():
        keys = tuple(_keys(cls, ""))
        found.append(Section(f"processor: {name}", _class_doc(cls), keys))
    return tuple(found)


def _keys(hint: Any, prefix: str) -> Iterator[Key]:
    """The keys a section of type `hint` takes, nested sections and list items flattened under `prefix`."""
    hint = _strip_optional(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is dict:  # a mapping of names (agents) to sections
        yield from _keys(args[1], f"{prefix}.<name>")
        return
    if not (dataclasses.is_dataclass(hint) and isinstance(hint, type)):
        return
    hints = _hints(hint)
    for field in dataclasses.fields(hint):
        if field.name == "type" and typing.get_origin(hints[field.name]) is Literal:
            continue  # a processor's tag: the section's own heading
        name = f"{prefix}.{field.name}" if prefix else field.name
        inner = _strip_optional(hints[field.name])
        item = typing.get_args(inner)[0] if typing.get_origin(inner) is tuple else None
        if dataclasses.is_dataclass(inner) and isinstance(inner, type):
            yield from _keys(inner, name)
        elif item is not None and dataclasses.is_dataclass(item) and isinstance(item, type):
            yield Key(name, f"a list of mappings, each with the `{name}[]` keys below", "[]", _field_doc(hint, field))
            yield from _keys(item, f"{name}[]")
        else:
            yield Key(name, _kind(hints[field.name]), _default(field), _field_doc(hint, field))


def _strip_optional(hint: Any) -> Any:
    """`X | None` as `X` (a union of sections, such as the processors, stays whole)."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        rest = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return hint


def _kind(hint: Any) -> str:
    """What YAML value a field of type `hint` takes, in words."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) < len(args) and len(rest) == 1:
            return f"{_kind(rest[0])}, or null"
        if all(dataclasses.is_dataclass(arg) for arg in args):
            return "a list of processors (see the processor sections)"
    if origin is Literal:
        return "one of " + ", ".join(f"`{arg}`" for arg in args)
    if origin is tuple:
        item = args[0]
        if typing.get_origin(item) in (types.UnionType, typing.Union):
            return "a list of processors, each a mapping with its `type` (see the processor sections)"
        if typing.get_origin(item) is Literal:
            return "a list, each item one of " + ", ".join(f"`{arg}`" for arg in typing.get_args(item))
        return f"a list of {_plural(item)}"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(hint, str(hint))


def _plural(hint: Any) -> str:
    return {str: "strings", int: "integers", float: "numbers"}.get(hint, str(hint))


def _default(field: dataclasses.Field[Any]) -> str:
    """The field's default, written as YAML would take it."""
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return ""
    if isinstance(value, tuple | list):
        return json.dumps(list(value), ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{}"
    return str(value)


def _hints(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _class_doc(cls: type[Any]) -> str:
    return _paragraph(inspect.getdoc(cls) or "")


def _field_doc(cls: type[Any], field: dataclasses.Field[Any] | str) -> str:
    name = field if isinstance(field, str) else field.name
    return _paragraph(_attribute_docs(cls).get(name, ""))


def _attribute_docs(cls: type[Any]) -> dict[str, str]:
    """The docstring written under each field of `cls` (Python keeps these only in the source, so it is parsed)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    (node,) = [item for item in tree.body if isinstance(item, ast.ClassDef)]
    docs: dict[str, str] = {}
    for current, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(current, ast.AnnAssign)
            and isinstance(current.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[current.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _paragraph(text: str) -> str:
    return " ".join(text.split())


INTRO = """\
# Configuration

<!-- Generated by `make docs` (`python -m companion.configdoc`) from the code that validates the file. Do not edit:
change the field's docstring in the schema instead. -->

A vault's settings live in `.companion/companion.yaml` inside the vault. Every key is optional; a missing file
means every default below. The file is checked when it is read: an unknown key, a value of the wrong type or out of
its range is an error naming the file, the line and the key (exit code 2), and nothing runs on a half-read
configuration.

```yaml title=".companion/companion.yaml"
retention:
  hot_limit: 5          # keep five sessions hot per user and chat
recall:
  relevance_floor: 0.35
index:
  exclude: ["ops/**", "Private/**"]
```

The app's policy knobs write the `retention` section for you (`ctrl+s` saves only the knobs you changed, keeping
your comments). Processor lists (`session_history.processors`, `agents.<name>.processors`) are lists of mappings,
each with a `type` naming one of the processors described at the end of this page; see
[the session pipeline](pipeline.md) for how they run.
"""

ENVIRONMENT = """\
## Environment variables

| variable | what it sets |
| --- | --- |
| `AGENT_VAULT_PATH` | the vault, when no `--vault` is given |
| `AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING` | among Obsidian's vaults, the one whose name holds this |
| `AGENT_OBSIDIAN_DISCOVER` | `0` skips Obsidian's own list of vaults |
| `AGENT_OBSIDIAN_REQUIRE_DOT_OBSIDIAN` | `0` accepts a vault without a `.obsidian` folder |
| `AGENT_VAULT_AUTO_WRITE` | `off`, `research` or `aggressive`: overrides `agent_writes.auto_write` |
| `AGENT_VAULT_DEDUPE` | `0` turns off the duplicate check of agent writes and summaries |
| `COMPANION_DATA_DIR` | the data root (default `$XDG_DATA_HOME/vault-companion`, or `~/.local/share/...`) |
| `COMPANION_MODEL_DIR` | where the built embedding model is kept |
| `COMPANION_TRIGGER_INTERVAL_S` | how often `companion index --watch` checks the processors' triggers (default 30) |

The index of each vault lives in `<data root>/vaults/<name>-<hash>/`, never in the vault.
"""


def render() -> str:
    """The whole configuration reference page, as Markdown."""
    parts = [INTRO]
    for section in sections():
        heading = f"`{section.title}`" if not section.title.startswith("processor:") else section.title
        parts.append(f"## {heading}\n\n{section.summary}\n")
        lines = []
        for key in section.keys:
            default = f", default `{key.default}`" if key.default else ""
            lines.append(f"- **`{key.name}`** ({key.kind}{default}): {key.description}")
        parts.append("\n".join(lines) + "\n" if lines else "No keys of its own.\n")
    parts.append(ENVIRONMENT)
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render())
