"""A note's Markdown as inert HTML: raw HTML is text, images are not fetched, links go only where
a person can safely follow them, and `[[wikilinks]]` open the note they name on this page.

Note text is untrusted (anyone who can write a file in the workspace wrote it). markdown-it-py
parses it as CommonMark with HTML off, so `<script>` and event attributes come out escaped;
this module decides what a link may point at.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline

SAFE_SCHEMES = ("http:", "https:", "mailto:")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*:", re.IGNORECASE)
MAX_WIKILINK_CHARS = 1_000


def note_href(path: str) -> str:
    """The page of a workspace file."""
    return f"/note?path={quote(path, safe='/')}"


class _NoteMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        """Only web and mail links, and links without a scheme (workspace paths, anchors)."""
        found = _SCHEME.match(url.strip())
        return found is None or found.group(0).lower() in SAFE_SCHEMES


def _wikilink(state: StateInline, silent: bool) -> bool:
    """`[[path]]`, `[[path#L5-L6]]` or `[[path|label]]`: a link to that note's page."""
    src, start = state.src, state.pos
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2, start + 2 + MAX_WIKILINK_CHARS)
    inner = src[start + 2 : end] if end != -1 else ""
    if not inner.strip() or "\n" in inner or "[" in inner:
        return False
    if not silent:
        target, _, label = inner.partition("|")
        path = target.split("#", 1)[0].strip()
        opened = state.push("link_open", "a", 1)
        opened.attrs = {"href": note_href(path), "class": "wikilink"}
        text = state.push("text", "", 0)
        text.content = (label or target).strip()
        state.push("link_close", "a", -1)
    state.pos = end + 2
    return True


def _link_targets(state: StateCore) -> None:
    """Web links open with no referrer; a path without a scheme opens that note on this page."""
    for block in state.tokens:
        for token in block.children or ():
            if token.type != "link_open":
                continue
            href = str(token.attrGet("href") or "")
            if token.attrGet("class") == "wikilink":
                continue
            if _SCHEME.match(href) or href.startswith("//"):
                token.attrSet("rel", "noopener noreferrer nofollow")
            elif not href.startswith("#"):
                token.attrSet("href", note_href(unquote(href.split("#", 1)[0]).lstrip("/")))


def _build() -> MarkdownIt:
    md = _NoteMarkdown("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # An image would be fetched as the page opens: its alt text and address are shown instead.
    md.disable("image")
    md.inline.ruler.before("link", "wikilink", _wikilink)
    md.core.ruler.push("link_targets", _link_targets)
    return md


_MD = _build()


def render_markdown(text: str) -> str:
    """HTML for a note's Markdown body; every character of the note is escaped or parsed."""
    return str(_MD.render(text))


__all__ = ["note_href", "render_markdown"]
