"""Memory that stays true, through the MCP tools: superseded notes, versions without a hint,
recalled text stored back, and a result list that shows more than one file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from reme_mcp.config import load_settings
from reme_mcp.faces.server import build_server
from reme_mcp.index.version_rules import same_fact
from reme_mcp.index.versions import current_versions

pytestmark = pytest.mark.anyio


def client_for(root: Path) -> Client:
    return Client(build_server(load_settings(str(root), "UTC"), warm_up=False))


async def call(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any], str]:
    result = await client.call_tool(tool, args)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    return result.is_error, result.structured_content or {}, text


async def remember(client: Client, content: str, day: str, **more: Any) -> str:
    error, data, text = await call(client, "remember", {"content": content, "date": day, **more})
    assert not error and data["created"], text
    return str(data["path"])


async def test_a_superseded_note_is_marked_and_ranks_below_its_replacement(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        first = await remember(client, "The billing queue drains into Kafka topic invoices-v1.", "2026-03-02")
        before = (tmp_path / first).read_bytes()
        await remember(client, "Lunch menu this week: noodles and dumplings.", "2026-03-05")
        second = await remember(
            client,
            "Billing queue moved: it drains into Kafka topic invoices-v2 since the rollout, with a dead-letter topic.",
            "2026-04-01",
            supersedes=[first],
        )
        third = await remember(
            client, "Correction: the billing topic is invoices-v3.", "2026-05-01", supersedes=[second]
        )
        _, data, text = await call(client, "search", {"query": "billing queue Kafka topic", "limit": 5})
        paths = [hit["path"] for hit in data["results"]]
        assert paths[0] == third  # the end of the chain first, although the query's words favour the first
        by_path = {hit["path"]: hit for hit in data["results"]}
        assert by_path[first]["superseded_by"] == [third] and by_path[second]["superseded_by"] == [third]
        assert by_path[third]["superseded_by"] == []
        assert paths.index(first) > paths.index(third) and f"superseded by {third}" in text

        # The relation lives in the note's own front matter, as wikilinks a person could write.
        _, read, read_text = await call(client, "read", {"path": first})
        assert read["superseded_by"] == [third] and "superseded by" in read_text
        _, newest, _ = await call(client, "read", {"path": third})
        assert newest["metadata"]["supersedes"] == [f"[[{second}]]"] and newest["superseded_by"] == []
        _, days, _ = await call(client, "daily_list", {"date": "2026-03-02"})
        assert days["days"][0]["notes"][0]["superseded_by"] == [third]
        _, graph, _ = await call(client, "traverse", {"path": third})
        assert any(edge["target"] == second for edge in graph["edges"])
    assert (tmp_path / first).read_bytes() == before  # a superseded note is never touched


async def test_supersedes_refuses_what_is_not_a_note_here(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret plans\n", encoding="utf-8")
    workspace = tmp_path / "ws"
    async with client_for(workspace) as client:
        kept = await remember(client, "The demo server is demo-1.", "2026-03-02")
        for bad in ("../outside.md", str(outside), "daily/2026-03-02/missing.md", "metadata/x.md"):
            error, _, text = await call(
                client, "remember", {"content": "The demo server is demo-2.", "supersedes": [bad]}
            )
            assert error and "\n" not in text.strip(), text
        _, data, _ = await call(client, "search", {"query": "demo server"})
        assert [hit["path"] for hit in data["results"]] == [kept]  # nothing was written by the refusals


async def test_a_hand_written_supersedes_survives_a_rebuild(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        old = await remember(client, "Office door code is 4711.", "2026-01-05")
    day = tmp_path / "daily" / "2026-02-01"
    day.mkdir(parents=True)
    (day / "door.md").write_text(
        f"---\nname: door\ndescription: door code\nsupersedes: '[[{old}]]'\n---\nOffice door code is 9090.\n",
        encoding="utf-8",
    )
    from reme_mcp import Memory

    memory = Memory(load_settings(str(tmp_path), "UTC"))
    memory.reindex()
    hits = memory.search("office door code").results
    assert [h.path for h in hits][:2] == ["daily/2026-02-01/door.md", old]
    assert hits[1].superseded_by == ["daily/2026-02-01/door.md"]


async def test_versions_without_a_hint_put_the_newest_first_and_mark_the_older(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        old = await remember(
            client, "The nightly build machine for the Android app is Jenkins on host ci-7.", "2026-02-01"
        )
        new = await remember(client, "The nightly build for the Android app now runs on host ci-12.", "2026-03-10")
        other = await remember(client, "The nightly build machine for the iOS app is Jenkins too.", "2026-01-01")
        _, data, text = await call(client, "search", {"query": "nightly Android app build host"})
        by_path = {hit["path"]: hit for hit in data["results"]}
        paths = [hit["path"] for hit in data["results"]]
        assert paths.index(new) < paths.index(old)
        assert by_path[old]["possibly_outdated_by"] == [new] and by_path[old]["superseded_by"] == []
        assert by_path[new]["possibly_outdated_by"] == [] and "possibly outdated" in text
        assert by_path[other]["possibly_outdated_by"] == []  # another app: nothing of it was replaced


def test_unrelated_notes_that_share_words_are_not_versions() -> None:
    assert not same_fact(
        "The search team reviewed the billing dashboard and found no regressions.",
        "The mobile team reviewed the audit dashboard and found no regressions.",
    )
    assert not same_fact("支付团队复盘了网关的监控面板。", "订单团队复盘了缓存的监控面板。")
    assert same_fact("Deploys go through Spinnaker.", "Deploys now go through Argo CD instead of Spinnaker.")
    assert same_fact("周会在周一上午十点开。", "周会改为周二上午十点开。")


async def test_notes_of_one_template_about_other_subjects_are_left_alone(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        alice = await remember(client, "Alice Moreau's desk phone number is 555-0101.", "2026-02-01")
        bob = await remember(client, "Bob Lindqvist's desk phone number is 555-0199.", "2026-03-01")
        carol = await remember(client, "The geocoding API allows 2400 requests per minute per key.", "2026-02-02")
        await remember(client, "The upload API allows 5000 requests per minute per key.", "2026-03-02")
        for query, asked in (("Alice desk phone number", alice), ("geocoding API rate limit", carol)):
            _, data, text = await call(client, "search", {"query": query})
            assert data["results"][0]["path"] == asked, query
            assert all(not hit["possibly_outdated_by"] for hit in data["results"]), text
        _, data, _ = await call(client, "search", {"query": "Bob desk phone number"})
        assert data["results"][0]["path"] == bob


def test_a_chain_resolves_to_its_newest_note_and_a_loop_ends() -> None:
    assert current_versions("a", {"a": ["b"], "b": ["c"]}) == ["c"]
    assert current_versions("a", {"a": ["b", "d"], "b": ["c"]}) == ["c", "d"]
    assert current_versions("c", {"a": ["b"], "b": ["c"]}) == []
    assert current_versions("a", {"a": ["b"], "b": ["a"]}) == ["b"]  # a loop written by hand ends where it closes


async def test_recalled_text_stored_back_answers_with_the_note(tmp_path: Path) -> None:
    async with client_for(tmp_path) as client:
        old = await remember(client, "The VPN gateway for the Berlin office is vpn-ber-2.", "2026-02-01")
        new = await remember(
            client, "The VPN gateway for the Berlin office is now vpn-ber-5.", "2026-03-01", supersedes=[old]
        )
        _, found, _ = await call(client, "search", {"query": "Berlin VPN gateway", "limit": 1})
        snippet = found["results"][0]["snippet"]
        for echo in (
            "Recalled: The VPN gateway for the Berlin office is now vpn-ber-5.",
            "Note to self: the VPN gateway for the Berlin office is now vpn-ber-5",
            f"Recalled from memory:\n{snippet}",
            snippet,  # the search result's block pasted as it came
        ):
            error, data, text = await call(client, "remember", {"content": echo, "date": "2026-04-01"})
            assert not error and data["created"] is False and data["duplicate_of"] == new, text
            assert "Already stored as" in text
        # A stale value restated from an old recall names its replacement.
        error, data, text = await call(
            client, "remember", {"content": "Note to self: The VPN gateway for the Berlin office is vpn-ber-2."}
        )
        assert data["duplicate_of"] == old and data["superseded_by"] == [new] and new in text
        # Anything new is an update, stored: known words in a new order (two values swapped in a
        # failover), a new value, or one more word.
        await remember(client, "The primary database is db-east and the replica is db-west.", "2026-04-02")
        await remember(client, "The primary database is db-west and the replica is db-east.", "2026-04-03")
        await remember(client, "The VPN gateway for the Berlin office is now vpn-ber-6.", "2026-05-01")
        await remember(
            client, "Recalled: The VPN gateway for the Berlin office is now vpn-ber-5, plus IPv6.", "2026-05-02"
        )


async def test_one_long_file_does_not_fill_the_list(tmp_path: Path) -> None:
    dialog = tmp_path / "session" / "dialog" / "long.jsonl"
    dialog.parent.mkdir(parents=True)
    lines = []
    for i in range(40):
        text = f"We talked about the release train again, item {i}." if i % 5 == 0 else f"Other chatter {i}."
        lines.append(json.dumps({"role": "user", "content": text, "time_created": "2026-03-01 10:00:00"}))
    dialog.write_text("\n".join(lines) + "\n", encoding="utf-8")
    async with client_for(tmp_path) as client:
        note = await remember(client, "The release train leaves every second Tuesday.", "2026-03-02")
        _, data, _ = await call(client, "search", {"query": "release train", "limit": 5})
    paths = [hit["path"] for hit in data["results"]]
    assert paths[0] == note  # the curated note, not buried under the dialog repeating its words
    ranges = [(h["start_line"], h["end_line"]) for h in data["results"] if h["path"] == paths[1]]
    assert len(ranges) == len(set(ranges))
