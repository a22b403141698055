"""What a value matched by a secret rule looks like: a placeholder or a mask, a location, a
password, a random tail. Each rule (secrets.py) accepts a match only when its value passes the
test the rule names here, so benign text ("password: <your password>") is not a secret."""

from __future__ import annotations

import base64
import re


def always(_match: re.Match[str]) -> bool:
    return True


_MASK_CHARS = frozenset("*xX.•#-_ ")
_PLACEHOLDER_WORDS = frozenset(
    {"changeme", "replaceme", "password", "passwd", "secret", "none", "null", "nil", "undefined"}
    | {"true", "false", "redacted", "placeholder", "required", "hidden", "todo", "tbd"}
)
# A value that names what it is ("my-client-secret", "password1") is an example, not a secret.
_NAMING_PARTS = ("your", "example", "placeholder", "redacted", "changeme")
_SELF_NAMING = ("password", "passwd", "secret")
_YAML_TAG = re.compile(r"![A-Za-z]{1,20}")
_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,100}(?:\.[A-Za-z_][A-Za-z0-9_]{0,100}){1,10}")


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret elsewhere, or no secret at all."""
    value = value.strip()
    if not value or value[0] in "$%<{" or set(value) <= _MASK_CHARS or _YAML_TAG.fullmatch(value):
        return True
    word = re.sub(r"[^a-z0-9]", "", value.lower())
    if word in _PLACEHOLDER_WORDS or any(part in word for part in _NAMING_PARTS):
        return True
    # "my-client-secret" and "password1" name themselves; "MySecret#2024" only hides a secret
    # behind a word, so what is left after the word must be letters or one short number.
    lowered = value.lower()
    if not any(part in lowered for part in _SELF_NAMING):
        return False
    rest = re.sub("|".join(_SELF_NAMING), "", lowered)
    rest = re.sub(r"[-_. ]", "", rest)
    return rest.isalpha() or (rest.isdigit() and len(rest) <= 2) or not rest


def is_location(value: str) -> bool:
    """A URL or a path (`PWD=/home/me`): where something is, not a secret."""
    return "://" in value or value.startswith(("/", "~/", "./", "../"))


def looks_like_password(value: str) -> bool:
    """An unquoted value is code or prose unless it mixes letters with digits or symbols."""
    value = value.rstrip(".,;:!?*")
    if len(value) < 6 or is_placeholder(value):
        return False
    if is_location(value):
        return False
    if any(c in value for c in "()[]{}<>") or _ATTRIBUTE.fullmatch(value):
        return False  # a call, subscript, attribute or markup: code that fetches the secret
    has_letter = any(c.isalpha() for c in value)
    return has_letter and any(c.isdigit() or not (c.isalnum() or c in "_.-") for c in value)


def literal_value(match: re.Match[str]) -> bool:
    raw = match.group("value")
    if raw[0] in "\"'`":
        inner = raw[1:-1]
        return len(inner) >= 6 and not is_placeholder(inner) and not is_location(inner)
    rest = match.string[match.end() : match.end() + 4].lstrip(" \t")
    if rest[:1] in ("|", ",", "=", ")"):
        return False  # `private_key: Ed25519PrivateKey | None`: a type annotation or parameter list
    return looks_like_password(raw)


def url_password(match: re.Match[str]) -> bool:
    return not is_placeholder(match.group("password"))


_KEY_BODY = re.compile(r"[A-Za-z0-9+/=]{16}")


def key_body_follows(match: re.Match[str]) -> bool:
    """A key header followed by key material; a header quoted in prose is not a key."""
    return _KEY_BODY.search(match.string, match.end(), match.end() + 600) is not None


def has_digit(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group(0))


def mixed_case_and_digit(match: re.Match[str]) -> bool:
    """Random tokens mix cases and digits; names like `sk-learn-model-selection` do not."""
    body = match.group(0)[3:]
    return any(c.isdigit() for c in body) and body != body.upper() and body != body.lower()


def random_tail(match: re.Match[str], size: int) -> bool:
    """The last `size` characters mix upper case, lower case and digits, as generated keys do."""
    tail = match.group(0)[-size:]
    return any(c.isupper() for c in tail) and any(c.islower() for c in tail) and any(c.isdigit() for c in tail)


def snowflake(match: re.Match[str]) -> bool:
    """A Discord token's first part is its bot's id (a number of 17 to 20 digits) in base64."""
    first = match.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4))
    except ValueError:
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


def mixed_case(match: re.Match[str]) -> bool:
    token = match.group(0)[3:]
    return token != token.upper() and token != token.lower()
