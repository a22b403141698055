"""Secrets without a telling prefix are refused by their shape (issue 25, defect 4).

Key material is made at run time with openssl and ssh-keygen, so this file holds none.
Proves: a private key's body without its BEGIN line (whole, cut to three lines, with
only its END line), a PEM file base64-wrapped whole (one line and wrapped), a password
given base64-encoded next to a word naming it, and Discord bot tokens of every shape
are found; certificates, public keys, images, hashes and base64 of ordinary text are
not; and through a real stdio server `remember` refuses a key body in one line and
writes nothing, while a certificate body is stored.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from reme_mcp.safety.secrets import find_secret

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
DAY = "2026-11-28"


def openssl(*args: str, data: str | None = None) -> str:
    return subprocess.run(["openssl", *args], input=data, capture_output=True, text=True, check=True).stdout


def body(pem: str) -> str:
    """The PEM's base64 lines, without its BEGIN and END lines (and headers of an old encrypted key)."""
    return "\n".join(line for line in pem.splitlines() if line and not line.startswith("-----") and ":" not in line)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    made = {
        "rsa pkcs8": openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"),
        "ec pkcs8": openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"),
        "ed25519": openssl("genpkey", "-algorithm", "ED25519"),
        "ec sec1": openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout"),
        "encrypted pkcs8": openssl(
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-aes256", "-pass", "pass:zq-test-1"
        ),
    }
    made["rsa pkcs1"] = openssl("pkey", "-traditional", data=made["rsa pkcs8"])
    if shutil.which("ssh-keygen"):
        path = tmp_path_factory.mktemp("ssh") / "id"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
        made["openssh"] = path.read_text(encoding="utf-8")
    return made


KINDS = ["rsa pkcs8", "rsa pkcs1", "ec pkcs8", "ed25519", "ec sec1", "encrypted pkcs8", "openssh"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_key_body_without_its_begin_line_is_found(keys: dict[str, str], kind: str) -> None:
    if kind not in keys:
        pytest.skip("no ssh-keygen")
    pem = keys[kind]
    lines = body(pem).splitlines()
    for content in (
        "\n".join(lines),
        "My deploy key, keep it:\n" + "\n".join(lines[:3]) + "\n",
        "\n".join(pem.splitlines()[1:]),  # the END line kept
        "> " + "\n> ".join(lines),  # quoted in Markdown
    ):
        found = find_secret(content)
        assert found is not None and "key" in found.kind, (kind, content[:120])
        assert not any(line[8:40] in found.kind for line in lines)


@pytest.mark.skipif(shutil.which("gpg") is None, reason="needs gpg")
def test_a_pgp_secret_key_body_is_found_and_its_public_key_is_not(tmp_path: Path) -> None:
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}

    def gpg(*args: str) -> str:
        return subprocess.run(["gpg", "--batch", *args], env=env, capture_output=True, text=True, check=True).stdout

    gpg("--passphrase", "", "--quick-gen-key", "zq <zq@example.invalid>", "ed25519", "default", "never")
    secret = gpg("--pinentry-mode", "loopback", "--passphrase", "", "--armor", "--export-secret-keys")
    public = gpg("--armor", "--export")

    def armored_body(armor: str) -> str:  # the base64 lines, without the BEGIN line and the checksum
        return "\n".join(line for line in body(armor).splitlines() if not line.startswith("="))

    found = find_secret(armored_body(secret))
    assert found is not None and found.kind == "a PGP private key (its body)"
    assert find_secret(armored_body(public)) is None


@pytest.mark.parametrize("kind", KINDS)
def test_a_pem_file_wrapped_in_base64_is_found(keys: dict[str, str], kind: str) -> None:
    if kind not in keys:
        pytest.skip("no ssh-keygen")
    encoded = base64.b64encode(keys[kind].encode()).decode()
    for content in (encoded, "\n".join(textwrap.wrap(encoded, 76)), f"key.b64 = {encoded}"):
        found = find_secret(content)
        assert found is not None and "key" in found.kind, (kind, found)


@pytest.mark.parametrize(
    "line",
    [
        "The admin password, base64: {}",
        "DB_PASSWORD_B64={}",
        'export ADMIN_PASS_BASE64="{}"',
        "wifi passphrase (b64) {}",
        "口令的 base64 是 {}",
        "login for the router: {}",
    ],
)
@pytest.mark.parametrize("password", ["Hunter2!9x", "Tr0ub4dor&3", "zq-Lm7-Qw9-Kp2-Xv5-long-passphrase"])
def test_a_password_given_base64_encoded_is_found(line: str, password: str) -> None:
    found = find_secret(line.format(base64.b64encode(password.encode()).decode()))
    assert found is not None and "password" in found.kind, (line, password)
    assert base64.b64encode(password.encode()).decode() not in found.kind


