"""`reme-mcp model`: the embedding models, and fetching a bigger one from a model hub (a face).

The only place reme-mcp downloads a model: a person runs it, and sees a progress bar on
stderr. The server and its tools never download (docs/semantic.md).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import click
from tqdm import tqdm

from reme_mcp.config import check_model_name, default_models_home
from reme_mcp.errors import ReMeError, os_error_line
from reme_mcp.index.semantic.models import fetch as model_fetch


@click.group()
def model() -> None:
    """Embedding models for search by meaning: list them, fetch a bigger one from a model hub."""


@model.command("list")
def model_list() -> None:
    """The bundled and known models, which are fetched, where, and their size."""
    home = default_models_home()
    click.echo(f"models folder: {home} (REME_MODELS_DIR)")
    for row in model_fetch.listing(home):
        click.echo(row.render())


@model.command("fetch")
@click.argument("name")
@click.option("--hub", help=f"The hub to fetch from (default: $REME_MODEL_HUB, else {model_fetch.DEFAULT_HUB}).")
@click.option("--repo", metavar="OWNER/NAME", help="A repository that is not in `model list`, fetched under NAME.")
@click.option("--onnx-file", help="With --repo: the ONNX export's path in the repository (default onnx/model.onnx).")
@click.option(
    "--onnx-data-file",
    help="With --repo: the file beside the export that holds its weights, where it keeps them apart (*.onnx_data).",
)
@click.option("--query-prefix", help="With --repo: text put before every question (e5 models: 'query: ').")
@click.option("--passage-prefix", help="With --repo: text put before every stored chunk (e5 models: 'passage: ').")
@click.option("--pooling", type=click.Choice(["mean", "cls"]), help="With --repo: how token vectors become one.")
@click.option("--force", is_flag=True, help="Fetch again even when the model is here.")
def model_fetch_cmd(
    name: str,
    hub: str | None,
    repo: str | None,
    onnx_file: str | None,
    onnx_data_file: str | None,
    query_prefix: str | None,
    passage_prefix: str | None,
    pooling: str | None,
    force: bool,
) -> None:
    """Download model NAME from a model hub into your cache (never into a workspace).

    Choose it afterwards with --semantic-model NAME (or $REME_SEMANTIC_MODEL); running it
    needs pip install 'reme-mcp[semantic-hub]'.
    """
    # SIGTERM as an exit, so the staging folder is removed as after Ctrl-C.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    home = default_models_home()
    bars = _Bars()
    try:
        chosen = model_fetch.describe(
            check_model_name(name), repo, onnx_file, query_prefix, passage_prefix, pooling, onnx_data_file
        )
        result = model_fetch.fetch(chosen, home, model_fetch.resolve_hub(hub), bars, force)
    except ReMeError as exc:
        bars.close()
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        bars.close()
        raise click.ClickException(os_error_line(exc, f"fetching {name} into {home}")) from None
    bars.close()
    click.echo(result.render())


class _Bars:
    """One progress bar a file, in bytes, on stderr (stdout says only what was fetched)."""

    def __init__(self) -> None:
        self._bar: tqdm | None = None
        self._file = ""

    def __call__(self, file: str, done: int, total: int | None) -> None:
        if self._bar is None or file != self._file:
            self.close()
            self._file = file
            self._bar = tqdm(
                total=total, desc=file, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, mininterval=0.5
            )
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)
