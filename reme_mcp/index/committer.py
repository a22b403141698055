"""A batch of spooled writes committed by a child process, so that a server's calls never wait for it.

A batched commit of hundreds of notes (reme_mcp/batching.py) is a second or more of
CPU: documents analysed, a segment written, small segments merged. In the server's
own process it held the GIL and the index mutex meanwhile, and every call in that
second waited (a `remember`'s duplicate check reads the index). A child process
holds neither: it commits on the other core while this process answers, and its
commit is seen by this process's next read like any other process's (store.py).

The child prints the paths it took from the spool, one per line, so that this process
forgets them (writer.py counts them as waiting until a commit took them). When the
child fails in any way, the caller commits in its own process instead, which names
the cause (a full disk, a read-only index) the way it always does.

    python -m reme_mcp.index.committer <workspace> <index home>
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reme_mcp.index.home import private_folder
from reme_mcp.index.store import IndexStore
from reme_mcp.index.writer import IndexWriter
from reme_mcp.workspace import Workspace


def commit_in_child(root: Path, home: Path) -> list[str] | None:
    """Commit the spool of the workspace at `root` in a child process; the paths it took, or None if it failed."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reme_mcp.index.committer", str(root), str(home)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a failure is said by the commit the caller then makes itself
            check=False,
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape").splitlines()


def main(argv: list[str]) -> int:
    root, home = Path(argv[0]), Path(argv[1])
    ws = Workspace(root)
    store = IndexStore(ws, private_folder(ws, home))
    taken = IndexWriter(ws, store).write_spooled([])
    sys.stdout.write("".join(f"{path}\n" for path in taken))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
