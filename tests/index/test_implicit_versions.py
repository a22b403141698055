"""Versions without a hint, through the MCP tools: a newer note on the same subject with another
value comes first and the older is marked; notes that share a sentence, a line or the question's
words are never marked; `remember` names what a new note may replace, and a retry with the same
`request_id` and `supersedes` links it without a second copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.index.test_versions import call, client_for

pytestmark = pytest.mark.anyio


async def remember(client: Client, content: str, day: str, **more: Any) -> dict[str, Any]:
    error, data, text = await call(client, "remember", {"content": content, "date": day, **more})
    assert not error and data["created"], text
    return data


SHARED_ENDINGS = (
    "Questions about this go to the #infra-desk channel.",
    "- Owner of this page: the platform guild. Ask in #infra-desk.",
    "有问题请在 #infra-desk 频道提问。",
)
UNRELATED = (
    "The office VPN uses WireGuard on port 51820.",
    "Design reviews happen on Thursdays at 15:00 in room Atlas.",
    "Database backups run nightly at 02:00 UTC to the cold store.",
    "The release train leaves every second Monday.",
)


@pytest.mark.parametrize("ending", SHARED_ENDINGS)
async def test_notes_sharing_a_sentence_are_never_versions(tmp_path: Path, ending: str) -> None:
    async with client_for(tmp_path) as client:
        for k, fact in enumerate(UNRELATED):
            await remember(client, f"{fact}\n{ending}", f"2026-0{k + 1}-10")
        for query in ("infra-desk questions", ending, "#infra-desk"):
            _, data, text = await call(client, "search", {"query": query, "limit": 10})
            assert len(data["results"]) == len(UNRELATED), text
            assert all(not hit["possibly_outdated_by"] for hit in data["results"]), text
            assert "possibly outdated" not in text


KINDS = (  # (older, newer, query): one fact changed with no hint, in words of our own
    (
        "Mira prefers npm for the web client's packages.",
        "Mira switched to pnpm for the web client's packages.",
        "Mira web client packages",
    ),
    pytest.param(
        "The storage sync meets on Wednesdays at 11:00.",
        "The storage sync moved to Fridays at 14:30.",
        "storage sync meeting",
        # The question's rarest word ("meeting") is held by the older note alone, so rule 6 finds no
        # subject both hold in a workspace this small: a known gap, kept visible.
        marks=pytest.mark.xfail(strict=True, reason="rule 6: the rarest asked word is held by one note only"),
    ),
    (
        "The pricing service caches quotes in Redis.",
        "The pricing service now caches quotes in Memcached.",
        "pricing service quote cache",
    ),
    ("Jonas is mentored by Ingrid Falk.", "Jonas is now mentored by Tariq Bell.", "Jonas mentor"),
    (
        "Load tests for the gateway are written with JMeter.",
        "Load tests for the gateway are now written with k6 instead of JMeter.",
        "gateway load tests tool",
    ),
)


@pytest.mark.parametrize(("older", "newer", "query"), KINDS)
async def test_a_changed_fact_without_a_hint_puts_the_newer_first(
    tmp_path: Path, older: str, newer: str, query: str
) -> None:
    async with client_for(tmp_path) as client:
        old = (await remember(client, older, "2026-02-03"))["path"]
        await remember(client, "Lunch on Friday is at the noodle bar.", "2026-02-20")
        await remember(client, "The quarterly offsite is in Lisbon this year.", "2026-03-01")
        await call(client, "search", {"query": query})
        new = await remember(client, newer, "2026-04-07")
        named = [m["path"] for m in new["may_replace"]]
        assert named in ([], [old])  # offered when its own words say so; never another note
        _, data, text = await call(client, "search", {"query": query})
        paths = [hit["path"] for hit in data["results"]]
        assert paths[0] == new["path"], text
        by_path = {hit["path"]: hit for hit in data["results"]}
        assert by_path[old]["possibly_outdated_by"] == [new["path"]], text


async def test_remember_names_what_it_may_replace_and_a_retry_links_it(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        old = (await remember(client, "The nightly export writes to bucket exports-eu1.", "2026-05-02"))["path"]
        before = (tmp_path / old).read_bytes()
        args = {"content": "The nightly export now writes to bucket exports-eu4.", "date": "2026-06-11"}
        await call(client, "search", {"query": "nightly export"})  # as a model looks first; it waits for writes
        _, first, text = await call(client, "remember", {**args, "request_id": "r-42"})
        assert first["created"] and first["may_replace"][0]["path"] == old, text
        assert first["may_replace"][0]["date"] == "2026-05-02" and "exports-eu1" in first["may_replace"][0]["line"]
        assert old in text and "supersedes" in text and "<reme-context" in text
        _, again, text = await call(client, "remember", {**args, "request_id": "r-42", "supersedes": [old]})
        assert not again["created"] and again["path"] == first["path"] and again["supersedes_added"] == [old], text
        assert len(list((tmp_path / "daily" / "2026-06-11").glob("*.md"))) == 1  # never a second copy
        _, read, _ = await call(client, "read", {"path": first["path"]})
        assert read["metadata"]["supersedes"] == [f"[[{old}]]"]
        _, data, _ = await call(client, "search", {"query": "nightly export bucket"})
        by_path = {hit["path"]: hit for hit in data["results"]}
        assert by_path[old]["superseded_by"] == [first["path"]]
        _, third, _ = await call(client, "remember", {**args, "request_id": "r-42", "supersedes": [old]})
        assert third["supersedes_added"] == []  # already linked: nothing changes
    assert (tmp_path / old).read_bytes() == before  # the older note is never edited


async def test_another_requests_note_is_never_edited_by_a_retry(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        old = (await remember(client, "The build cache lives on host cache-3.", "2026-05-02"))["path"]
        kept = (await remember(client, "Team photos are in the shared drive.", "2026-05-03", request_id="a"))["path"]
        before = (tmp_path / kept).read_bytes()
        _, data, _ = await call(
            client,
            "remember",
            {
                "content": "Team photos are in the shared drive.",
                "date": "2026-05-03",
                "request_id": "b",
                "supersedes": [old],
            },
        )
        assert data["supersedes_added"] == []
    assert (tmp_path / kept).read_bytes() == before
