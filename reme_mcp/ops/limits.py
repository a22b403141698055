"""Each memory operation's limits, declared once.

The MCP tools' input schemas, the CLI's options and Memory's own checks all read these,
so the two faces and the library cannot drift apart. Pydantic-free: the CLI imports
this module while it starts, and the stdio server answers the handshake before any
heavy import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from reme_mcp.errors import ReMeError


@dataclass(frozen=True)
class Limit:
    """An integer argument's accepted range and default."""

    low: int
    high: int
    default: int

    def check(self, name: str, value: int) -> int:
        """The value, or a one-line ReMeError naming the range (for callers without a schema)."""
        if not self.low <= value <= self.high:
            raise ReMeError(f"{name} {value} is out of range: use {self.low} to {self.high}")
        return value

    def field(self, description: str) -> Any:
        """The pydantic Field an MCP tool's signature declares it with."""
        from pydantic import Field  # here: the CLI reads these limits and must start without pydantic

        return Field(ge=self.low, le=self.high, description=description)


def check_query(query: str) -> str:
    """The query, or a one-line ReMeError when it holds no words (it would match nothing)."""
    if not query.strip():
        raise ReMeError('the query is blank: give the words to search for, e.g. "deploy steps"')
    return query


SEARCH_LIMIT = Limit(1, 50, 5)
SEARCH_MAX_CHARS = Limit(100, 100_000, 4_000)
READ_MAX_CHARS = Limit(100, 200_000, 12_000)
TRAVERSE_DEPTH = Limit(1, 3, 1)
DAILY_LIMIT = Limit(1, 366, 7)
# A query longer than this is cut, not refused: the words past it add nothing a search can use.
MAX_QUERY_CHARS = 10_000
MAX_QUERY_SHOWN = 200  # a query is the caller's own text: echo enough to recognise it, not all of it
MAX_DATE_CHARS = 10  # YYYY-MM-DD
MAX_TAGS = 20
MAX_TAG_CHARS = 100
MAX_DESCRIPTION_CHARS = 1_000
MAX_REQUEST_ID_CHARS = 200
MAX_SUPERSEDES = 20  # notes one note may replace
Direction = Literal["forward", "backward", "both"]
DIRECTIONS: tuple[Direction, ...] = ("forward", "backward", "both")
# Which workspaces a read covers: the current project and the personal memory (the default),
# either alone, or every project; where a remember goes.
Scope = Literal["current", "project", "personal", "all"]
SCOPES: tuple[Scope, ...] = ("current", "project", "personal", "all")
WriteScope = Literal["project", "personal"]
WRITE_SCOPES: tuple[WriteScope, ...] = ("project", "personal")
