"""Tests for reme_mcp.safety.secrets: what `remember` refuses, and what it must let through.

Fake credentials are assembled at run time from a prefix and a filler, so that this
file never holds a literal that looks like a real token to a secret scanner.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reme_mcp.safety.secrets import SecretFinding, find_secret


def filler(length: int, alphabet: str = "Fk9Xq2Lm7Zt4Rb8Wc3") -> str:
    """Mixed-case letters and digits, like a random token, but obviously made up."""
    return (alphabet * (length // len(alphabet) + 1))[:length]


HEX = "0123456789abcdef"
KEY_HEADER = "-----BEGIN "  # split from the rest so the file holds no key header
KEY_BODY = "\n" + filler(64, "MIIEowIBAAKCAQEA") + "\n" + filler(64) + "\n"

PASSWORD = "a password assignment"
SECRET = "a secret assignment"

# (content, expected kind, the secret value that must never appear in the kind)
POSITIVES: list[tuple[str, str, str]] = [
    (KEY_HEADER + "RSA PRIVATE KEY-----" + KEY_BODY, "a private key block", "MIIEowIB"),
    (KEY_HEADER + "PRIVATE KEY-----" + KEY_BODY, "a private key block", "MIIEowIB"),
    (KEY_HEADER + "EC PRIVATE KEY-----" + KEY_BODY, "a private key block", "MIIEowIB"),
    (KEY_HEADER + "OPENSSH PRIVATE KEY-----" + KEY_BODY, "a private key block", "MIIEowIB"),
    (KEY_HEADER + "ENCRYPTED PRIVATE KEY-----" + KEY_BODY, "a private key block", "MIIEowIB"),
    (
        KEY_HEADER + "PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n" + KEY_BODY,
        "a private key block",
        "MIIEowIB",
    ),
    ("PuTTY" + "-User-Key-File-2: ssh-rsa\nEncryption: none", "a PuTTY private key", "ssh-rsa"),
    ("key id " + "AKIA" + filler(16, "FAKEQ7Z2") + " for ci", "an AWS access key id", "FAKEQ7Z2"),
    ("ASIA" + filler(16, "TESTW3X9"), "an AWS access key id", "TESTW3X9"),
    ("aws_secret_access_key = " + filler(40), "an AWS secret access key", filler(40)),
    ('"SecretAccessKey": "' + filler(40) + '"', "an AWS secret access key", filler(40)),
    ("token ghp_" + filler(36), "a GitHub token", filler(36)),
    ("gho_" + filler(36), "a GitHub token", filler(36)),
    ("ghs_" + filler(36), "a GitHub token", filler(36)),
    ("ghu_" + filler(36) + " and ghr_" + filler(36), "a GitHub token", filler(36)),
    ("github_pat_" + filler(22) + "_" + filler(59), "a GitHub token", filler(22)),
    ("glpat-" + filler(20), "a GitLab token", filler(20)),
    ("xoxb-" + "123456789012-1234567890123-" + filler(24), "a Slack token", filler(24)),
    ("xoxp-" + "123456789012-" + filler(24), "a Slack token", filler(24)),
    (
        "https://hooks.slack.com/services/T" + filler(8, "QZ7K") + "/B" + filler(8, "WX3") + "/" + filler(24),
        "a Slack webhook URL",
        filler(24),
    ),
    ("STRIPE_KEY=sk_live_" + filler(24), "a Stripe live key", filler(24)),
    ("rk_live_" + filler(24), "a Stripe live key", filler(24)),
    ("OPENAI_API_KEY=sk-" + filler(48), "an OpenAI API key", filler(48)),
    ("sk-proj-" + filler(80), "an OpenAI API key", filler(80)),
    ("ANTHROPIC_API_KEY=sk-ant-api03-" + filler(80), "an Anthropic API key", filler(80)),
    ("key=AIza" + filler(35), "a Google API key", filler(35)),
    ("GOCSPX-" + filler(28), "a Google OAuth client secret", filler(28)),
    ("//registry.npmjs.org/:_authToken=npm_" + filler(36), "an npm token", filler(36)),
    ("pypi-AgEIcHlwaS5vcmc" + filler(60), "a PyPI token", filler(60)),
    ("HF_TOKEN=hf_" + filler(34), "a Hugging Face token", filler(34)),
    ("TWILIO_API_KEY=SK" + filler(32, HEX), "a Twilio API key", filler(32, HEX)),
    ("SG." + filler(22) + "." + filler(43), "a SendGrid API key", filler(43)),
    ("eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0In0." + filler(43), "a JSON Web Token", filler(43)),
    (
        "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=" + filler(86) + "==",
        "an Azure account key",
        filler(86),
    ),
    ('-H "Authorization: Bearer ' + filler(40) + '"', "an HTTP authorization credential", filler(40)),
    (
        "DATABASE_URL=postgres://app:Wq7pLx2z@db.internal:5432/app",
        "a database URL with a password",
        "Wq7pLx2z",
    ),
    ("postgresql+psycopg2://user:pass@host/db", "a database URL with a password", "user:pass"),
    ("mysql://root:Tr0ub4dor@127.0.0.1/test", "a database URL with a password", "Tr0ub4dor"),
    ("mongodb+srv://svc:Mz9qLp2w@cluster0.mongodb.net", "a database URL with a password", "Mz9qLp2w"),
    ("redis://:Rd5kQw8z@cache:6379/0", "a database URL with a password", "Rd5kQw8z"),
    ("amqp://guest:Gq3nBv7x@rabbit:5672/", "a database URL with a password", "Gq3nBv7x"),
    ("https://deploy:Hx8mWq2p@git.internal/repo.git", "a URL with a password", "Hx8mWq2p"),
    ('password = "hunter2"', PASSWORD, "hunter2"),
    ("PASSWORD=Hunter2!", PASSWORD, "Hunter2!"),
    ("export DB_PASSWORD='s3cr3t-Pw'", PASSWORD, "s3cr3t-Pw"),
    ('{"user": "ops", "password": "Pa55w0rd!"}', PASSWORD, "Pa55w0rd!"),
    ("db:\n  passwd: Zx9!qwerty\n", PASSWORD, "Zx9!qwerty"),
    ('conn.login(pwd := "Lq8#xyz12")', PASSWORD, "Lq8#xyz12"),
    ("'password' => 'Rb7-kd93x',", PASSWORD, "Rb7-kd93x"),
    ("**Password:** Wm4&tr9z", PASSWORD, "Wm4&tr9z"),
    ('self.password = "Kp2@vv81"', PASSWORD, "Kp2@vv81"),
    ("API_KEY=Qw3rTy7u9", "an API key assignment", "Qw3rTy7u9"),
    ('apiKey: "9f8e7d6c5b4a"', "an API key assignment", "9f8e7d6c5b4a"),
    ("access_token: Ab12Cd34Ef56", "a token assignment", "Ab12Cd34Ef56"),
    ('authToken = "tk-4471-9932"', "a token assignment", "tk-4471-9932"),
    ("client_secret=Vc7-Lk2-Np9", SECRET, "Vc7-Lk2-Np9"),
    ("SECRET_KEY = 'django-insecure-4k2j9'", SECRET, "django-insecure-4k2j9"),
    ('private_key: "Pk9zXw2m"', SECRET, "Pk9zXw2m"),
    ("密码: Hunter2!x9", PASSWORD, "Hunter2!x9"),
    ("数据库口令：Db8#kLm2", PASSWORD, "Db8#kLm2"),
    ("notes\n\nmore notes\npassword = 'Line4Pw!'\n", PASSWORD, "Line4Pw!"),
]

NEGATIVES: list[str] = [
    "",
    "Deployed the Go backend on Friday; the team prefers small pull requests.",
    "# Heading\n\n- a list item\n- another one with `code`\n\n> a quote\n",
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291 fixed the race",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "The base64 of hello world is aGVsbG8gd29ybGQ= in the docs.",
    "trace 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "see https://example.com/docs?page=2#intro for details",
    "clone from https://user@git.example.com/repo.git",
    "ssh://git@github.com:22/org/repo.git",
    "upgraded to version 1.2.3-rc.4 and python 3.11.7",
    "中文笔记：今天讨论了搜索引擎的分词策略，决定使用二元组。",
    "日本語のメモと한국어 메모도 검색할 수 있어야 합니다.",
    "we use the sk-learn library for the baseline model",
    "sk-learn-model-selection-helpers-and-utilities is a module name",
    "mail alice@example.com or bob.smith+ops@corp.example.org",
    "the password policy requires 12 characters",
    "reset your password at the portal",
    "Password reset: done, the user got an email.",
    "密码策略要求12位",
    "这个项目的测试口令是蓝鲸-731",
    "口令：蓝鲸-731",
    "密码：至少12位",
    "password =",
    'password = ""',
    'password = "1234"',
    "password: <password>",
    "password = '***'",
    "PASSWORD=xxx",
    "password: changeme",
    "DB_PASSWORD=${DB_PASSWORD}",
    "password=$DB_PASS",
    'password = os.environ["DB_PASSWORD"]',
    'api_key = os.getenv("API_KEY")',
    "password = None",
    '{"password": null}',
    "password: str",
    "api_key: Optional[str] = None",
    "connect(user=user, password=password)",
    "password = settings.DATABASE_PASSWORD",
    "api_key: ${{ secrets.API_KEY }}",
    "password: !vault |",
    'password = "your_password_here"',
    "PWD=/home/me/project",
    "volumes:\n  - secret:\n      secretName: my-tls-secret\n",
    "if password == user_input:",
    "max_password_length = 128",
    "postgres://user@localhost/db",
    "postgres://user:${PGPASSWORD}@localhost/db",
    "mysql://root:****@localhost/test",
    "http://localhost:8080/health",
    "The header is -----BEGIN OPENSSH " + "PRIVATE KEY----- followed by the body.",
    "the token prefix ghp_ marks a GitHub personal token",
    "Authorization: Bearer <token>",
    "AKIA is the prefix of AWS access key ids",
    "eyJ is what base64 JSON starts with",
    "def sign(private_key: Ed25519PrivateKey | Ed448PrivateKey) -> bytes: ...",
    "def load(data: bytes, private_key: PKCS7PrivateKeyTypes, options: int) -> None: ...",
    'auth = ClientCredentials(client_id="my-client", client_secret="my-client-secret")',
    "env = {PWD: '/Users/maciej', OLDPWD: '/home/me/src'}",
    "cvs://:pserver:anoncvs@sources.example.org:/cvs/src",
    'const secret = alice.<span class="fn">computeSecret</span>(bobKey);',
]


@pytest.mark.parametrize(("content", "kind", "secret"), POSITIVES)
def test_positive_is_found_with_its_kind(content: str, kind: str, secret: str) -> None:
    finding = find_secret(content)
    assert finding is not None
    assert finding.kind == kind
    assert secret not in finding.kind


@pytest.mark.parametrize("content", NEGATIVES)
def test_negative_is_not_flagged(content: str) -> None:
    assert find_secret(content) is None


def test_corpora_are_large_enough() -> None:
    assert len(POSITIVES) >= 40
    assert len(NEGATIVES) >= 40


def test_line_is_one_based_and_points_at_the_secret() -> None:
    text = "first line\nsecond line\n\nghp_" + filler(36) + "\nlast"
    assert find_secret(text) == SecretFinding(kind="a GitHub token", line=4)


def test_earliest_line_wins() -> None:
    text = "password = 'Early1!x'\n\nAKIA" + filler(16, "FAKEQ7Z2")
    assert find_secret(text) == SecretFinding(kind=PASSWORD, line=1)


def test_specific_kind_beats_assignment_on_the_same_line() -> None:
    finding = find_secret("api_key = 'sk-" + filler(48) + "'")
    assert finding is not None
    assert finding.kind == "an OpenAI API key"


def test_secret_hidden_inside_a_large_note_is_found() -> None:
    text = "ordinary line of notes\n" * 5000 + "glpat-" + filler(20) + "\n" + "tail\n" * 100
    assert find_secret(text) == SecretFinding(kind="a GitLab token", line=5001)


def test_finding_is_frozen() -> None:
    finding = SecretFinding(kind="a GitHub token", line=1)
    with pytest.raises(AttributeError):
        finding.line = 2  # type: ignore[misc]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_arbitrary_text_never_raises(text: str) -> None:
    finding = find_secret(text)
    if finding is not None:
        assert 1 <= finding.line <= text.count("\n") + 1


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ghpsk_-=:/@.eyJAKIA密码 \n\"'01aZ", max_size=3000))
def test_token_alphabet_text_never_raises(text: str) -> None:
    find_secret(text)


# Inputs shaped to make a careless pattern backtrack: long runs and repeated prefixes.
ADVERSARIAL = [
    "a" * 100_000,
    "_" * 100_000,
    "eyJ-" * 25_000,
    "eyJ" + "a" * 99_997,
    ("eyJ" + "a" * 20 + ".") * 4_000,
    "password=" * 11_000,
    "_password" * 11_000,
    KEY_HEADER * 9_000,
    "sk-" * 33_000,
    "postgres://" * 9_000,
    "a://a:" * 16_000,
    "twilio " * 14_000,
    "密码:" * 30_000,
    "Authorization: Bearer " * 4_500,
]


_TIMER = """
import json, sys, time
from reme_mcp.safety.secrets import find_secret
times = []
for text in json.load(sys.stdin):
    started = time.perf_counter()
    find_secret(text)
    times.append(time.perf_counter() - started)
print(json.dumps(times))
"""


def test_large_adversarial_text_is_fast() -> None:
    """Run in a child process, so that a backtracking pattern fails the test instead of hanging it."""
    done = subprocess.run(
        [sys.executable, "-c", _TIMER],
        input=json.dumps(ADVERSARIAL),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    times = json.loads(done.stdout)
    slow = {text[:12]: seconds for text, seconds in zip(ADVERSARIAL, times, strict=True) if seconds > 2.0}
    assert slow == {}


def test_hundred_kilobytes_of_notes_is_fast() -> None:
    note = "Met with the team about the search index; ship on 2026-11-28. 会议记录：分词。\n"
    text = note * (100_000 // len(note) + 1)
    started = time.perf_counter()
    assert find_secret(text) is None
    assert time.perf_counter() - started < 2.0
