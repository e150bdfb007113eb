"""A hypothesis strategy for YAML-like text that steers PyYAML into its odd corners."""

from __future__ import annotations

from hypothesis import strategies as st

# Characters and tokens that steer PyYAML into its odd corners: explicit tags, anchors, merges,
# sets.
YAML_TOKENS = [
    *"abc:-[]{}&*!|>'\"#%@`?,.\n\t 0123456789<=~^\\",
    "!!set ",
    "!!map ",
    "!!omap ",
    "!!pairs ",
    "!!binary ",
    "!!timestamp ",
    "!!int ",
    "!!float ",
    "!!bool ",
    "!!python/tuple ",
    "<<: ",
    "&a ",
    "*a",
    "? ",
    "\n  - ",
    ": ",
    "2023-02-30",
    ".inf",
]
YAMLISH = st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map("".join)
