"""Secrets that carry no telling prefix: key material and credentials inside base64.

The rules in secrets.py find a secret by its format (a `-----BEGIN` line, `ghp_`, `key =`).
Someone can paste the same secret without that tell: a private key's body without its
BEGIN line, a whole PEM file base64-wrapped, a password given base64-encoded. These are
found by shape, decoding each base64 run and looking at what it holds:

- key material by its structure, not by how random it looks: the DER of a private key
  (a SEQUENCE whose first member is version 0, or 1 for an EC key, or a password-based
  encryption header), the `openssh-key-v1` magic, a PGP secret-key packet; and an
  `-----END ... PRIVATE KEY-----` line after a base64 body;
- decoded text that itself holds a secret (checked with the same rules, once deep);
- a short decoded string that looks like a password, on a line that speaks of one
  (the context detect-secrets uses for its keyword plugin).

Random-looking data that is none of these (an image, a hash, a certificate, a public
key) is not refused: "zero refusals on benign text" outweighs a guess by entropy alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

__all__ = ["find_encoded"]

# A run of standard base64 characters long enough to hold anything worth finding, not
# inside a longer token; across wrapped lines the lines are joined first (`_runs`).
_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=_-])")
_LINE = re.compile(r"[ \t>]*([A-Za-z0-9+/]{16,}={0,2})[ \t]*")  # a line that is one base64 run (quoted in Markdown too)
_END_KEY = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY_BEFORE = re.compile(r"[A-Za-z0-9+/=]{16}")
_CREDENTIAL_WORDS = re.compile(
    r"(?i)pass(?:word|wd|phrase|code)?(?![a-z])|pwd|secret|credential|api[ _.-]?key|token|login|密码|口令|密钥|私钥"
)
_OPENSSH = b"openssh-key-v1\0"
# OIDs that open a password-encrypted private key (PKCS#5 PBES1/PBES2, PKCS#12 PBE).
_PBE_OIDS = (b"\x2a\x86\x48\x86\xf7\x0d\x01\x05", b"\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01")
# Runs shorter than this (at most 11 bytes) are decoded only on a line that speaks of a credential.
SHORT_RUN = 16
MIN_KEY_BYTES = 40  # an Ed25519 key in PKCS#8 is 48 bytes, the smallest key here
MAX_SCAN_CHARS = 1_000_000  # a note is at most a few hundred kB; ingest passes turns


def find_encoded(text: str, inner: Callable[[str], str | None]) -> tuple[str, int] | None:
    """The kind of encoded secret in `text` and the offset where it starts, or None.

    `inner(decoded)` names the secret in decoded text (secrets.py's rules, not this check again).
    """
    text = text[:MAX_SCAN_CHARS]
    found = _END_KEY.search(text)
    if found and _KEY_BODY_BEFORE.search(text, max(0, found.start() - 600), found.start()):
        return "a private key block", found.start()
    said: dict[int, bool] = {}  # line start -> whether the line names a credential (each line searched once)

    def speaks_of_credentials(at: int) -> bool:
        line = text.rfind("\n", 0, at) + 1
        if line not in said:
            end = text.find("\n", at)
            said[line] = _CREDENTIAL_WORDS.search(text, line, end if end >= 0 else len(text)) is not None
        return said[line]

    for start, run in _runs(text):
        if run[1:].islower() or (len(run) < SHORT_RUN and not speaks_of_credentials(start)):
            continue  # a word (base64 has capitals after its first character), or no context to judge it by
        data = _decoded(run)
        if data is None:
            continue
        kind = _key_material(data)
        if kind is not None:
            return kind, start
        decoded = _text(data)
        if decoded is None:
            continue
        held = inner(decoded)
        if held is not None:
            return f"{held} (base64-encoded)", start
        if _looks_like_password(decoded) and speaks_of_credentials(start):
            return "a base64-encoded password", start
    return None


def _runs(text: str) -> Iterator[tuple[int, str]]:
    """Every base64 run (offset, run): lines that are each one run are joined as one (a wrapped
    body), and runs inside other lines are taken one by one."""
    if not any(c.isdigit() or c.isupper() for c in text[:MAX_SCAN_CHARS]):
        return
    offset = 0
    block: list[str] = []
    block_start = 0
    for line in text.splitlines(keepends=True):
        whole = _LINE.fullmatch(line.rstrip("\r\n"))
        if whole is not None:
            if not block:
                block_start = offset + whole.start(1)
            block.append(whole.group(1))
            if not whole.group(1).endswith("="):
                offset += len(line)
                continue
        if block:
            yield block_start, "".join(block)
            block = []
        if whole is None:
            for found in _RUN.finditer(line):
                yield offset + found.start(), found.group(0)
        offset += len(line)
    if block:
        yield block_start, "".join(block)


def _decoded(run: str) -> bytes | None:
    """The bytes a run stands for; None when it is not base64 (a word, a path)."""
    if len(run) % 4 == 1 or (run.endswith("=") and len(run) % 4):
        return None
    try:
        return base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _key_material(data: bytes) -> str | None:
    """What private key these bytes are, told by their structure; None for anything else."""
    if data.startswith(_OPENSSH):
        return "an OpenSSH private key (its body)"
    if len(data) < MIN_KEY_BYTES:
        return None
    if data[0] == 0x30:
        at = _after_length(data, 1)
        if at is None:
            return None
        head = data[at : at + 4]
        if head[:3] == b"\x02\x01\x00" and head[3:4] in (b"\x02", b"\x30"):
            return "a private key (its body, without the BEGIN line)"  # PKCS#1 RSA, PKCS#8
        if head[:3] == b"\x02\x01\x01" and head[3:4] == b"\x04":
            return "a private key (its body, without the BEGIN line)"  # SEC1 EC
        if head[:1] == b"\x30" and any(oid in data[at : at + 24] for oid in _PBE_OIDS):
            return "an encrypted private key (its body, without the BEGIN line)"
        return None
    return "a PGP private key (its body)" if _pgp_secret_key(data) else None


def _after_length(data: bytes, at: int) -> int | None:
    """Where a DER value starts after the length at `at`, when that length fits the data."""
    first = data[at]
    if first < 0x80:
        length, start = first, at + 1
    elif 0x81 <= first <= 0x83:
        size = first - 0x80
        length, start = int.from_bytes(data[at + 1 : at + 1 + size], "big"), at + 1 + size
    else:
        return None
    # A key cut short in the note still declares its whole length; one declaring less than
    # what follows is not one DER value.
    return start if length >= len(data) - start - 2 and length < 1 << 20 else None


def _pgp_secret_key(data: bytes) -> bool:
    """An OpenPGP secret-key packet (tag 5) of version 4 to 6, as a secret key export begins."""
    tag = data[0]
    if tag == 0xC5:  # new format
        first = data[1]
        at = 2 if first < 192 else 3 if first < 224 else 6 if first == 255 else None
    elif tag & 0xFC == 0x94:  # old format, tag 5, length of 1, 2 or 4 bytes
        at = {0: 2, 1: 3, 2: 5}.get(tag & 0x03)
    else:
        return False
    return at is not None and at < len(data) and data[at] in (4, 5, 6)


def _text(data: bytes) -> str | None:
    """Decoded bytes as text when they are printable UTF-8 text; None for binary data."""
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = all(ch.isprintable() or ch in "\n\r\t" for ch in decoded)
    return decoded if printable and decoded.strip() else None


def _looks_like_password(decoded: str) -> bool:
    """One word of 6 to 64 characters mixing a letter with a digit or a symbol."""
    if not (6 <= len(decoded) <= 64) or any(ch.isspace() for ch in decoded):
        return False
    has_letter = any(ch.isalpha() for ch in decoded)
    return has_letter and any(ch.isdigit() or not ch.isalnum() for ch in decoded)
