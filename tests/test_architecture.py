"""The layers of the package and the import rules between them, read from the source with `ast`
(every import, lazy ones and TYPE_CHECKING blocks too).

The layers are folders, top to bottom; a module imports its own folder and the layers below it,
never one beside or above it:

    faces (faces/, faces/stdio/)         the command line, the MCP server, HTTP, snippets, the skill pack
    ops                                  the memory operations, their models and limits
    projects                             which project a session serves, and the workspaces it reads and writes
    team                                 the workspace synced through a git remote
    notes | index | ingest               daily notes and ledger | the derived index | session logs
    storage | safety                     workspace files, locks, swaps, documents | boundary, secrets
    config | process                     the one configuration object | what a command sets for its process
    errors                               the one error type

Besides:

1. Whoosh stays behind the index: only modules under `reme_mcp/index/` import `whoosh`.
2. The faces only translate: from below them they take the operations (`ops`), the configuration,
   the error type and the package's version; besides, the model fetch (a person's download) and the
   OS's file lock (`storage.os_lock`, which the plugin's standard-library-only build lock needs).
3. No import circle anywhere, lazy imports included.
4. Tests and the package never import `bench/`: a benchmark is run by hand, and a test's
   oracle lives in the tests.
5. No function in `ops/memory.py` is above cyclomatic complexity 10 (radon's grade B), and the file
   stays within 450 lines: an operation reads as a few calls into the modules that own its concepts.
6. What `python -m reme_mcp` imports before the stdio front answers the handshake loads none of
   pydantic, the SDK, Whoosh or anyio: hosts give a server about a second, and those imports alone
   take most of it.
7. Search by meaning is one room, `index/semantic/`: outside it, only the index's door
   (`index.memory_index`), the purge of derived state and the operations reach into it; its models
   (`index/semantic/models/`) know nothing of the index or a workspace above them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reme_mcp"

# Each layer's folder (or root module) and its height; a module imports only lower layers and its own.
LAYERS = {
    "faces": 9,
    "ops": 8,
    "projects": 7,  # which project a session serves and its workspaces; identifies repositories with git
    "team": 6,  # sync through git: commits and merges notes, called by the operations
    "notes": 5,
    "index": 5,
    "ingest": 5,
    "storage": 3,
    "safety": 3,
    "config": 2,
    "process": 2,  # the signal dispositions and library thread counts a command sets for its process
    "errors": 1,
    "": 0,  # the package itself: the lazily loaded public names
    "_version": 0,  # the version, a leaf every layer may read
}
# A person's `reme-mcp model fetch` downloads files into the models folder: no memory operation, so
# the command reaches the fetch beside the models it fetches. The plugin's build lock is standard
# library only, so it takes the OS's file lock directly.
FACE_MAY_IMPORT_BELOW = (
    "ops",
    "config",
    "errors",
    "process",
    "_version",
    "index.semantic.models.fetch",
    "storage.os_lock",
    "",
)


def layer(name: str) -> str:
    return "" if name in ("", "__main__") else top(name)


def module_name(path: Path) -> str:
    """`reme_mcp/index/schema.py` -> `index.schema`; `reme_mcp/ingest/__init__.py` -> `ingest`."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_submodule(name: str) -> bool:
    path = PACKAGE / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(path: Path, module_of: str | None = None) -> set[str]:
    """Every module `path` imports, absolute, lazy imports and TYPE_CHECKING blocks included.

    Relative imports are resolved as if `path` were the module `module_of` (by default, its own name).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = (module_of if module_of is not None else module_name(path)).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = ".".join(["reme_mcp", *package[: len(package) - node.level + 1]])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if module.split(".")[0] != "reme_mcp":
                found.add(module)
                continue
            # `from reme_mcp.x import y` imports the module reme_mcp.x.y when y is one, else names of reme_mcp.x
            inner = module.removeprefix("reme_mcp").removeprefix(".")
            named = [a.name for a in node.names]
            subs = [n for n in named if is_submodule(f"{inner}.{n}".lstrip("."))]
            found.update(f"{module}.{n}" for n in subs)
            if len(subs) < len(named):
                found.add(module)
    return found


def ours(modules: set[str]) -> set[str]:
    """The reme_mcp modules among `modules`, without the package prefix ("" is the package itself)."""
    return {m.removeprefix("reme_mcp").removeprefix(".") for m in modules if m.split(".")[0] == "reme_mcp"}


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def top(name: str) -> str:
    return name.split(".")[0]


def test_the_rules_see_every_module() -> None:
    names = {module_name(p) for p in sources()}
    assert {
        "ops.memory",
        "faces.server",
        "faces.cli",
        "index",
        "index.schema",
        "ops.traverse",
        "index.semantic.stage",
    } <= names
    assert {layer(n) for n in names} <= set(LAYERS)
    assert "whoosh" in {top(m) for m in imports(PACKAGE / "index" / "whoosh_private.py")}  # the parser finds imports


@pytest.mark.parametrize("path", sources(), ids=module_name)
def test_only_the_index_imports_whoosh(path: Path) -> None:
    if layer(module_name(path)) == "index":
        return
    assert not {m for m in imports(path) if top(m) == "whoosh"}


@pytest.mark.parametrize("path", sources(), ids=module_name)
def test_imports_run_down_the_layers(path: Path) -> None:
    name = module_name(path)
    if name in ("", "__main__"):
        return
    own = layer(name)
    crossing = {m for m in ours(imports(path)) if layer(m) != own and LAYERS[layer(m)] >= LAYERS[own]}
    assert not crossing, f"{name} ({own}) imports from its own height or above: {sorted(crossing)}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "faces").rglob("*.py")), ids=module_name)
def test_faces_only_translate(path: Path) -> None:
    below = {m for m in ours(imports(path)) if layer(m) != "faces"}
    outside = {m for m in below if not any(m == a or m.startswith(f"{a}.") for a in FACE_MAY_IMPORT_BELOW if a)}
    assert outside <= {""}, f"{module_name(path)} reaches past the operations: {sorted(outside - {''})}"


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (the package root left out: every module's parent)."""
    names = {module_name(p) for p in sources()}
    return {module_name(p): {m for m in ours(imports(p)) if m in names and m} for p in sources()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: its strongly connected parts of two or more modules, or self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top_ = stack.pop()
                on_stack.discard(top_)
                part.append(top_)
                if top_ == node:
                    break
            if len(part) > 1 or node in graph.get(node, ()):
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_circles() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def names_bench(path: Path) -> bool:
    """Whether a file imports bench/ or names it as a path (to load a module from it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    named = any(s == "bench" or s.startswith("bench/") or "/bench/" in s for s in strings)
    return named or any(top(m) == "bench" for m in imports(path, module_of=""))


_CHECKED = [p for p in sorted((ROOT / "tests").rglob("*.py")) if p != Path(__file__).resolve()] + sources()


@pytest.mark.parametrize("path", _CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_imports_bench(path: Path) -> None:
    assert not names_bench(path)


def test_the_checker_sees_crossings(tmp_path: Path) -> None:
    """The rules can fail: lazy, relative and `from reme_mcp.x import y` crossings are all seen."""
    face = tmp_path / "server.py"
    face.write_text(
        "def f():\n    from reme_mcp.index import MemoryIndex\nfrom ..storage import workspace\n"
        "from reme_mcp.notes import ledger\n",
        encoding="utf-8",
    )
    assert ours(imports(face, "faces.server")) >= {"index", "storage.workspace", "notes.ledger"}
    inner = tmp_path / "schema.py"
    inner.write_text("from ..notes.daily import BLOCK_END\nimport whoosh.fields\n", encoding="utf-8")
    assert "reme_mcp.notes.daily" in imports(inner, "index.schema") and "whoosh.fields" in imports(
        inner, "index.schema"
    )
    loader = tmp_path / "test_x.py"
    loader.write_text('import importlib.util\nspec = importlib.util.spec_from_file_location("p", "bench/perf.py")\n')
    assert names_bench(loader)


MAX_COMPLEXITY = 10
MAX_MEMORY_LINES = 450  # ops/memory.py: past this, a concept of its own belongs in the module that owns it


def test_memory_operations_stay_simple() -> None:
    blocks = cc_visit((PACKAGE / "ops" / "memory.py").read_text(encoding="utf-8"))
    functions = [b for b in blocks if type(b).__name__ == "Function"] + [
        m for b in blocks if type(b).__name__ == "Class" for m in b.methods
    ]
    assert len(functions) > 10  # radon saw the methods
    assert {f.name: f.complexity for f in functions if f.complexity > MAX_COMPLEXITY} == {}


def test_the_memory_operations_stay_short() -> None:
    lines = (PACKAGE / "ops" / "memory.py").read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MEMORY_LINES, f"ops/memory.py has {lines} lines; at most {MAX_MEMORY_LINES}"


def test_the_stdio_start_path_loads_nothing_heavy() -> None:
    probe = (
        "import sys, reme_mcp, reme_mcp.faces.cli, reme_mcp.faces.stdio.front, reme_mcp.faces.stdio.handshake, reme_mcp.faces.stdio.early_search\n"
        "print(sorted(m for m in ('pydantic', 'mcp', 'whoosh', 'anyio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_the_public_surface_is_complete_and_loaded_only_when_used() -> None:
    probe = (
        "import sys, reme_mcp\n"
        "print(sorted(m for m in sys.modules if m.startswith('reme_mcp.')))\n"
        "from reme_mcp import Memory, SearchResult\n"
        "print('reme_mcp.ops.memory' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("\n")[:2] == ["['reme_mcp._version']", "True"]

    import reme_mcp
    from reme_mcp import config, errors
    from reme_mcp.ops import memory, reports, results

    homes = {"Memory": memory, "Settings": config, "load_settings": config, "ReMeError": errors}
    homes |= dict.fromkeys(("DoctorReport", "IndexReport", "ReindexResult"), reports)
    for name in reme_mcp.__all__:
        if name != "__version__":
            assert getattr(reme_mcp, name) is getattr(homes.get(name, results), name), name
    assert {"Memory", "Settings", "load_settings", "ReMeError", "SearchResult", "DoctorReport"} <= set(reme_mcp.__all__)
    with pytest.raises(AttributeError):
        reme_mcp.nothing_by_this_name  # noqa: B018


SEMANTIC = "index.semantic"
SEMANTIC_MODELS = "index.semantic.models"
MAY_REACH_SEMANTIC = ("index.memory_index", "index.purge")


def _within(name: str, room: str) -> bool:
    return name == room or name.startswith(f"{room}.")


@pytest.mark.parametrize("path", sources(), ids=module_name)
def test_search_by_meaning_is_one_room(path: Path) -> None:
    name = module_name(path)
    reached = {m for m in ours(imports(path)) if _within(m, SEMANTIC)}
    if _within(name, SEMANTIC_MODELS):
        above = {m for m in ours(imports(path)) if _within(m, "index") and not _within(m, SEMANTIC_MODELS)}
        assert not above, f"{name}: the models know nothing of the index: {sorted(above)}"
    elif not _within(name, SEMANTIC) and layer(name) == "index":
        assert not reached or name in MAY_REACH_SEMANTIC, f"{name} reaches into index/semantic/: {sorted(reached)}"
