"""The memory page in a real browser: headless Chromium, driven by Selenium through chromedriver,
on a real `reme-mcp view --no-open --port 0` process.

Needs the system's Chromium and chromedriver (Debian: `apt-get install chromium chromium-driver`,
which .ci/run does); without them these tests skip and say so. Screenshots of each page are kept
in tests/faces/artefacts/view/ (ignored by git).
"""

from __future__ import annotations

import shutil
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from tests.faces.view_server import CHAIN, ViewProcess, seed, view_process

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no Chromium and chromedriver on PATH (Debian: apt-get install chromium chromium-driver)",
)
ARTEFACTS = Path(__file__).resolve().parent / "artefacts" / "view"
QUERY = "billing API port"


class _Listener(socketserver.ThreadingTCPServer):
    """Where every payload of the hostile note points: any connection here means something ran or loaded."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Record)
        self.seen: list[bytes] = []


class _Record(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        server: Any = self.server
        server.seen.append(self.request.recv(4096))
        self.request.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")


@pytest.fixture(scope="module")
def listener() -> Iterator[_Listener]:
    server = _Listener()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, listener: _Listener) -> Path:
    return seed(tmp_path_factory.mktemp("view-browser") / "ws", hostile_port=listener.server_address[1])


@pytest.fixture(scope="module")
def page(workspace: Path) -> Iterator[ViewProcess]:
    with view_process(workspace) as running:
        yield running


@pytest.fixture(scope="module")
def browser(page: ViewProcess) -> Iterator[Any]:
    """One headless Chromium for the module, already past the one-time link."""
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    try:
        driver.get(page.url)
        yield driver
    finally:
        driver.quit()


async def _tool_search(workspace: Path) -> list[str]:
    from tests.faces.test_e2e import stdio_client

    async with stdio_client(workspace) as client:
        found = await client.call_tool("search", {"query": QUERY, "limit": 10, "max_chars": 12_000})
        return [hit["path"] for hit in found.structured_content["results"]]  # type: ignore[index]


def press(driver: Any, css: str) -> None:
    """Click a form's button and wait for the page it posts to."""
    button = driver.find_element(By.CSS_SELECTOR, css)
    button.click()
    _wait_stale(driver, button)


def _wait_stale(driver: Any, element: Any) -> None:
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(driver, 30).until(expected_conditions.staleness_of(element))


def shot(driver: Any, name: str) -> None:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    driver.get_screenshot_as_file(str(ARTEFACTS / f"{name}.png"))


def texts(driver: Any, css: str) -> list[str]:
    return [el.text for el in driver.find_elements(By.CSS_SELECTOR, css)]


def test_the_link_becomes_a_cookie_and_leaves_the_address_bar(browser: Any, page: ViewProcess) -> None:
    assert urlsplit(browser.current_url).query == ""  # the first visit was sent on without the token
    cookie = browser.get_cookie(f"reme_view_{page.port}")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.token not in cookie["value"]
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script can read it


def test_the_timeline_lists_the_notes_newest_first(browser: Any, page: ViewProcess) -> None:
    browser.get(page.base + "/")
    days = texts(browser, "section.day h2")
    assert days == sorted(days, reverse=True) and {"2026-12-01", "2026-11-30", "2026-11-25", "2026-11-20"} <= set(days)
    listed = " ".join(texts(browser, "section.day li"))
    for name in ("port-v1", "port-v2", "port-v3", "deploy-window", "grafana", "hostile"):
        assert name in listed
    hosts = texts(browser, "section.day h3.host")
    assert "sessions from codex" in hosts and "sessions from claude-code" in hosts
    assert browser.find_elements(By.CSS_SELECTOR, "figure.chart svg rect.bar")
    shot(browser, "timeline")


def test_search_shows_what_the_search_tool_ranks_first(browser: Any, page: ViewProcess, workspace: Path) -> None:
    browser.get(page.base + "/search")
    box = browser.find_element(By.NAME, "q")
    box.send_keys(QUERY)
    box.submit()
    _wait_stale(browser, box)  # submit() does not wait for the page it posts to
    shown = [el.get_attribute("data-path") for el in browser.find_elements(By.CSS_SELECTOR, "li.hit")]
    tool = anyio.run(_tool_search, workspace)  # what a model gets from the MCP tool, over stdio
    assert shown and shown == tool
    assert shown[0] == CHAIN[2]  # the current version of the fact comes first, as for a model
    marked = browser.find_element(By.CSS_SELECTOR, f'li.hit[data-path="{CHAIN[0]}"] .tag.old')
    assert CHAIN[2] in marked.text
    shot(browser, "search")


def test_search_filters_by_kind(browser: Any, page: ViewProcess) -> None:
    browser.get(page.base + "/search?q=billing&kind=dialog")
    paths = [el.get_attribute("data-path") for el in browser.find_elements(By.CSS_SELECTOR, "li.hit")]
    assert paths and all(p.startswith("session/dialog/") for p in paths)


