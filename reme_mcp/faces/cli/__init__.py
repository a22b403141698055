"""The command line: the MCP server (stdio or HTTP) and the commands for people, a module per
command group (`main` holds the group). As thin as the MCP face: every command is a memory
operation plus printing."""

from reme_mcp.faces.cli.main import cli, main

__all__ = ["cli", "main"]
