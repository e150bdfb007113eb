"""The terminal app: panes, knobs and curation on top of a `Workspace`."""
