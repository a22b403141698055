"""A body over the HTTP limit reaches the official MCP client as an error naming the limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from reme_mcp.faces.http import MAX_BODY_BYTES
from tests.team.team_git import served

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_an_oversized_body_is_a_json_rpc_error_naming_the_limit(tmp_path: Path) -> None:
    with served(tmp_path / "ws") as url:
        async with Client(url) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("remember", {"content": "x" * (MAX_BODY_BYTES + 1000)})
            said = str(raised.value)
            assert f"{MAX_BODY_BYTES:,} bytes" in said and "send less" in said, said
            assert "Server returned an error response" not in said
            kept = await client.call_tool("remember", {"content": "After the refusal the session still works."})
            assert not kept.is_error, kept.content
