"""Clusters of notes worth consolidating into one: pure functions over the notes' text.

ReMe consolidates daily notes into digests ("dream"); here the host's model does it when a
person asks (faces/prompts.py), from the clusters found here. Four kinds:

- **chain**: notes linked by `supersedes` two steps deep or more (A <- B <- C). The current note
  is right, but the person reads three notes for one fact. A chain whose current note names
  every other member directly is settled: that is what a consolidation leaves.
- **duplicates**: current notes that say the same thing (a decision kept by `remember`, by a
  teammate's sync, by a recalled copy stored back).
- **dialog**: a current note and the dialog message it restates.
- **topic**: many small current notes that share a tag.

Similarity weighs each word by how rare it is in the workspace (inverse document frequency), so a
boilerplate sentence that ends many notes ("Questions go to #platform-help.") weighs almost
nothing, and two notes that differ in the words that name their subject ("orders" against
"billing") stay apart. A cluster is a suggestion: the model reads the notes and may decline.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reme_mcp.storage.documents import wikilinks

ClusterKind = Literal["chain", "duplicates", "dialog", "topic"]

# Two notes are copies or versions at this share of their weighted words (weighted Jaccard), and
# only when each fills one slot its own way at most (MAX_OWN_RUNS).
DUPLICATE_SIMILARITY = 0.45
# Copies and versions differ in one slot at most (a value, however many words): two notes that
# each fill two or more places their own way say different things ("paired with Ines on checkout"
# / "with Jonas on exports"), however much wording they share.
MAX_OWN_RUNS = 1
# A note restates a dialog message holding this share of the note's weighted words.
DIALOG_CONTAINMENT = 0.7
# A topic cluster: at least this many current notes under this many characters sharing a tag.
TOPIC_MIN_NOTES = 4
SMALL_NOTE_CHARS = 400
# A cluster handed to a model at once; a bigger group is cut to its newest members.
MAX_CLUSTER_NOTES = 12
# Words in more than this share of the files (and more than PAIRING_MIN_FILES) are not used to
# find pairs worth comparing.
RARE_WORD_SHARE = 0.05
PAIRING_MIN_FILES = 10
# Nor a word more than this many files hold, however large the workspace: pairs stay near linear.
MAX_POSTINGS = 200
# A pair is compared when one holds PAIRING_SHARED of the other's PAIRING_KEYS rarest words.
PAIRING_KEYS = 6
PAIRING_SHARED = 2
# Words this short carry little (articles, particles); CJK characters are kept one by one.
MIN_WORD_CHARS = 3
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class NoteText:
    """What clustering reads of one memory file."""

    path: str
    text: str  # the body (a note) or one message (a dialog)
    date: str = ""
    name: str = ""
    description: str = ""
    tags: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # the files it links to (wikilinks, its source_conversation)
    line: int = 0  # for a dialog message, its line in the dialog file

    @property
    def is_dialog(self) -> bool:
        return self.path.endswith(".jsonl")


@dataclass(frozen=True)
class Cluster:
    """A group of notes one consolidated note could replace."""

    id: str
    kind: ClusterKind
    reason: str
    notes: tuple[NoteText, ...]
    # The notes a consolidated note would supersede (a dialog is kept as the record it is).
    replaceable: tuple[str, ...] = field(default=())


def supersede_links(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths a note's front matter names under `supersedes`: wikilinks or plain paths."""
    value = meta.get("supersedes")
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    found: list[str] = []
    for item in items:
        if isinstance(item, str):
            found.extend(wikilinks(item) or [item.strip()])
    return tuple(dict.fromkeys(p.strip().lstrip("/") for p in found if p.strip()))


def word_list(text: str) -> list[str]:
    """The words a note is compared by, in order: lower case, short ones left out, CJK characters one by one."""
    found: list[str] = []
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            found.extend(_CJK.findall(word))
        elif len(word) >= MIN_WORD_CHARS:
            found.append(word)
    return found


def words(text: str) -> set[str]:
    return set(word_list(text))


