"""The sdist and wheel built from this checkout as a release builds them (`python -m build`: the
wheel from the sdist), checked by `twine check`, and the wheel installed into a fresh environment,
where it serves MCP over stdio and remembers across processes.

This is what `uv tool install` / `pipx install` do for a user: build (or download) the wheel,
install it with its declared dependencies into an empty virtual environment, run the `reme-mcp`
script. It catches what the editable install hides: a file left out of the sdist or the wheel,
a dependency missing from pyproject.toml, a broken console-script entry point, metadata PyPI
would refuse.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"search", "read", "traverse", "daily_list", "remember"}


def _pip(python: Path, *args: str, cwd: Path | None = None) -> None:
    done = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"pip {args[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def _run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{' '.join(argv[:3])} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the sdist and the wheel `python -m build` makes of this checkout."""
    wheels = tmp_path_factory.mktemp("wheel") / "dist"
    _run(sys.executable, "-m", "build", "--outdir", str(wheels), str(ROOT))
    return wheels


def test_sdist_and_wheel_pass_twine_check(dist: Path) -> None:
    (sdist,) = dist.glob("reme_mcp-*.tar.gz")
    (wheel,) = dist.glob("reme_mcp-*.whl")
    printed = _run(sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel))
    assert printed.count("PASSED") == 2, printed


@pytest.fixture(scope="module")
def installed(dist: Path) -> Path:
    """The bin directory of a fresh virtual environment with only the wheel and its dependencies."""
    base = dist.parent
    wheels = dist
    (wheel,) = wheels.glob("reme_mcp-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "reme_mcp/faces/server.py" in names and "reme_mcp/faces/client_config.py" in names
    # The SDK's recorded handshake answers and the skill travel inside the package.
    assert "reme_mcp/faces/stdio/handshake.json" in names and "reme_mcp/skills/reme-memory/SKILL.md" in names
    assert not [name for name in names if name.startswith("tests/")]

    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if sys.platform == "win32" else "bin")
    python = bin_dir / ("python.exe" if sys.platform == "win32" else "python")
    # Dependencies come from the index through pip's cache; the package itself only from the wheel.
    _pip(python, "install", "--quiet", "--find-links", str(wheels), "reme-mcp", cwd=base)
    return bin_dir


def test_installed_package_is_the_wheel_not_the_checkout(installed: Path) -> None:
    python = installed / ("python.exe" if sys.platform == "win32" else "python")
    where = subprocess.run(
        [str(python), "-c", "import reme_mcp; print(reme_mcp.__file__)"],
        cwd=installed,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).resolve().is_relative_to(installed.parent.resolve())


def test_wheel_script_completes_an_mcp_handshake_over_stdio(installed: Path, tmp_path: Path) -> None:
    script = installed / ("reme-mcp.exe" if sys.platform == "win32" else "reme-mcp")
    assert script.is_file()
    params = StdioServerParameters(command=str(script), args=["--workspace", str(tmp_path / "memory")])

    async def handshake() -> tuple[str, set[str]]:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                initialized = await session.initialize()
                listed = await session.list_tools()
                return initialized.server_info.name, {tool.name for tool in listed.tools}

    name, tools = anyio.run(handshake)
    assert name == "reme-mcp"
    assert tools == TOOLS


def test_wheel_remembers_in_one_process_and_finds_it_in_the_next(installed: Path, tmp_path: Path) -> None:
    """The acceptance: a handshake, `remember` over MCP, then `search` in a new process finds it."""
    script = _script(installed)
    workspace = tmp_path / "memory"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "REME_TIMEZONE": "Asia/Shanghai"}
    params = StdioServerParameters(command=str(script), args=["--workspace", str(workspace)], env=env)

    async def remember() -> str:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                stored = await session.call_tool("remember", {"content": "这个项目的测试口令是蓝鲸-731"})
                assert not stored.is_error, stored.content
                return str((stored.structured_content or {})["path"])

    path = anyio.run(remember)
    assert (workspace / path).is_file()
    found = subprocess.run(
        [str(script), "search", "测试口令", "--workspace", str(workspace)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert "蓝鲸-731" in found.stdout


def _script(installed: Path) -> Path:
    return installed / ("reme-mcp.exe" if sys.platform == "win32" else "reme-mcp")


def test_wheel_answers_the_handshake_early(installed: Path) -> None:
    python = installed / ("python.exe" if sys.platform == "win32" else "python")
    code = "from reme_mcp.faces.stdio import handshake; print(handshake.load() is not None)"
    done = subprocess.run([str(python), "-c", code], cwd=installed, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_wheel_config_names_its_own_script_and_installs_the_skill(installed: Path, tmp_path: Path) -> None:
    script = _script(installed)
    printed = subprocess.run(
        [str(script), "config", "codex", "--workspace", str(tmp_path / "memory")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f'command = "{script}"' in printed
    home = tmp_path / "home"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(script), "skill", "install", "pi"], env=env, capture_output=True, text=True, check=True)
    installed_skill = home / ".pi" / "agent" / "skills" / "reme-memory" / "SKILL.md"
    assert str(installed_skill.parent) in done.stdout
    assert installed_skill.read_bytes() == (ROOT / "skills" / "reme-memory" / "SKILL.md").read_bytes()
