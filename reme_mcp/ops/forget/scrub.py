"""Scrub: the workspace read again with today's secret rules, and what reme-mcp wrote redacted.

Secret rules grow (safety/secrets.py); a note stored before a rule existed may hold a secret of
that shape. `scrub_scan` reports every finding by path, line and kind (never the value);
`scrub_apply` redacts, in place, the findings in files reme-mcp wrote itself, as ingest redacts
(`[redacted: <kind>]`), and purges what was derived from the old text as forgetting does (the
index rebuilt, vectors and saved records dropped, the ledger's body hashes renewed). A
person's own files (and ReMe's) are reported, never changed: the person edits them.

Which files reme-mcp wrote: daily notes whose front matter carries `remember`'s request hash,
or whose body the request ledger records as stored by `remember` at that path (ledger.py);
and the dialogs the importer wrote (session/dialog/<host>/<name>.jsonl, each line carrying its
native id and source in its metadata, ingest/dialog.py).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.ingest.file_redaction import redacted_file
from reme_mcp.ingest.keep import redact_findings
from reme_mcp.notes.daily import REQUEST_KEY
from reme_mcp.ops.wording import counted, person_path
from reme_mcp.storage.documents import body_hash, is_dialog, split_front_matter
from reme_mcp.storage.files import read_regular
from reme_mcp.storage.text import json_escaped
from reme_mcp.storage.workspace import MAX_INDEXED_BYTES, file_kind, is_text_file

if TYPE_CHECKING:
    from reme_mcp.ops.memory import Memory


class _Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


class Finding(_Model):
    path: str
    line: int = Field(description="1-based line of the file.")
    kind: str = Field(description="What it looks like (never any of the value).")
    redactable: bool = Field(description="In a file reme-mcp wrote: scrub redacts it; else the person edits it.")


class ScrubReport(_Model):
    workspace: str
    findings: list[Finding] = Field(default_factory=list)
    hashes: dict[str, str] = Field(default_factory=dict, description="Each redactable file's SHA-256 when scanned.")
    redacted: list[str] = Field(default_factory=list, description="Files redacted in place.")
    changed_since: list[str] = Field(default_factory=list, description="Files left alone: changed after the scan.")

    @property
    def redactable(self) -> list[Finding]:
        return [f for f in self.findings if f.redactable]

    def render(self) -> str:
        if not self.findings:
            return "No secrets found."
        lines = [f"{counted(len(self.findings), 'finding')}:"]
        for f in self.findings:
            whose = "reme-mcp's file: redactable" if f.redactable else "your file: edit it by hand"
            lines.append(f"  {person_path(f.path)}:{f.line}: {f.kind} ({whose})")
        if self.redacted:
            lines.append(
                f"Redacted {counted(len(self.redacted), 'file')}: {', '.join(map(person_path, self.redacted))}"
            )
        lines += [f"  not redacted, changed since the scan: {person_path(p)}" for p in self.changed_since]
        return "\n".join(lines)


def scrub_scan(memory: Memory) -> ScrubReport:
    """Every secret-looking thing in the workspace's text files; changes nothing."""
    ws = memory.ws
    report = ScrubReport(workspace=str(ws.root))
    for entry in sorted(ws.walk(), key=lambda e: e.path):
        if entry.size > MAX_INDEXED_BYTES or not is_text_file(ws.root / entry.path):
            continue
        text = _text(memory, entry.path)
        if text is None:
            continue
        ours = _ours(memory, entry.path, text)
        _, found = _redacted(entry.path, text, ours)
        report.findings += [Finding(path=entry.path, line=line, kind=kind, redactable=ours) for line, kind in found]
        if ours and found:
            report.hashes[entry.path] = _sha(text)
    return report


def scrub_apply(memory: Memory, report: ScrubReport) -> ScrubReport:
    """Redact the redactable findings of `report` (from `scrub_scan` on this workspace) in place,
    then purge what was derived from the old text. A file changed since the scan is left alone
    and named (`changed_since`): scan again."""
    ws = memory.ws
    if report.workspace != str(ws.root):
        raise ReMeError(f"this scan is of {report.workspace}, not {ws.root}: scan this workspace again")
    done: list[str] = []
    changed: list[str] = []
    try:
        with ws.lock("write"):
            for path, digest in report.hashes.items():
                text = _text(memory, path)
                if text is None or _sha(text) != digest:
                    changed.append(path)
                    continue
                new, _ = _redacted(path, text, True)
                ws.write_atomic(ws.root / path, new)
                done.append(path)
                if file_kind(path) == "daily":
                    memory.ledger.forget({path}, kinds=("bodies",))
                    memory.ledger.record(None, _body_digest(new), path)
        if done:
            memory.index.purge(done)
    except OSError as exc:
        raise ReMeError(
            f"redacted {len(done)} file(s), then {os_error_line(exc, 'scrubbing')}; run scrub again to finish"
        ) from exc
    return report.model_copy(update={"redacted": done, "changed_since": changed})


def _text(memory: Memory, path: str) -> str | None:
    try:
        return read_regular(memory.ws.root / path, path).decode("utf-8")
    except (OSError, ValueError, ReMeError):
        return None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _body_digest(text: str) -> str:
    _, start = split_front_matter(text)
    return body_hash("\n".join(text.split("\n")[start:]))


def _ours(memory: Memory, path: str, text: str) -> bool:
    """Whether reme-mcp wrote this file (module docstring)."""
    kind = file_kind(path)
    if kind == "daily":
        meta, _ = split_front_matter(text)
        return bool(meta.get(REQUEST_KEY)) or memory.ledger.body(_body_digest(text)) == path
    if kind == "dialog" and len(path.split("/")) == 4:
        records = [_json(line) for line in text.split("\n") if line.strip()]
        metas = [r.get("metadata") for r in records if isinstance(r, dict)]
        return bool(metas) and all(isinstance(m, dict) and "native_id" in m and "source" in m for m in metas)
    return False


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _redacted(path: str, text: str, ours: bool) -> tuple[str, list[tuple[int, str]]]:
    """The text with its secrets redacted, and each finding's (file line, kind)."""
    if is_dialog(path) and ours:
        return _redacted_dialog(text)
    return redacted_file(path, text)


def _redacted_dialog(text: str) -> tuple[str, list[tuple[int, str]]]:
    """A dialog the importer wrote: each message's text redacted, its line rewritten as the importer writes it."""
    out: list[str] = []
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        record = _json(line) if line.strip() else None
        if not isinstance(record, dict):
            out.append(line)
            continue
        hits: list[str] = []
        blocks = record.get("content")
        if isinstance(blocks, str):
            record["content"], kinds = _redact_text(blocks)
            hits += kinds
        elif isinstance(blocks, list):
            for block in blocks:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    block["text"], kinds = _redact_text(block["text"])
                    hits += kinds
        found += [(number, kind) for kind in hits]
        out.append(json_escaped(json.dumps(record, ensure_ascii=False)) if hits else line)
    return "\n".join(out), found


def _redact_text(text: str) -> tuple[str, list[str]]:
    new, found = redact_findings(text)
    return new, [f.kind for f in found]
