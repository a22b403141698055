"""Files built once from a model's file and kept in the models folder (config.default_models_home).

Named by what they were built from (the source file's fingerprint) and by how (a version
the builder names), so a new wheel or a change to a builder builds them afresh. Written to
a temporary name and renamed, so two servers starting at once never read half a file.
When the folder cannot be written (a read-only home, a full disk) the built bytes are
used as they are: built anew at each start, a second of CPU, rather than no search by
meaning.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

STALE_PART = 3600.0  # seconds after which a half-written file is a killed build's leftover


def kept(folder: Path, name: str, build: Callable[[], bytes]) -> Path | bytes:
    """`folder / name`, built by `build` and saved first when it is not there; the bytes
    themselves when they cannot be saved."""
    target = folder / name
    if target.is_file():
        return target
    data = build()
    _sweep(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".part", dir=folder)
    except OSError:
        return data
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError:  # a full disk: this start runs from memory, the next one tries again
        return data
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return target


def loaded(folder: Path, name: str, build: Callable[[], bytes], load: Callable[[Path | bytes], T]) -> T:
    """`load` of the kept file; a kept file that does not load (damaged on disk, or written by
    a version that wrote it otherwise) is built again, once, rather than leaving the stage off."""
    found = kept(folder, name, build)
    try:
        return load(found)
    except Exception:
        if not isinstance(found, Path):
            raise
        with contextlib.suppress(OSError):
            found.unlink()
    return load(kept(folder, name, build))


def fingerprint(path: Path) -> str:
    """Names a model file by its size and its first and last mebibyte: cheap, and another
    release's file differs in them (a vocabulary leads such a file, its last layer ends it)."""
    digest = hashlib.sha256()
    size = path.stat().st_size
    digest.update(str(size).encode())
    with open(path, "rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:16]


def _sweep(folder: Path) -> None:
    """Half-written files of builds that were killed."""
    with contextlib.suppress(OSError):
        for leftover in folder.glob(".build-*.part"):
            with contextlib.suppress(OSError):
                if time.time() - leftover.stat().st_mtime > STALE_PART:
                    leftover.unlink()
