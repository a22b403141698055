"""The memory page's HTTP rules, against a real `reme-mcp view --no-open --port 0` process:
loopback only, the one-time token traded for a strict cookie, foreign Host and Origin refused
as the MCP endpoint refuses them, CSRF on every POST, and the safety headers on every answer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import psutil  # type: ignore[import-untyped]
import pytest

from tests.faces.view_server import CHAIN, ViewProcess, seed, view_process


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewProcess]:
    ws = seed(tmp_path_factory.mktemp("view-http") / "ws")
    with view_process(ws) as running:
        yield running


@pytest.fixture(scope="module")
def cookie(page: ViewProcess) -> dict[str, str]:
    """Trades the link's token, once, for the page's cookie."""
    answer = httpx.get(page.url, follow_redirects=False, timeout=30)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"  # the token leaves the address bar
    set_cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=strict" in set_cookie and page.token not in set_cookie
    name, value = set_cookie.split(";", 1)[0].split("=", 1)
    return {name: value}


def get(page: ViewProcess, path: str, **kwargs: object) -> httpx.Response:
    return httpx.get(page.base + path, timeout=30, follow_redirects=False, **kwargs)  # type: ignore[arg-type]


def test_it_listens_on_loopback_only(page: ViewProcess) -> None:
    listening = [c.laddr for c in psutil.Process(page.proc.pid).net_connections(kind="inet") if c.status == "LISTEN"]
    assert listening and {addr.ip for addr in listening} == {"127.0.0.1"}
    assert {addr.port for addr in listening} == {page.port}


def test_no_token_no_page(page: ViewProcess) -> None:
    for path in ("/", "/search?q=port", f"/note?path={CHAIN[0]}", "/tidy", "/health", "/static/view.css"):
        refused = get(page, path)
        assert refused.status_code == 403, path
        assert "one-time link" in refused.text
    assert get(page, "/?token=" + "x" * 43).status_code == 403
    assert get(page, "/", cookies={f"reme_view_{page.port}": "guessed"}).status_code == 403


def test_the_token_is_good_once(page: ViewProcess, cookie: dict[str, str]) -> None:
    again = httpx.get(page.url, follow_redirects=False, timeout=30)
    assert again.status_code == 403 and "already used" in again.text
    assert get(page, "/", cookies=cookie).status_code == 200
    # The browser holding the cookie may open the link again: it is sent on, and no cookie is set anew.
    reopened = httpx.get(page.url + "&before=2026-12-02", cookies=cookie, follow_redirects=False, timeout=30)
    assert reopened.status_code == 303 and reopened.headers["location"] == "/?before=2026-12-02"
    assert "set-cookie" not in reopened.headers


def test_the_cookie_opens_every_page(page: ViewProcess, cookie: dict[str, str]) -> None:
    timeline = get(page, "/", cookies=cookie)
    assert timeline.status_code == 200 and "port-v3" in timeline.text
    assert "port 7070" in get(page, f"/note?path={CHAIN[2]}", cookies=cookie).text
    assert CHAIN[2] in get(page, "/search?q=billing+port", cookies=cookie).text
    assert "files_by_kind" in get(page, "/health", cookies=cookie).text
    assert get(page, "/static/view.css", cookies=cookie).headers["content-type"].startswith("text/css")


def test_the_tidy_page_shows_the_chain_of_versions_as_a_cluster(page: ViewProcess, cookie: dict[str, str]) -> None:
    tidy = get(page, "/tidy", cookies=cookie)
    assert tidy.status_code == 200 and "aria-current=page>Tidy" in tidy.text
    cluster = re.search(r'<section class="cluster" id="(chain-[0-9a-f]{8})">(.*?)</section>', tidy.text, re.S)
    assert cluster is not None, tidy.text
    assert all(f"<code>{path}</code>" in cluster.group(2) for path in CHAIN)
    assert "/mcp__reme__consolidate" in tidy.text


def test_every_answer_carries_the_safety_headers(page: ViewProcess, cookie: dict[str, str]) -> None:
    for answer in (
        get(page, "/", cookies=cookie),
        get(page, "/"),
        get(page, "/note?path=../etc/passwd", cookies=cookie),
    ):
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "script-src" not in csp and "unsafe-inline" not in csp  # default-src 'none': no script at all
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"
        assert answer.headers["cache-control"] == "no-store"


def test_foreign_host_and_origin_are_refused(page: ViewProcess, cookie: dict[str, str]) -> None:
    assert get(page, "/", cookies=cookie, headers={"Host": "evil.example:80"}).status_code == 421
    assert get(page, "/", cookies=cookie, headers={"Origin": "http://evil.example"}).status_code == 403
    assert get(page, "/", cookies=cookie, headers={"Origin": f"http://localhost:{page.port}"}).status_code == 200
    # A rebinding page cannot trade a token either.
    assert get(page, "/?token=abc", headers={"Host": "evil.example"}).status_code == 421


def csrf_of(page: ViewProcess, cookie: dict[str, str]) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', get(page, f"/note?path={CHAIN[0]}", cookies=cookie).text)
    assert found
    return found.group(1)


def test_posts_need_the_csrf_token(page: ViewProcess, cookie: dict[str, str]) -> None:
    url = page.base + "/forget/plan"
    for form in ({"path": CHAIN[0]}, {"path": CHAIN[0], "csrf": "wrong"}):
        refused = httpx.post(url, data=form, cookies=cookie, timeout=30)
        assert refused.status_code == 403 and "CSRF" in refused.text
    # Without the cookie the token alone does nothing.
    assert httpx.post(url, data={"path": CHAIN[0], "csrf": csrf_of(page, cookie)}, timeout=30).status_code == 403
    foreign = httpx.post(
        url,
        data={"path": CHAIN[0], "csrf": csrf_of(page, cookie)},
        cookies=cookie,
        headers={"Origin": "http://evil.example"},
        timeout=30,
    )
    assert foreign.status_code == 403


@pytest.mark.anyio
async def test_forgetting_from_the_page_shows_the_plan_then_removes_it_from_a_running_servers_search(
    tmp_path: Path,
) -> None:
    from tests.faces.test_e2e import stdio_client

    ws = seed(tmp_path / "ws")
    target = ws / CHAIN[0]
    async with stdio_client(ws) as client:  # a host's server, running the whole time

        async def top_paths() -> list[str]:
            found = await client.call_tool("search", {"query": "billing API port 8080", "limit": 10})
            return [hit["path"] for hit in found.structured_content["results"]]  # type: ignore[index]

        assert CHAIN[0] in await top_paths()
        with view_process(ws) as running:
            answer = httpx.get(running.url, follow_redirects=False, timeout=30)
            name, value = answer.headers["set-cookie"].split(";", 1)[0].split("=", 1)
            jar = {name: value}
            form = {"path": CHAIN[0], "csrf": csrf_of(running, jar)}
            planned = httpx.post(f"{running.base}/forget/plan", data=form, cookies=jar, timeout=30)
            assert planned.status_code == 200 and CHAIN[0] in planned.text, planned.text
            assert target.is_file()  # the plan alone changes nothing
            done = httpx.post(f"{running.base}/forget/apply", data=form, cookies=jar, timeout=30)
            assert done.status_code == 200 and CHAIN[0] in done.text, done.text
            assert not target.exists()
            assert get(running, f"/note?path={CHAIN[0]}", cookies=jar).status_code == 404
        assert CHAIN[0] not in await top_paths()


def test_other_methods_and_bad_paths_are_one_line(page: ViewProcess, cookie: dict[str, str]) -> None:
    assert httpx.put(page.base + "/", cookies=cookie, timeout=30).status_code == 405
    missing = get(page, "/note?path=daily/2026-01-01/nothing.md", cookies=cookie)
    assert missing.status_code == 404 and "does not exist" in missing.text
    private = get(page, "/note?path=metadata/reme-mcp/anything", cookies=cookie)
    assert private.status_code == 400
    outside = get(page, "/note?path=../../etc/passwd", cookies=cookie)
    assert outside.status_code == 400 and "root:" not in outside.text


def test_health_counts_the_secrets_remember_refused_never_their_values(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    from reme_mcp.config import load_settings
    from reme_mcp.errors import ReMeError
    from reme_mcp.ops.memory import Memory

    ws = seed(tmp_path / "ws")
    memory = Memory(load_settings(workspace=str(ws), semantic="off"))
    value = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(ReMeError, match="secrets are never stored"):
        memory.remember(f"The deploy token is {value}")
    env = {**os.environ, "REME_SEMANTIC": "off"}
    doctor = subprocess.run(
        [sys.executable, "-m", "reme_mcp", "doctor", "-w", str(ws), "--json"], env=env, capture_output=True, text=True
    )
    refused = json.loads(doctor.stdout)["secrets_refused"]
    assert refused["total"] == 1 and len(refused["by_kind"]) == 1, refused
    with view_process(ws) as running:
        answer = httpx.get(running.url, follow_redirects=False, timeout=30)
        name, cookie = answer.headers["set-cookie"].split(";", 1)[0].split("=", 1)
        health = get(running, "/health", cookies={name: cookie}).text
    assert "secrets_refused" in health and next(iter(refused["by_kind"])) in health
    assert value not in health and value not in doctor.stdout
