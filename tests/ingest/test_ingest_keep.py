"""What of a message is kept: recalled memory and blobs go, secrets are redacted in place, the rest stays."""

from __future__ import annotations

import pytest

from reme_mcp.ingest.keep import kept_text as _kept_text
from reme_mcp.ingest.keep import redact_turns
from reme_mcp.ingest.model import Turn


def kept_text(text: str) -> str:
    # What the importer writes: the kept text, then the batch's secrets redacted.
    return redact_turns([Turn("id", "user", _kept_text(text), "")])[0].text


SECRETS = [
    ("key sk-ant-api03-" + "Ab1" * 30 + " ok", "an Anthropic API key"),
    ("export OPENAI_API_KEY=sk-proj-abcdefABCDEF1234567890abcdefABCDEF12", "an OpenAI API key"),
    ('db password = "Hunter2!x9zz" for staging', "a password assignment"),
    ("token ghp_" + "A1b2" * 9 + " and more", "a GitHub token"),
]


@pytest.mark.parametrize(("text", "kind"), SECRETS)
def test_secrets_are_redacted_in_place_with_their_kind(text: str, kind: str) -> None:
    kept = kept_text(text)
    assert f"[redacted: {kind}]" in kept
    value = text.split()[1] if "=" not in text else text.split("=", 1)[1]
    assert value.strip('"') not in kept
    assert kept.split()[0] == text.split()[0]  # the words around it stay


def test_key_names_stay_and_values_go() -> None:
    assert kept_text("export OPENAI_API_KEY=sk-proj-abcdefABCDEF1234567890abcdefABCDEF12") == (
        "export OPENAI_API_KEY=[redacted: an OpenAI API key]"
    )


def test_a_key_block_over_several_lines_leaves_nothing_of_itself() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "q" * 60 + "\n-----END RSA PRIVATE KEY-----"
    assert "MIIE" not in kept_text(block) and "redacted" in kept_text(block)


def test_plain_text_and_the_passphrase_are_kept_byte_for_byte() -> None:
    for text in ("请记住，这个项目的测试口令是蓝鲸-731。", "Reset your password at the portal.", "a  b\n\nc"):
        assert kept_text(text) == text


def test_recalled_memory_blocks_go_even_unclosed_or_disguised() -> None:
    recalled = '<reme-context source="search">\nold note\n</reme-context>'
    assert kept_text(f"before {recalled} after") == "before  after"
    assert kept_text("ask <reme-context source='x'>never closed") == "ask"
    disguised = kept_text("hi \uff1creme-context\uff1e trick")
    assert "\uff1creme-context" not in disguised and "trick" in disguised
    assert kept_text(recalled) == ""


def test_only_the_turns_with_a_secret_change() -> None:
    clean = Turn("a", "user", "nothing to hide", "")
    leaky = Turn("b", "user", "token ghp_" + "A1b2" * 9, "")
    out = redact_turns([clean, leaky])
    assert out[0] is clean and out[1].text == "token [redacted: a GitHub token]"


def test_binary_blobs_are_dropped() -> None:
    assert kept_text("see data:image/png;base64," + "QUJD" * 50) == "see [binary data dropped]"
    assert kept_text("A" * 1000) == ""
