"""The reme-memory skill, installed where each host reads skills.

The skill ships inside the wheel (reme_mcp/skills/, put there by the build) and lives
in skills/ of a checkout; installing copies its folder into the host's skills folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SKILL_NAME = "reme-memory"

# Where each host looks for skills ("~" is the user's home; a relative path is the project).
SKILL_DIRS: dict[str, str] = {
    "claude-code": "~/.claude/skills",
    "codex": "~/.agents/skills",
    "agents": "~/.agents/skills",
    "opencode": ".opencode/skills",
    "openclaw": "~/.openclaw/skills",
    "hermes": "~/.hermes/skills",
    "pi": "~/.pi/agent/skills",
    # DeepSeek Harness reads ~/.agents/skills beside $DSH_HOME/skills; the first needs no DSH_HOME.
    "dsh": "~/.agents/skills",
    # DeerFlow reads <project>/skills/{public,custom}; a person's own skills go in custom.
    "deerflow": "skills/custom",
}


class SkillError(ValueError):
    """The skill cannot be found or installed; the message says what to do."""


def shipped_skill() -> Path:
    """The skill folder of this installation: inside the package (a wheel) or the checkout."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "skills" / SKILL_NAME, package.parent / "skills" / SKILL_NAME):
        if (candidate / "SKILL.md").is_file():
            return candidate
    raise SkillError(f"the {SKILL_NAME} skill is missing from this installation ({package}); reinstall reme-mcp")


def skills_dir(host: str) -> Path:
    key = host.strip().lower()
    if key not in SKILL_DIRS:
        raise SkillError(f"unknown host {host!r}; accepted: {', '.join(SKILL_DIRS)} (or give --dir)")
    return Path(SKILL_DIRS[key]).expanduser().absolute()


def install(target_dir: Path) -> Path:
    """Copy the skill into ``target_dir/reme-memory`` (an older copy is replaced); returns that folder."""
    source = shipped_skill()
    target = target_dir.expanduser().absolute() / SKILL_NAME
    if target.exists() and not (target / "SKILL.md").is_file():
        raise SkillError(f"{target} exists and is not a skill folder; move it away or choose another --dir")
    staging = target.with_name(f".{SKILL_NAME}.installing")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging, ignore=shutil.ignore_patterns("__pycache__"))
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target
