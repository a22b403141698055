"""A workspace file's text read with the secret rules: what `scrub` redacts and `sync` refuses.

One reading for both, so a file `scrub` passes is a file `sync` shares, and a finding names the
same line in either. A Markdown file's front matter and body are read apart: a redaction that
cannot keep one whole keeps the other.
"""

from __future__ import annotations

from reme_mcp.ingest.keep import redact_findings
from reme_mcp.storage.documents import is_markdown, split_front_matter


def redacted_file(path: str, text: str) -> tuple[str, list[tuple[int, str]]]:
    """The text with its secrets redacted, and each finding's (1-based file line, kind)."""
    lines = text.split("\n")
    start = split_front_matter(text)[1] if is_markdown(path) else 0
    front, front_found = redact_findings("\n".join(lines[:start])) if start else ("", [])
    body, body_found = redact_findings("\n".join(lines[start:]))
    found = [(f.line, f.kind) for f in front_found] + [(f.line + start, f.kind) for f in body_found]
    return (f"{front}\n{body}" if start else body), found
