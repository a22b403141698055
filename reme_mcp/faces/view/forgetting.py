"""Where the page's forget buttons meet forgetting itself (`reme_mcp.ops.forget.forgetting`).

Two steps, as forgetting works: a plan that says exactly what would go, shown to the person,
then, after they confirm it, its application. The plan is made again on confirming, so what
is removed is what the workspace holds then, never a stale list sent back by the browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reme_mcp.errors import ReMeError
from reme_mcp.ops.forget.forgetting import forget_apply, forget_plan
from reme_mcp.ops.forget.selection import Selection

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory


def plan_forgetting(memory: Memory, paths: list[str]) -> str:
    """What forgetting `paths` (a note, a search's results, a session's dialog) would change,
    as text for the person to confirm."""
    return forget_plan(memory, _selection(paths)).render()


def apply_forgetting(memory: Memory, paths: list[str]) -> str:
    """Forget `paths` as planned now; what was done, as text."""
    return forget_apply(memory, forget_plan(memory, _selection(paths))).render()


def _selection(paths: list[str]) -> Selection:
    if not paths:
        raise ReMeError("nothing to forget was named: use a note's or a result's forget button")
    return Selection(paths=tuple(paths))
