"""The reme-memory skill is valid under the Agent Skills specification and teaches what it must."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

SKILL_DIR = Path(__file__).resolve().parents[1] / "skills" / "reme-memory"
SKILL_MD = SKILL_DIR / "SKILL.md"
ALLOWED_KEYS = {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}


def _front_matter() -> dict[str, object]:
    text = SKILL_MD.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "SKILL.md must start with YAML front matter"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict)
    return data


def test_skills_ref_validator_accepts_the_skill() -> None:
    skills_ref = pytest.importorskip("skills_ref", reason="skills-ref is in the test extras")
    assert skills_ref.validate(SKILL_DIR) == []


def test_skills_ref_validator_can_fail(tmp_path: Path) -> None:
    """Guards the test above against a validator that accepts anything."""
    skills_ref = pytest.importorskip("skills_ref", reason="skills-ref is in the test extras")
    wrong = tmp_path / "not-the-name"
    wrong.mkdir()
    (wrong / "SKILL.md").write_text(SKILL_MD.read_text(encoding="utf-8"), encoding="utf-8")
    assert skills_ref.validate(wrong)


def test_front_matter_keys_name_and_description() -> None:
    meta = _front_matter()
    assert set(meta) <= ALLOWED_KEYS
    assert meta["name"] == SKILL_DIR.name == "reme-memory"
    description = meta["description"]
    assert isinstance(description, str)
    assert 0 < len(description) <= 1024
    # What it does and when to use it.
    assert "memory" in description.lower() and "use it" in description.lower()


def test_skill_is_well_under_500_lines() -> None:
    lines = SKILL_MD.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250


def test_skill_teaches_the_contract() -> None:
    body = SKILL_MD.read_text(encoding="utf-8")
    for tool in ("search", "read", "traverse", "daily_list", "remember"):
        assert f"`{tool}`" in body, tool
    assert "<reme-context" in body
    assert "untrusted" in body.lower()
    assert "request_id" in body
    assert "cite" in body.lower()
    assert "never store" in body.lower()
    examples = re.findall(r"^### \d\. ", body, re.MULTILINE)
    assert 2 <= len(examples) <= 3
    assert re.search(r"[\u4e00-\u9fff]{4,}", body.split("## Worked examples", 1)[1]), "a Chinese example"
