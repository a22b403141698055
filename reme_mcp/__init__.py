"""reme-mcp: long-term memory for any MCP client, kept as plain files in a ReMe workspace."""

__version__ = "1.0.0"
