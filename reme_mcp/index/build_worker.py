"""A full build's worker process: `python -m reme_mcp.index.build_worker` (see build.py)."""

from reme_mcp.index.build import worker_main

if __name__ == "__main__":
    worker_main()
