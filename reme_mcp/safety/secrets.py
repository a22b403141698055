"""Spot content that looks like a secret, so that `remember` can refuse to store it.

Memory notes are plain files that get indexed, searched and shown to models, so a
credential written into one leaks far beyond where it was typed. The check is a
table of (kind, hints, pattern, validator) rules: a regex finds a candidate and, where a
regex alone would flag ordinary text, a small validator decides.

Rules for assignments (`password = ...` and friends), chosen to keep false
positives low:

- The value must be a literal. References are not secrets: `${VAR}`, `$VAR`,
  `%VAR%`, `{{ template }}`, `<password>`, YAML tags such as `!vault`, calls and
  subscripts (`os.environ[...]`, `getenv(...)`), attribute access
  (`settings.password`), masks (`***`, `xxx`, `...`) and placeholder words
  (`changeme`, `None`, `null`, anything with `your` or `example`), paths and
  URLs, and values that name themselves (`"my-client-secret"`, `password1`).
- A quoted value counts from 6 characters. An unquoted value counts when it has
  6 or more characters and mixes a letter with a digit or a symbol, because
  unquoted code (`password=password`, `password: str`) and prose are words;
  a value followed by `|`, `,`, `=` or `)` is a type annotation or a parameter.
- Prose is not an assignment: "reset your password at the portal", "the
  password is ..." and "这个项目的测试口令是蓝鲸-731" are facts, not key-value pairs.
- Chinese keys (密码, 口令, 密钥, 私钥) count only in key-value form, directly
  followed by `:`, `：` or `=`, and only with an ASCII value that passes the
  unquoted rule: `密码: Hunter2!x9` is flagged, `口令：蓝鲸-731` and `密码：至少12位`
  are not (a phrase in Chinese is a passphrase to remember, not a credential).

Every pattern is linear: bounded quantifiers, no nested repetition, and a
lookbehind so that a match can only start where a token starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from reme_mcp.safety import secret_values as values
from reme_mcp.safety.encoded import find_encoded

__all__ = ["SecretFinding", "find_secret"]


@dataclass(frozen=True)
class SecretFinding:
    """What was found and where; `kind` never repeats any part of the secret."""

    kind: str
    line: int


def _assignment(keys: str) -> re.Pattern[str]:
    """A `key = value` pattern for code, YAML, JSON, .env and shell, for the given key words."""
    # The key word comes first in the pattern (any identifier around it is allowed), so the
    # engine looks for the word itself instead of trying every identifier start.
    return re.compile(
        r"(?i)(?:" + keys + r")(?:[_.-]?(?:key|token))?"
        r"[\"'`*\]]{0,3}[ \t]{0,10}(?:=>|:=|=(?!=)|:)[ \t*]{0,10}"
        r"(?P<value>\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|`[^`\n]{0,200}`|[^\s\"'`,;]{1,200})"
    )


def _near_assignment(keys: str) -> re.Pattern[str]:
    """What every `_assignment(keys)` match holds once lowercased: a case-sensitive scan of the
    lowered text is several times faster than the case-insensitive one, and mostly finds nothing."""
    return re.compile(r"(?:" + keys + r")(?:[_.-]?(?:key|token))?[\"'`*\]]{0,3}[ \t]{0,10}[=:]")


@dataclass(frozen=True)
class _Rule:
    """One kind of secret. `hints` are lowercase substrings every match contains, and `near`
    a pattern every match's lowercased text contains: a rule whose hints are all absent, or
    whose `near` finds nothing, skips its regex, which keeps ordinary notes cheap."""

    kind: str
    hints: tuple[str, ...]
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = values.always
    near: re.Pattern[str] | None = None


_DB_SCHEMES = r"postgres(?:ql)?|mysql|mariadb|mssql|sqlserver|mongodb(?:\+srv)?|rediss?|amqps?"
_URL_USERINFO = r"://(?P<user>[^\s:/@]{0,256}):(?P<password>[^\s:/@?#]{1,256})@"
_GITHUB = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")

# Specific formats first: on one line, the earlier rule names the finding.
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "a private key block",
        ("private key",),
        re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
        values.key_body_follows,
    ),
    _Rule("a PuTTY private key", ("putty-user-key-file",), re.compile(r"PuTTY-User-Key-File-[23]:")),
    _Rule(
        "an AWS access key id",
        ("akia", "asia"),
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    _Rule(
        "an AWS secret access key",
        ("access",),
        re.compile(
            r"(?i:(?:aws[_.-]?)?secret[_.-]?access[_.-]?key)[\"']?[ \t]{0,10}(?:=>|:=|=|:)[ \t]{0,10}"
            r"[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
        ),
    ),
    _Rule(
        "a GitHub token",
        _GITHUB,
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})(?![A-Za-z0-9_])"
        ),
    ),
    _Rule("a GitLab token", ("glpat-",), re.compile(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,255}")),
    _Rule(
        "an AWS secret access key",
        ("aws",),
        re.compile(r"(?i:aws)[^\n]{0,60}?(?i:secret)[^\n]{0,60}?(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        lambda match: values.random_tail(match, 40),
    ),
    _Rule(
        "a Slack app token",
        ("xapp-",),
        re.compile(r"(?<![A-Za-z0-9_-])xapp-\d-[A-Za-z0-9]{6,20}-\d{6,20}-[A-Za-z0-9]{20,128}"),
    ),
    _Rule(
        "a Telegram bot token",
        tuple(f"{d}:aa" for d in "0123456789") + tuple(f"{d}:" for d in "0123456789"),
        re.compile(r"(?<![A-Za-z0-9_:-])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    ),
    _Rule(
        "a Discord bot token",
        (".",),
        re.compile(
            r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])"
        ),
        lambda match: values.snowflake(match) or values.random_tail(match, 20),
    ),
    _Rule("a Slack token", ("xox",), re.compile(r"(?<![A-Za-z0-9_-])xox[bpar]-[A-Za-z0-9-]{10,255}"), values.has_digit),
    _Rule(
        "a Slack webhook URL",
        ("hooks.slack.com",),
        re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9]{6,20}/[A-Za-z0-9]{6,20}/[A-Za-z0-9]{16,64}"),
    ),
    _Rule("a Stripe live key", ("_live_",), re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_live_[A-Za-z0-9]{20,255}")),
    _Rule("an Anthropic API key", ("sk-ant-",), re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,255}")),
    _Rule(
        "an OpenAI API key",
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])"),
        values.mixed_case_and_digit,
    ),
    _Rule(
        "a Google API key",
        ("aiza",),
        re.compile(r"(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
    ),
    _Rule(
        "a Google OAuth client secret",
        ("gocspx-",),
        re.compile(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{20,64}"),
    ),
    _Rule("an npm token", ("npm_",), re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _Rule("a PyPI token", ("pypi-age",), re.compile(r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{40,2000}")),
    _Rule(
        "a Hugging Face token",
        ("hf_",),
        re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,64}(?![A-Za-z0-9])"),
        values.mixed_case,
    ),
    _Rule(
        "a Twilio API key",
        ("twilio",),
        re.compile(r"(?i:twilio)[^\n]{0,60}?(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    ),
    _Rule(
        "a SendGrid API key",
        ("sg.",),
        re.compile(r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])"),
    ),
    _Rule(
        "a JSON Web Token",
        ("eyj",),
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,4096}\.[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{10,4096}"),
    ),
    _Rule(
        "an Azure account key",
        ("accountkey=", "sharedaccesskey="),
        re.compile(r"(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{40,128}"),
    ),
    _Rule(
        "an HTTP authorization credential",
        ("authorization",),
        re.compile(
            r"(?i:authorization)[\"']?[ \t]{0,10}[:=][ \t]{0,10}[\"']?(?i:bearer|basic|token)[ \t]{1,10}"
            r"[A-Za-z0-9._~+/=-]{16,4096}"
        ),
        values.has_digit,
    ),
    _Rule(
        "a database URL with a password",
        ("://",),
        re.compile(r"(?<![A-Za-z0-9+.-])(?i:" + _DB_SCHEMES + r")(?:\+[A-Za-z0-9]{1,20})?" + _URL_USERINFO),
        values.url_password,
    ),
    _Rule(
        "a URL with a password",
        ("://",),
        re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}" + _URL_USERINFO),
        values.url_password,
    ),
    _Rule(
        "a password assignment",
        ("pass", "pwd"),
        _assignment(r"password|passwd|pwd"),
        values.literal_value,
        _near_assignment(r"password|passwd|pwd"),
    ),
    _Rule(
        "an API key assignment",
        ("api",),
        _assignment(r"api[_.-]?key"),
        values.literal_value,
        _near_assignment(r"api[_.-]?key"),
    ),
    _Rule(
        "a token assignment",
        ("token",),
        _assignment(r"(?:access|auth|refresh)[_.-]?token"),
        values.literal_value,
        _near_assignment(r"(?:access|auth|refresh)[_.-]?token"),
    ),
    _Rule(
        "a secret assignment",
        ("secret", "private"),
        _assignment(r"secret|private[_.-]?key"),
        values.literal_value,
        _near_assignment(r"secret|private[_.-]?key"),
    ),
    _Rule(
        "a password assignment",
        ("密码", "口令", "密钥", "私钥"),
        re.compile(r"(?:密码|口令|密钥|私钥)[ \t]{0,4}[:：=][ \t]{0,4}(?P<value>[!-~]{6,128})"),
        lambda match: values.looks_like_password(match.group("value")),
    ),
)


def _first_accepted(rule: _Rule, text: str) -> int | None:
    for match in rule.pattern.finditer(text):
        if rule.accept(match):
            return match.start()
    return None


_WRAPPED_TOKEN = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_.\-\s]{30,16384}")


def _unwrapped_jwt(text: str) -> int | None:
    """Where a JSON Web Token wrapped across lines starts (its line breaks and indents removed)."""
    if "eyj" not in text.lower():
        return None
    jwt = _RULES_BY_KIND["a JSON Web Token"]
    for match in _WRAPPED_TOKEN.finditer(text):
        joined = re.sub(r"\s+", "", match.group(0))
        if jwt.pattern.match(joined):
            return match.start()
    return None


def find_secret(text: str) -> SecretFinding | None:
    """The first thing in `text` that looks like a secret, or None.

    "First" is by line; on one line the more specific rule wins, so that
    `OPENAI_API_KEY=sk-...` is named an OpenAI key rather than an assignment.
    """
    found = _find_by_line(text)
    wrapped = _unwrapped_jwt(text) if found is None else None
    if wrapped is not None:
        return SecretFinding(kind="a JSON Web Token", line=text.count("\n", 0, wrapped) + 1)
    encoded = find_encoded(text, _kind_in) if found is None else None  # no telling prefix: by shape
    if encoded is not None:
        return SecretFinding(kind=encoded[0], line=text.count("\n", 0, encoded[1]) + 1)
    return found


def _kind_in(decoded: str) -> str | None:
    """What secret decoded text holds, by the rules above (encoded.py's own check not again)."""
    found = _find_by_line(decoded)
    if found is not None:
        return found.kind
    return "a JSON Web Token" if _unwrapped_jwt(decoded) is not None else None


def _find_by_line(text: str) -> SecretFinding | None:
    lowered = text.lower()
    best: tuple[int, int] | None = None  # (line, rule position)
    for position, rule in enumerate(_RULES):
        if not any(hint in lowered for hint in rule.hints) or (rule.near and not rule.near.search(lowered)):
            continue
        start = _first_accepted(rule, text)
        if start is not None:
            found = (text.count("\n", 0, start) + 1, position)
            best = found if best is None else min(best, found)
    if best is None:
        return None
    return SecretFinding(kind=_RULES[best[1]].kind, line=best[0])


_RULES_BY_KIND = {rule.kind: rule for rule in _RULES}
