"""`python -m reme_mcp` is the same as the `reme-mcp` command."""

from reme_mcp.faces.cli import main

if __name__ == "__main__":
    main()
