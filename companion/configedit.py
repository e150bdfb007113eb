"""Save changed settings into the user's `companion.yaml` by editing only their lines.

A user's config is hand-written: comments, order, blank lines and the keys left at their defaults are theirs. A
save changes the lines of the keys whose values changed, adds the keys that were missing under their section (and
the section when it is missing), and leaves every other byte alone. The result is parsed back and must give exactly
the intended config, or nothing is written.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from pathlib import Path

from companion.atomic import write_atomic
from companion.config import CompanionConfig, parse_config
from companion.errors import ConfigError
from companion.locations import config_path

Scalar = bool | int | float | str
"""A setting's value as this editor writes it."""

_HEADER = "# Vault Companion settings (every key is described on the Configuration page of the docs).\n"
_TOP = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:(?P<rest>.*)$")
_INDENTED = re.compile(r"^(?P<indent>[ \t]+)(?P<key>[A-Za-z_][\w-]*)\s*:(?P<value>[^#\n]*?)(?P<comment>\s+#.*)?$")


def changed_keys(section: str, before: object, after: object) -> dict[str, Scalar]:
    """The fields of a settings dataclass (`before` as saved, `after` as wanted) whose values differ.

    A whole number held as a float in a field typed `int` (a knob stepped in floats) is given as an int, so it is
    written `35`, as the field reads it, not `35.0`.
    """
    if not (dataclasses.is_dataclass(before) and dataclasses.is_dataclass(after)):
        raise TypeError(f"{section}: expected two settings dataclasses")
    types = typing.get_type_hints(type(after))
    out: dict[str, Scalar] = {}
    for field in dataclasses.fields(after):
        old, new = getattr(before, field.name), getattr(after, field.name)
        if old != new:
            whole = isinstance(new, float) and new.is_integer() and types.get(field.name) is int
            out[field.name] = int(new) if whole else new
    return out


def save_section(vault_root: Path, section: str, changes: Mapping[str, Scalar], wanted: CompanionConfig) -> Path:
    """Write `changes` into `section` of the vault's config file, keeping everything else as the user wrote it.

    `wanted` is the whole config the file must give afterwards; when the edited text does not parse to it (a section
    written in flow style, say), `ConfigError` is raised and nothing is written.
    """
    path = config_path(vault_root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = _HEADER
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc})") from exc
    new = edit_section(text, section, changes)
    try:
        result = parse_config(new, str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: the edited settings would not read back ({exc}); nothing was written") from exc
    if result != wanted:
        raise ConfigError(
            f"{path}: the '{section}' section is written in a way this editor cannot change line by line "
            "(flow style, anchors?); nothing was written: edit it by hand"
        )
    if new != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, new.encode("utf-8"))
    return path


def edit_section(text: str, section: str, changes: Mapping[str, Scalar]) -> str:
    """The text with each `section.key` set to its value: changed in place, else added at the section's end."""
    if not changes:
        return text
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if (m := _TOP.match(line)) and m["key"] == section), None)
    if start is None:
        body = "".join(f"  {key}: {_scalar(value)}\n" for key, value in changes.items())
        joiner = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{joiner}{section}:\n{body}"
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
        end += 1
    indent = "  "
    missing = dict(changes)
    last_key = start
    for i in range(start + 1, end):
        found = _INDENTED.match(lines[i].rstrip("\r\n"))
        if found is None:
            continue
        indent = found["indent"]
        last_key = i
        key = found["key"]
        if key in missing:
            newline = lines[i][len(lines[i].rstrip("\r\n")) :] or "\n"
            comment = found["comment"] or ""
            lines[i] = f"{found['indent']}{key}: {_scalar(missing.pop(key))}{comment}{newline}"
    added = [f"{indent}{key}: {_scalar(value)}\n" for key, value in missing.items()]
    lines[last_key + 1 : last_key + 1] = added
    return "".join(lines)


def _scalar(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        # As the app shows it (35, not 35.0); YAML reads it back as the same number, which a float field accepts.
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
