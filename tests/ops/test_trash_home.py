"""The trash lives in the user's data folder, which cache cleaners leave alone, and a forgetting
from when it lived in the cache is still found there; through the real `reme-mcp forget`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import DAY, make_reme_workspace


def forget(home: Path, ws: Path, *args: str, trash: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "XDG_")) or k == "REME_INDEX_DIR"}
    env |= {"HOME": str(home), "REME_SEMANTIC": "off"}
    if trash is not None:
        env["REME_TRASH_DIR"] = str(trash)
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", "forget", "-w", str(ws), "--yes", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def batches(trash: Path) -> list[Path]:
    return sorted(p for key in trash.iterdir() if key.is_dir() for p in key.iterdir() if p.is_dir())


def test_the_trash_is_a_data_folder_and_the_former_cache_trash_is_still_found(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ws = make_reme_workspace(tmp_path / "ws")
    cache_trash = home / ".cache" / "reme-mcp" / "trash"
    data_trash = home / ".local" / "share" / "reme-mcp" / "trash"
    # A forgetting made where the trash used to be (the cache folder).
    done = forget(home, ws, "digest/wiki/deploy.md", trash=cache_trash)
    assert done.returncode == 0, done.stderr
    assert len(batches(cache_trash)) == 1
    # Today's default: the data folder; the former forgetting moves in with the new one.
    done = forget(home, ws, f"daily/{DAY}/go-backend.md")
    assert done.returncode == 0, done.stderr
    kept = batches(data_trash)
    assert len(kept) == 2, kept
    assert any((batch / "digest" / "wiki" / "deploy.md").is_file() for batch in kept)
    assert not any(cache_trash.iterdir()) or batches(cache_trash) == []
    emptied = forget(home, ws, "--empty-trash")
    assert emptied.returncode == 0 and "2 forgettings removed" in emptied.stdout, emptied.stdout
