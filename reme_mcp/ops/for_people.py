"""The answers as a person reads them on a terminal: real paths, memory text without the wrapper.

A model gets recalled memory inside the <reme-context> boundary with a preamble that tells it
the text is data, and a path that is not plain as a hash-named reference (safety/boundary.py):
both guard a model against instructions hidden in memory. A person needs neither; what a
terminal could be told by the text (escape sequences, direction overrides) is shown as \\uXXXX.
"""

from __future__ import annotations

from reme_mcp.ops.results import ReadResult, SearchHit, SearchResult, shown_query
from reme_mcp.ops.wording import counted, person_path, terminal_text
from reme_mcp.safety.boundary import unwrap


def search_for_people(result: SearchResult) -> str:
    query = person_path(repr(shown_query(result.query)))
    notice = f"Note: {result.notice}\n" if result.notice else ""
    if not result.results:
        return f"{notice}No memory matched {query}."
    lines = [f"{len(result.results)} of {counted(result.total_hits, 'hit')} for {query}:"]
    for number, hit in enumerate(result.results, start=1):
        lines.append(f"{number}. {_hit_head(hit)}")
        label = " - ".join(x for x in (hit.name, hit.description) if x)
        body = ([label] if label else []) + terminal_text(unwrap(hit.snippet)).split("\n")
        lines.extend(f"   {line}".rstrip() for line in body)
    if result.truncated:
        lines.append("(snippets were cut to fit: reme-mcp read PATH shows the whole file)")
    return notice + "\n".join(lines)


def _hit_head(hit: SearchHit) -> str:
    where = f"{person_path(hit.path)}#L{hit.start_line}-L{hit.end_line}"
    project = f" [{hit.project}]" if hit.project else ""
    when = f" ({hit.date})" if hit.date else ""
    meaning = " [by meaning]" if hit.by_meaning else ""
    if hit.superseded_by:
        meaning += f" [superseded by {', '.join(map(person_path, hit.superseded_by))}]"
    elif hit.possibly_outdated_by:
        meaning += f" [possibly outdated: newer {', '.join(map(person_path, hit.possibly_outdated_by))}]"
    return f"{where}{project}{when}{meaning}"


def read_for_people(result: ReadResult) -> str:
    project = f" [{result.project}]" if result.project else ""
    lines = f"lines {result.start_line}-{result.end_line} of {result.total_lines}"
    head = f"{person_path(result.path)}{project}: {lines}"
    if result.superseded_by:
        head += f" [superseded by {', '.join(map(person_path, result.superseded_by))}]"
    tail = (
        f"\n(more: reme-mcp read {person_path(result.path)} --start-line {result.next_line})"
        if result.truncated
        else ""
    )
    notice = f"Note: {result.notice}\n" if result.notice else ""
    return f"{notice}{head}\n{terminal_text(unwrap(result.content))}{tail}"
