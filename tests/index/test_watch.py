"""The kernel's change feed (inotify) in place of scans: every change another process makes is seen.

Each edit is made by a separate Python process, and the very next search must
reflect it, answered from the feed (no walk over the workspace). Lost events
(a queue overflow) and folders reached through a symlink fall back to scans.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reme_mcp.config import load_settings
from reme_mcp.index import MemoryIndex
from reme_mcp.index.watch import file_system_type
from reme_mcp.ops.memory import Memory
from tests.conftest import make_reme_workspace

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def other_process(code: str, **paths: Path) -> None:
    """Run a file operation in another process, as a person's editor or ReMe would."""
    prelude = "import os, shutil\nfrom pathlib import Path\n" + "".join(
        f"{k} = Path({str(v)!r})\n" for k, v in paths.items()
    )
    subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], check=True)


def note(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {body[:30]}\n---\n{body}\n"


def found(memory: Memory, word: str) -> set[str]:
    return {hit.path for hit in memory.search(word, limit=50).results}


class Walks:
    """Counts walks over the whole workspace (the scan the feed replaces)."""

    def __init__(self, memory: Memory) -> None:
        self.full = 0
        original = memory.ws.walk

        def counted(folder: Path | None = None, on_dir: Any = None) -> Iterator[Any]:
            if folder is None:
                self.full += 1
            return original(folder, on_dir)

        memory.ws.walk = counted  # type: ignore[method-assign]


@pytest.fixture
def watched(tmp_path: Path) -> tuple[Memory, Walks]:
    root = make_reme_workspace(tmp_path / "ws")
    memory = Memory(load_settings(str(root), "UTC"))
    # As a large workspace would: the feed from the first scan on.
    memory.index = MemoryIndex(memory.ws, watch_after=0.0, home=memory.settings.index_home)
    memory.search("warm up")  # builds the index
    memory.search("warm up")  # a plain scan, after which the feed starts
    memory.search("warm up")  # the walk that sets the watches
    assert memory.index.watching
    return memory, Walks(memory)


def test_every_kind_of_change_shows_in_the_next_search(watched: tuple[Memory, Walks], tmp_path: Path) -> None:
    memory, walks = watched
    root = memory.ws.root
    day = root / "daily" / "2026-11-28"
    other_process(f"(day / 'orca.md').write_text({note('orca', 'The orca project ships monday')!r})", day=day)
    assert found(memory, "orca") == {"daily/2026-11-28/orca.md"}

    other_process("open(day / 'orca.md', 'a').write('Also the narwhal review.\\n')", day=day)
    assert found(memory, "narwhal") == {"daily/2026-11-28/orca.md"}

    other_process(
        f"(day / '.tmp').write_text({note('orca', 'The beluga plan replaced it')!r}); os.replace(day / '.tmp', day / 'orca.md')",
        day=day,
    )
    assert found(memory, "beluga") == {"daily/2026-11-28/orca.md"}
    assert found(memory, "narwhal") == set()

    other_process("(day / 'orca.md').unlink()", day=day)
    assert found(memory, "beluga") == set()

    other_process(
        f"(root / 'daily' / '2026-12-01').mkdir(); (root / 'daily' / '2026-12-01' / 'kelp.md').write_text({note('kelp', 'kelp forest survey')!r})",
        root=root,
    )
    assert found(memory, "kelp") == {"daily/2026-12-01/kelp.md"}

    outside = tmp_path / "outside" / "2026-12-02"
    outside.mkdir(parents=True)
    (outside / "reef.md").write_text(note("reef", "coral reef notes"), encoding="utf-8")
    other_process("os.rename(src, root / 'daily' / '2026-12-02')", src=outside, root=root)
    assert found(memory, "coral") == {"daily/2026-12-02/reef.md"}
    other_process("(root / 'daily' / '2026-12-02' / 'sub').mkdir(); (root / 'daily' / '2026-12-02' / 'sub' / 'x.md').write_text('manta rays')", root=root)  # fmt: skip
    assert found(memory, "manta") == {"daily/2026-12-02/sub/x.md"}  # a folder moved in is watched too

    other_process("os.rename(root / 'daily' / '2026-12-02', root / 'daily' / '2026-12-03')", root=root)
    assert found(memory, "coral") == {"daily/2026-12-03/reef.md"}
    assert found(memory, "manta") == {"daily/2026-12-03/sub/x.md"}
    other_process("open(root / 'daily' / '2026-12-03' / 'reef.md', 'a').write('seagrass too\\n')", root=root)
    assert found(memory, "seagrass") == {"daily/2026-12-03/reef.md"}  # events of a moved folder land at its new name

    other_process("shutil.rmtree(root / 'daily' / '2026-12-03')", root=root)
    assert found(memory, "coral") == found(memory, "manta") == set()

    other_process("os.rename(root / 'daily' / '2026-12-01', dst)", root=root, dst=tmp_path / "moved-out")
    assert found(memory, "kelp") == set()

    assert walks.full == 0  # every answer came from the feed, none from a scan
    assert memory.index.watching


def test_lost_events_fall_back_to_one_scan(watched: tuple[Memory, Walks]) -> None:
    memory, walks = watched
    day = memory.ws.root / "daily" / "2026-11-28"
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    other_process(
        f"""
        (day / 'squid.md').write_text({note("squid", "giant squid sighting")!r})
        a, b = open(day / 'a.txt', 'w'), open(day / 'b.txt', 'w')
        for i in range({limit} // 2 + 100):  # alternating files: the kernel cannot merge the events
            a.write('x'); a.flush(); b.write('y'); b.flush()
        """,
        day=day,
    )
    assert found(memory, "squid") == {"daily/2026-11-28/squid.md"}
    assert walks.full == 1  # the overflow was noticed and answered by one full scan
    other_process("open(day / 'squid.md', 'a').write('and a cuttlefish\\n')", day=day)
    assert found(memory, "cuttlefish") == {"daily/2026-11-28/squid.md"}
    assert walks.full == 1  # then the feed again


def test_a_folder_behind_a_symlink_turns_the_feed_off(tmp_path: Path) -> None:
    root = make_reme_workspace(tmp_path / "ws")
    (root / ".shelf").mkdir()  # a dot-folder is not walked itself: only through the link
    (root / ".shelf" / "seals.md").write_text("harbour seals", encoding="utf-8")
    (root / "digest").mkdir(exist_ok=True)
    (root / "digest" / "linked").symlink_to(root / ".shelf", target_is_directory=True)
    memory = Memory(load_settings(str(root), "UTC"))
    # The feed as soon as it can start, and a scan before every search however long this machine takes.
    memory.index = MemoryIndex(memory.ws, max_scan_interval=0.0, watch_after=0.0, home=memory.settings.index_home)
    for _ in range(3):
        memory.search("warm up")
    # One folder under two names: the feed would misplace events, so it is off.
    assert not memory.index.watching
    assert found(memory, "seals") == {"digest/linked/seals.md"}
    other_process("(shelf / 'otter.md').write_text('sea otters')", shelf=root / ".shelf")
    assert found(memory, "otters") == {"digest/linked/otter.md"}  # scans still see everything


def test_file_system_type_reads_the_mount_table() -> None:
    assert file_system_type(Path("/proc/self")) == "proc"
    assert file_system_type(Path("/")) not in (None, "proc")
