"""What a note names as a repository path, and what only looks like one: a false "gone" is worse
than none, so prose, URLs, versions and paths that leave the tree are never taken for one."""

from __future__ import annotations

import pytest

from reme_mcp.projects.path_refs import path_refs


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("The retry logic lives in `src/payments/retry.py`.", ["src/payments/retry.py"]),
        ("Crash at src/app/main.go:42, see also `lib/db.py:10-20`.", ["lib/db.py", "src/app/main.go"]),
        ("Read docs/deploy.md#L3-L9 and ./tools/build.sh first.", ["docs/deploy.md", "tools/build.sh"]),
        ("Generated files go to `build/out` and dist/assets/.", ["build/out", "dist/assets/"]),
        ("Run `Makefile.am` checks, and `README.md`.", ["Makefile.am", "README.md"]),
        ("配置在 `src/配置/设置.py` 里。", ["src/配置/设置.py"]),
    ],
)
def test_paths_are_found_with_their_places_taken_off(text: str, paths: list[str]) -> None:
    assert sorted(path_refs(text)) == sorted(paths)


@pytest.mark.parametrize(
    "text",
    [
        "See https://example.com/docs/setup.py and http://host/a/b.md for details.",
        "Use tools, e.g. ruff, i.e. the linter; and/or the formatter.",
        "Python 3.11 and v1.2.3 and `1.0.0-rc1` and node 20.1/x.",
        "The shadow file is /etc/shadow, `/etc/passwd` and `../../etc/shadow` or ../secret/key.pem.",
        "Home files: ~/notes/todo.md, `~/.ssh/id_rsa`, $HOME/bin/tool.sh.",
        "Linked [[daily/2026-11-28/go-backend.md]] and [[digest/wiki/cache.md#L2]].",
        "As noted (from `daily/2026-11-28/release-freeze.md`, digest/wiki/cache.md and session/dialog/9f.jsonl).",
        "Windows `C:\\Users\\me\\app.py` and `npm run build` and `foo()` and `...`.",
        "Mid-sentence dots... then `a/./b.py` and `src/../x.py`.",
    ],
)
def test_what_only_looks_like_a_path_is_text(text: str) -> None:
    assert path_refs(text) == ()
