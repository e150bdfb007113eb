"""YAML checked against frozen dataclasses: each field's type says what value it takes, and the node tree (not the
loaded data) is walked, so every error names the file, the line and the key, and lists what is allowed there.

Field types understood: nested dataclasses, tagged unions of dataclasses (a `type` key chooses), `X | None`,
tuples (YAML lists), `dict[str, X]`, `Literal[...]`, `bool`, `int`, `float` and `str`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Literal

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from companion.errors import ConfigError


def _fail(source: str, node: Node, key: str, message: str) -> ConfigError:
    where = f"{source}, line {node.start_mark.line + 1}"
    return ConfigError(f"{where}: {key or 'the top level'}: {message}")


def build(cls: type[Any], node: Node, prefix: str, source: str, loader: yaml.SafeLoader) -> Any:
    """Build the frozen dataclass `cls` from a mapping node, checking every key and value; a `ConfigError` names
    the file (`source`), the line and the dotted key (under `prefix`) of the first thing wrong."""
    hints = typing.get_type_hints(cls)
    allowed = [f.name for f in dataclasses.fields(cls)]
    if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return cls()
    if not isinstance(node, MappingNode):
        raise _fail(source, node, prefix, f"expected a mapping with keys {', '.join(allowed)}")
    values: dict[str, Any] = {}
    nodes: dict[str, Node] = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, ScalarNode) else "?"
        dotted = f"{prefix}.{key}" if prefix else key
        if key not in allowed:
            scope = f"'{prefix}'" if prefix else "the top level"
            raise _fail(
                source,
                key_node,
                dotted,
                f"unknown key '{key}' in {scope}; allowed keys: {', '.join(allowed)}",
            )
        if key in values:
            raise _fail(source, key_node, dotted, "this key is given twice")
        values[key] = _value(hints[key], value_node, dotted, source, loader)
        nodes[key] = value_node
    try:
        built = cls(**values)
    except ValueError as exc:  # a section's own range checks (RetentionPolicy.__post_init__)
        field_name, _, rest = str(exc).partition(": ")
        if field_name in nodes and rest:  # a check of one field, worded `key: message`: point at that key
            raise _fail(source, nodes[field_name], f"{prefix}.{field_name}" if prefix else field_name, rest) from exc
        raise _fail(source, node, prefix, str(exc)) from exc
    # Only now the general rule for numbers: a section that checks a field says it in its own words (a negative
    # value and 0 get one message), and the rest still never take a negative number, NaN or infinity.
    for key, value in values.items():
        if isinstance(value, float) and not 0 <= value < math.inf:
            dotted = f"{prefix}.{key}" if prefix else key
            raise _fail(source, nodes[key], dotted, f"expected a positive number (or 0), got {value:g}")
    return built


def _value(hint: Any, node: Node, key: str, source: str, loader: yaml.SafeLoader) -> Any:
    """Check one YAML value against a field's type and return it as that type."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, node, key, source, loader)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if _is_tagged_union(hint):
            return _build_tagged(args, node, key, source, loader)
        if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
            return None
        (inner,) = [arg for arg in args if arg is not type(None)]
        return _value(inner, node, key, source, loader)
    if origin is tuple:
        if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
            return ()
        item_hint = args[0]
        structured = _is_tagged_union(item_hint) or dataclasses.is_dataclass(item_hint)
        if not isinstance(node, SequenceNode):
            what = "a list" if structured else "a list of strings"
            raise _fail(source, node, key, f"expected {what}, got {_describe(node)}")
        # Items that are sections get their position in the key, so an error points at the right one.
        return tuple(
            _value(item_hint, item, f"{key}[{i}]" if structured else key, source, loader)
            for i, item in enumerate(node.value)
        )
    if origin is dict:
        return _build_dict(args[1], node, key, source, loader)
    data = loader.construct_object(node, deep=True)
    if origin is Literal:
        if data not in args:
            choices = ", ".join(repr(arg) for arg in args)
            raise _fail(source, node, key, f"expected one of {choices}, got {data!r}")
        return data
    if hint is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)  # its range is checked once its section is built (see `build`)
    if hint in (str, int, bool) and type(data) is hint:
        return data
    raise _fail(source, node, key, f"expected {_type_name(hint)}, got {_describe(node)}")


def _is_tagged_union(hint: Any) -> bool:
    """Whether `hint` is a union of dataclasses (told apart by their `type` field), such as `ProcessorSpec`."""
    if typing.get_origin(hint) not in (types.UnionType, typing.Union):
        return False
    return all(dataclasses.is_dataclass(arg) for arg in typing.get_args(hint))


def _tag_of(cls: Any) -> str:
    tag = next(f.default for f in dataclasses.fields(cls) if f.name == "type")
    assert isinstance(tag, str)
    return tag


def _build_tagged(classes: tuple[Any, ...], node: Node, key: str, source: str, loader: yaml.SafeLoader) -> Any:
    """Build the dataclass among `classes` that the mapping's `type` key names."""
    by_tag = {_tag_of(cls): cls for cls in classes}
    built = ", ".join(by_tag)
    if not isinstance(node, MappingNode):
        raise _fail(source, node, key, f"expected a mapping with a 'type' key (one of {built}), got {_describe(node)}")
    for key_node, value_node in node.value:
        if isinstance(key_node, ScalarNode) and key_node.value == "type":
            tag = value_node.value if isinstance(value_node, ScalarNode) else None
            if tag not in by_tag:
                raise _fail(source, value_node, f"{key}.type", f"unknown processor type {tag!r}; built types: {built}")
            return build(by_tag[tag], node, key, source, loader)
    raise _fail(source, node, key, f"missing 'type' (one of {built})")


def _build_dict(cls: Any, node: Node, key: str, source: str, loader: yaml.SafeLoader) -> dict[str, Any]:
    """A mapping of names (such as agent names) to sections of type `cls`."""
    if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return {}
    if not isinstance(node, MappingNode):
        raise _fail(source, node, key, f"expected a mapping of names to settings, got {_describe(node)}")
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag != "tag:yaml.org,2002:str" or not key_node.value:
            raise _fail(source, key_node, key, f"expected a name as the key, got {_describe(key_node)}")
        name = key_node.value
        if name in result:
            raise _fail(source, key_node, f"{key}.{name}", "this key is given twice")
        result[name] = _value(cls, value_node, f"{key}.{name}", source, loader)
    return result


def _type_name(hint: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(hint, str(hint))


def _describe(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    kind = str(node.tag).rsplit(":", 1)[-1]
    return f"{kind} {node.value!r}"
