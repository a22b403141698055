"""The package's version, the one place it is written: the wheel's metadata (pyproject's
`[tool.hatch.version]`), `reme-mcp --version` and the server's handshake all read it here."""

__version__ = "1.0.0"