def find_clusters(notes: Sequence[NoteText]) -> list[Cluster]:
    """Every cluster among `notes` (the files of one workspace), chains first, each note in one."""
    by_path = {note.path: note for note in notes if not note.is_dialog}
    superseded = {target for note in by_path.values() for target in note.supersedes if target != note.path}
    current = [note for note in by_path.values() if note.path not in superseded]
    weights = _weights(notes)
    taken: set[str] = set()
    clusters: list[Cluster] = []
    for found in (
        _chains(by_path),
        _duplicates(current, weights),
        _restated_dialogs(current, [n for n in notes if n.is_dialog], weights),
        _topics(current),
    ):
        for cluster in found:
            fresh = [p for p in cluster.replaceable if p not in taken]
            if len(cluster.notes) < 2 or len(fresh) < len(cluster.replaceable):
                continue
            taken.update(cluster.replaceable)
            clusters.append(cluster)
    return clusters


def cluster_id(kind: str, paths: Iterable[str]) -> str:
    """A short name for a cluster that stays the same while its notes do."""
    digest = hashlib.sha256("\n".join([kind, *sorted(paths)]).encode("utf-8")).hexdigest()
    return f"{kind}-{digest[:8]}"


def _cluster(kind: ClusterKind, reason: str, members: list[NoteText], replaceable: list[str]) -> Cluster:
    members = sorted(members, key=lambda n: (n.date, n.path))[-MAX_CLUSTER_NOTES:]
    kept = {n.path for n in members}
    replace = tuple(p for p in replaceable if p in kept)
    return Cluster(cluster_id(kind, [f"{n.path}#{n.line}" for n in members]), kind, reason, tuple(members), replace)


# ---- the four kinds ----------------------------------------------------------------------------


def _chains(by_path: Mapping[str, NoteText]) -> list[Cluster]:
    """Components of the `supersedes` graph that are not settled: the current note does not name
    every other member itself."""
    links = {path: [t for t in note.supersedes if t in by_path and t != path] for path, note in by_path.items()}
    groups = _components(by_path, [(a, b) for a, targets in links.items() for b in targets])
    clusters = []
    for group in groups:
        if len(group) < 3:
            continue
        named = {t for p in group for t in links[p]}
        heads = [p for p in group if p not in named]
        if len(heads) == 1 and set(links[heads[0]]) >= set(group) - {heads[0]}:
            continue
        members = [by_path[p] for p in group]
        reason = f"{len(group)} versions of one fact linked by supersedes; the newest is {', '.join(heads)}"
        clusters.append(_cluster("chain", reason, members, sorted(group)))
    return clusters


def _duplicates(current: list[NoteText], weights: WordWeights) -> list[Cluster]:
    orders = [word_list(note.text) for note in current]
    sets = [set(order) for order in orders]
    scored = [
        (_similarity(sets[i], sets[j], weights), current[i].path, current[j].path)
        for i, j in _candidate_pairs(sets, sets, weights)
        if i < j
        and _similarity(sets[i], sets[j], weights) >= DUPLICATE_SIMILARITY
        and min(_own_runs(orders[i], sets[j]), _own_runs(orders[j], sets[i])) <= MAX_OWN_RUNS
    ]
    by_path = {note.path: note for note in current}
    clusters = []
    for group in _complete_groups([(a, b) for _, a, b in sorted(scored, reverse=True)]):
        if len(group) < 2:
            continue
        members = [by_path[p] for p in group]
        reason = f"{len(group)} current notes share most of their words (copies, or versions of one fact)"
        clusters.append(_cluster("duplicates", reason, members, sorted(group)))
    return clusters


def _restated_dialogs(current: list[NoteText], messages: list[NoteText], weights: WordWeights) -> list[Cluster]:
    """A note and the dialog message holding most of its words (the note keeps the dialog's fact)."""
    mine = [words(note.text) for note in current]
    theirs = [words(message.text) for message in messages]
    best: dict[int, tuple[float, int]] = {}
    for i, j in _candidate_pairs(mine, theirs, weights):
        if messages[j].path in current[i].links:  # already names where it came from: settled
            continue
        share = _containment(mine[i], theirs[j], weights)
        if share >= DIALOG_CONTAINMENT and share > best.get(i, (0.0, -1))[0]:
            best[i] = (share, j)
    clusters = []
    for i, (_, j) in sorted(best.items()):
        note, message = current[i], messages[j]
        reason = f"{note.path} restates what was said in {message.path} (line {message.line})"
        clusters.append(_cluster("dialog", reason, [note, message], [note.path]))
    return clusters


