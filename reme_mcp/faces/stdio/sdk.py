"""The SDK's side of the stdio front: the MCP server run over a pair of pipes in a thread."""

from __future__ import annotations

import io
import os
import threading
from typing import TYPE_CHECKING

from reme_mcp.config import Settings

if TYPE_CHECKING:
    from reme_mcp.faces.server import MemoryServer


def run_sdk(server: MemoryServer, sdk_in: int, sdk_out: int) -> None:
    """Serve MCP with the SDK over two file descriptors, which it closes when the client is gone."""
    import anyio
    from mcp.server.stdio import stdio_server

    reader = io.TextIOWrapper(os.fdopen(sdk_in, "rb"), encoding="utf-8", errors="replace")
    writer = io.TextIOWrapper(os.fdopen(sdk_out, "wb"), encoding="utf-8", write_through=True)

    async def main() -> None:
        async with stdio_server(anyio.wrap_file(reader), anyio.wrap_file(writer)) as (read, write):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        server.finish()

    try:
        anyio.run(main)
    finally:
        reader.close()
        writer.close()


def converse(settings: Settings, lines: list[bytes]) -> list[bytes]:
    """What the SDK alone writes back for these client lines on one fresh connection."""
    from reme_mcp.faces.server import build_server

    wanted = sum(1 for line in lines if b'"id"' in line)
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    thread = threading.Thread(target=run_sdk, args=(build_server(settings, warm_up=False), sdk_in_r, sdk_out_w))
    thread.start()
    with os.fdopen(sdk_in_w, "wb") as to_sdk, os.fdopen(sdk_out_r, "rb") as from_sdk:
        to_sdk.write(b"".join(lines))
        to_sdk.flush()
        answers = [from_sdk.readline() for _ in range(wanted)]
    thread.join()
    return answers
