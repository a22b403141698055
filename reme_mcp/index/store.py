"""The store: the index folder on disk, opened, healed, rebuilt and swapped, and its latest searcher.

The index lives in `folder/index-v<SCHEMA_VERSION>` (folder: home.py). It is
opened once per process and a searcher of the latest commit kept; another
process's commit costs only opening its new segments (segments.py). A missing
index is built; a damaged one (whoosh_private.is_corruption, or a file shorter
than when it was committed, see `_check_sizes`) is rebuilt. A build happens in
a staging folder that is swapped in whole, so a killed build leaves the old
index usable. Each commit also leaves the size of every index file in a small
JSON file in the index folder: a file cut short (a failing disk, a careless
copy) does not always fail to decode, so a new process compares sizes before
trusting it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from whoosh import index as whoosh_index
from whoosh.searching import Searcher

from reme_mcp.errors import os_error_line
from reme_mcp.index.build import build_index
from reme_mcp.index.home import ensure_folder, index_lock, temporary_folder
from reme_mcp.index.records import RecordCache
from reme_mcp.index.schema import SCHEMA_VERSION, FileRecord
from reme_mcp.index.segments import reader_reusing
from reme_mcp.index.whoosh_private import DamagedIndex, is_corruption, is_gone, open_index
from reme_mcp.storage.files import write_whole
from reme_mcp.storage.workspace import Workspace

log = logging.getLogger("reme_mcp.index")

T = TypeVar("T")

# Inside the index folder, so it moves with a swap; Whoosh leaves dot-files alone.
SIZES = ".committed-sizes.jsonl"
MAX_SIZES_LOG = 256 * 1024  # bytes; then rewritten with only the files still there


class BuildReason(Enum):
    """Why the whole index is built; decides whether a person hears of it."""

    REQUESTED = "asked to"  # reme-mcp reindex: it shows its own progress
    MISSING = "no index yet"  # a first start, or the folder was cleared: news only if it indexed something
    DAMAGED = "the index is unreadable"  # always said on stderr
    CHANGED = "most files changed"  # cheaper built whole than file by file; said on stderr


def through_commits(step: Callable[[], T], attempts: int = 10) -> T:
    """Run an index read that another process's commit can race.

    A commit deletes the generation it replaces, so a reader that listed the
    folder just before may find its table of contents gone. That is no
    corruption: the next attempt opens the new generation.
    """
    for attempt in range(attempts):
        try:
            return step()
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.002 * (attempt + 1))
    raise AssertionError("unreachable")


class IndexStore:
    """One workspace's index folder, shared by the threads of this process (under `mutex`) and by other processes."""

    def __init__(self, ws: Workspace, folder: Path) -> None:
        self.ws = ws
        self.mutex = threading.RLock()
        self.builds = 0  # full builds by this process
        self._ix: Any = None
        self._searcher: Searcher | None = None
        self._records: dict[str, FileRecord] = {}
        self._records_generation: int | None = None  # the commit `_records` describes
        self._recorded: set[str] = set()  # index files whose size this process logged
        self._opened: tuple[int, int] | None = None  # the index folder's identity when it was opened
        self._place(folder)

    def _place(self, folder: Path) -> None:
        self.folder = folder
        self.directory = folder / f"index-v{SCHEMA_VERSION}"
        self._record_cache = RecordCache(self.ws, folder / f"records-v{SCHEMA_VERSION}.json")

    def exists(self) -> bool:
        return bool(whoosh_index.exists_in(str(self.directory)))

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The cross-process lock every writer and builder of this index holds."""
        return index_lock(self.folder)

    # ---- opening -------------------------------------------------------------------------------

    def index(self) -> Any:
        """The open index, built first if there is none, rebuilt if it is damaged."""
        with self.mutex:
            if self._ix is not None and self._swapped():
                # Cleared or rebuilt elsewhere: a new index numbers its commits afresh, so what
                # is held here could pass for up to date while reading the old, deleted files.
                self.reset()
            if self._ix is None:
                if not self.exists():
                    self._first_build()
                try:
                    self._ix = through_commits(self._open_checked)
                except Exception as exc:
                    if not is_corruption(exc):
                        raise
                    self._ix = None
                    self.rebuild(BuildReason.DAMAGED, _cause(exc))
                    self._ix = open_index(self.directory)
                with contextlib.suppress(OSError):
                    self._opened = _identity(self.directory)
            return self._ix

    def identity(self) -> tuple[int, int] | None:
        """The index folder's identity on disk (device, inode); None when there is none."""
        try:
            return _identity(self.directory)
        except OSError:
            return None

    def _swapped(self) -> bool:
        """Whether the index folder on disk is not the one opened here (cleared, or swapped for a rebuild)."""
        current = self.identity()
        return current is None or current != self._opened

    def vanished(self) -> bool:
        """Whether the index open here is no longer the one on disk: its folder was cleared or
        swapped for a rebuild, or the commit its searcher reads was replaced, since it was opened."""
        with self.mutex:
            if self._swapped():
                return True
            searcher = self._searcher
            if searcher is None:
                return False
            generation = searcher.reader().generation()
            return generation >= 0 and not (self.directory / f"_MAIN_{generation}.toc").exists()

    def _first_build(self) -> None:
        """Build a missing index; where its folder cannot be written, in a private temporary one."""
        for _ in range(2):  # a file vanishing mid-build: the folder was cleared meanwhile, build again
            try:
                self.rebuild(BuildReason.MISSING)
                return
            except FileNotFoundError:
                continue
            except OSError as exc:
                if is_corruption(exc) or self.exists():
                    raise
                break
        try:
            self.rebuild(BuildReason.MISSING)
        except OSError as exc:
            if is_corruption(exc) or self.exists():
                raise
            fallback = temporary_folder()
            log.warning(
                "reme-mcp: %s; this process indexes into %s instead",
                os_error_line(exc, f"building the index in {self.folder}"),
                fallback,
            )
            self._place(fallback)
            self.rebuild(BuildReason.MISSING)

    def _open_checked(self) -> Any:
        self._check_sizes()
        return open_index(self.directory)

    def searcher(self) -> Searcher:
        """A searcher of the latest commit; an index that vanished or broke meanwhile is built again."""
        with self.mutex:
            try:
                return self._latest_searcher()
            except Exception as exc:
                # A file gone under an open index: the folder was cleared or rebuilt (by a person,
                # another process) since it was opened. Open it afresh (building it if it is gone).
                vanished = is_gone(exc)
                if not (vanished or is_corruption(exc)):
                    raise
                self.reset()
                if not vanished:
                    self.rebuild(BuildReason.DAMAGED, _cause(exc))
                return self._latest_searcher()  # opening a missing index builds it

    def own_searcher(self) -> Searcher:
        """A searcher of the latest commit for one long read of the caller's own, without the
        mutex (the searches' searcher closes segments as commits replace them; this one keeps
        its own open until the caller closes it)."""
        with self.mutex:
            ix = self.index()
            return Searcher(through_commits(lambda: reader_reusing(ix, None)), fromindex=ix)

    def held_searcher(self) -> Searcher | None:
        """The searcher last handed out, without looking for newer commits."""
        return self._searcher

    def _latest_searcher(self) -> Searcher:
        ix = self.index()
        if self._searcher is None or not through_commits(self._searcher.up_to_date):
            held = self._searcher.reader() if self._searcher is not None else None
            self._searcher = Searcher(through_commits(lambda: reader_reusing(ix, held)), fromindex=ix)
        return self._searcher

    def reset(self) -> None:
        """Forget the open index: the next call opens the folder afresh."""
        with self.mutex:
            if self._searcher is not None:
                with contextlib.suppress(Exception):  # a searcher of a broken or vanished index
                    self._searcher.close()
            self._ix, self._searcher = None, None
            self._records, self._records_generation = {}, None

    # ---- the file records ----------------------------------------------------------------------

    def records(self) -> dict[str, FileRecord]:
        """Every file the index holds, by path; recomputed only when another commit happened."""
        with self.mutex:
            searcher = self.searcher()
            generation = searcher.reader().generation()
            if generation != self._records_generation:
                self._records, self._records_generation = self._record_cache.live(searcher), generation
            return self._records

    @property
    def records_generation(self) -> int | None:
        """The commit the records last returned describe (None: not read since opening)."""
        return self._records_generation

    def committed(self, generation: int, written: dict[str, FileRecord | None]) -> None:
        """This process committed `generation`: patch the records it changed. Call under the index lock.

        Patching instead of re-reading every record keeps a sync's cost from growing with
        the workspace; it is sound only if no other commit came between.
        """
        with self.mutex:
            if self._records_generation == generation - 1 and not self._swapped():
                records = dict(self._records)  # a new dict: callers may hold the old one
                for path, record in written.items():
                    if record is None:
                        records.pop(path, None)
                    else:
                        records[path] = record
                self._records, self._records_generation = records, generation
            record_sizes(self.directory, self._recorded)

    # ---- building ------------------------------------------------------------------------------

    def rebuild(self, reason: BuildReason, cause: str = "", progress: Callable[[int, int], None] | None = None) -> int:
        """Build the whole index from the files in a fresh folder, then swap it in. Returns the chunk count."""
        with self.mutex, self.lock():
            if reason is BuildReason.MISSING and self.exists():
                return 0  # another process built it while we waited
            said = f"{reason.value} ({cause})" if cause else reason.value
            if reason in (BuildReason.DAMAGED, BuildReason.CHANGED):
                log.warning("reme-mcp: rebuilding the index at %s: %s", self.directory, said)
            self.reset()
            self.builds += 1
            ensure_folder(self.folder)
            # Under the index lock no other build runs: any staging or old folder is what a
            # killed build left behind (each as big as the index), so clear them all.
            for leftover in self.folder.glob(f".{self.directory.name}.*"):
                if ".building-" in leftover.name or ".old-" in leftover.name:
                    shutil.rmtree(leftover, ignore_errors=True)
            staging = self.directory.with_name(f".{self.directory.name}.building-{os.getpid()}")
            chunks = self._build_staged(staging, progress)
            self._recorded = set()
            record_sizes(staging, self._recorded)  # swapped in with the index: never beside another build's files
            if reason is BuildReason.MISSING and chunks:
                log.warning("reme-mcp: rebuilding the index at %s: %s", self.directory, said)
            old = self.directory.with_name(f".{self.directory.name}.old-{os.getpid()}")
            if self.directory.exists():
                os.replace(self.directory, old)
            os.replace(staging, self.directory)
            shutil.rmtree(old, ignore_errors=True)
            self._drop_older_schemas()
            return chunks

    def _build_staged(self, staging: Path, progress: Callable[[int, int], None] | None) -> int:
        """Build into `staging`; when the folder is cleared under the build (staging gone), build again."""
        for attempt in range(3):
            ensure_folder(self.folder)
            staging.mkdir(mode=0o700)
            try:
                return build_index(self.ws, staging, progress)
            except Exception as exc:
                # A cleaner deleting file by file may leave the staging folder itself for last.
                cleared = is_gone(exc) or not staging.exists()
                if attempt == 2 or not cleared:
                    raise
                shutil.rmtree(staging, ignore_errors=True)
        raise AssertionError("unreachable")

    def _drop_older_schemas(self) -> None:
        """Indexes of older schema versions are dead weight once this one is built."""
        for folder in self.folder.glob("index-v*"):
            version = folder.name.removeprefix("index-v")
            if version.isdigit() and int(version) < SCHEMA_VERSION:
                shutil.rmtree(folder, ignore_errors=True)

    def _check_sizes(self) -> None:
        """Refuse an index one of whose committed files is now shorter or longer than committed."""
        saved = committed_sizes(self.directory)
        if not saved:
            return
        for entry in os.scandir(self.directory):
            size = saved.get(entry.name)
            if size is not None and entry.stat().st_size != size:
                raise DamagedIndex(f"{entry.name} is {entry.stat().st_size} bytes, committed as {size}")


