"""reme-mcp: long-term memory for any MCP client, kept as plain files in a ReMe workspace.

The public surface: `Memory` (the five operations as plain Python), its configuration
(`Settings`, `load_settings`), the one error type (`ReMeError`) and the result models.

    from reme_mcp import Memory, load_settings
    memory = Memory(load_settings("~/notes/.reme"))
    print(memory.search("Go backend").render())

The stdio server imports this package before the MCP SDK loads and answers the
handshake meanwhile, so nothing is imported here until a name is first used.
"""

from __future__ import annotations

import sys

from reme_mcp._version import __version__

# Not typing.TYPE_CHECKING: importing typing alone costs more than the rest of this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from reme_mcp.config import Settings, load_settings
    from reme_mcp.errors import ReMeError
    from reme_mcp.ops.memory import Memory
    from reme_mcp.ops.reports import DoctorReport, IndexReport, ReindexResult
    from reme_mcp.ops.results import (
        DailyListResult,
        DailyNote,
        Day,
        GraphEdge,
        GraphNode,
        ReadResult,
        RememberResult,
        SearchHit,
        SearchResult,
        TraverseResult,
    )

_HOMES = {
    "Memory": "reme_mcp.ops.memory",
    "Settings": "reme_mcp.config",
    "load_settings": "reme_mcp.config",
    "ReMeError": "reme_mcp.errors",
    **dict.fromkeys(
        (
            "DailyListResult",
            "DailyNote",
            "Day",
            "GraphEdge",
            "GraphNode",
            "ReadResult",
            "RememberResult",
            "SearchHit",
            "SearchResult",
            "TraverseResult",
        ),
        "reme_mcp.ops.results",
    ),
    **dict.fromkeys(("DoctorReport", "IndexReport", "ReindexResult"), "reme_mcp.ops.reports"),
}

__all__ = [
    "DailyListResult",
    "DailyNote",
    "Day",
    "DoctorReport",
    "GraphEdge",
    "GraphNode",
    "IndexReport",
    "Memory",
    "ReMeError",
    "ReadResult",
    "ReindexResult",
    "RememberResult",
    "SearchHit",
    "SearchResult",
    "Settings",
    "TraverseResult",
    "__version__",
    "load_settings",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'reme_mcp' has no attribute {name!r}")
    __import__(home)  # not importlib.import_module: importing importlib is a cost of its own
    value = getattr(sys.modules[home], name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
