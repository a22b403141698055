"""Clusters worth consolidating, found in real workspaces on disk (ops/consolidation/tidy.py over ops/consolidation/clusters.py)."""

from __future__ import annotations

import json
from pathlib import Path

from reme_mcp.ops.consolidation.clusters import Cluster
from reme_mcp.ops.consolidation.tidy import workspace_clusters
from reme_mcp.storage.workspace import Workspace

FILLER = [
    "The staging database is refreshed from production every Sunday night.",
    "Lena owns the mobile release checklist and signs off each build.",
    "The design system lives in the ui-kit package with its own changelog.",
    "Incident reviews happen on Thursdays within a week of the outage.",
    "The analytics export runs at 02:00 UTC and lands in the warehouse bucket.",
    "Feature flags are managed in Unleash; stale flags are removed each quarter.",
]


def _note(root: Path, path: str, body: str, **meta: object) -> None:
    front = "".join(f"{key}: {json.dumps(value)}\n" for key, value in meta.items())
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"---\nname: {target.stem}\n{front}---\n{body}\n", encoding="utf-8")


def _filler(root: Path) -> None:
    for number, text in enumerate(FILLER):
        _note(root, f"daily/2026-03-0{number + 1}/filler-{number}.md", text)


def _clusters(root: Path) -> list[Cluster]:
    return workspace_clusters(Workspace(root))


def _paths(cluster: Cluster) -> set[str]:
    return {note.path for note in cluster.notes}


def test_copies_of_one_decision_from_remember_and_a_teammate_form_one_cluster(tmp_path: Path) -> None:
    _filler(tmp_path)
    _note(tmp_path, "daily/2026-04-01/queue.md", "We decided to move the job queue from RabbitMQ to NATS JetStream.")
    _note(
        tmp_path, "daily/2026-04-02/queue-teammate.md", "Decided: the job queue moves from RabbitMQ to NATS JetStream."
    )
    _note(tmp_path, "daily/2026-04-03/queue-again.md", "Job queue: we move from RabbitMQ to NATS JetStream (decided).")
    clusters = _clusters(tmp_path)
    assert [c.kind for c in clusters] == ["duplicates"]
    assert _paths(clusters[0]) == {
        "daily/2026-04-01/queue.md",
        "daily/2026-04-02/queue-teammate.md",
        "daily/2026-04-03/queue-again.md",
    }
    assert set(clusters[0].replaceable) == _paths(clusters[0])


def test_notes_sharing_only_a_boilerplate_sentence_are_not_clustered(tmp_path: Path) -> None:
    tail = " Questions go to #platform-help."
    _note(tmp_path, "daily/2026-05-01/vpn.md", "The VPN profile is rotated every ninety days by IT." + tail)
    _note(tmp_path, "daily/2026-05-02/review.md", "Design reviews need two approvers from other teams." + tail)
    _note(tmp_path, "daily/2026-05-03/backups.md", "Backups are verified by a restore drill each month." + tail)
    _note(tmp_path, "daily/2026-05-04/train.md", "The release train leaves every second Wednesday." + tail)
    _note(tmp_path, "daily/2026-05-05/orders.md", "The orders service caches its catalogue in Redis.")
    _note(tmp_path, "daily/2026-05-06/billing.md", "The billing service caches its invoices in Memcached.")
    # One template, two things: the words each holds alone (a person, a product) say so.
    _note(tmp_path, "daily/2026-05-07/pair-1.md", "Paired with Ines on the checkout flaky test; a timezone assumption.")
    _note(tmp_path, "daily/2026-05-08/pair-2.md", "Paired with Jonas on the exports flaky test; a timezone assumption.")
    assert _clusters(tmp_path) == []


def test_a_chain_of_versions_is_a_cluster_until_one_note_supersedes_all(tmp_path: Path) -> None:
    _filler(tmp_path)
    _note(tmp_path, "daily/2026-01-05/ci.md", "CI runs on Jenkins.")
    _note(
        tmp_path, "daily/2026-02-05/ci-2.md", "CI moved to GitHub Actions.", supersedes=["[[daily/2026-01-05/ci.md]]"]
    )
    _note(tmp_path, "daily/2026-03-05/ci-3.md", "CI moved to Buildkite.", supersedes=["[[daily/2026-02-05/ci-2.md]]"])
    clusters = _clusters(tmp_path)
    assert [c.kind for c in clusters] == ["chain"]
    assert "daily/2026-03-05/ci-3.md" in clusters[0].reason
    assert len(clusters[0].replaceable) == 3

    # What the consolidate prompt leads to: one note naming every member; the chain is settled.
    everyone = [f"[[{path}]]" for path in clusters[0].replaceable]
    _note(
        tmp_path, "daily/2026-03-06/ci-now.md", "CI runs on Buildkite (before: Jenkins, Actions).", supersedes=everyone
    )
    assert _clusters(tmp_path) == []


def test_a_note_restating_a_dialog_message_is_clustered_with_it(tmp_path: Path) -> None:
    _filler(tmp_path)
    said = "Let's pin the Postgres major version to 16 until the extension catches up."
    lines = [
        {"role": "user", "name": "user", "content": [{"type": "text", "text": "What about the database?"}]},
        {"role": "user", "name": "user", "content": [{"type": "text", "text": said}]},
    ]
    dialog = tmp_path / "session/dialog/s1.jsonl"
    dialog.parent.mkdir(parents=True)
    dialog.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    _note(
        tmp_path, "daily/2026-06-01/postgres.md", "Pin the Postgres major version to 16 until the extension catches up."
    )
    clusters = _clusters(tmp_path)
    assert [c.kind for c in clusters] == ["dialog"]
    assert clusters[0].replaceable == ("daily/2026-06-01/postgres.md",)
    assert [(n.path, n.line) for n in clusters[0].notes if n.is_dialog] == [("session/dialog/s1.jsonl", 2)]

    # The consolidated note names the dialog it came from: settled.
    everyone = ["[[daily/2026-06-01/postgres.md]]"]
    body = "Postgres stays on major version 16 until the extension catches up ([[session/dialog/s1.jsonl]])."
    _note(tmp_path, "daily/2026-06-02/postgres-kept.md", body, supersedes=everyone)
    assert _clusters(tmp_path) == []


def test_many_small_notes_on_one_tag_form_a_topic(tmp_path: Path) -> None:
    facts = ["Lint with ruff.", "Format with ruff format.", "Type-check with mypy strict.", "Test with pytest -x."]
    for number, fact in enumerate(facts):
        _note(tmp_path, f"daily/2026-07-0{number + 1}/tooling-{number}.md", fact, tags=["tooling"])
    _note(tmp_path, "daily/2026-07-09/other.md", "Deploys go out on Tuesdays.", tags=["deploys"])
    clusters = _clusters(tmp_path)
    assert [c.kind for c in clusters] == ["topic"]
    assert len(clusters[0].notes) == 4 and "tooling" in clusters[0].reason


def test_cluster_ids_stay_the_same_while_the_notes_do(tmp_path: Path) -> None:
    _filler(tmp_path)
    _note(tmp_path, "daily/2026-04-01/a.md", "The nightly build publishes artefacts to the S3 bucket nightly-builds.")
    _note(tmp_path, "daily/2026-04-02/b.md", "Nightly build publishes artefacts to S3 bucket nightly-builds.")
    first, again = _clusters(tmp_path), _clusters(tmp_path)
    assert len(first) == 1 and [c.id for c in first] == [c.id for c in again]
    assert first[0].id.startswith("duplicates-")
