"""The memory page's HTML, as small functions over typed results.

Every value from memory (paths, names, front matter, snippets) goes through `e` or through
`render_markdown`; nothing from a note is ever placed in HTML as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import urlencode

from reme_mcp.faces.view.auth import CSRF_FIELD
from reme_mcp.faces.view.markdown import note_href, render_markdown
from reme_mcp.ops.page.note_view import NoteView
from reme_mcp.ops.page.search_view import KIND_PREFIXES
from reme_mcp.ops.page.timeline import Timeline, TimelineEntry
from reme_mcp.ops.reports import DoctorReport
from reme_mcp.ops.results import SearchResult
from reme_mcp.ops.wording import counted

MAX_VALUE_CHARS = 2_000  # a front-matter value shown in full up to this


def e(value: object) -> str:
    return escape(str(value), quote=True)


def page(title: str, body: str, here: str = "") -> str:
    nav = "".join(
        f'<a href="{href}"{" aria-current=page" if name == here else ""}>{name}</a>'
        for name, href in (("Timeline", "/"), ("Search", "/search"), ("Tidy", "/tidy"), ("Health", "/health"))
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{e(title)} · reme-mcp</title><link rel="stylesheet" href="/static/view.css"></head>'
        f"<body><header><strong>reme-mcp</strong><nav>{nav}</nav></header><main>{body}</main></body></html>"
    )


def error_page(line: str) -> str:
    return page("Not shown", f'<h1>Not shown</h1><p class="error">{e(line)}</p>')


def note_link(path: str, name: str | None = None) -> str:
    label = f'<span class="name">{e(name)}</span> <code>{e(path)}</code>' if name else f"<code>{e(path)}</code>"
    return f'<a href="{e(note_href(path))}">{label}</a>'


def _entry(entry: TimelineEntry) -> str:
    replaced = (
        f' <span class="tag old">superseded by {", ".join(note_link(p) for p in entry.superseded_by)}</span>'
        if entry.superseded_by
        else ""
    )
    about = f' <span class="description">{e(entry.description)}</span>' if entry.description else ""
    return f"<li>{note_link(entry.path, entry.name or None)}{replaced}{about}</li>"


def timeline_page(timeline: Timeline, charts: str) -> str:
    parts = [
        f"<h1>Timeline</h1><p>{counted(timeline.total, 'note or session', 'notes and sessions')} on {counted(len(timeline.per_day), 'day')}.</p>",
        charts,
    ]
    for day in timeline.days:
        parts.append(f'<section class="day" id="d{e(day.date)}"><h2>{e(day.date)}</h2>')
        if day.notes:
            parts.append(f'<ul class="notes">{"".join(_entry(n) for n in day.notes)}</ul>')
        for host in day.hosts:
            items = "".join(_entry(s) for s in host.sessions)
            parts.append(f'<h3 class="host">sessions from {e(host.host)}</h3><ul class="sessions">{items}</ul>')
        parts.append("</section>")
    if not timeline.days:
        parts.append("<p>No daily notes or sessions yet.</p>")
    if timeline.older:
        parts.append(f'<p class="more"><a href="/?{urlencode({"before": timeline.older})}">Older days</a></p>')
    return page("Timeline", "".join(parts), "Timeline")


def _options(chosen: str) -> str:
    kinds = [("", "any kind"), *((k, k) for k in KIND_PREFIXES)]
    return "".join(f'<option value="{k}"{" selected" if k == chosen else ""}>{label}</option>' for k, label in kinds)


def with_workspaces(html: str, names: list[str], current: str) -> str:
    """The page with a switcher between the workspaces served (shown when there are several)."""
    if len(names) < 2:
        return html
    links = "".join(
        f'<a href="/?{urlencode({"workspace": name})}"{" aria-current=true" if name == current else ""}>{e(name)}</a>'
        for name in names
    )
    return html.replace("</nav></header>", f'</nav><nav class="workspaces">memory of: {links}</nav></header>', 1)


def search_page(asked: dict[str, str], result: SearchResult | None, error: str | None, csrf: str = "") -> str:
    form = (
        '<form class="search" method="get" action="/search">'
        f'<input type="search" name="q" value="{e(asked.get("q", ""))}" placeholder="Search memory" autofocus>'
        f'<select name="kind">{_options(asked.get("kind", ""))}</select>'
        f'<label>from <input type="date" name="start" value="{e(asked.get("start", ""))}"></label>'
        f'<label>to <input type="date" name="end" value="{e(asked.get("end", ""))}"></label>'
        "<button>Search</button></form>"
    )
    parts = ["<h1>Search</h1>", form]
    if error:
        parts.append(f'<p class="error">{e(error)}</p>')
    if result is not None:
        parts.append(f'<p class="count">{len(result.results)} of {result.total_hits} hits</p><ol class="results">')
        for hit in result.results:
            marks = "".join(
                f' <span class="tag {cls}">{word} {", ".join(note_link(p) for p in paths)}</span>'
                for cls, word, paths in (
                    ("old", "superseded by", hit.superseded_by),
                    ("maybe-old", "possibly outdated by", hit.possibly_outdated_by),
                )
                if paths
            )
            meaning = ' <span class="tag">by meaning</span>' if hit.by_meaning else ""
            when = f' <span class="date">{e(hit.date)}</span>' if hit.date else ""
            parts.append(
                f'<li class="hit" data-path="{e(hit.path)}">{note_link(hit.path, hit.name)} '
                f'<span class="lines">lines {hit.start_line}-{hit.end_line}</span>{when}{meaning}{marks}'
                f'<pre class="snippet">{e(hit.snippet)}</pre></li>'
            )
        parts.append("</ol>")
        if result.results and csrf:
            parts.append(_forget_form([hit.path for hit in result.results], csrf, "Forget these results…"))
    return page("Search", "".join(parts), "Search")


def _value(value: Any) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return e(shown if len(shown) <= MAX_VALUE_CHARS else shown[:MAX_VALUE_CHARS] + "…")


def _links(title: str, cls: str, paths: Iterable[tuple[str, str | None]]) -> str:
    items = "".join(f"<li>{note_link(p, n)}</li>" for p, n in paths)
    return f'<section class="{cls}"><h2>{e(title)}</h2><ul>{items}</ul></section>' if items else ""


def _body(note: NoteView) -> str:
    if note.messages is not None:
        lines = "".join(
            f'<li value="{m.line}"><span class="speaker">{e(m.speaker)}</span> '
            f'<span class="date">{e(m.time)}</span><p>{e(m.text)}</p></li>'
            for m in note.messages
        )
        return f'<ol class="dialog">{lines}</ol>'
    if note.path.endswith(".md"):
        return f'<article class="markdown">{render_markdown(note.body)}</article>'
    return f'<pre class="plain">{e(note.body)}</pre>'


def note_page(note: NoteView, csrf: str) -> str:
    title = str(note.front_matter.get("name") or note.path)
    meta = "".join(f"<dt>{e(k)}</dt><dd>{_value(v)}</dd>" for k, v in note.front_matter.items())
    session = ""
    if note.session:
        session = f'<p class="session">From the session {note_link(note.session)}</p>'
    elif note.session_id:
        session = f'<p class="session">From session <code>{e(note.session_id)}</code> (its dialog is not in this workspace)</p>'
    parts = [
        f"<h1>{e(title)}</h1><p><code>{e(note.path)}</code> · {e(note.kind)}"
        + (f" · {e(note.date)}" if note.date else "")
        + "</p>",
        _links("Superseded by", "superseded-by", ((p, None) for p in note.superseded_by)),
        _links("Supersedes", "supersedes", ((p, None) for p in note.supersedes)),
        _links("Possibly outdated by", "possibly-outdated-by", ((p, None) for p in note.possibly_outdated_by)),
        session,
        f'<dl class="front-matter">{meta}</dl>' if meta else "",
        _body(note),
        '<p class="cut">The file is longer: the rest is not shown.</p>' if note.cut else "",
        _links("Links to", "links-out", ((x.path, x.name) for x in note.links_out)),
        _links("Linked from", "links-in", ((x.path, x.name) for x in note.links_in)),
        _forget_form([note.path], csrf, "Forget this session…" if note.kind == "dialog" else "Forget this…"),
    ]
    return page(title, "".join(parts))


def _paths(paths: list[str]) -> str:
    return "".join(f'<input type="hidden" name="path" value="{e(path)}">' for path in paths)


def _forget_form(paths: list[str], csrf: str, label: str) -> str:
    return (
        '<form class="forget" method="post" action="/forget/plan">'
        f'<input type="hidden" name="{CSRF_FIELD}" value="{e(csrf)}">{_paths(paths)}'
        f"<button>{e(label)}</button></form>"
    )


def forget_plan_page(paths: list[str], plan: str, csrf: str) -> str:
    what = paths[0] if len(paths) == 1 else f"these {len(paths)} files"
    return page(
        "Forget",
        f"<h1>Forget {e(what)}?</h1><pre>{e(plan)}</pre>"
        '<form method="post" action="/forget/apply">'
        f'<input type="hidden" name="{CSRF_FIELD}" value="{e(csrf)}">{_paths(paths)}'
        '<button class="confirm">Forget</button></form>',
    )


def health_page(report: DoctorReport) -> str:
    rows = []
    for key, value in report.model_dump(exclude_none=True).items():
        if isinstance(value, dict):
            inner = "".join(f"<dt>{e(k)}</dt><dd>{_value(v)}</dd>" for k, v in value.items())
            rows.append(f"<dt>{e(key)}</dt><dd><dl>{inner}</dl></dd>")
        else:
            rows.append(f"<dt>{e(key)}</dt><dd>{_value(value)}</dd>")
    return page("Health", f'<h1>Health</h1><dl class="doctor">{"".join(rows)}</dl>', "Health")
