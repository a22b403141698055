"""A model from a hub: `reme-mcp model fetch` over real HTTP, then a real server searching with it.

The hub is a real HTTP server on 127.0.0.1 in Hugging Face's file layout, serving a tiny
real ONNX model (tests/index/semantic/tiny_hub.py) in which "automobile" lies next to "car". The fetch
is the real command in its own process; the search is the MCP `search` tool of a real
`reme-mcp` server over stdio, run with `--semantic-model`. Every query that must be found
by meaning shares no word with its note, and the same query is shown missing without the
model.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from reme_mcp.index.semantic.models import e5_embedder, hub_models

pytest.importorskip("onnxruntime", reason="the semantic-hub extra is not installed")
pytest.importorskip("onnx", reason="the test extra is not installed")

from tests.index.semantic.tiny_hub import serve_hub, write_model

NOTES = [
    "My sister bought a car last weekend.",
    "He plays tennis with his neighbour on Sundays.",
    "The office wifi password changes every month.",
]
DEADLINE = 60.0


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("hub")
    repo = root / "tiny" / "words" / "resolve" / "main"
    write_model(repo)
    write_model(root / "tiny" / "swapped" / "resolve" / "main", swapped=True)
    write_model(root / "tiny" / "single" / "resolve" / "main", batch_of_one=True)
    write_model(root / "tiny" / "pipeline" / "resolve" / "main", pipeline=True)
    write_model(root / "tiny" / "external" / "resolve" / "main", external=True)
    # A repository whose tokenizer stops halfway: the model file arrives, the second file does not.
    broken = root / "tiny" / "broken" / "resolve" / "main"
    (broken / "onnx").mkdir(parents=True)
    (broken / "onnx" / "model.onnx").write_bytes((repo / "onnx" / "model.onnx").read_bytes())
    with serve_hub(root) as url:
        yield url, repo


def cli(models: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "REME_MODELS_DIR": str(models), "REME_TIMEZONE": "UTC", **env}
    return subprocess.run(
        [sys.executable, "-m", "reme_mcp", *args], env=full_env, capture_output=True, text=True, timeout=120
    )


def leftovers(models: Path) -> list[str]:
    return sorted(p.name for p in models.iterdir()) if models.exists() else []


def test_fetch_puts_the_files_in_place_with_a_progress_bar_on_stderr(hub: tuple[str, Path], tmp_path: Path) -> None:
    url, repo = hub
    models = tmp_path / "models"
    run = cli(models, "model", "fetch", "words", "--repo", "tiny/words", "--hub", url)
    assert run.returncode == 0, run.stderr
    folder = models / "words"
    size = sum((repo / f).stat().st_size for f in ("onnx/model.onnx", "tokenizer.json"))
    # stdout says what was fetched and where, and nothing else; the bars are on stderr.
    assert run.stdout == f"fetched words ({size / 1e3:.1f} kB) into {folder}\n"
    for name in ("onnx/model.onnx", "tokenizer.json"):
        assert (folder / name).read_bytes() == (repo / name).read_bytes()
        assert f"{name}: 100%" in run.stderr, run.stderr
    assert f"{(repo / 'onnx/model.onnx').stat().st_size}/{(repo / 'onnx/model.onnx').stat().st_size}" in run.stderr
    manifest = json.loads((folder / hub_models.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["model"]["repo"] == "tiny/words" and manifest["hub"] == url
    assert leftovers(models) == ["words"]  # no staging folder stays

    again = cli(models, "model", "fetch", "words", "--repo", "tiny/words", "--hub", url)
    assert again.returncode == 0 and "already fetched" in again.stdout and again.stderr == ""

    listed = cli(models, "model", "list")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert "fetched" in rows["words"] and str(folder) in rows["words"] and "kB" in rows["words"]
    base = rows["multilingual-e5-base"]
    assert "not fetched" in base and "Xenova/multilingual-e5-base" in base
    assert "bundled" in rows["multilingual-e5-small"]


def test_a_404_is_one_line_and_leaves_nothing(hub: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = hub
    models = tmp_path / "models"
    run = cli(models, "model", "fetch", "ghost", "--repo", "tiny/ghost", "--hub", url)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("Error: the hub has no onnx/model.onnx in tiny/ghost")
    assert "HTTP 404" in run.stderr
    assert leftovers(models) == []


def test_a_download_that_breaks_off_leaves_nothing(hub: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = hub
    models = tmp_path / "models"
    run = cli(models, "model", "fetch", "half", "--repo", "tiny/broken", "--hub", url)
    assert run.returncode == 1 and run.stdout == ""
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: the download of tokenizer.json broke off after"), run.stderr
    assert "run the command again" in last
    assert "onnx/model.onnx: 100%" in run.stderr  # the first file had arrived, and was not kept
    assert leftovers(models) == []


def _partial(models: Path, name: str) -> Path | None:
    """The staging folder of a fetch under way, once the hub has answered and the file is being written."""
    for folder in models.glob(f".{name}.partial-*"):
        if (folder / "onnx" / "model.onnx").is_file():
            return folder
    return None


def _sigint_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _fetch_until_bytes_arrive(hub_url: str, models: Path) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "REME_MODELS_DIR": str(models)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_mcp", "model", "fetch", "slow", "--repo", "tiny/slow", "--hub", hub_url],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C reaches a command in the foreground of a terminal, whose SIGINT is the default;
        # a test run as a script's background job would pass it on ignored, as the shell asks.
        preexec_fn=_sigint_as_in_a_terminal,
    )
    deadline = time.monotonic() + 30
    while (staging := _partial(models, "slow")) is None:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    return proc, staging


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 1)])
def test_an_interrupted_fetch_leaves_nothing(hub: tuple[str, Path], tmp_path: Path, sig: int, code: int) -> None:
    models = tmp_path / "models"
    proc, _ = _fetch_until_bytes_arrive(hub[0], models)
    proc.send_signal(sig)
    out, _err = proc.communicate(timeout=30)
    assert proc.returncode == code and out == ""
    assert leftovers(models) == []


def test_a_killed_fetch_is_swept_by_the_next(hub: tuple[str, Path], tmp_path: Path) -> None:
    models = tmp_path / "models"
    proc, staging = _fetch_until_bytes_arrive(hub[0], models)
    proc.kill()  # no chance to clean up
    proc.communicate(timeout=30)
    assert staging.is_dir() and not (models / "slow").exists()  # only a dot folder: no model is half there
    listed = cli(models, "model", "list")
    assert "slow" not in listed.stdout
    run = cli(models, "model", "fetch", "slow", "--repo", "tiny/words", "--hub", hub[0])
    assert run.returncode == 0, run.stderr
    assert leftovers(models) == ["slow"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A models folder on its own 64 kB tmpfs."""
    models = tmp_path / "models"
    models.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(models)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.decode().strip()}")
    try:
        yield models
    finally:
        subprocess.run(["umount", str(models)], check=False)


