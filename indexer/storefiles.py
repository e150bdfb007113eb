"""Checking the vector-index files of an embedded Chroma store before Chroma loads them.

Each collection's approximate index (hnswlib's, as Chroma keeps it) lives in a segment folder of the store: `header.bin`
(the element count and the sizes of everything else), `data_level0.bin` (every element's vector and bottom-level
links), `length.bin` (4 bytes an element), `link_lists.bin` (each element's links above the bottom level) and
`index_metadata.pickle` (which chunk id is which element). Chroma writes them once it holds more vectors than it keeps
unsaved (1,000 by default), and its native code trusts them.
"""

from __future__ import annotations

import io
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np

_HNSW_HEADER = struct.Struct("<IQQQQQQiIQQQdQ")  # the layout of Chroma's header.bin (hnswlib's index header)
_ID_MAP = "index_metadata.pickle"  # Chroma's map of chunk ids to the index's element labels


def damaged_files(path: Path, *, deep: bool = False) -> list[str]:
    """What is wrong with the vector-index files of an embedded store, checked before Chroma loads them.

    Chroma's native code trusts these files: a truncated header aborts the whole process (heap corruption) and a
    truncated `link_lists.bin` crashes it (a segmentation fault), which no exception handler can catch. Each segment
    folder's header must be whole, the data and length files as long as the header says, the link lists hold one
    list for each element the header counts, and the id map (`index_metadata.pickle`) exist once elements do. With
    `deep` the id map is read as well (about a second at 200k vectors; `doctor` and `companion index` do it) and
    must map as many ids as the header counts elements at most. Returns one line per problem; empty when the files
    look sound.
    """
    problems: list[str] = []
    if not path.is_dir():
        return problems
    for folder in sorted(p for p in path.iterdir() if p.is_dir()):
        names = {"header.bin", "data_level0.bin", "length.bin", "link_lists.bin"}
        present = {n for n in names if (folder / n).is_file()}
        if not present:
            continue  # not a vector-index segment (or one never written)
        for name in sorted(names - present):
            problems.append(f"{folder.name}/{name} is missing")
        if "header.bin" not in present:
            continue
        try:
            problems += _segment_damage(folder, present, deep)
        except OSError as exc:
            problems.append(f"{folder.name}: unreadable ({exc.strerror or exc})")
    return problems


def _segment_damage(folder: Path, present: set[str], deep: bool) -> list[str]:
    """The problems of one segment folder whose header exists (see `damaged_files`)."""
    header = (folder / "header.bin").read_bytes()
    sizes = {n: (folder / n).stat().st_size for n in present}
    if len(header) != _HNSW_HEADER.size:
        return [f"{folder.name}/header.bin is {len(header)} bytes, not {_HNSW_HEADER.size}"]
    fields_ = _HNSW_HEADER.unpack(header)
    count, per_element, max_level, max_links = fields_[3], fields_[4], fields_[7], fields_[9]
    problems: list[str] = []
    expect = {"data_level0.bin": count * per_element, "length.bin": count * 4}
    for name, size in expect.items():
        if name in sizes and sizes[name] < size:
            problems.append(f"{folder.name}/{name} is {sizes[name]} bytes, expected {size}")
    if "link_lists.bin" in present:
        wrong = _link_lists_damage((folder / "link_lists.bin").read_bytes(), count, max_links * 4 + 4, max_level)
        if wrong:
            problems.append(f"{folder.name}/link_lists.bin {wrong}")
    id_map = folder / _ID_MAP
    if count and not id_map.is_file():
        problems.append(f"{folder.name}/{_ID_MAP} is missing ({count} elements need it)")
    elif count and deep:
        wrong = _id_map_damage(id_map.read_bytes(), count)
        if wrong:
            problems.append(f"{folder.name}/{_ID_MAP} {wrong}")
    return problems


def _link_lists_damage(data: bytes, count: int, per_level: int, max_level: int) -> str | None:
    """Why `link_lists.bin` cannot hold the upper-level links of `count` elements, or None when it can.

    The file holds, for each element in turn, a 4-byte length and that many bytes: `per_level` bytes for each
    level above the bottom one, of which the header's `max_level` is the highest.
    """
    words = np.frombuffer(data, dtype="<u4", count=len(data) // 4).tolist()
    at = 0
    for element in range(count):
        if at >= len(words):
            return f"is {len(data)} bytes: it ends at element {element} of {count}"
        size = words[at]
        if size % per_level or size // per_level > max(max_level, 0):
            return f"is damaged: element {element} has a link list of {size} bytes"
        at += 1 + size // 4
    if at * 4 > len(data):
        return f"is {len(data)} bytes: it ends inside the links of element {count - 1}"
    return None


class _PlainUnpickler(pickle.Unpickler):
    """Reads only plain values (dicts, lists, strings, numbers): a pickle naming any class or function is refused,
    so reading a damaged or planted id map cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        """Refuse every class and function."""
        raise pickle.UnpicklingError(f"it names {module}.{name}")


def _id_map_damage(data: bytes, count: int) -> str | None:
    """Why Chroma's id map cannot belong to an index of `count` elements, or None when it can."""
    try:
        value = _PlainUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError, MemoryError) as exc:
        return f"is unreadable ({len(data)} bytes: {exc or type(exc).__name__})"
    to_label = value.get("id_to_label") if isinstance(value, dict) else None
    to_id = value.get("label_to_id") if isinstance(value, dict) else None
    if not isinstance(to_label, dict) or not isinstance(to_id, dict):
        return "is damaged: it holds no id map"
    if len(to_label) != len(to_id):
        return f"is damaged: {len(to_label)} ids map to {len(to_id)} labels"
    if len(to_label) > count:
        return f"maps {len(to_label)} ids, more than the {count} elements of the index"
    return None