def discord_token(bot_id: str, tail: str) -> str:
    first = base64.urlsafe_b64encode(bot_id.encode()).decode().rstrip("=")
    return f"{first}.GhQ4kB.{tail}"


@pytest.mark.parametrize(
    "token",
    [
        discord_token("1087267146217466812", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"),  # a tail without digits
        discord_token("1087267146217466812", "qwertyuiopasdfghjklzxcvbnmqwertyuiopas"),  # ... nor capitals
        discord_token("308994132968210433", "Fk9Xq2Lm7Zt4Rb8Wc3Fk9Xq2Lm7Zt"),  # an older, shorter one
        discord_token("80351110224678912", "Fk9Xq2Lm7Zt4Rb8Wc3Fk9Xq2Lm7Zt"),  # seventeen digits
    ],
)
def test_discord_bot_tokens_of_every_shape_are_found(token: str) -> None:
    for content in (token, f"DISCORD_TOKEN={token}", f"the bot logs in with {token}"):
        found = find_secret(content)
        assert found is not None and found.kind == "a Discord bot token", content


def test_public_material_and_ordinary_base64_are_not_refused(tmp_path: Path) -> None:
    cert = openssl(
        "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", str(tmp_path / "k"), "-subj", "/CN=zq", "-days", "1"
    )
    public = openssl("pkey", "-pubout", "-in", str(tmp_path / "k"))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + os.urandom(600)).decode()
    benign = [
        cert,
        body(cert),
        public,
        body(public),
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGr4ZkqJ2k3pQ9yq8nTzS0fW8vB2mXc7dR1hL5uE6oPa zq@host",
        f"![chart](data:image/png;base64,{png})",
        "\n".join(textwrap.wrap(png, 64)),
        "The reset email said (base64): " + base64.b64encode(b"Please reset your password soon").decode(),
        "password hint in base64: " + base64.b64encode(b"the name of our first dog").decode(),
        "Config as base64: " + base64.b64encode(b'{"theme": "dark", "fontSize": 14}').decode(),
        "token counts: GPT4TokenizerBenchmarkResults2024 and AnotherLongIdentifierName",
        "sha512 " + "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca7" * 2,
        "Release notes: ThisReleaseImprovesPerformance, FixedRegressionInParser, Version2Point3",
    ]
    for content in benign:
        assert find_secret(content) is None, content[:120]


def text(result: object) -> str:
    return "".join(c.text for c in getattr(result, "content", []) if isinstance(c, TextContent))


def test_remember_refuses_a_key_body_through_a_real_server(tmp_path: Path, keys: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    (ws / "daily").mkdir(parents=True)
    cert = openssl(
        "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", str(tmp_path / "k"), "-subj", "/CN=zq", "-days", "1"
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "-w", str(ws)], env={**os.environ, "REME_TIMEZONE": "UTC"}
    )
    refusals: list[str] = []

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for content in (
                "Deploy key for zqprod:\n" + body(keys["rsa pkcs8"]),
                "zqwrapped " + base64.b64encode(keys["ec sec1"].encode()).decode(),
                "zqpw the admin password in base64 is " + base64.b64encode(b"Hunter2!9x").decode(),
            ):
                refused = await client.call_tool("remember", {"content": content, "date": DAY})
                assert refused.is_error, content[:60]
                refusals.append(text(refused))
            stored = await client.call_tool("remember", {"content": "Our zqcert certificate:\n" + body(cert)})
            assert not stored.is_error, text(stored)

    anyio.run(session)
    for line in refusals:
        assert "\n" not in line.strip() and "secrets are never stored" in line, line
    kept = [p.read_text(encoding="utf-8") for p in ws.rglob("*.md")]
    assert not [t for t in kept if "zqprod" in t or "zqwrapped" in t or "zqpw" in t]
    assert any("zqcert" in t for t in kept)


def test_a_note_full_of_base64_like_words_is_checked_quickly() -> None:
    """The largest note (64k characters) of tokens the shape check must decode, on lines naming a password."""
    import time

    for text in ("password " + "Abcdefg1X " * 6_400, "password Abcdefg1X\n" * 3_400, "QUJDREVGR0g=" * 5_300):
        began = time.perf_counter()
        assert find_secret(text) is None
        assert time.perf_counter() - began < 1.0
