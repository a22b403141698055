"""The bulk build (reme_mcp.index.build) writes exactly the index a plain Whoosh writer writes.

The baseline is `plain_whoosh_build` below: the same schema and the same
documents through one plain `ix.writer()`. Indexes are compared through
everything a search can see: documents, stored fields, every term's postings
(weights and values), term statistics, field lengths per document and in total.
Documents are keyed by chunk_id, since a multi-segment build numbers them differently.
"""

from __future__ import annotations

import contextlib
import pickle
import random
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest
from whoosh import index as whoosh_index
from whoosh.fields import TEXT, Schema

from reme_mcp.index import build as build_module
from reme_mcp.index.build import build_index
from reme_mcp.index.schema import build_schema, file_documents
from reme_mcp.storage import child_process
from reme_mcp.storage.workspace import Workspace
from tests.conftest import message, write

WORDS = {
    "en": [
        "deploy",
        "service",
        "backend",
        "cache",
        "harbour",
        "lease",
        "billing",
        "garden",
        "rosa",
        "race",
        "backup",
        "token",
        "queue",
        "river",
    ],
    "zh": [
        "部署",
        "服务",
        "数据库",
        "迁移",
        "计费",
        "花园",
        "备份",
        "队列",
        "河流",
        "周五",
        "猫",
        "小白",
        "项目",
        "口令",
    ],
}


def generate_workspace(root: Path, days: int, seed: int = 7) -> None:
    """A ReMe workspace of daily notes, day indexes and dialogs in English, Chinese and both."""
    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS[rng.choice(["en", "zh"])]) for _ in range(n))

    for d in range(days):
        day = f"2026-10-{d + 1:02d}"
        lines = []
        for n in range(3):
            name = f"note-{d}-{n}"
            body = f"{text(40)}\n\n## Details\n\n{text(60)}\n\nSee [[session/dialog/s{d}.jsonl]].\n"
            write(root, f"daily/{day}/{name}.md", f"---\nname: {name}\ndescription: {text(6)}\n---\n{body}")
            lines.append(f"- [[daily/{day}/{name}.md]] name: {name}")
        block = "\n".join(["<!-- notes:auto -->", *lines, "<!-- /notes:auto -->"])
        write(
            root, f"daily/{day}.md", f"---\nname: '{day}'\ndescription: 3 note(s) today.\n---\n{text(8)}\n\n{block}\n"
        )
        turns = [
            message(f"s{d}m{i}", role, role, text(rng.randint(3, 30)), f"{day}T10:{i:02d}:00+08:00")
            for i, role in enumerate(["user", "assistant"] * 12)
        ]
        write(root, f"session/dialog/s{d}.jsonl", "\n".join(turns) + "\n")


def plain_whoosh_build(ws_root: Path, target: Path) -> int:
    """The same schema and documents through one plain `ix.writer()`, in one process."""
    ws = Workspace(ws_root)
    target.mkdir(parents=True)
    ix = whoosh_index.create_in(str(target), build_schema())
    writer = ix.writer()
    chunks = 0
    for entry in ws.walk():
        for doc in file_documents(ws, entry.path):
            writer.add_document(**doc)
            chunks += doc["kind"] != "__file__"
    writer.commit()
    ix.close()
    return chunks


SCORABLE = [name for name in build_schema().names() if build_schema()[name].scorable]