def test_a_note_shows_its_supersede_chain_links_and_session(browser: Any, page: ViewProcess) -> None:
    browser.get(page.base + f"/note?path={CHAIN[0]}")
    assert CHAIN[2] in browser.find_element(By.CSS_SELECTOR, "section.superseded-by").text  # the chain's end
    browser.get(page.base + f"/note?path={CHAIN[1]}")
    assert CHAIN[0] in browser.find_element(By.CSS_SELECTOR, "section.supersedes").text
    assert CHAIN[2] in browser.find_element(By.CSS_SELECTOR, "section.superseded-by").text
    browser.find_element(By.CSS_SELECTOR, "section.superseded-by a").click()
    assert "port 7070" in browser.find_element(By.CSS_SELECTOR, "article.markdown").text
    assert CHAIN[1] in browser.find_element(By.CSS_SELECTOR, "section.supersedes").text
    assert "session/dialog/codex/s-codex-1.jsonl" in browser.find_element(By.CSS_SELECTOR, "p.session").text
    shot(browser, "note")
    browser.find_element(By.CSS_SELECTOR, "p.session a").click()
    assert "Port 7070 after the cut-over." in browser.find_element(By.CSS_SELECTOR, "ol.dialog").text


def test_wikilinks_are_followed_both_ways(browser: Any, page: ViewProcess) -> None:
    browser.get(page.base + "/note?path=daily/2026-12-01/deploy-window.md")
    browser.find_element(By.CSS_SELECTOR, "article.markdown a.wikilink").click()
    assert urlsplit(browser.current_url).query == "path=digest/wiki/deploy.md"
    assert "daily/2026-12-01/deploy-window.md" in browser.find_element(By.CSS_SELECTOR, "section.links-in").text


def test_a_hostile_note_runs_and_loads_nothing(browser: Any, page: ViewProcess, listener: _Listener) -> None:
    browser.get_log("performance")  # what came before this page
    browser.get(page.base + "/note?path=daily/2026-11-30/hostile.md")
    browser.get(page.base + "/")  # the timeline shows its description too
    browser.get(page.base + "/note?path=daily/2026-11-30/hostile.md")
    for link in browser.find_elements(By.PARTIAL_LINK_TEXT, "raw anchor"):
        link.click()  # would be an <a> only if raw HTML got through
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.execute_script("return document.querySelectorAll('img, iframe, style, object, embed').length") == 0
    on_attributes = browser.execute_script(
        "return [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name))"
        ".filter(n => n.startsWith('on'))"
    )
    assert on_attributes == []
    # Links go to this page or, on a click, to the web with no referrer; never javascript: or data:.
    anchors = browser.find_elements(By.TAG_NAME, "a")
    external = [a for a in anchors if not (a.get_attribute("href") or "").startswith(page.base + "/")]
    assert [urlsplit(a.get_attribute("href")).scheme for a in external] == ["http"]  # the image, now a link
    assert "noreferrer" in (external[0].get_attribute("rel") or "")
    body = browser.find_element(By.CSS_SELECTOR, "article.markdown").text
    assert "<script>alert('script')" in body and "[click me](javascript:alert('link'))" in body  # shown as text
    # The 320,000-character line wraps inside the page instead of widening it.
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(browser, "hostile-note")
    requests = [
        entry["message"] for entry in browser.get_log("performance") if "Network.requestWillBeSent" in entry["message"]
    ]
    assert not [r for r in requests if f"127.0.0.1:{listener.server_address[1]}" in r]
    assert listener.seen == []
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert errors == []  # nothing was even tried and blocked by the CSP


def test_health_shows_the_doctor_report(browser: Any, page: ViewProcess, workspace: Path) -> None:
    browser.get(page.base + "/health")
    report = browser.find_element(By.CSS_SELECTOR, "dl.doctor").text
    assert str(workspace) in report and "files_by_kind" in report and "daily" in report
    shot(browser, "health")


@pytest.mark.anyio
async def test_forgetting_a_search_result_set_in_the_browser_leaves_a_running_servers_search(
    browser: Any, tmp_path: Path
) -> None:
    """The person searches, presses "Forget these results…", reads the plan, confirms: a host's
    server that ran the whole time finds none of them again. Last in the module: it forgets."""
    from tests.faces.test_e2e import stdio_client

    ws = seed(tmp_path / "ws")
    async with stdio_client(ws) as client:

        async def found() -> list[str]:
            answer = await client.call_tool("search", {"query": QUERY, "limit": 10})
            return [hit["path"] for hit in answer.structured_content["results"]]  # type: ignore[index]

        before = await found()
        assert CHAIN[2] in before
        with view_process(ws) as other:
            browser.get(other.url)
            browser.get(f"{other.base}/search?q={QUERY.replace(' ', '+')}")
            shown = [el.get_attribute("data-path") for el in browser.find_elements(By.CSS_SELECTOR, "li.hit")]
            assert shown and CHAIN[2] in shown
            press(browser, "form.forget button")
            assert browser.find_elements(By.CSS_SELECTOR, "main pre"), browser.page_source[:2000]
            plan = browser.find_element(By.CSS_SELECTOR, "main pre").text
            assert all(path in plan for path in shown), plan
            assert (ws / CHAIN[2]).is_file()  # the plan alone changes nothing
            shot(browser, "forget-plan")
            press(browser, "button.confirm")
            assert "Forgotten" in browser.find_element(By.CSS_SELECTOR, "h1").text
            assert not (ws / CHAIN[2]).exists()
        after = await found()
        assert not set(shown) & set(after), after
