"""A dialog hit that asks a question comes back with the reply that answers it.

In a dialog the words of a question are often the words a later search uses, while
the answer sits in the next message: "When did you move to Berlin?" / "Last May!".
A question returned alone tells the model what was asked, not what was said. On
LoCoMo (bench/locomo.py, dev split) about 42% of the misses at 5 had the evidence
right next to a top-5 hit, most of them the reply to a question hit.

The exchange is the question's chunk widened to the next message's line: its
end_line covers the reply and its text holds both, and the snippet is cut from it
with the same per-hit budget as any hit, so a wider window never costs more space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from reme_mcp.index.hits import ChunkHit

DIALOG_SUFFIX = ".jsonl"
QUESTION_MARKS = ("?", "\uff1f")  # the ASCII and the full-width question mark (Chinese, Japanese)


def is_question(text: str) -> bool:
    """A message that asks something: it holds a question mark."""
    return any(mark in text for mark in QUESTION_MARKS)


def with_reply(hit: ChunkHit, following: Callable[[ChunkHit], ChunkHit | None]) -> ChunkHit:
    """The hit, widened to the message on the next line when it is a question in a dialog.

    `following(hit)` is the indexed chunk starting on the line after the hit, if any: a
    question on the last line, or followed by a line that is no message, stays alone.
    """
    if not hit.path.endswith(DIALOG_SUFFIX) or not is_question(hit.content):
        return hit
    reply = following(hit)
    if reply is None or reply.path != hit.path or reply.start_line != hit.end_line + 1:
        return hit
    return replace(hit, end_line=reply.end_line, content=f"{hit.content}\n{reply.content}")