def add_odd_files(root: Path) -> None:
    """What the generator does not write: CJK and mixed text, identifiers, long and repetitive text, empty and binary files."""
    write(
        root,
        "notes/中文笔记.md",
        "---\nname: 部署笔记\ndescription: 用户喜欢在周五之前部署 backend 服务\n---\n"
        "我们决定把数据库迁移到新的服务器。ＡＢＣ１２３ 全角字符和 Café résumé naïve。\n\n"
        "## 日本語\n\nデプロイは金曜日の前に。한국어 문장도 있습니다。\n",
    )
    write(
        root,
        "notes/identifiers.md",
        "---\nname: identifiers\ndescription: getHTTPResponse and ERR_CONN_RESET\n---\n"
        "Call my_module.MyClass.getHTTPResponse() at v2.3.1; mail bob@example.com at 10:30.\n"
        f"See https://example.com/a/b?c=d and {'x' * 200} and file.py.\n",
    )
    # A term far more frequent than 255 in one chunk, and a long chunk (lengths are quantised).
    write(root, "notes/long.md", "# Long\n\n" + "deploy the service " * 400 + "\n")
    write(root, "notes/empty.md", "")
    (root / "resource").mkdir(parents=True, exist_ok=True)
    (root / "resource" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (root / "notes" / "broken.md").write_bytes(b"---\nname: broken\n---\nbad bytes \xff\xfe here\n")
    write(
        root,
        "session/dialog/mixed.jsonl",
        "\n".join(
            message(f"m{i}", role, role, text, f"2026-11-2{i}T10:00:00+08:00")
            for i, (role, text) in enumerate(
                [
                    ("user", "我的猫叫小白, it likes the garden"),
                    ("assistant", "小白 is a nice name for a cat 猫"),
                    ("user", "Yes, last Tuesday!"),
                    ("assistant", ""),
                ]
            )
        )
        + "\n",
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("build") / "ws"
    generate_workspace(root, 12)
    add_odd_files(root)
    return root


@pytest.fixture(scope="module")
def plain(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("plain") / "index"
    plain_whoosh_build(workspace, target)
    return target


@pytest.fixture(scope="module")
def plain_snapshot(plain: Path) -> dict[str, Any]:
    return snapshot(plain)


@pytest.fixture(scope="module")
def big_workspace(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight copies of the workspace: a build that lasts long enough to be killed in the middle."""
    root = tmp_path_factory.mktemp("big") / "ws"
    for i in range(8):
        shutil.copytree(workspace, root / f"part{i}")
    return root


# ---- comparing indexes ----------------------------------------------------------------------------


def snapshot(directory: Path) -> dict[str, Any]:
    """Everything a search can see of an index, with documents keyed by chunk_id."""
    ix = whoosh_index.open_dir(str(directory))
    try:
        with ix.searcher() as searcher:
            reader = searcher.reader()
            chunk_of: dict[int, str] = {}
            stored: dict[str, dict[str, Any]] = {}
            for docnum, fields in reader.iter_docs():
                chunk_of[docnum] = fields["chunk_id"]
                stored[fields["chunk_id"]] = fields
            assert len(stored) == reader.doc_count_all(), "chunk_id is not unique"
            terms: dict[tuple[str, bytes], Any] = {}
            for field, tbytes in reader.all_terms():
                info = reader.term_info(field, tbytes)
                matcher = reader.postings(field, tbytes)
                postings = {}
                while matcher.is_active():
                    postings[chunk_of[matcher.id()]] = (matcher.weight(), matcher.value())
                    matcher.next()
                stats = (info.doc_frequency(), info.weight(), info.min_length(), info.max_length(), info.max_weight())
                terms[field, tbytes] = (stats, postings)
            return {
                "doc_count": reader.doc_count_all(),
                "stored": stored,
                "terms": terms,
                # No length is None from a segment with the field's length column and 0 from one
                # without it (a Whoosh quirk that any multi-segment index has): both are 0 here.
                "lengths": {
                    chunk: tuple(searcher.doc_field_length(docnum, f) or 0 for f in SCORABLE)
                    for docnum, chunk in chunk_of.items()
                },
                # (Whoosh's min/max_field_length fail on a segment without the field: the lengths above cover them.)
                "totals": {f: reader.field_length(f) for f in SCORABLE},
            }
    finally:
        ix.close()


def differences(a: dict[str, Any], b: dict[str, Any], limit: int = 5) -> list[str]:
    """The first few ways two snapshots differ (a readable failure rather than a diff of huge dicts)."""
    found = []
    for part in ("doc_count", "totals"):
        if a[part] != b[part]:
            found.append(f"{part}: {a[part]!r} != {b[part]!r}")
    for part in ("stored", "terms", "lengths"):
        for key in sorted(a[part].keys() | b[part].keys(), key=repr):
            if a[part].get(key) != b[part].get(key):
                found.append(f"{part}[{key!r}]: {a[part].get(key)!r} != {b[part].get(key)!r}")
                if len(found) >= limit:
                    return found
    return found


def blocks(directory: Path) -> dict[tuple[str, bytes], list[Any]]:
    """Every term's posting blocks as a search's block skipping sees them, by document number."""
    ix = whoosh_index.open_dir(str(directory))
    try:
        with ix.reader() as reader:
            out = {}
            for field, tbytes in reader.all_terms():
                matcher = reader.postings(field, tbytes)
                found = []
                while matcher.is_active():
                    found.append(
                        (
                            matcher.block_min_id(),
                            matcher.block_max_id(),
                            matcher.block_min_length(),
                            matcher.block_max_length(),
                            matcher.block_max_weight(),
                        )
                    )
                    matcher.skip_to(matcher.block_max_id() + 1)
                out[field, tbytes] = found
            return out
    finally:
        ix.close()


def segment_count(directory: Path) -> int:
    ix = whoosh_index.open_dir(str(directory))
    try:
        return len(ix._segments())
    finally:
        ix.close()


def build(ws_root: Path, directory: Path, **kwargs: Any) -> int:
    directory.mkdir(parents=True)
    return build_index(Workspace(ws_root), directory, **kwargs)


# ---- the same index ---------------------------------------------------------------------------------


def test_one_process_writes_the_plain_index(
    workspace: Path, plain: Path, plain_snapshot: dict[str, Any], tmp_path: Path
) -> None:
    chunks = build(workspace, tmp_path / "ours", processes=1)
    ours, theirs = snapshot(tmp_path / "ours"), plain_snapshot
    assert differences(ours, theirs) == []
    assert chunks == sum(1 for fields in theirs["stored"].values() if fields["kind"] != "__file__")
    # One segment in walk order, like the plain build: the same document numbers and the same blocks.
    assert segment_count(tmp_path / "ours") == 1
    with whoosh_index.open_dir(str(tmp_path / "ours")).reader() as r1, whoosh_index.open_dir(str(plain)).reader() as r2:
        assert list(r1.iter_docs()) == list(r2.iter_docs())
    assert blocks(tmp_path / "ours") == blocks(plain)


def test_workers_write_the_plain_index(
    workspace: Path, plain: Path, plain_snapshot: dict[str, Any], tmp_path: Path
) -> None:
    # Tiny segments, so each worker flushes several.
    chunks = build(workspace, tmp_path / "ours", processes=2, segment_postings=3000)
    ours, theirs = snapshot(tmp_path / "ours"), plain_snapshot
    assert differences(ours, theirs) == []
    assert chunks == sum(1 for fields in theirs["stored"].values() if fields["kind"] != "__file__")
    assert segment_count(tmp_path / "ours") >= 4
    assert [p.name for p in (tmp_path / "ours").iterdir() if p.name.startswith(".")] == []
    # Segments in walk order: the same document numbers as the plain build.
    with whoosh_index.open_dir(str(tmp_path / "ours")).reader() as r1, whoosh_index.open_dir(str(plain)).reader() as r2:
        assert list(r1.iter_docs()) == list(r2.iter_docs())
    # Whoosh's own merge reads the segments back (merging sums the quantised lengths, so the
    # plain index is merged too): still the same index.
    shutil.copytree(plain, tmp_path / "plain")
    for folder in (tmp_path / "ours", tmp_path / "plain"):
        ix = whoosh_index.open_dir(str(folder))
        ix.writer().commit(optimize=True)
        ix.close()
    assert segment_count(tmp_path / "ours") == 1
    assert differences(snapshot(tmp_path / "ours"), snapshot(tmp_path / "plain")) == []


def test_the_comparison_sees_a_one_word_change(workspace: Path, plain_snapshot: dict[str, Any], tmp_path: Path) -> None:
    """Guards the guard: the snapshots above would notice a builder that got one word wrong."""
    changed = tmp_path / "ws"
    shutil.copytree(workspace, changed)
    note = changed / "notes" / "identifiers.md"
    note.write_text(note.read_text(encoding="utf-8").replace("mail bob", "mail zed"), encoding="utf-8")
    build(changed, tmp_path / "ours", processes=1)
    found = differences(snapshot(tmp_path / "ours"), plain_snapshot, limit=10_000)
    assert any("b'zed'" in line for line in found)
    assert any(line.startswith("stored[") for line in found)


def test_the_bulk_writer_refuses_a_field_it_cannot_write(tmp_path: Path) -> None:
    """Positions (phrase=True) or vectors would come out wrong, so they are refused, not written."""
    for field in (TEXT(phrase=True), TEXT(phrase=False, vector=True), TEXT(phrase=False, field_boost=0.0)):
        folder = tmp_path / str(id(field))
        folder.mkdir()
        ix = whoosh_index.create_in(str(folder), Schema(body=field))
        with pytest.raises(ValueError, match="cannot write the field 'body'"):
            build_module.BulkWriter(ix)
        ix.close()


@pytest.mark.parametrize("processes", [1, 2])
def test_progress_after_each_file(workspace: Path, tmp_path: Path, processes: int) -> None:
    calls: list[tuple[int, int]] = []
    build(workspace, tmp_path / "ours", progress=lambda done, total: calls.append((done, total)), processes=processes)
    total = sum(1 for _ in Workspace(workspace).walk())
    assert calls == [(done, total) for done in range(1, total + 1)]


def test_an_empty_workspace(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    assert build(tmp_path / "ws", tmp_path / "ours") == 0
    ix = whoosh_index.open_dir(str(tmp_path / "ours"))
    assert ix.doc_count_all() == 0
    ix.close()


# ---- dying ------------------------------------------------------------------------------------------


def build_workers() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if "reme_mcp.index.build" in " ".join(p.cmdline())]


def test_a_dead_worker_fails_the_build_and_stops_the_rest(big_workspace: Path, tmp_path: Path) -> None:
    killed: list[int] = []

    def kill_a_worker(done: int, total: int) -> None:
        if not killed:
            victim = build_workers()[0]
            killed.append(victim.pid)
            victim.kill()

    with pytest.raises(RuntimeError, match="index build worker"):
        build(big_workspace, tmp_path / "ours", progress=kill_a_worker, processes=2)
    assert killed
    assert build_workers() == []
    assert [p.name for p in (tmp_path / "ours").iterdir() if p.name.startswith(".share")] == []


def test_a_worker_stops_as_soon_as_its_parent_is_gone(big_workspace: Path, tmp_path: Path) -> None:
    """A parent's death closes the worker's stdin (its lifeline): the worker must stop, not finish its share."""
    worker = child_process.start("reme_mcp.index.build_worker")
    assert worker.stdin is not None and worker.stdout is not None
    paths = [e.path for e in Workspace(big_workspace).walk()]
    pickle.dump((big_workspace, paths, tmp_path, 0, build_module.SEGMENT_POSTINGS), worker.stdin)
    worker.stdin.flush()
    assert pickle.load(worker.stdout) == "file"  # it has started on the share
    worker.stdin.close()
    messages = []
    with contextlib.suppress(EOFError):
        while True:
            messages.append(pickle.load(worker.stdout))
    worker.stdout.close()
    assert worker.wait(timeout=30) != 0
    assert len(messages) < len(paths) - 1
    assert not any(isinstance(m, tuple) and m[0] == "done" for m in messages)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_killed_build_leaves_no_process_behind(big_workspace: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from reme_mcp.index.build import build_index
        from reme_mcp.storage.workspace import Workspace

        def progress(done, total):
            if done == 1:
                print("building", flush=True)

        Path(sys.argv[2]).mkdir()
        build_index(Workspace(Path(sys.argv[1])), Path(sys.argv[2]), progress, processes=2)
        print("finished", flush=True)
        """
    )
    staging = tmp_path / "staging"
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(big_workspace), str(staging)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    assert parent.stdout.readline().strip() == "building"
    workers = psutil.Process(parent.pid).children(recursive=True)
    assert len(workers) == 2
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    parent.stdout.close()
    _, alive = psutil.wait_procs(workers, timeout=15)
    assert alive == []
    # The caller throws the staging folder away and builds again.
    shutil.rmtree(staging)
    chunks = build(big_workspace, staging, processes=2)
    ix = whoosh_index.open_dir(str(staging))
    assert ix.doc_count_all() == chunks + sum(1 for _ in Workspace(big_workspace).walk())
    ix.close()
