"""The import boundaries between the layers, read from the source with `ast` (every import, lazy ones too).

The rules:

1. Whoosh stays behind the index: only modules under `reme_mcp/index/` import `whoosh`.
2. The index never reaches up: nothing under `reme_mcp/index/` imports the memory operations
   or anything built on the index (`memory`, `daily`, `intake`, `ledger`, `traverse`,
   `exchange`, `ingest`) nor any face. What it may use lies below it: `workspace`,
   `documents`, `errors`, `boundary`, `secrets`, `config`, `models`.
3. The faces only translate. A face is `server`, `http`, `cli`, `client_config`, `stdio_front`,
   and the helpers only faces use: `handshake` (the stdio front's recorded answers), `wire`
   (the stdio front's answers to lines the SDK would leave unanswered), `early_search` (the stdio
   front's answer to a first search), `lazy_memory` (the one Memory the server and the front share),
   `skill_pack` (the skill files `cli` installs) and `__main__`. A face imports from reme_mcp
   only the package itself (`__version__`), `memory`, `models`, `limits` (the operations' limits,
   pydantic-free so the CLI starts fast), `config`, `errors`, other faces, and `ingest.cli` (the
   ingest command group, a face of the ingest pipeline).
4. Tests and the package never import `bench/`: a benchmark is run by hand, and a test's
   oracle lives in the tests.
5. No function in `memory.py` is above cyclomatic complexity 10 (radon's grade B): an operation
   reads as a few calls into the modules that own its concepts.
6. What `python -m reme_mcp` imports before the stdio front answers the handshake (the package,
   `cli`, `stdio_front`, `handshake`, `early_search`, `lazy_memory`) loads none of pydantic, the SDK, Whoosh or anyio: hosts
   give a server about a second, and those imports alone take most of it.
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

FACES = frozenset(
    {
        "server",
        "http",
        "cli",
        "client_config",
        "stdio_front",
        "handshake",
        "early_search",
        "lazy_memory",
        "wire",
        "skill_pack",
        "__main__",
    }
)
FACE_MAY_IMPORT = frozenset({"", "memory", "models", "limits", "config", "errors", "ingest.cli"}) | FACES
ABOVE_THE_INDEX = (
    frozenset({"memory", "daily", "day_index", "intake", "ledger", "traverse", "exchange", "ingest"}) | FACES
)


def module_name(path: Path) -> str:
    """`reme_mcp/index/schema.py` -> `index.schema`; `reme_mcp/ingest/__init__.py` -> `ingest`."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_submodule(name: str) -> bool:
    return (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name / "__init__.py").is_file()


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
            found.add(module)
            if module == "reme_mcp":  # `from reme_mcp import memory` imports the module reme_mcp.ops.memory
                found.update(f"{module}.{a.name}" for a in node.names if is_submodule(a.name))
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
    assert {"memory", "server", "cli", "index", "index.schema", "traverse", "index.snippets"} <= names
    assert "whoosh" in {top(m) for m in imports(PACKAGE / "index" / "whoosh_private.py")}  # the parser finds imports


@pytest.mark.parametrize("path", sources(), ids=module_name)
def test_only_the_index_imports_whoosh(path: Path) -> None:
    if module_name(path).split(".")[0] == "index":
        return
    assert not {m for m in imports(path) if top(m) == "whoosh"}


@pytest.mark.parametrize("path", sorted((PACKAGE / "index").rglob("*.py")), ids=module_name)
def test_the_index_never_imports_what_is_built_on_it(path: Path) -> None:
    crossing = {m for m in ours(imports(path)) if top(m) in ABOVE_THE_INDEX}
    assert not crossing, f"{module_name(path)} imports {sorted(crossing)}"


@pytest.mark.parametrize("path", [PACKAGE / f"{face}.py" for face in sorted(FACES)], ids=sorted(FACES))
def test_faces_import_only_memory_models_config_errors(path: Path) -> None:
    outside = {m for m in ours(imports(path)) if m not in FACE_MAY_IMPORT}
    assert not outside, f"{module_name(path)} reaches past the faces' seam: {sorted(outside)}"


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
    """The rules can fail: lazy, relative and `from reme_mcp import x` crossings are all seen."""
    face = tmp_path / "server.py"
    face.write_text(
        "def f():\n    from reme_mcp.index import MemoryIndex\nfrom . import workspace\nfrom reme_mcp import ledger\n",
        encoding="utf-8",
    )
    assert {m for m in ours(imports(face, "server")) if m not in FACE_MAY_IMPORT} == {"index", "workspace", "ledger"}
    inner = tmp_path / "schema.py"
    inner.write_text("from ..daily import BLOCK_END\nimport whoosh.fields\n", encoding="utf-8")
    assert "reme_mcp.notes.daily" in imports(inner, "index.schema") and "whoosh.fields" in imports(
        inner, "index.schema"
    )
    loader = tmp_path / "test_x.py"
    loader.write_text('import importlib.util\nspec = importlib.util.spec_from_file_location("p", "bench/perf.py")\n')
    assert names_bench(loader)


MAX_COMPLEXITY = 10


def test_memory_operations_stay_simple() -> None:
    blocks = cc_visit((PACKAGE / "memory.py").read_text(encoding="utf-8"))
    functions = [b for b in blocks if type(b).__name__ == "Function"] + [
        m for b in blocks if type(b).__name__ == "Class" for m in b.methods
    ]
    assert len(functions) > 10  # radon saw the methods
    assert {f.name: f.complexity for f in functions if f.complexity > MAX_COMPLEXITY} == {}


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
    assert out.stdout.split("\n")[:2] == ["[]", "True"]

    import reme_mcp
    from reme_mcp import config, errors
    from reme_mcp.ops import memory, models

    homes = {"Memory": memory, "Settings": config, "load_settings": config, "ReMeError": errors}
    for name in reme_mcp.__all__:
        if name != "__version__":
            assert getattr(reme_mcp, name) is getattr(homes.get(name, models), name), name
    assert {"Memory", "Settings", "load_settings", "ReMeError", "SearchResult", "DoctorReport"} <= set(reme_mcp.__all__)
    with pytest.raises(AttributeError):
        reme_mcp.nothing_by_this_name  # noqa: B018
