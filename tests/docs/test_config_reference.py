"""The configuration reference lists every key the loader accepts, and the committed page is the generated one."""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal

import yaml

from companion import configdoc
from companion.config import CompanionConfig, parse_config
from companion.specs import spec_types

PAGE = Path(__file__).parents[2] / "docs" / "configuration.md"


def _dataclass(hint: Any) -> type[Any] | None:
    """The section class a field's type names, through `X | None` and lists; None for a plain value."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        rest = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        hint = rest[0] if len(rest) == 1 else None
    if typing.get_origin(hint) is tuple:
        hint = typing.get_args(hint)[0]
    return hint if dataclasses.is_dataclass(hint) and isinstance(hint, type) else None


def accepted_keys(cls: type[Any], prefix: str) -> list[str]:
    """Every key the loader accepts under a section, walked the way the loader walks it (field by field)."""
    keys = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        if field.name == "type" and typing.get_origin(hint) is Literal:
            continue
        name = f"{prefix}.{field.name}" if prefix else field.name
        if typing.get_origin(hint) is dict:
            keys += accepted_keys(typing.get_args(hint)[1], f"{name}.<name>")
            continue
        inner = _dataclass(hint)
        if inner is None:
            keys.append(name)
        elif typing.get_origin(hint) is tuple:  # a list of sections: the list itself, then its items' keys
            keys.append(name)
            keys += accepted_keys(inner, f"{name}[]")
        else:
            keys += accepted_keys(inner, name)
    return keys


def described(page: str, section: str) -> dict[str, str]:
    """The keys a section of the page lists, with their descriptions."""
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", page, re.S | re.M)
    assert match, f"the page has no section {section}"
    return dict(re.findall(r"^- \*\*`([^`]+)`\*\* \(.*?\): (.*)$", match.group(1), re.M))


def test_every_key_of_every_section_is_listed_with_a_description() -> None:
    page = configdoc.render()
    for top in dataclasses.fields(CompanionConfig):
        listed = described(page, f"`{top.name}`")
        expected = accepted_keys(CompanionConfig, "")
        for key in [k for k in expected if k.split(".")[0] == top.name]:
            assert key in listed, f"{key} is accepted by the config loader but missing from the reference"
            assert len(listed[key]) > 10, f"{key} has no description: write a docstring under its field"
    for name, cls in spec_types().items():
        listed = described(page, f"processor: {name}")
        for key in accepted_keys(cls, ""):
            assert key in listed, f"processor {name}: {key} is missing from the reference"
            assert len(listed[key]) > 10, f"processor {name}: {key} has no description"


def test_the_walk_finds_nested_list_and_per_agent_keys() -> None:
    keys = accepted_keys(CompanionConfig, "")
    assert {"retention.hot_limit", "session_history.sources[].path", "agents.<name>.processors"} <= set(keys)
    assert len(keys) > 50


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == configdoc.render(), (
        "docs/configuration.md is out of date: run `make docs` (or `python -m companion.configdoc > "
        "docs/configuration.md`) and commit it"
    )


def test_a_field_without_a_docstring_is_listed_with_no_description() -> None:
    @dataclasses.dataclass(frozen=True)
    class Grown:
        """A section the schema just grew."""

        documented: int = 1
        """Something a user can set."""
        forgotten: int = 2

    keys = {key.name: key.description for key in configdoc._keys(Grown, "x")}
    # The first test holds every description to more than a few words, so `forgotten` would fail it.
    assert keys == {"x.documented": "Something a user can set.", "x.forgotten": ""}


def test_the_defaults_shown_are_accepted_by_the_loader() -> None:
    document: dict[str, Any] = {}
    for section in configdoc.sections():
        if section.title.startswith("processor:"):
            continue
        for key in section.keys:
            if "[]" in key.name or "<name>" in key.name or not key.default:
                continue
            top, _, rest = key.name.partition(".")
            document.setdefault(top, {})[rest] = yaml.safe_load(key.default)
    config = parse_config(yaml.safe_dump(document))
    assert config == CompanionConfig()


def test_the_page_example_is_a_valid_config() -> None:
    example = re.search(r'```yaml title="\.companion/companion\.yaml"\n(.*?)```', configdoc.render(), re.S)
    assert example
    config = parse_config(example.group(1))
    assert config.retention.hot_limit == 5
