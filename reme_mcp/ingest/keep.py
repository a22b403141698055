"""What of a message's text is kept: no recalled memory, no binary blobs, no secrets.

Recalled memory (a `<reme-context>` block) must never come back as new memory, so
whole blocks go, and an unclosed one takes the rest of the message with it.
Secrets are redacted in place: the kind is named, the value is never written.
"""

from __future__ import annotations

import re
from dataclasses import replace

from reme_mcp.ingest.model import Turn
from reme_mcp.safety.boundary import escape
from reme_mcp.safety.secrets import SecretFinding, find_secret

_BLOCK_RE = re.compile(r"<reme-context\b[^>]{0,500}>.*?(?:</reme-context\s*>|\Z)", re.DOTALL | re.IGNORECASE)
_DATA_URI_RE = re.compile(r"data:[\w.+-]{1,80}/[\w.+-]{1,80};base64,[A-Za-z0-9+/=\s]{16,}")
# A long unbroken run of base64 is an attachment, not prose.
_BASE64_RE = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{400,}={0,2}")
_BINARY = "[binary data dropped]"
# The characters that can open a boundary tag (boundary.escape knows their look-alikes).
_OPENERS = "<\uff1c\ufe64\u2039\u3008\u27e8\u2329"
# Redaction stops after this many findings: a message made of secrets is dropped whole.
_MAX_FINDINGS = 50


def redact(text: str) -> str:
    """`text` with each secret replaced by `[redacted: <kind>]`."""
    return redact_findings(text)[0]


def redact_findings(text: str) -> tuple[str, list[SecretFinding]]:
    """`text` with each secret replaced by `[redacted: <kind>]`, and what was found where
    (the line in `text`; the kind never repeats any of the secret)."""
    found_all: list[SecretFinding] = []
    for _ in range(_MAX_FINDINGS):
        found = find_secret(text)
        if found is None:
            return text, found_all
        found_all.append(found)
        text = _redact_one(text, found.line - 1, found.kind)
    return "[redacted: secrets]", found_all


def _redact_one(text: str, line_index: int, kind: str) -> str:
    lines = text.split("\n")
    line = lines[line_index] if line_index < len(lines) else ""
    tokens = re.split(r"(\s+)", line)
    words = [i for i, tok in enumerate(tokens) if tok and not tok.isspace()]
    # The shortest run of words that is still this secret; its last word holds the value.
    for width in range(1, len(words) + 1):
        for start in range(len(words) - width + 1):
            span = words[start : start + width]
            found = find_secret("".join(tokens[span[0] : span[-1] + 1]))
            if found is not None and found.kind == kind:
                tokens[span[-1]] = _value_replaced(tokens[span[-1]], kind)
                lines[line_index] = "".join(tokens)
                return "\n".join(lines)
    # Only the whole text is a secret (a key spread over lines): nothing of it is kept.
    return f"[redacted: {kind}]"


def _value_replaced(word: str, kind: str) -> str:
    # Keep a key name before `=` or `:` (`password=...`), so the text still reads.
    match = re.match(r"^([A-Za-z_][\w.-]{0,60}[=:：]|[^\x00-\x7f]{1,8}[=:：])(.+)$", word)
    if match:
        return f"{match.group(1)}[redacted: {kind}]"
    return f"[redacted: {kind}]"


def redact_turns(turns: list[Turn]) -> list[Turn]:
    """`turns` with secrets redacted; one scan of the whole batch when (as usual) there are none."""
    if not turns or find_secret("\n".join(turn.text for turn in turns)) is None:
        return turns
    return [replace(turn, text=redact(turn.text)) if find_secret(turn.text) else turn for turn in turns]


def kept_text(text: str) -> str:
    """The text worth remembering, secrets not yet redacted (see `redact_turns`), or "" when nothing is left."""
    if not text:
        return ""
    # Cheap tests first: most messages have no tag, no data URI and no long run.
    if "<" in text:
        text = _BLOCK_RE.sub("", text)
    if "base64," in text:
        text = _DATA_URI_RE.sub(_BINARY, text)
    if len(text) >= 400:
        text = _BASE64_RE.sub(_BINARY, text)
    if any(bracket in text for bracket in _OPENERS):
        text = escape(text)
    text = text.strip()
    if not text or text == _BINARY:
        return ""
    return text
