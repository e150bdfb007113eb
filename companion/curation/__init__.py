"""The curation wing: planned, atomic, undoable edits a person makes to notes (pin, tags, type, merge, archive,
delete) and opening a note in Obsidian."""
