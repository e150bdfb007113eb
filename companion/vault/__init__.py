"""The vault wing: reading an Obsidian vault (discovery, parsing, links, the graph, sessions) and the audit log
that every write to it goes through."""