def _identity(directory: Path) -> tuple[int, int]:
    info = os.stat(directory)
    return info.st_dev, info.st_ino


def committed_sizes(directory: Path) -> dict[str, int]:
    """The sizes `record_sizes` logged for the files of this index folder (a torn last line is skipped)."""
    try:
        lines = (directory / SIZES).read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return {}
    sizes: dict[str, int] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            sizes.update((k, v) for k, v in entry.items() if isinstance(k, str) and isinstance(v, int))
    return sizes


def record_sizes(directory: Path, recorded: set[str]) -> None:
    """Log the size of every index file not in `recorded` (and add it there). Call under the index lock.

    A file's size is final once its commit is done, and no commit is half-done under the
    lock. The log is appended to, never replaced: replacing a file by rename makes ext4
    write it out at once (about 4 ms a commit here); it is compacted when it grows large.
    """
    try:
        entries = [e for e in os.scandir(directory) if _committed_file(e)]
        new = {e.name: e.stat().st_size for e in entries if e.name not in recorded}
        if not new:
            return
        log_file = directory / SIZES
        with open(log_file, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(new) + "\n")
            grown = fh.tell() > MAX_SIZES_LOG
        recorded.update(new)
        if grown:
            current = {e.name: e.stat().st_size for e in entries}
            write_whole(log_file, json.dumps(current) + "\n", durable=False)
    except OSError:
        pass  # only a check for the next process: without it, decoding errors still tell damage


def _committed_file(entry: os.DirEntry[str]) -> bool:
    """Files a commit writes once and never changes (not the lock, nor a writer's temporary files)."""
    name = entry.name
    return entry.is_file() and not name.startswith(".") and not name.endswith("WRITELOCK") and ".tmp" not in name


def _cause(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc}"
