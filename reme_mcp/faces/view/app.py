"""The memory page's routes: timeline, search, a note, tidy, health, and the forget buttons' two POSTs.

Each route is one operation from `reme_mcp.ops` and one template. Nothing here writes a note:
the only state-changing routes are forgetting's, behind the CSRF token (auth.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from reme_mcp.errors import ReMeError
from reme_mcp.faces.view import forgetting, templates
from reme_mcp.faces.view.auth import CSRF_FIELD, PageGuard, PageKeys
from reme_mcp.faces.view.chart import per_day_chart, per_week_chart
from reme_mcp.faces.view.tidy_page import tidy_page
from reme_mcp.ops.consolidation.tidy import workspace_clusters
from reme_mcp.ops.memory import Memory
from reme_mcp.ops.page.note_view import note_view
from reme_mcp.ops.page.search_view import search_page
from reme_mcp.ops.page.timeline import TimelineReader, weekly

STYLESHEET = resources.files("reme_mcp.faces.view").joinpath("static/view.css").read_bytes()
SEARCH_FIELDS = ("q", "kind", "start", "end")


class MemoryPages:
    """The page over one or more workspaces (this folder's project, the personal memory, every
    other project): a request names one with `workspace=`, which a cookie then keeps, so every
    link of the page stays in the workspace chosen; else the first."""

    def __init__(self, workspaces: Mapping[str, Memory], keys: PageKeys) -> None:
        if not workspaces:
            raise ReMeError("the memory page needs a workspace")
        self.workspaces = dict(workspaces)
        self.timelines = {name: TimelineReader(memory) for name, memory in self.workspaces.items()}
        self.keys = keys

    def memory(self, request: Request) -> str:
        """The name of the workspace a request is about."""
        kept = request.cookies.get(self.chosen_cookie)
        name = request.query_params.get("workspace") or (kept if kept in self.workspaces else None)
        name = name or next(iter(self.workspaces))
        if name not in self.workspaces:
            raise ReMeError(f"workspace {name!r} is not served here: use one of {', '.join(self.workspaces)}")
        return name

    @property
    def chosen_cookie(self) -> str:
        return f"{self.keys.cookie}_workspace"

    def _shown(self, request: Request, html: str, status: int = 200) -> Response:
        """A page with the workspace switcher, remembering a workspace chosen by its link."""
        name = self.memory(request)
        answer = HTMLResponse(templates.with_workspaces(html, list(self.workspaces), name), status_code=status)
        if request.query_params.get("workspace"):
            answer.set_cookie(self.chosen_cookie, name, httponly=True, samesite="strict", path="/")
        return answer

    # ---- pages -------------------------------------------------------------------------------

    def timeline(self, request: Request) -> Response:
        name = self.memory(request)
        memory = self.workspaces[name]
        found = self.timelines[name].read(request.query_params.get("before") or None)
        last = max(found.per_day) if found.per_day else memory.settings.today().isoformat()
        end = date.fromisoformat(last)
        charts = per_day_chart(found.per_day, end) + per_week_chart(weekly(found.per_day), end)
        return self._shown(request, templates.timeline_page(found, charts))

    def search(self, request: Request) -> Response:
        asked = {k: request.query_params.get(k, "").strip() for k in SEARCH_FIELDS}
        if not asked["q"]:
            return self._shown(request, templates.search_page(asked, None, None, self.keys.csrf))
        memory = self.workspaces[self.memory(request)]
        try:
            found = search_page(memory, asked["q"], asked["kind"] or None, asked["start"], asked["end"])
        except ReMeError as exc:
            return self._shown(request, templates.search_page(asked, None, str(exc), self.keys.csrf), 400)
        return self._shown(request, templates.search_page(asked, found, None, self.keys.csrf))

    def note(self, request: Request) -> Response:
        memory = self.workspaces[self.memory(request)]
        shown = note_view(memory, request.query_params.get("path", ""))
        return self._shown(request, templates.note_page(shown, self.keys.csrf))

    def tidy(self, request: Request) -> Response:
        return self._shown(request, tidy_page(workspace_clusters(self.workspaces[self.memory(request)].ws)))

    def health(self, request: Request) -> Response:
        return self._shown(request, templates.health_page(self.workspaces[self.memory(request)].doctor()))

    def stylesheet(self, request: Request) -> Response:
        return Response(STYLESHEET, media_type="text/css")

    # ---- forgetting (the only POSTs) ---------------------------------------------------------

    async def forget_plan(self, request: Request) -> Response:
        return await self._forget(request, forgetting.plan_forgetting, True)

    async def forget_apply(self, request: Request) -> Response:
        return await self._forget(request, forgetting.apply_forgetting, False)

    async def _forget(self, request: Request, step: Callable[[Memory, list[str]], str], planning: bool) -> Response:
        """A note, a search's results or a session: every `path` the form holds, planned or forgotten."""
        form = await request.form()
        if not self.keys.csrf_ok(form.get(CSRF_FIELD)):
            return HTMLResponse(templates.error_page("the form's CSRF token is missing or wrong: reload the page"), 403)
        paths = [str(p) for p in form.getlist("path") if str(p)]
        memory = self.workspaces[self.memory(request)]
        said = step(memory, paths)
        if planning:
            return self._shown(request, templates.forget_plan_page(paths, said, self.keys.csrf))
        return self._shown(request, templates.page("Forgotten", f"<h1>Forgotten</h1><pre>{templates.e(said)}</pre>"))


async def _one_line(request: Request, exc: Exception) -> Response:
    """A ReMeError is one line on a page: what was wrong and what to do."""
    return HTMLResponse(templates.error_page(str(exc)), status_code=404 if "does not exist" in str(exc) else 400)


def build_page_app(workspaces: Mapping[str, Memory], keys: PageKeys, port: int) -> PageGuard:
    pages = MemoryPages(workspaces, keys)
    app = Starlette(
        routes=[
            Route("/", pages.timeline),
            Route("/search", pages.search),
            Route("/note", pages.note),
            Route("/tidy", pages.tidy),
            Route("/health", pages.health),
            Route("/static/view.css", pages.stylesheet),
            Route("/forget/plan", pages.forget_plan, methods=["POST"]),
            Route("/forget/apply", pages.forget_apply, methods=["POST"]),
        ],
        exception_handlers={ReMeError: _one_line},
    )
    return PageGuard(app, keys, port)
