"""Shared fixtures: real workspaces on disk, laid out as ReMe writes them."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from reme_mcp import process
from reme_mcp.config import Settings, load_settings
from reme_mcp.notes.day_index import DayIndexFile, layout, render
from reme_mcp.notes.day_notes import DayNotes, NoteInfo
from reme_mcp.ops.memory import Memory
from reme_mcp.storage.workspace import Workspace

DAY = "2026-11-28"

# The tiers, by folder or file (tests/<path> relative). `integration`: a test that starts a process
# (a reme-mcp server or command, a real host, git, a package install, a browser), kills one or
# fills a disk. `model`: a test that loads a real embedding model. The fast tier a developer runs
# while working is `pytest -m "not integration and not model"`: the package in process.
INTEGRATION = (
    "hosts/",
    "robust/",
    "team/",
    "faces/test_bad_input_words.py",
    "faces/test_cli.py",
    "faces/test_client_config.py",
    "faces/test_e2e.py",
    "faces/test_early_search.py",
    "faces/test_empty_workspace.py",
    "faces/test_forget_tool.py",
    "faces/test_handshake.py",
    "faces/test_listening.py",
    "faces/test_people_output.py",
    "faces/test_plugin_launcher.py",
    "faces/test_plugin_semantic.py",
    "faces/test_prompts.py",
    "faces/test_semantic_install.py",
    "faces/test_skill.py",
    "faces/test_view_browser.py",
    "faces/test_view_http.py",
    "faces/test_wheel.py",
    "faces/test_without_posix_modules.py",
    "index/semantic/test_model_fetch.py",
    "index/test_build.py",
    "index/test_home.py",
    "index/test_watch.py",
    "ingest/test_ingest_cli.py",
    "notes/test_day_index.py",
    "ops/test_forget_cli.py",
    "ops/test_scrub.py",
    "ops/test_trash_home.py",
    "projects/test_identity.py",
    "projects/test_isolation.py",
    "projects/test_roots.py",
    "projects/test_stale_refs.py",
    "projects/test_sync_scope.py",
    "storage/test_batching.py",
)
MODEL = (
    "index/semantic/test_use_runtime.py",
    "index/semantic/test_e5_runtime.py",
    "index/semantic/test_pair.py",
    "index/semantic/test_stage.py",
    "ops/test_forget_vectors.py",
    "faces/test_plugin_semantic.py",
)
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).resolve().relative_to(_TESTS).as_posix()
        if where.startswith(INTEGRATION) or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.integration)
        if where.startswith(MODEL):
            item.add_marker(pytest.mark.model)


@pytest.fixture(autouse=True, scope="session")
def _private_index_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Indexes live outside the workspace (index/home.py): keep the test run's out of ~/.cache.

    Set in the environment, so the servers and hosts the tests start use it too.
    """
    os.environ["REME_INDEX_DIR"] = str(tmp_path_factory.mktemp("index-home"))
    # A server started without --workspace keeps each project's memory and the personal one
    # under REME_HOME: never the user's own ~/.reme.
    os.environ["REME_HOME"] = str(tmp_path_factory.mktemp("reme-home"))
    # Models fetched by a test (tests/index/semantic/test_model_fetch.py) never land in the user's cache.
    os.environ.setdefault("REME_MODELS_DIR", str(tmp_path_factory.mktemp("models-home")))
    # Search by meaning loads a model in every server a test starts: the suite runs lexical
    # unless REME_SEMANTIC says otherwise; tests/index/semantic/test_stage.py turns it on where it tests it.
    os.environ.setdefault("REME_SEMANTIC", "off")


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def message(mid: str, name: str, role: str, text: str, when: str) -> str:
    return json.dumps(
        {
            "id": mid,
            "name": name,
            "role": role,
            "content": [{"type": "text", "text": text}],
            "metadata": {},
            "created_at": when,
        },
        ensure_ascii=False,
    )


