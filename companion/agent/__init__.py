"""What an agent can do with the vault, as one API with no protocol in it: search, read, list, links, graph, recent
sessions, context and typed memory queries. The CLI's `vault` and `memory` commands and the MCP server use it."""
