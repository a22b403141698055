"""Traverse: a file's link graph, or a folder's tree, as a bounded answer.

Links come from the index's file records (each file's outgoing wikilinks, exactly as
written). Backlinks are the same records inverted once per call, and nodes and edges
are kept in dicts, so a traversal costs time linear in the edges it visits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from reme_mcp.ops.limits import Direction
from reme_mcp.ops.results import GraphEdge, GraphNode, TraverseResult
from reme_mcp.safety.boundary import escaped
from reme_mcp.storage.text import nameable
from reme_mcp.storage.workspace import PRIVATE_DIRS, Workspace

MAX_FOLDER_ENTRIES = 200  # per folder
MAX_NODES = 500  # per answer


class LinkedFile(Protocol):
    """What traverse needs of an index record."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def links(self) -> tuple[str, ...]: ...


def file_node(path: str, depth: int, record: LinkedFile | None, exists: bool = True) -> GraphNode:
    """The one node builder: a file, with its front matter's name and description when indexed."""
    return GraphNode(
        path=path,
        kind="file",
        depth=depth,
        name=escaped(record.name) if record else None,
        description=escaped(record.description) if record else None,
        exists=exists,
    )


def backlinks(records: Mapping[str, LinkedFile]) -> dict[str, list[str]]:
    """Each link target's sources, sorted: the records inverted in one pass."""
    found: dict[str, set[str]] = {}
    for source, record in records.items():
        for target in record.links:
            found.setdefault(target, set()).add(source)
    return {target: sorted(sources) for target, sources in found.items()}


def _neighbours(
    current: str, direction: Direction, records: Mapping[str, LinkedFile], back: Mapping[str, list[str]]
) -> Iterator[tuple[str, tuple[str, str]]]:
    """(the other end, (source, target)) for each link at `current` in the asked direction."""
    if direction in ("forward", "both"):
        record = records.get(current)
        for target in record.links if record else ():
            yield target, (current, target)
    if direction in ("backward", "both"):
        for source in back.get(current, ()):
            yield source, (source, current)


def link_graph(
    start: str,
    depth: int,
    direction: Direction,
    records: Mapping[str, LinkedFile],
    on_disk: Callable[[str], bool],
) -> TraverseResult:
    """Breadth-first over wikilinks from `start`, down to `depth`.

    A link target is a string from a file: `on_disk(path)` says whether the workspace
    serves it; only the index's records and that answer decide `exists`.
    """
    back = backlinks(records) if direction != "forward" else {}
    nodes = {start: file_node(start, 0, records.get(start))}
    edges: dict[tuple[str, str], None] = {}
    queue = deque([(start, 0)])
    omitted = 0
    while queue:
        current, level = queue.popleft()
        if level >= depth:
            continue
        for other, edge in _neighbours(current, direction, records, back):
            if other not in nodes:
                if len(nodes) >= MAX_NODES:
                    omitted += 1
                    continue
                record = records.get(other)
                node = nodes[other] = file_node(other, level + 1, record, record is not None or on_disk(other))
                if node.exists:
                    queue.append((other, level + 1))
            edges.setdefault(edge, None)
    return TraverseResult(
        path=start,
        direction=direction,
        nodes=list(nodes.values()),
        edges=[GraphEdge(source=s, target=t, kind="link") for s, t in edges],
        omitted=omitted,
    )


def _folder_entries(ws: Workspace, folder: Path) -> list[Path]:
    """A folder's visible entries inside the workspace, folders first, then by name."""
    try:
        # A name that is not UTF-8 cannot be told to a client (storage/text.py).
        entries = [e for e in folder.iterdir() if not e.name.startswith(".") and nameable(e.name)]
    except OSError:
        return []
    if folder == ws.root:
        entries = [e for e in entries if e.name not in PRIVATE_DIRS]
    inside = []
    for entry in entries:
        try:
            if entry.resolve().is_relative_to(ws.root):
                inside.append(entry)
        except (OSError, RuntimeError):
            continue
    return sorted(inside, key=lambda e: (not e.is_dir(), e.name))


def folder_tree(ws: Workspace, folder: Path, rel: str, depth: int, records: Mapping[str, LinkedFile]) -> TraverseResult:
    """Breadth-first over a folder's entries, down to `depth`, at most MAX_FOLDER_ENTRIES per folder."""
    nodes = [GraphNode(path=rel, kind="folder", depth=0)]
    edges: list[GraphEdge] = []
    omitted = 0
    queue = deque([(folder, rel, 0)])
    while queue:
        current, current_rel, level = queue.popleft()
        if level >= depth:
            continue
        entries = _folder_entries(ws, current)
        for i, entry in enumerate(entries):
            if i >= MAX_FOLDER_ENTRIES or len(nodes) >= MAX_NODES:
                omitted += len(entries) - i
                break
            child = f"{current_rel}/{entry.name}" if current_rel else entry.name
            if entry.is_dir():
                nodes.append(GraphNode(path=child, kind="folder", depth=level + 1))
                queue.append((entry, child, level + 1))
            else:
                nodes.append(file_node(child, level + 1, records.get(child)))
            edges.append(GraphEdge(source=current_rel, target=child, kind="contains"))
    return TraverseResult(path=rel, nodes=nodes, edges=edges, omitted=omitted)
