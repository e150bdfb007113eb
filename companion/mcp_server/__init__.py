"""The MCP server: the agent API as Model Context Protocol tools and resources, over stdio (or HTTP on loopback)."""
