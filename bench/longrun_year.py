"""The year bench/longrun.py plays: one project's facts, decisions, files and chatter, month by month.

Every sentence is generated here from small templates over subjects and values the seed draws;
nothing is taken from the shared truth or peers' sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MONTHS = 12
YEAR = 2026

# (family, first wording, later wording, question words, subjects, values)
FAMILIES = [
    (
        "cache",
        "The {s} service caches its lookups in {v}.",
        "The {s} service now caches its lookups in {v}, no longer {old}.",
        "{s} service cache lookups",
        ["orders", "billing", "search", "inventory", "shipping", "catalog"],
        ["Redis", "Memcached", "Valkey", "Hazelcast", "DragonflyDB", "KeyDB"],
    ),
    (
        "mentor",
        "{v} mentors the new hires of the {s} team.",
        "The {s} team's new hires are mentored by {v} now, after {old}.",
        "mentor new hires {s} team",
        ["platform", "mobile", "data", "payments", "growth", "infra"],
        ["Amara", "Bogdan", "Chiara", "Dmitri", "Esther", "Farid", "Greta"],
    ),
    (
        "meeting",
        "The {s} sync meets on {v}.",
        "The {s} sync moved to {v} (it was {old}).",
        "{s} sync meeting day",
        ["roadmap", "architecture", "incident", "hiring", "security", "release"],
        ["Monday mornings", "Tuesday afternoons", "Wednesday mornings", "Thursday evenings", "Friday lunchtimes"],
    ),
    (
        "tool",
        "For {s} the team uses {v}.",
        "We replaced {old} with {v} for {s}.",
        "tool used for {s}",
        ["error tracking", "feature flags", "load testing", "log search", "secret storage", "uptime checks"],
        ["Sentry", "Rollbar", "Unleash", "Flagsmith", "k6", "Locust", "Loki", "Vault", "Gatus", "Bugsnag"],
    ),
    (
        "preference",
        "Noor prefers {v} for {s}.",
        "Noor switched from {old} to {v} for {s}.",
        "Noor prefers {s}",
        ["JavaScript packages", "Python environments", "terminal multiplexing", "diagram drawing"],
        ["npm", "pnpm", "yarn", "uv", "poetry", "tmux", "zellij", "Excalidraw", "draw.io"],
    ),
]

DECISIONS = [
    ("We decided to move the job queue from RabbitMQ to NATS JetStream.", "job queue RabbitMQ NATS"),
    ("We decided that every public endpoint gets rate limiting through Envoy.", "rate limiting public endpoints"),
    ("We decided to keep one Postgres cluster per region instead of a global one.", "Postgres cluster per region"),
]
TEAMMATE = "Decision noted by Priya: {d}"

# (path first written, what it holds, the month it is renamed or removed, where it goes: None = removed)
FILES = [
    ("src/payments/retry.py", "the payment retry logic", 3, "src/payments/retries/policy.py"),
    ("src/auth/session_store.py", "the session store", 5, "src/auth/sessions.py"),
    ("src/legacy/csv_export.py", "the old CSV export", 7, None),
    ("src/api/routes.py", "the HTTP routes", None, None),
    ("src/jobs/scheduler.py", "the job scheduler", 9, None),
    ("src/billing/invoice.py", "invoice rendering", None, None),
]
BOILERPLATE = "Questions go to #eng-help."
CHATTER = [
    "Paired with {p} on the {t} flaky test; it was a timezone assumption.",
    "Reviewed {p}'s change to the {t} dashboards; asked for clearer labels.",
    "Spent the afternoon on {t} docs with {p}.",
    "{p} demoed the new {t} panel at the all-hands.",
    "Cleaned up stale branches in the {t} repository with {p}.",
]
PEOPLE = ["Ines", "Jonas", "Kaito", "Lerato", "Mateo", "Oksana", "Pavel", "Rui"]
TOPICS = ["checkout", "onboarding", "reporting", "notifications", "exports", "permissions"]


@dataclass
class Fact:
    family: str
    subject: str
    values: list[str]  # in the order they become true
    months: list[int]  # the month each value is written (1-based)
    hinted: bool
    first: str
    later: str
    question: str

    def text(self, step: int) -> str:
        value = self.values[step]
        if step == 0:
            return self.first.format(s=self.subject, v=value)
        return self.later.format(s=self.subject, v=value, old=self.values[step - 1])

    def current(self, month: int) -> int | None:
        """The step true at the end of `month`, or None before the first."""
        steps = [i for i, m in enumerate(self.months) if m <= month]
        return steps[-1] if steps else None


@dataclass
class Year:
    facts: list[Fact]
    decisions: list[tuple[int, str, str]]  # (month, sentence, question)
    chatter: dict[int, list[str]] = field(default_factory=dict)


def plan_year(seed: int) -> Year:
    """The seed's year: each family's subjects and values, when each changes, with or without a hint."""
    rng = random.Random(seed)
    facts: list[Fact] = []
    for number, (family, first, later, question, subjects, values) in enumerate(FAMILIES):
        for pick, subject in enumerate(rng.sample(subjects, 2)):
            drawn = rng.sample(values, rng.randint(2, 4))
            months = sorted(rng.sample(range(1, MONTHS + 1), len(drawn)))
            hinted = (number + pick) % 2 == 0
            facts.append(Fact(family, subject, drawn, months, hinted, first, later, question.format(s=subject)))
    decisions = [(rng.randint(2, 11), sentence, query) for sentence, query in DECISIONS]
    chatter: dict[int, list[str]] = {}
    for month in range(1, MONTHS + 1):
        lines = []
        for _ in range(8):
            line = rng.choice(CHATTER).format(p=rng.choice(PEOPLE), t=rng.choice(TOPICS))
            lines.append(line + (" " + BOILERPLATE if rng.random() < 0.4 else ""))
        chatter[month] = lines
    return Year(facts, decisions, chatter)


def day(month: int, number: int) -> str:
    return f"{YEAR}-{month:02d}-{min(number, 28):02d}"
