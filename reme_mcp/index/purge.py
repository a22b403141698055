"""What the index's private folder keeps of files beyond the index itself, dropped on request.

A person who forgets a file (ops/forget/forgetting.py) or has secrets redacted (ops/forget/scrub.py) expects
nothing derived to keep the old text. Whoosh marks a removed document deleted but keeps its
stored text in the segment until a merge, so the caller rebuilds the index; what this module
drops is the rest: the semantic stage's vectors of those files and the saved copy of the
file records (records.py), which holds each file's name and description.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reme_mcp.index.semantic.vectors import VectorStore

log = logging.getLogger("reme_mcp.index")


def drop_derived(folder: Path, paths: Collection[str]) -> int:
    """Drop these files' vectors from every vector store in `folder`, and the saved file records;
    returns how many stores changed. A store that cannot be read back is removed whole:
    vectors are always computed again from the files."""
    changed = 0
    for meta in sorted(folder.glob("vectors-*.json")):
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
            held = {f.get("path") for f in data.get("files", []) if isinstance(f, dict)}
        except (OSError, ValueError, AttributeError):
            held, data = set(paths), None
        if not held & set(paths):
            continue
        changed += 1
        if not _drop_from(folder, meta, data, paths):
            _remove_store(folder, meta)
    for saved in folder.glob("records-v*.json"):
        with contextlib.suppress(FileNotFoundError):
            saved.unlink()
    return changed


def _drop_from(folder: Path, meta: Path, data: object, paths: Collection[str]) -> bool:
    """Rewrite one store without these files; False when it cannot be read as its own model's."""
    if not isinstance(data, dict):
        return False
    model, dim = data.get("model"), data.get("dim")
    if not isinstance(model, str) or not isinstance(dim, int) or meta.name != f"vectors-{model}.json":
        return False
    store = _loaded(folder, model, dim)
    if not set(store.hashes()) & set(paths):
        return False  # read as empty (foreign, or damaged): its rows still hold the files
    store.drop(list(paths))
    store.save()
    return not set(_loaded(folder, model, dim).hashes()) & set(paths)  # read back: saved, not kept in memory


def _loaded(folder: Path, model: str, dim: int) -> VectorStore:
    # numpy is there: a vector store exists only where the semantic extra wrote it.
    from reme_mcp.index.semantic.vectors import VectorStore

    store = VectorStore(folder, model, dim)
    store.load()
    return store


def _remove_store(folder: Path, meta: Path) -> None:
    log.warning("reme-mcp: removing the vectors in %s: they are computed again from the files", meta)
    for path in [meta, *folder.glob(f"{meta.stem}.*npy*"), folder / f"{meta.stem}.npy"]:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
