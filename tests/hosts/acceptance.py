"""What every host test asserts once its two sessions ran against the scripted model."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.hosts.script import PASSPHRASE, RECALL_PROMPT, REME_TOOLS, REMEMBER_PROMPT, Script, reme_tools


def run_host(
    program: Path, args: tuple[str, ...], env: dict[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    """A host's command as a person runs it headless: no terminal input, its output kept."""
    return subprocess.run(
        [str(program), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def reme_command(client: str, workspace: Path | None) -> str:
    """The snippet `reme-mcp config CLIENT` prints, from the installation under test; without a
    workspace, the per-project one (memory under ~/.reme, one workspace per project)."""
    argv = [sys.executable, "-m", "reme_mcp", "config", client]
    argv += ["--workspace", str(workspace)] if workspace is not None else []
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return done.stdout


def install_skill(host: str, home: Path, cwd: Path | None = None) -> Path:
    """`reme-mcp skill install HOST` as the docs say, for a user whose home is `home` (and whose
    project is `cwd`, for hosts that read skills from the project); returns the skill's folder."""
    argv = [sys.executable, "-m", "reme_mcp", "skill", "install", host]
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    folder = Path(done.stdout.strip().rsplit(" in ", 1)[-1])
    assert (folder / "SKILL.md").is_file(), done.stdout + done.stderr
    return folder


ROOT = Path(__file__).resolve().parents[2]
PLUGIN_FILES = (
    "plugin.json",
    "mcp.json",
    "bin",
    ".claude-plugin",
    ".agents",
    "skills",
    "pyproject.toml",
    "README.md",
    "reme_mcp",
)
"""What a plugin install copies: the manifests, the skill, and the code uv builds the server from."""


def copy_plugin(target: Path) -> Path:
    """This checkout as a plugin marketplace ships it, without a developer's virtualenvs or caches."""
    target.mkdir(parents=True)
    for name in PLUGIN_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


@contextlib.contextmanager
def one_core_busy() -> Iterator[None]:
    """Another process keeps one core spinning meanwhile, as a build or a neighbour would."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def no_environment_built(data: Path) -> bool:
    """Whether the plugin's data folder holds no built environment: its next start is its first."""
    return not list(data.glob("venvs/*/.reme-plugin-ready"))


def assert_remembered_then_found(script: Script, host_tools: tuple[str, ...] = ()) -> list[int]:
    """Session 1 offered the five reme tools in its first request and called `remember`;
    session 2 offered them in its first request, called `search`, and the result the model
    received holds the passphrase.

    `host_tools` are tools the host itself adds beside any MCP server (Codex's
    `list_mcp_resources`, ...), which the check for wrapper tools leaves alone.

    Returns how many reme tools each session's first request offered (also printed, for the record)."""
    counts: list[int] = []
    for prompt, tool in ((REMEMBER_PROMPT, "remember"), (RECALL_PROMPT, "search")):
        requests = script.session_requests(prompt)
        assert requests, f"the host never sent the model the user's words {prompt!r}"
        first = reme_tools(requests[0].offered)
        counts.append(len(first))
        print(f"first model request of the {tool} session offered {len(first)} reme tools: {sorted(first.values())}")
        assert sorted(first) == sorted(REME_TOOLS), f"first request offered {requests[0].offered}"
        # No extra wrappers (prompts_list, resources_read, ...) under the server's prefix either.
        prefix = first["search"].removesuffix("search")
        extra = [name for name in requests[0].offered if name.startswith(prefix) and name not in first.values()]
        assert not extra, f"tools beyond the five under {prefix!r}: {extra}"
        # Nor the generic wrappers a host adds when a server claims prompts or resources.
        wrappers = [
            name
            for name in requests[0].offered
            if ("resource" in name.lower() or "prompt" in name.lower()) and name not in host_tools
        ]
        assert not wrappers, f"wrapper tools for capabilities reme has nothing behind: {wrappers}"
        assert len(requests) >= 2, f"the host never sent the {tool} result back to the model"
        results = "\n".join(requests[-1].tool_results)
        if tool == "search":
            assert PASSPHRASE in results, f"search result lacks the passphrase: {results[:500]}"
        else:
            assert "Stored" in results or "daily/" in results, f"remember did not store: {results[:500]}"
    return counts
