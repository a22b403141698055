"""The memory page's Tidy page: the clusters `reme-mcp tidy --dry-run` lists, each note linked.

Shows only: a consolidation is written by the host's model (the `consolidate` prompt), and
forgetting a note stays on its own page, behind its own confirmation.
"""

from __future__ import annotations

from reme_mcp.faces.view.templates import e, note_link, page
from reme_mcp.ops.consolidation.clusters import Cluster
from reme_mcp.ops.consolidation.tidy import preview


def tidy_page(clusters: list[Cluster]) -> str:
    parts = [
        "<h1>Tidy</h1><p>Notes that repeat or replace each other. Nothing here changes them: ask your host's "
        "model with the reme prompt <code>consolidate</code> and a cluster's id (Claude Code: "
        "<code>/mcp__reme__consolidate ID</code>) to write one note that supersedes a cluster; the old notes "
        "stay readable, marked superseded, and can be forgotten from their page.</p>"
    ]
    if not clusters:
        parts.append("<p>Nothing to consolidate.</p>")
    for cluster in clusters:
        items = "".join(
            f"<li>{note_link(n.path, n.name or None)}"
            f"{f' <span class=lines>line {n.line}</span>' if n.line else ''}"
            f' <span class="date">{e(n.date)}</span> <span class="description">{e(preview(n))}</span></li>'
            for n in cluster.notes
        )
        parts.append(
            f'<section class="cluster" id="{e(cluster.id)}"><h2><code>{e(cluster.id)}</code> '
            f'<span class="tag">{e(cluster.kind)}</span></h2><p>{e(cluster.reason)}</p><ul>{items}</ul></section>'
        )
    return page("Tidy", "".join(parts), "Tidy")
