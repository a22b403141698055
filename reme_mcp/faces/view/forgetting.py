"""Where the page's forget buttons meet forgetting itself (`reme_mcp.ops.forget`, built apart).

Two steps, as forgetting works: a plan that says what would go, shown to the person, then its
application. Until forgetting is part of the build, both say so in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory

UNAVAILABLE = "forgetting is not available in this build"


class ForgettingUnavailable(ReMeError):
    """This build has no forgetting: the page says so instead of forgetting."""


def plan_forgetting(memory: Memory, path: str) -> str:
    """What forgetting `path` would change, as text for the person to confirm."""
    raise ForgettingUnavailable(UNAVAILABLE)


def apply_forgetting(memory: Memory, path: str) -> str:
    """Forget `path` as planned; what was done, as one line."""
    raise ForgettingUnavailable(UNAVAILABLE)
