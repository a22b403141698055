"""The client's MCP roots, asked once per connection and again after the client says they changed.

A client that declares the `roots` capability is asked `roots/list` at its first tool call:
the folders it names decide the session's project (reme_mcp/projects/placement.py). A client
that declares none, answers late or answers with an error is taken as giving none, so the
project comes from the host's environment or the server's folder instead.
"""

from __future__ import annotations

import sys
import warnings
from collections import OrderedDict
from typing import Any

import anyio

# A client asked for its roots answers within milliseconds; one that does not must not hold a call.
ROOTS_TIMEOUT = 2.0
# Connections remembered (stdio has one; a long-running HTTP server meets many).
MAX_CONNECTIONS = 256


class ClientRoots:
    """Per connection (its `initialize` parameters): the roots it gave and the client's name."""

    def __init__(self) -> None:
        # id(params) -> (params, roots): the params are held so their id is not reused meanwhile.
        self._known: OrderedDict[int, tuple[Any, list[str] | None]] = OrderedDict()

    async def of(self, session: Any) -> tuple[list[str] | None, str | None]:
        """The roots (None: the client declares none) and the client's name, for this session."""
        params = session.client_params
        client = params.client_info.name if params is not None and params.client_info is not None else None
        key = id(params)
        held = self._known.get(key)
        if held is not None and held[0] is params:
            return held[1], client
        roots = await _ask(session)
        self._known[key] = (params, roots)
        while len(self._known) > MAX_CONNECTIONS:
            self._known.popitem(last=False)
        return roots, client

    def changed(self, session: Any) -> None:
        """notifications/roots/list_changed: ask again at the next call."""
        self._known.pop(id(session.client_params), None)


async def _ask(session: Any) -> list[str] | None:
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return None
    if not session.can_send_request:
        # From protocol 2026-07-28 on a call's channel carries no request of the server's
        # (roots are deprecated there): the host's folder or environment names the project.
        return None
    try:
        with anyio.fail_after(ROOTS_TIMEOUT), warnings.catch_warnings():
            # Roots are deprecated from protocol 2026-07-28 on; the hosts of today still send them.
            warnings.simplefilter("ignore")
            answer = await session.list_roots()
    except Exception as exc:  # a client that cannot answer gives no roots: the next source decides
        print(f"reme-mcp: the client declared roots but roots/list failed ({exc!r}); using its folder", file=sys.stderr)
        return None
    return [str(root.uri) for root in answer.roots]