def make_reme_workspace(root: Path) -> Path:
    """A small workspace in exactly the shape ReMe 0.4 writes (workspace-format.md)."""
    write(
        root,
        f"daily/{DAY}/go-backend.md",
        "---\nname: go-backend\ndescription: The user prefers Go for backend services\n"
        "session_id: 9f2c1e\nsource_conversation: '[[session/dialog/9f2c1e.jsonl]]'\n---\n"
        "The user builds backend services in Go and wants examples in Go.\n",
    )
    write(
        root,
        f"daily/{DAY}/release-freeze.md",
        "---\nname: release-freeze\ndescription: Freeze starts Friday\nsession_id: 9f2c1e\n---\n"
        "The release freeze starts on Friday; only hotfixes are merged after that.\n",
    )
    write(
        root,
        f"daily/{DAY}.md",
        "---\nname: '2026-11-28'\ndescription: 2 note(s) today.\n---\nAnything a person wrote here stays.\n\n"
        "<!-- notes:auto -->\n"
        f"- [[daily/{DAY}/go-backend.md]] name: go-backend description: The user prefers Go for backend services\n"
        f"- [[daily/{DAY}/release-freeze.md]] name: release-freeze description: Freeze starts Friday\n"
        "<!-- /notes:auto -->\n",
    )
    write(
        root,
        "digest/personal/languages.md",
        "---\nname: languages\ndescription: Programming languages the user works with\n---\n"
        "# Languages\n\nGo for services, Python for scripts.\n\n## Sources\n\n"
        f"- [[daily/{DAY}/go-backend.md]]\n",
    )
    write(
        root,
        "digest/wiki/deploy.md",
        "---\nname: deploy\ndescription: How deployments work\n---\n# Deploy\n\n"
        "Deployments go through the staging cluster first.\nSee [[digest/personal/languages.md#L5-L6]].\n",
    )
    write(
        root,
        "session/dialog/9f2c1e.jsonl",
        "\n".join(
            [
                message("m1", "user", "user", "I use Python for backend development.", "2026-11-28T10:00:00+08:00"),
                message("m2", "assistant", "assistant", "Noted: Python backends.", "2026-11-28T10:00:05+08:00"),
                '{"id": "broken", "content": [',
                message("m3", "user", "user", "我们周五开始封版，之后只合并热修复。", "2026-11-28T10:01:00+08:00"),
            ]
        )
        + "\n",
    )
    write(root, "resource/notes.txt", "The office wifi is named Bluewhale.\n")
    write(root, "resource/logo.png", "")
    (root / "resource/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    write(root, "mem_session/state.json", '{"secret": "runtime state, never memory"}')
    write(root, "metadata/other-tool/index.txt", "derived by another tool")
    return root


@pytest.fixture
def settings_for() -> Callable[[Path], Settings]:
    def make(root: Path) -> Settings:
        return load_settings(str(root), "Asia/Shanghai")

    return make


@pytest.fixture
def reme_ws(tmp_path: Path) -> Path:
    return make_reme_workspace(tmp_path / "ws")


@pytest.fixture
def memory(reme_ws: Path, settings_for: Callable[[Path], Settings]) -> Memory:
    return Memory(settings_for(reme_ws))


@pytest.fixture
def empty_memory(tmp_path: Path, settings_for: Callable[[Path], Settings]) -> Memory:
    return Memory(settings_for(tmp_path / "fresh"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def render_day_index(day: str, notes: list[NoteInfo], existing: str | None) -> str:
    """The day index for these notes, from the file's current text (None: there is none yet)."""
    return render(day, notes, layout(existing) if existing is not None else None)


def refresh_day_index(ws: Workspace, day: str) -> Path:
    """What `remember` does after writing a note: the day's block rebuilt from the notes on disk."""
    return DayIndexFile(ws).refresh(day, DayNotes(ws).notes(day))


# As the reme-mcp command does for its process: in-process tests replace day indexes under leases too.
process.ignore_lease_breaks()


# Texts of the kinds a workspace holds, for the bundled models' runtime tests: English, Chinese,
# a dialog line, odd white space and full-width letters, mixed scripts with a version.
MODEL_TEXTS = [
    "how much protein per day",
    "The cache problem was fixed on Tuesday by Alice.",
    "这个项目的测试口令是蓝鲸-731。",
    "Caroline: I went to the support group yesterday and it was so powerful.",
    "  spaced   out\ttabs\nnew line ①②③ ＡＢＣ ｶﾀｶﾅ café",
    "混合 mixed text 中文和English一起 v2.3.1",
    "我们决定把周会改到每周三下午。",
]
# Whatever a file or a question may hold: nothing a person can write stops a model.
ODD_TEXTS = ["", " ", "\x00", "\ud800 a lone surrogate", "a" * 100_000, "\u200b\u200b", "😀😀", "\udcff\udcfe"]
