"""The policy knobs' side of the app: the line that says what the highlighted knob does, and saving the knobs.

The knobs change the app's policy at once (every press recalls again); only `ctrl+s` writes it to the vault's config,
through `save_policy` in a thread worker, which answers with the `Notice` the app shows.
"""

from __future__ import annotations

from dataclasses import replace

from companion.config import load_config
from companion.configedit import changed_keys, save_section
from companion.errors import CompanionError
from companion.retention import RetentionPolicy
from companion.tui.messages import Notice
from companion.workspace import Workspace

KNOBS_HINT = "p: the policy knobs (+/- change the highlighted one, ctrl+s saves them)"
"""The line under the knobs while none is highlighted."""


def knob_help(knob: str) -> str:
    """The line under the knobs with `knob` highlighted: what it does and the values it takes (empty: none is)."""
    text = RetentionPolicy.explain(knob) if knob else ""
    return f"{knob} {text}" if text else KNOBS_HINT


def save_policy(workspace: Workspace, policy: RetentionPolicy) -> Notice:
    """Write `policy` to the vault's config and make it the workspace's; the notice says what was saved, or why
    nothing was. Call it in a worker thread."""
    # Only the knobs whose values differ from the file's are written, on their own lines: the user's comments, order
    # and unset keys stay. An fsync of the file and its folder: seconds on a slow disk, so never on the event loop.
    try:
        on_disk = load_config(workspace.root)
        wanted = replace(on_disk, retention=policy)
        changes = changed_keys("retention", on_disk.retention, policy)
        path = save_section(workspace.root, "retention", changes, wanted)
    except (OSError, CompanionError) as exc:
        return Notice(str(exc), title="the policy was not saved", severity="error")
    workspace.config = replace(workspace.config, retention=policy)
    said = ", ".join(f"{k} {v}" for k, v in changes.items()) or "nothing had changed"
    return Notice(f"{said} — saved to {path}", title="policy saved")