def test_a_full_disk_is_one_line_and_leaves_nothing(hub: tuple[str, Path], small_disk: Path) -> None:
    url, _ = hub
    root = hub[1].parents[3]
    for repo in ("big", "nolength"):  # a model bigger than the disk, with its size said and without
        folder = root / "tiny" / repo / "resolve" / "main"
        (folder / "onnx").mkdir(parents=True, exist_ok=True)
        (folder / "onnx" / "model.onnx").write_bytes(os.urandom(200_000))
        (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    said = cli(small_disk, "model", "fetch", "big", "--repo", "tiny/big", "--hub", url)
    assert said.returncode == 1 and said.stdout == ""
    assert said.stderr.count("\n") == 1 and "onnx/model.onnx needs 200.0 kB and the disk has" in said.stderr
    assert "REME_MODELS_DIR" in said.stderr
    assert leftovers(small_disk) == []
    unsaid = cli(small_disk, "model", "fetch", "big", "--repo", "tiny/nolength", "--hub", url)
    assert unsaid.returncode == 1 and unsaid.stdout == ""
    last = unsaid.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: saving the model under") and "the disk is full" in last, unsaid.stderr
    assert "REME_MODELS_DIR" in last
    assert leftovers(small_disk) == []


def test_an_unreachable_hub_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    models = tmp_path / "models"
    run = cli(models, "model", "fetch", "multilingual-e5-base", "--hub", f"http://127.0.0.1:{port}")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "cannot reach the model hub" in run.stderr
    assert leftovers(models) == []
    unknown = cli(models, "model", "fetch", "no-such-model")
    assert unknown.returncode == 1 and unknown.stderr.count("\n") == 1 and "--repo" in unknown.stderr


def stdio_client(workspace: Path, models: Path, *extra: str) -> Client:
    env = {**os.environ, "REME_TIMEZONE": "UTC", "REME_MODELS_DIR": str(models)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_mcp", "--workspace", str(workspace), *extra], env=env
    )
    return Client(params, read_timeout_seconds=60)


async def top_paths(c: Client, query: str) -> list[str]:
    result = await c.call_tool("search", {"query": query, "limit": 3})
    assert not result.is_error
    data: dict[str, Any] = result.structured_content  # type: ignore[assignment]
    return [hit["path"] for hit in data["results"]]


@pytest.mark.anyio
async def test_a_server_searches_by_meaning_with_the_fetched_model(hub: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = hub
    models, workspace = tmp_path / "models", tmp_path / "ws"
    assert cli(models, "model", "fetch", "words", "--repo", "tiny/words", "--hub", url).returncode == 0
    paths: dict[str, str] = {}
    async with stdio_client(workspace, models, "--semantic", "on", "--semantic-model", "words") as c:
        for note in NOTES:
            result = await c.call_tool("remember", {"content": note, "date": "2026-11-28"})
            paths[note] = result.structured_content["path"]  # type: ignore[index]
        car, tennis = paths[NOTES[0]], paths[NOTES[1]]
        found: list[str] = []
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:  # the stage embeds in the background
            found = await top_paths(c, "automobile")
            if found:
                break
            await anyio.sleep(0.2)
        assert found == [car]
        assert (await top_paths(c, "racket"))[:1] == [tennis]
    async with stdio_client(workspace, models, "--semantic", "off") as c:
        assert await top_paths(c, "automobile") == []  # no word of the note: only the model finds it
    doctor = cli(
        models, "--workspace", str(workspace), "--semantic", "on", "--semantic-model", "words", "doctor", "--json"
    )
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)["semantic"]
    assert report["model"] == "words" and report["status"] in ("ready", "embedding"), report


def test_texts_of_many_lengths_share_a_call_and_keep_their_own_vectors(hub: tuple[str, Path], tmp_path: Path) -> None:
    """The fetched model embeds texts of like length together: padding must not reach a vector."""
    import numpy as np

    from reme_mcp.index.semantic.models.onnx_embedder import OnnxEmbedder

    url, _ = hub
    models = tmp_path / "models"
    assert cli(models, "model", "fetch", "words", "--repo", "tiny/words", "--hub", url).returncode == 0
    model = OnnxEmbedder("words", models)
    # An export fixed at a batch of one gets one text a call, and the same vectors.
    assert cli(models, "model", "fetch", "single", "--repo", "tiny/single", "--hub", url).returncode == 0
    single = OnnxEmbedder("single", models)
    assert np.allclose(single.passages(texts := ["car", "my tennis racket", "racket"]), model.passages(texts))
    texts = ["car", "my tennis racket", "allergic to peanuts, he sold the automobile and the car", "racket"]
    together = model.passages(texts)
    alone = np.vstack([model.passages([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert float(together[0] @ together[2]) > 0.3  # car and automobile: the model's own likeness kept


def test_an_export_of_a_whole_pipeline_is_read_by_its_sentence_vector(hub: tuple[str, Path], tmp_path: Path) -> None:
    """An export of a sentence-transformers pipeline (EmbeddingGemma's) lists its token vectors first;
    the model's meaning is in the vector it names sentence_embedding, after its dense layers."""
    from reme_mcp.index.semantic.models.onnx_embedder import OnnxEmbedder

    url, _ = hub
    models = tmp_path / "models"
    fetch = cli(models, "model", "fetch", "pipeline", "--repo", "tiny/pipeline", "--hub", url)
    assert fetch.returncode == 0, fetch.stderr
    car, automobile, tennis = OnnxEmbedder("pipeline", models).passages(["car", "automobile", "tennis"])
    assert float(car @ automobile) > 0.3 > float(car @ tennis)


def test_an_export_whose_weights_are_apart_is_fetched_with_them(hub: tuple[str, Path], tmp_path: Path) -> None:
    """onnx-community's exports keep their weights in a file beside the graph: fetched with the graph,
    the model runs, and `model list` calls it incomplete once that file is gone."""
    from reme_mcp.index.semantic.models.onnx_embedder import OnnxEmbedder

    url, _ = hub
    models = tmp_path / "models"
    repo = ("--repo", "tiny/external", "--hub", url)
    fetch = cli(models, "model", "fetch", "external", *repo, "--onnx-data-file", "onnx/model.onnx_data")
    assert fetch.returncode == 0, fetch.stderr
    car, automobile = OnnxEmbedder("external", models).passages(["car", "automobile"])
    assert float(car @ automobile) > 0.3
    (models / "external" / "onnx" / "model.onnx_data").unlink()
    listed = cli(models, "model", "list").stdout
    assert "incomplete" in next(line for line in listed.splitlines() if line.startswith("external")), listed
    # A weights file that is not beside the export is refused before anything is fetched.
    far = cli(models, "model", "fetch", "far", *repo, "--onnx-data-file", "weights/model.onnx_data")
    assert far.returncode != 0 and len(far.stderr.strip().splitlines()) == 1, far.stderr
    assert not (models / "far").exists()


async def _search_by_meaning(workspace: Path, models: Path, query: str, remember: list[str]) -> dict[str, Any]:
    """Remember `remember`, then the first non-empty answer to `query` (the stage embeds in the background)."""
    async with stdio_client(workspace, models, "--semantic", "on", "--semantic-model", "words") as c:
        for note in remember:
            await c.call_tool("remember", {"content": note, "date": "2026-11-28"})
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            result = await c.call_tool("search", {"query": query, "limit": 3})
            data: dict[str, Any] = result.structured_content  # type: ignore[assignment]
            if data["results"]:
                return data
            await anyio.sleep(0.2)
    raise AssertionError(f"nothing found for {query!r}")


@pytest.mark.anyio
async def test_another_model_under_the_same_name_needs_force_and_embeds_afresh(
    hub: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = hub
    models, workspace = tmp_path / "models", tmp_path / "ws"
    assert cli(models, "model", "fetch", "words", "--repo", "tiny/words", "--hub", url).returncode == 0
    first = await _search_by_meaning(workspace, models, "automobile", NOTES)
    car = first["results"][0]["path"]
    assert "car" in first["results"][0]["snippet"]
    refused = cli(models, "model", "fetch", "words", "--repo", "tiny/swapped", "--hub", url)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "--force replaces it" in refused.stderr
    replaced = cli(models, "model", "fetch", "words", "--repo", "tiny/swapped", "--hub", url, "--force")
    assert replaced.returncode == 0, replaced.stderr
    assert leftovers(models) == ["words"]
    # The old model's vectors would put the tennis note where the new model asks for a car.
    again = await _search_by_meaning(workspace, models, "automobile", [])
    assert [hit["path"] for hit in again["results"]] == [car]


def test_a_model_named_but_not_fetched_is_off_in_one_line_and_search_stays_lexical(tmp_path: Path) -> None:
    models, workspace = tmp_path / "models", tmp_path / "ws"
    flags = ["--workspace", str(workspace), "--semantic", "on", "--semantic-model", "multilingual-e5-base"]
    script = (
        "import sys\n"
        "from reme_mcp.config import load_settings\n"
        "from reme_mcp.ops.memory import Memory\n"
        f"m = Memory(load_settings({str(workspace)!r}, 'UTC', 'on', 'multilingual-e5-base'))\n"
        "m.remember('The release freeze starts on Friday.', date='2026-11-28')\n"
        "for _ in range(3):\n"
        "    hits = m.search('release freeze').results\n"
        "    assert hits and hits[0].path.endswith('.md'), hits\n"
        "m.index.semantic.wait(30)\n"
        "print(m.search('release freeze').results[0].path)\n"
    )
    env = {**os.environ, "REME_MODELS_DIR": str(models)}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith(".md")
    said = [line for line in run.stderr.splitlines() if line.strip()]
    assert said == [
        "reme-mcp: search by meaning is off: the model multilingual-e5-base is not fetched: "
        "run reme-mcp model fetch multilingual-e5-base; search stays lexical"
    ]
    doctor = cli(models, *flags, "doctor")
    assert doctor.returncode == 0, doctor.stderr
    assert (
        "status: off: the model multilingual-e5-base is not fetched: run reme-mcp model fetch multilingual-e5-base"
        in doctor.stdout
    )
    assert leftovers(models) == []  # nothing was downloaded by a search or by doctor


def test_the_client_snippet_carries_the_model(tmp_path: Path) -> None:
    run = cli(
        tmp_path / "models", "--workspace", str(tmp_path / "ws"), "config", "claude-code", "--semantic-model", "words"
    )
    assert run.returncode == 0, run.stderr
    args = json.loads(run.stdout)["mcpServers"]["reme"]["args"]
    assert args[args.index("--semantic-model") + 1] == "words"
    bad = cli(tmp_path / "models", "config", "claude-code", "--semantic-model", "../etc")
    assert bad.returncode == 1 and "not usable" in bad.stderr


def test_the_bundled_models_are_the_ones_the_semantic_extra_runs() -> None:
    from reme_mcp.config import FALLBACK_SEMANTIC_MODEL, Settings, default_semantic_model
    from reme_mcp.index.semantic.models import pair_embedder, use_embedder

    assert set(hub_models.BUNDLED) == {use_embedder.MODEL, *e5_embedder.MODELS, pair_embedder.MODEL}
    assert hub_models.BUNDLED[0] == pair_embedder.MODEL == Settings.semantic_model == default_semantic_model()
    assert hub_models.BUNDLED[1] == use_embedder.MODEL == FALLBACK_SEMANTIC_MODEL
    assert [hub_models.bundled_dim(m) for m in hub_models.BUNDLED] == [
        use_embedder.DIM + e5_embedder.DIM,
        use_embedder.DIM,
        e5_embedder.DIM,
        e5_embedder.DIM,
    ]


def test_a_long_text_is_read_whole_by_a_fetched_model_too(hub: tuple[str, Path], tmp_path: Path) -> None:
    """A fetched model reads at most 96 tokens at once, as the bundled one: a longer text is read
    line by line, so a word on its last line still makes its vector."""
    import numpy as np

    from reme_mcp.index.semantic.models.onnx_embedder import OnnxEmbedder

    url, _ = hub
    models = tmp_path / "models"
    assert cli(models, "model", "fetch", "words", "--repo", "tiny/words", "--hub", url).returncode == 0
    model = OnnxEmbedder("words", models)
    page = "\n".join([*(f"line {i} holds nothing this model knows" for i in range(30)), "he sold the automobile"])
    read = model.passage_windows([page, "tennis racket"])
    vectors, counts = read.vectors, read.counts
    assert counts[0] > 1 and counts[1] == 1 and len(vectors) == sum(counts)
    car = model.query("car")
    assert float(np.max(vectors[: counts[0]] @ car)) > 0.8  # the last line's window
    assert float(model.passages([page])[0] @ car) < 0.1  # the page's start alone: the word is not read


def test_a_model_fetched_before_weights_files_were_known_keeps_its_vectors() -> None:
    """Its vectors and means are filed under its fingerprint: the same model must keep the one an
    earlier reme-mcp gave it (computed by the code before `onnx_data` existed), or every workspace
    would be embedded afresh after an upgrade."""
    sizes = {"onnx/model_quantized.onnx": 279_000_000, "tokenizer.json": 17_000_000}
    model = hub_models.KNOWN["multilingual-e5-base"]
    assert hub_models.Fetched(model, Path("/x"), "https://huggingface.co", sizes).fingerprint == "336721d70b"
