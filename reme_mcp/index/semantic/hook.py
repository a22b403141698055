"""Where the search by meaning joins the index's search: the lexical hits in, the fused hits out.

Imported with the index, so it imports nothing heavy: the stage (semantic.py, numpy and the
model) is imported when a server's handshake is done (Memory.warm_up) or by the first search
that uses it, never on the server's start path.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from whoosh.searching import Searcher

from reme_mcp.index import ranking
from reme_mcp.index.query import query_tokens
from reme_mcp.index.semantic import fusion
from reme_mcp.index.semantic.models import hub_models
from reme_mcp.index.store import IndexStore
from reme_mcp.storage.workspace import Workspace, file_kind

if TYPE_CHECKING:
    from reme_mcp.index.semantic.stage import SemanticStage, SemanticState

T = TypeVar("T")
DIALOGS = ("dialog", "transcript")  # the kinds of files whose chunks are a conversation's messages
# How many chunks the model offers a search, before the filters and the similarity bar.
SEMANTIC_DEPTH = 30
FIRST_LOAD_WAIT = 3.0  # seconds
TICK = 0.1  # seconds between progress reports while a command waits for embedding (settle)


log = logging.getLogger("reme_mcp")


class Hit(ranking.Located, Protocol):
    @property
    def start_line(self) -> int: ...


H = TypeVar("H", bound=Hit)
Reader = Callable[[Callable[[Searcher], Any]], Any]


def wanted(semantic: str, model: str) -> bool:
    """Whether search by meaning runs: asked for (on, or auto) and installed. Asked for with
    nothing to run it with, it is said once, and search stays lexical."""
    installed = semantic != "off" and extra_installed(model)
    if semantic == "on" and not installed:
        log.warning("reme-mcp: search by meaning is off: %s; search stays lexical", hub_models.why_missing(model))
    return installed


def extra_installed(model: str = hub_models.BUNDLED[0]) -> bool:
    """Whether the extra that runs `model` is installed (without importing it): semantic, or semantic-hub."""
    return hub_models.packages_installed(model)


class SemanticHook:
    """The stage of one index, started after a server's handshake or by the first search, woken
    when the index changes."""

    def __init__(
        self,
        store: IndexStore,
        make_hit: Callable[[dict[str, Any], float, int], Any],
        model: str = hub_models.BUNDLED[0],
        models_home: Path | None = None,
    ) -> None:
        self._store = store
        self._model, self._models_home = model, models_home
        self._make_hit = make_hit
        self._stage: SemanticStage | None = None
        self._seen: tuple[object, object] | None = None
        self._waited = False

    @property
    def stage(self) -> SemanticStage:
        if self._stage is None:
            # numpy's BLAS loads here, with the thread count the command set (process.py).
            from reme_mcp.index.semantic.stage import SemanticStage

            self._stage = SemanticStage(self._store, self._store.folder, self._model, self._models_home)
        return self._stage

    @property
    def started(self) -> bool:
        """Whether this process has made the stage (a search, a warm-up or the doctor's report)."""
        return self._stage is not None

    def changed(self) -> None:
        """Wake the stage if the index holds another generation than it last saw (or never woke it)."""
        now = (self._store.identity(), self._store.records_generation)
        if now != self._seen:
            self._seen = now
            self.stage.wake()

    def wait(self, timeout: float) -> bool:
        """Wait until what the index holds is embedded; False on timeout (benchmarks and tests)."""
        self._seen = None
        self.changed()
        return self.stage.wait(timeout)

    def settle(self, timeout: float, tick: Callable[[int], None]) -> bool:
        """Wait until what the index holds is embedded, telling `tick` the chunks embedded so far
        about ten times a second; False when `timeout` ran out first. The model (and with it
        what is stored) is loaded either way, as a search would wait for it."""
        self._seen = None
        self.changed()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            done = self.stage.settled(min(TICK, max(left, 0.0)))
            tick(self.stage.vectors.chunk_count())
            if done or left <= 0:
                break
        if not done:
            self.stage.loaded(FIRST_LOAD_WAIT)
        return done

    def embed_waiting(
        self, total: int, budget: float, progress: Callable[[int, int], None] | None
    ) -> tuple[int, int] | None:
        """Embed what the index holds (`total` chunks) and the stage has not, for at most `budget`
        seconds; `progress(embedded, chunks)` as it goes. The chunks embedded and `total` when it
        stopped; None when the model is missing or broken (the stage said so once)."""

        def tick(done: int) -> None:
            if progress is not None:
                progress(min(done, total), total)

        settled = self.settle(budget, tick)
        state = self.state()
        if state.status.startswith("off"):
            return None
        if settled or state.status == "ready":
            return total, total
        return min(state.embedded, total), total

    def drop(self, paths: Collection[str]) -> None:
        """Forget these files' vectors in this process too, if the stage is loaded (never loads it)."""
        if self._stage is not None:
            self._stage.vectors.drop(list(paths))
            self._stage.vectors.save()
            if self._stage.vectors.unsaved:  # refused (a full disk): the stage's thread saves it again
                self._stage.wake()

    def state(self) -> SemanticState:
        return self.stage.state()

    def fused(
        self,
        ws: Workspace,
        text: str,
        hits: list[H],
        total: int,
        limit: int,
        where: tuple[str | None, str | None, str | None],
        read: Reader,
    ) -> tuple[list[H], int]:
        """The lexical hits joined by the chunks nearest in meaning (fusion.py), at most `limit`."""
        self.changed()
        start, end, prefix = where
        idf = read(lambda searcher: _idf(searcher, text)) if hits else {}
        covered = [fusion.coverage(h.content, idf) for h in hits]
        if not self._waited:
            # The first question waits for the model (a fraction of a second once the language
            # means are stored), so a one-off `reme-mcp search` uses the stored vectors.
            self._waited = True
            self.stage.loaded(FIRST_LOAD_WAIT)
        # A question the words found little of is also embedded as text (centring.joined).
        weak = fusion.lexical_strength(max(covered, default=0.0)) < 1.0
        heads = [_chunk_id(h) for h in hits[: fusion.RERANK_DEPTH]]
        found, similar, judged = self.stage.ask(text, SEMANTIC_DEPTH, heads, as_text_too=weak)
        near = [
            (n.key.chunk_id, n.similarity)
            for n in found
            if (prefix is None or n.key.path.startswith(prefix))
            and (start is None or start <= n.key.date)
            and (end is None or (n.key.date and n.key.date <= end))
        ]
        # Where a long chunk's best window starts: its snippet shows that part (snippets.py).
        meant_at = {n.key.chunk_id: n.at for n in found}
        if not near and not similar:
            return hits, total
        notes = {n.key.chunk_id for n in found if file_kind(n.key.path) not in DIALOGS}
        order = fusion.fuse(
            hits,
            near,
            _chunk_id,
            lambda h: h.content,
            text,
            covered,
            similar,
            self.stage.trust,
            notes.__contains__,
            judged=judged,
        )
        by_id = {_chunk_id(h): h for h in hits}
        worded = set(by_id)
        wanted = [c for c, _ in order[: limit + len(hits)] if c not in by_id]
        if wanted:
            by_id.update(read(lambda searcher: self._fetch(searcher, wanted)))
        out: list[H] = []
        for chunk, score in order:
            hit = by_id.get(chunk)
            if hit is None or ws.entry(hit.path) is None:
                continue  # gone from the index, or the file deleted since the last scan
            at, by_meaning = meant_at.get(chunk, 0), chunk not in worded
            out.append(dataclasses.replace(hit, score=score, meant_at=at, by_meaning=by_meaning))  # type: ignore[type-var]
        return ranking.diversify(out, limit), max(total, len(out))

    def _fetch(self, searcher: Searcher, chunk_ids: list[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for chunk in chunk_ids:
            docnum = searcher.document_number(chunk_id=chunk)
            if docnum is not None:
                found[chunk] = self._make_hit(searcher.stored_fields(docnum), 0.0, docnum)
        return found


def _idf(searcher: Searcher, text: str) -> dict[str, float]:
    """The weight of each of the query's tokens in the content field."""
    return {token: float(searcher.idf("content", token)) for token in query_tokens(text)}


def _chunk_id(hit: Hit) -> str:
    return f"{hit.path}#{hit.start_line}"


def vectors_behind(hook: SemanticHook | None) -> int:
    """Files whose saved vectors are not as the index holds them (`doctor`'s behind); 0 with search
    by meaning off or its stage never started in this process."""
    return hook.stage.unsaved_files() if hook is not None and hook.started else 0


def semantic_report(
    hook: SemanticHook | None, setting: str, wait: float = 10.0, model: str = hub_models.BUNDLED[0]
) -> dict[str, Any] | str:
    """The doctor's lines: the model and how far embedding is, or why search by meaning is off."""
    if hook is None:
        if setting == "off":
            return "off (the semantic setting is off)"
        return f"off ({hub_models.why_missing(model)})"
    hook.changed()
    hook.stage.loaded(wait)
    state = hook.state()
    return {
        "model": state.model,
        "status": state.status,
        "embedded_chunks": state.embedded,
        "files_waiting": state.files_waiting,
        "files_unreadable": state.files_unreadable,
    }
