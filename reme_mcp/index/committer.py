"""A batch of spooled writes committed by a child process, so that a server's calls never wait for it.

A batched commit of hundreds of notes (reme_mcp/storage/batching.py) is a second or more of
CPU: documents analysed, a segment written, small segments merged. In the server's
own process it held the GIL and the index mutex meanwhile, and every call in that
second waited (a `remember`'s duplicate check reads the index). A child process
holds neither: it commits on the other core while this process answers, and its
commit is seen by this process's next read like any other process's (store.py).

The child reads the paths this process counts as waiting on stdin and prints the paths
it took, spooled or given, one per line each, so that this process forgets them
(writer.py counts them as waiting until a commit took them). When the child fails in
any way, the caller commits in its own process instead, which names the cause (a full
disk, a read-only index) the way it always does.

    python -m reme_mcp.index.committer <workspace> <index home>
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from reme_mcp.index.home import private_folder
from reme_mcp.index.store import IndexStore
from reme_mcp.index.writer import IndexWriter
from reme_mcp.storage import child_process
from reme_mcp.storage.workspace import Workspace


def commit_in_child(root: Path, home: Path, waiting: Iterable[str] = ()) -> list[str] | None:
    """Commit the spool of the workspace at `root` in a child process; the paths it took, or None if it failed.

    `waiting`: the paths this process counts as waiting. The child takes them with the
    spool (writer.py, `write_spooled`): the spool alone may no longer name them.
    """
    try:
        # Quiet: a failure is said by the commit the caller then makes itself.
        child = child_process.start("reme_mcp.index.committer", str(root), str(home), quiet=True)
        out, _ = child.communicate("".join(f"{path}\n" for path in waiting).encode("utf-8", "surrogateescape"))
    except OSError:
        return None
    if child.returncode != 0:
        return None
    return out.decode("utf-8", "surrogateescape").splitlines()


def main(argv: list[str]) -> int:
    root, home = Path(argv[0]), Path(argv[1])
    ws = Workspace(root)
    store = IndexStore(ws, private_folder(ws, home))
    waiting = [line for line in sys.stdin.buffer.read().decode("utf-8", "surrogateescape").split("\n") if line]
    taken = IndexWriter(ws, store).write_spooled([], waiting)
    sys.stdout.write("".join(f"{path}\n" for path in taken))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
