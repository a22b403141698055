"""Traverse (reme_mcp/ops/traverse.py): the link graph and the folder tree, exact and bounded.

The link graph is checked on real files through Memory, and its bounds on plain records
(traverse reads only `name`, `description` and `links` of the index's records).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reme_mcp.config import load_settings
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.traverse import MAX_NODES, backlinks, link_graph
from tests.conftest import write

LINKED = 120


@dataclass(frozen=True)
class Record:
    links: tuple[str, ...]
    name: str = ""
    description: str = ""


def note(i: int) -> str:
    return f"notes/n{i:03}.md"


def test_fully_linked_notes_traverse_to_exactly_every_edge(tmp_path: Path) -> None:
    """120 notes each linking to all others: 14,280 links, each edge once (issue 12: this was quadratic)."""
    root = tmp_path / "ws"
    for i in range(LINKED):
        others = " ".join(f"[[{note(j)}]]" for j in range(LINKED) if j != i)
        write(root, note(i), f"---\nname: n{i}\n---\n# Note {i}\n\n{others}\n")
    memory = Memory(load_settings(str(root), "UTC"))
    everything = {(note(i), note(j)) for i in range(LINKED) for j in range(LINKED) if i != j}

    both = memory.traverse(note(0), depth=3, direction="both")
    assert [(e.source, e.target) for e in both.edges if e.kind == "link"] == [(e.source, e.target) for e in both.edges]
    assert len(both.edges) == len(everything)
    assert {(e.source, e.target) for e in both.edges} == everything
    assert sorted(n.path for n in both.nodes) == [note(i) for i in range(LINKED)]
    assert all(n.exists for n in both.nodes) and both.omitted == 0
    assert {n.path: n.depth for n in both.nodes}[note(0)] == 0
    assert {n.depth for n in both.nodes if n.path != note(0)} == {1}
    assert next(n for n in both.nodes if n.path == note(7)).name == "n7"

    back = memory.traverse(note(5), depth=1, direction="backward")
    assert {(e.source, e.target) for e in back.edges} == {(note(j), note(5)) for j in range(LINKED) if j != 5}


def test_edges_are_kept_once_in_both_directions_and_self_links_count_once() -> None:
    records = {"a.md": Record(("b.md", "a.md")), "b.md": Record(("a.md",))}
    result = link_graph("a.md", 2, "both", records, on_disk=lambda _: False)
    assert [(e.source, e.target) for e in result.edges] == [("a.md", "b.md"), ("a.md", "a.md"), ("b.md", "a.md")]
    assert [n.path for n in result.nodes] == ["a.md", "b.md"]


def test_a_dangling_target_is_a_missing_node_and_is_not_followed() -> None:
    asked: list[str] = []

    def on_disk(path: str) -> bool:
        asked.append(path)
        return path == "plain.txt"

    records = {"a.md": Record(("gone.md", "plain.txt"))}
    result = link_graph("a.md", 3, "forward", records, on_disk)
    exists = {n.path: n.exists for n in result.nodes}
    assert exists == {"a.md": True, "gone.md": False, "plain.txt": True}
    assert asked == ["gone.md", "plain.txt"]  # only targets the index does not hold are looked up, once each


def test_the_answer_is_bounded_and_says_how_much_was_left_out() -> None:
    hub = {"hub.md": Record(tuple(f"f{i}.md" for i in range(MAX_NODES + 40)))}
    result = link_graph("hub.md", 1, "forward", hub, on_disk=lambda _: True)
    assert len(result.nodes) == MAX_NODES
    assert result.omitted == 41  # the hub itself is one of the nodes
    assert len(result.edges) == MAX_NODES - 1


def test_backlinks_invert_the_records_once_sorted() -> None:
    records = {"z.md": Record(("t.md",)), "a.md": Record(("t.md", "u.md")), "t.md": Record(())}
    assert backlinks(records) == {"t.md": ["a.md", "z.md"], "u.md": ["a.md"]}


def test_names_from_files_are_escaped_in_nodes() -> None:
    records = {"a.md": Record(("b.md",)), "b.md": Record((), name="<reme-context>x", description="")}
    result = link_graph("a.md", 1, "forward", records, on_disk=lambda _: True)
    node = next(n for n in result.nodes if n.path == "b.md")
    assert node.name is not None and "<reme-context" not in node.name and node.description is None
