"""The reme-memory skill is valid under the Agent Skills specification and teaches what it must."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

SKILL_DIR = Path(__file__).resolve().parents[2] / "skills" / "reme-memory"
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


def test_examples_hold_no_value_a_memory_check_relies_on() -> None:
    body = SKILL_MD.read_text(encoding="utf-8")
    assert "蓝鲸" not in body and "731" not in body


def test_each_host_form_of_the_tool_names_is_listed() -> None:
    body = SKILL_MD.read_text(encoding="utf-8")
    for form in ("mcp__plugin_reme-mcp_reme__search", "mcp__reme__search", "`mcp__reme`", "reme_search"):
        assert form in body, form
    assert "reme__search" in body and "tool_search" in body and "mcp_reme_search" in body


@pytest.mark.parametrize(
    ("host", "where"),
    [
        ("claude-code", ".claude/skills"),
        ("codex", ".agents/skills"),
        ("openclaw", ".openclaw/skills"),
        ("hermes", ".hermes/skills"),
        ("pi", ".pi/agent/skills"),
        ("dsh", ".agents/skills"),
        ("deerflow", "skills/custom"),  # under the project (the working directory here)
    ],
)
def test_skill_install_puts_the_skill_where_the_host_reads_it(host: str, where: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "reme_mcp", "skill", "install", host]
    for _ in range(2):  # a second install replaces the first
        subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60)
    assert (tmp_path / where / "reme-memory" / "SKILL.md").read_bytes() == SKILL_MD.read_bytes()


def test_skill_install_into_a_project_folder_and_refusals(tmp_path: Path) -> None:
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "reme_mcp", "skill", "install", *args]
        return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60)

    assert run("opencode").returncode == 0
    assert (tmp_path / ".opencode" / "skills" / "reme-memory" / "SKILL.md").is_file()
    (tmp_path / "mine" / "reme-memory").mkdir(parents=True)
    refused = run("--dir", str(tmp_path / "mine"))
    assert refused.returncode != 0 and "not a skill folder" in refused.stderr
    unknown = run("emacs")
    assert unknown.returncode != 0 and "accepted:" in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1


def test_skill_teaches_confirming_a_replacement_with_supersedes() -> None:
    body = SKILL_MD.read_text(encoding="utf-8")
    confirm = body.split("`may_replace`", 1)[1].split("\n- ", 1)[0]
    assert "same" in confirm and "`request_id`" in confirm and "`supersedes`" in confirm
    assert "stored twice" in confirm