def _topics(current: list[NoteText]) -> list[Cluster]:
    by_tag: dict[str, list[NoteText]] = {}
    for note in current:
        if len(note.text) <= SMALL_NOTE_CHARS:
            for tag in note.tags:
                by_tag.setdefault(tag.strip().lower(), []).append(note)
    clusters = []
    for tag, members in sorted(by_tag.items(), key=lambda item: -len(item[1])):
        if tag and len(members) >= TOPIC_MIN_NOTES:
            reason = f"{len(members)} small notes tagged {tag!r}"
            clusters.append(_cluster("topic", reason, members, sorted(n.path for n in members)))
    return clusters


# ---- similarity and grouping ------------------------------------------------------------------


@dataclass(frozen=True)
class WordWeights:
    """Each word's inverse document frequency over a workspace's notes and messages, and the least
    weight of a word that pairs notes up for comparison (a rare one)."""

    idf: dict[str, float]
    pairing: float

    def get(self, word: str, default: float = 0.0) -> float:
        return self.idf.get(word, default)


def _weights(notes: Sequence[NoteText]) -> WordWeights:
    counts: Counter[str] = Counter()
    for note in notes:
        counts.update(words(note.text))
    total = max(len(notes), 1)
    cap = max(PAIRING_MIN_FILES, RARE_WORD_SHARE * total)
    idf = {word: math.log((total + 1) / (count + 0.5)) for word, count in counts.items()}
    return WordWeights(idf, math.log((total + 1) / (cap + 0.5)))


def _candidate_pairs(left: Sequence[set[str]], right: Sequence[set[str]], weights: WordWeights) -> set[tuple[int, int]]:
    """Index pairs (left, right) worth comparing: the right one holds at least two of the left one's
    rarest words (one, for a note of one word). Copies and versions share most of their rare words;
    a workspace of thousands of notes is then not compared pair by pair."""
    postings: dict[str, list[int]] = {}
    for j, found in enumerate(right):
        for word in found:
            if weights.get(word) >= weights.pairing:
                postings.setdefault(word, []).append(j)
    pairs: set[tuple[int, int]] = set()
    for i, found in enumerate(left):
        keys = sorted(found, key=lambda w: (-weights.get(w), w))[:PAIRING_KEYS]
        hits: Counter[int] = Counter()
        for word in keys:
            holders = postings.get(word, ())
            if len(holders) <= MAX_POSTINGS:
                hits.update(holders)
        need = min(PAIRING_SHARED, len(keys))
        pairs.update((i, j) for j, count in hits.items() if count >= need)
    return pairs


def _own_runs(order: list[str], other: set[str]) -> int:
    """How many runs of consecutive words of a note the other note lacks: the slots it fills its own way."""
    runs, inside = 0, False
    for word in order:
        own = word not in other
        runs += own and not inside
        inside = own
    return runs


def _similarity(a: set[str], b: set[str], weights: WordWeights) -> float:
    union = sum(weights.get(w, 0.0) for w in a | b)
    return sum(weights.get(w, 0.0) for w in a & b) / union if union > 0 else 0.0


def _containment(part: set[str], whole: set[str], weights: WordWeights) -> float:
    mine = sum(weights.get(w, 0.0) for w in part)
    return sum(weights.get(w, 0.0) for w in part & whole) / mine if mine > 0 else 0.0


def _complete_groups(pairs: list[tuple[str, str]]) -> list[list[str]]:
    """Groups in which every two notes form a pair, built from the best pairs first: unlike connected
    components, A~B and B~C do not put A with C (one template filled three ways is not one fact)."""
    linked = {frozenset(pair) for pair in pairs}
    group_of: dict[str, set[str]] = {}
    for a, b in pairs:
        ga, gb = group_of.get(a, {a}), group_of.get(b, {b})
        if ga is gb or not all(frozenset((x, y)) in linked for x in ga for y in gb):
            continue
        merged = ga | gb
        for node in merged:
            group_of[node] = merged
    unique = {id(g): g for g in group_of.values()}
    return sorted(sorted(g) for g in unique.values())


def _components(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Connected groups of `nodes` under `edges`, each sorted, in order of their first node."""
    parent = {node: node for node in nodes}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in edges:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for node in sorted(parent):
        groups.setdefault(root(node), []).append(node)
    return list(groups.values())
