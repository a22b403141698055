"""Who may open the memory page: the browser that followed the one-time link, and nothing else.

- The link `reme-mcp view` prints carries a token, good for one visit: that visit gets an HttpOnly,
  SameSite=Strict cookie and is sent on to the same page without the token, so the token leaves the
  address bar and the history. No token and no cookie: 403.
- Host and Origin are checked exactly as the MCP HTTP endpoint checks them (faces/http.py), so a
  page elsewhere cannot reach this one through DNS rebinding.
- A POST carries a CSRF token from the page's own forms.
- Every answer says: no script but this origin's (there is none), no framing, no referrer, no
  sniffing, no caching.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import parse_qsl, urlencode

from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reme_mcp.faces.http import security_settings

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    # Not no-referrer: under it Chromium sends `Origin: null` with the page's own form posts, which
    # the Origin check must refuse. same-origin sends nothing to any other site.
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
}
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"


class PageKeys:
    """The secrets of one `reme-mcp view` process: the link's token, the cookie, the CSRF token."""

    def __init__(self, port: int) -> None:
        self.token = secrets.token_urlsafe(32)
        self.session = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        # Browsers keep cookies per host, not per port: each page has its own cookie name.
        self.cookie = f"reme_view_{port}"
        self._spent = False

    def exchange(self, given: str) -> bool:
        """Whether `given` is the token, unspent; spends it."""
        if self._spent or not hmac.compare_digest(given.encode(), self.token.encode()):
            return False
        self._spent = True
        return True

    def admits(self, cookie: str | None) -> bool:
        return cookie is not None and hmac.compare_digest(cookie.encode(), self.session.encode())

    def csrf_ok(self, given: object) -> bool:
        return isinstance(given, str) and hmac.compare_digest(given.encode(), self.csrf.encode())


def _refused(why: str, status: int = 403) -> Response:
    return PlainTextResponse(f"{why}\n", status_code=status)


class PageGuard:
    """ASGI middleware in front of every route of the page."""

    def __init__(self, app: ASGIApp, keys: PageKeys, port: int) -> None:
        self.app = app
        self.keys = keys
        self.rebinding = TransportSecurityMiddleware(security_settings("127.0.0.1", port, []))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        answer = await self._gate(Request(scope))
        if answer is not None:
            await answer(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    async def _gate(self, request: Request) -> Response | None:
        """The response that stops this request, or None to let it through."""
        # Content-Type is the page's own business (its forms post urlencoded): Host and Origin only.
        refused = await self.rebinding.validate_request(request, is_post=False)
        if refused is not None:
            return refused
        given = request.query_params.get(TOKEN_PARAM)
        if given is not None:
            return self._exchange(request, given)
        if not self.keys.admits(request.cookies.get(self.keys.cookie)):
            return _refused("this page needs the one-time link `reme-mcp view` printed; run it again for a new link")
        if request.method not in ("GET", "HEAD", "POST"):
            return _refused(f"method {request.method} is not served: the page takes GET and POST", 405)
        return None

    def _exchange(self, request: Request, given: str) -> Response:
        rest = [(k, v) for k, v in parse_qsl(request.url.query, keep_blank_values=True) if k != TOKEN_PARAM]
        answer = RedirectResponse(request.url.path + (f"?{urlencode(rest)}" if rest else ""), status_code=303)
        if self.keys.admits(request.cookies.get(self.keys.cookie)):
            return answer  # the link opened again in the browser that holds the cookie
        if request.method != "GET" or not self.keys.exchange(given):
            return _refused("this link was already used or is wrong: run `reme-mcp view` again for a new one")
        answer.set_cookie(self.keys.cookie, self.keys.session, httponly=True, samesite="strict", path="/")
        return answer
