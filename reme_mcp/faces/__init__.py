"""The faces: the command line, the MCP server (stdio and HTTP), host configuration snippets and the
skill pack. Each translates between people or hosts and the memory operations of `reme_mcp.ops`; none
holds logic the others lack."""
