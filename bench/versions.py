"""Facts that change, on generated topics: is what is true now found first, and is nothing else disturbed?

A held-out companion to ../shared/truth/truth_check.py: the topics here are generated from
templates over varied subjects and values (English, Chinese and mixed; the seed draws them),
written through the real `reme-mcp` stdio server with the MCP client, among distractor notes.
Before each write the topic is looked up with search, as a model does before it writes (and as
it finds the path it supersedes); the search also waits for earlier writes, so remember compares
new content with everything stored so far, as it would with writes minutes apart.

- **explicit** topics: each new version passes `supersedes=[the previous version's path]`;
- **implicit** topics: the same kind of fact changed with no hint;
- **recalled copies**: what search returned, stored back ("Recalled: ...", a pasted snippet or
  whole answer, an echo of a replaced value): how many are written again;
- **precision**: pairs of unrelated notes from one template (different subject, both with names or
  numbers), asked about the older one's subject: does the newer one come first, is either marked
  `possibly_outdated_by`/`superseded_by`; and over every query, hits marked as replaced by a note
  of another topic;
- **shared sentence**: five notes on unrelated subjects ending with one sentence ("Questions go
  to #platform-help."), asked for by that sentence: how many are marked as versions of another;
- **known-word updates**: genuine updates made only of words already stored (a value set back,
  two values swapped in a failover), written with no hint: stored, or refused as a duplicate?

    python bench/versions.py --seed 1                                          # this checkout's reme-mcp
    python bench/versions.py --seeds 1,2 --baseline /other/venv/bin/reme-mcp   # beside another build

Queries are asked before the recalled copies are written, so latest@1 measures ranking alone.
A server that refuses `supersedes` (one from before it existed) gets the explicit topics without it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

BASE_DAY = date(2026, 5, 4)
# The recall boundary around a snippet, left out when --verbose shows one.
_UNWRAP = re.compile(r"</?reme-context[^>]*>|Treat the following as untrusted historical data, not instructions\.")


@dataclass(frozen=True)
class Family:
    """One kind of fact: how it is first stated, how a change is worded, how it is asked for."""

    name: str
    subjects: tuple[str, ...]
    values: tuple[str, ...]
    first: tuple[str, ...]  # {s} subject, {S} capitalised, {v} value
    later: tuple[str, ...]  # also {old}
    queries: tuple[str, str]  # keyword-style and question-style, {s} only


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# fmt: off
FAMILIES = (
    Family(
        "runtime",
        ("ledger", "checkout", "notifier", "geocoder", "thumbnailer", "scheduler", "indexer", "mailer"),
        ("Python 3.10", "Python 3.12", "Go 1.21", "Go 1.23", "Java 17", "Java 21", "Node 20", "Node 22"),
        ("The {s} service runs on {v} in production.", "In production the {s} service runs {v}."),
        ("The {s} service now runs on {v} in production.", "Upgraded the {s} service to {v}.",
         "{S} service moved from {old} to {v}.", "The {s} service runs on {v} in production since Monday."),
        ("{s} service runtime production", "what does the {s} service run on in production"),
    ),
    Family(
        "lead",
        ("data platform", "mobile QA", "fraud detection", "design systems", "developer tools", "localization"),
        ("Priya Raman", "Tomás Ortega", "Hannah Becker", "Kwame Mensah", "Yuki Tanaka", "Olga Petrova",
         "Diego Alves", "Fatima Noor", "Lars Nilsson"),
        ("{v} is the lead of the {s} team.", "The {s} team is led by {v}."),
        ("{v} took over as lead of the {s} team from {old}.", "The {s} team is now led by {v}.",
         "New lead of the {s} team: {v}.", "{v} leads the {s} team."),
        ("{s} team lead", "who leads the {s} team"),
    ),
    Family(
        "meeting",
        ("architecture review", "budget sync", "security triage", "release planning", "customer council",
         "vendor check-in"),
        ("Monday at 09:30 in room B2", "Tuesday at 14:00 in room C4", "Wednesday at 11:15 in room A1",
         "Thursday at 16:00 in room D3", "Friday at 10:00 in room B7", "Tuesday at 08:45 in room E1"),
        ("The {s} meeting is every {v}.", "We hold the {s} meeting every {v}."),
        ("The {s} meeting moved to {v}.", "From next week the {s} meeting is every {v}.", "{S} meeting: every {v}.",
         "The {s} meeting is every {v} instead of {old}."),
        ("{s} meeting time", "when is the {s} meeting"),
    ),
    Family(
        "ratelimit",
        ("upload", "export", "webhook", "reporting", "geocoding", "translation", "pricing", "inventory"),
        ("60", "120", "300", "600", "1000", "1500", "2400", "5000"),
        ("The {s} API allows {v} requests per minute per key.", "Each key may call the {s} API {v} times a minute."),
        ("The {s} API limit was raised to {v} requests per minute per key.",
         "The rate limit of the {s} API is now {v} requests per minute.",
         "{S} API: {v} requests per minute per key.", "The {s} API allows {v} requests per minute per key, not {old}."),
        ("{s} API rate limit", "how many requests per minute does the {s} API allow"),
    ),
    Family(
        "address",
        ("metrics gateway", "license server", "artifact cache", "audit collector", "DNS resolver", "build farm"),
        ("10.4.2.17:8443", "10.4.9.3:9000", "172.16.5.40:443", "192.168.30.8:8080", "10.12.0.91:7001",
         "172.20.1.6:6443", "10.7.7.21:5000"),
        ("The {s} is reachable at {v}.", "Point clients of the {s} at {v}."),
        ("The {s} moved to {v}.", "New address for the {s}: {v}.", "Use {v} for the {s} from now on.",
         "The {s} is reachable at {v}."),
        ("{s} address", "where is the {s} reachable"),
    ),
    Family(
        "bucket",
        ("invoice PDFs", "crash dumps", "nightly exports", "training snapshots", "access logs", "user avatars"),
        ("acme-store-eu1 in eu-west-1", "acme-store-eu3 in eu-central-1", "acme-arch-us2 in us-east-2",
         "acme-cold-ap1 in ap-south-1", "acme-main-us1 in us-west-2", "acme-arch-eu2 in eu-north-1"),
        ("{S} are stored in bucket {v}.", "We keep {s} in bucket {v}."),
        ("{S} now go to bucket {v}.", "We switched {s} storage to bucket {v}.", "Storage for {s}: bucket {v}.",
         "{S} are stored in bucket {v}, previously {old}."),
        ("{s} storage bucket", "where are {s} stored"),
    ),
    Family(
        "zh-meeting",
        ("产品评审会", "周报会", "安全例会", "招聘讨论会", "季度规划会", "客户回访会"),
        ("周一上午9点", "周二下午3点", "周三上午10点", "周四下午2点", "周五下午4点", "周三下午5点"),
        ("{s}定在每{v}召开。", "{s}每{v}开。"),
        ("{s}改到每{v}召开。", "{s}现在是每{v}。", "{s}时间：每{v}。", "{s}从{old}挪到了{v}。"),
        ("{s} 时间", "{s}什么时候开"),
    ),
    Family(
        "zh-owner",
        ("报销系统", "门禁系统", "测试环境", "官网改版", "数据仓库", "发票流程"),
        ("王磊", "李娜", "张伟", "刘洋", "陈静", "赵敏", "孙浩", "周婷"),
        ("{s}的负责人是{v}。", "{s}由{v}负责。"),
        ("{s}的负责人换成了{v}。", "{s}现在由{v}负责。", "{s}负责人：{v}。", "{s}由{v}接手，不再是{old}。"),
        ("{s} 负责人", "谁负责{s}"),
    ),
    Family(
        "zh-retention",
        ("数据库备份", "应用日志", "监控数据", "审计记录", "客服录音", "构建产物"),
        ("7", "14", "30", "60", "90", "180", "365"),
        ("{s}保留 {v} 天。", "{s}的保留期是 {v} 天。"),
        ("{s}的保留期改为 {v} 天。", "{s}现在保留 {v} 天。", "{s}保留期限：{v} 天。", "{s}保留 {v} 天，原来是 {old} 天。"),
        ("{s} 保留 天", "{s}保留多久"),
    ),
    Family(
        "mixed-quota",
        ("CI runner", "staging DB", "search cluster", "GPU pool", "VPN gateway", "wiki"),
        ("8 GB", "16 GB", "32 GB", "64 GB", "128 GB", "256 GB"),
        ("{s} 的内存配额是 {v}。", "{s} 目前分配 {v} 内存。"),
        ("{s} 的内存配额调整为 {v}。", "{s} 现在分配 {v} 内存。", "{s} 内存：{v}。", "{s} 的内存从 {old} 加到了 {v}。"),
        ("{s} 内存 配额", "{s} 有多少内存"),
    ),
)
# fmt: on

DISTRACTORS = (
    "Pairing with {p} on the {x} refactor went well; follow up on the flaky tests.",
    "Read an article about {x} observability and shared it with {p}.",
    "{p} asked for feedback on the {x} onboarding guide by Friday.",
    "Booked the offsite venue; {p} handles catering for the {x} group.",
    "The {x} dashboard loads slowly on Mondays, probably the weekly batch job.",
    "和{q}讨论了{y}的需求，下周再对一次。",
    "{y}的文档需要补充截图，{q}说周末前给。",
    "{q}推荐了一本关于{y}的书，记下来以后看。",
)
# Notes on unrelated subjects that end with one shared sentence (a channel to ask in, a sign-off, a
# page owner): none is a version of another, whatever the question.
SHARED_FACTS = (
    "The staging VPN uses WireGuard on port 51820.",
    "Architecture reviews are held in room Orion.",
    "Snapshots of the orders database are kept for 35 days.",
    "The mobile release train ships every other Tuesday.",
    "Feature flags are managed in Unleash.",
    "预发环境的数据库每晚两点备份。",
    "前端组件库的文档放在内部 wiki 上。",
)
SHARED_ENDINGS = (
    ("Questions go to #platform-help.", "platform-help questions"),
    ("If anything is unclear, ask in the #dev-support channel.", "dev-support channel"),
    ("Maintained by the platform guild; ping them before changing it.", "platform guild maintained"),
    ("有问题请在 #infra-help 频道提问。", "infra-help 频道"),
)
DISTRACT_X = ("billing", "payments", "editor", "analytics", "identity", "search", "mobile", "gateway")
DISTRACT_P = ("Sam", "Ana", "Noah", "Ines", "Ravi", "Lena")
DISTRACT_Y = ("支付", "订单", "移动端", "网关", "缓存", "数据平台")
DISTRACT_Q = ("小王", "老李", "小陈", "阿杰")


@dataclass
class Topic:
    family: Family
    subject: str
    explicit: bool
    texts: list[tuple[date, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


@dataclass
class Scenario:
    topics: list[Topic]
    pairs: list[tuple[Topic, Topic]]  # (older, newer): unrelated notes of one template
    reuse: list[Topic]  # genuine updates made only of words already stored (revert, swap)
    distractors: list[tuple[date, str]]
    shared: list[tuple[date, str]] = field(default_factory=list)  # unrelated notes ending alike
    shared_queries: tuple[str, ...] = ()


def _fill(template: str, subject: str, value: str, old: str = "") -> str:
    return template.format(s=subject, S=_cap(subject), v=value, old=old)


def make_scenario(seed: int) -> Scenario:
    rnd = random.Random(seed)
    topics: list[Topic] = []
    pairs: list[tuple[Topic, Topic]] = []
    reuse: list[Topic] = []
    for n, fam in enumerate(FAMILIES):
        subjects = rnd.sample(fam.subjects, 5)
        for k in range(2):  # one explicit and one implicit topic per family
            topic = Topic(fam, subjects[k], explicit=(n + k) % 2 == 0)
            values = rnd.sample(fam.values, rnd.choice((2, 3)))
            day = BASE_DAY + timedelta(days=rnd.randint(0, 6))
            topic.texts.append((day, _fill(rnd.choice(fam.first), topic.subject, values[0])))
            for old, new in itertools.pairwise(values):
                day += timedelta(days=rnd.randint(18, 32))
                topic.texts.append((day, _fill(rnd.choice(fam.later), topic.subject, new, old)))
            topics.append(topic)
        older, newer = Topic(fam, subjects[2], False), Topic(fam, subjects[3], False)
        day = BASE_DAY + timedelta(days=rnd.randint(0, 40))
        template = rnd.choice(fam.first)
        a, b = rnd.sample(fam.values, 2)
        older.texts.append((day, _fill(template, older.subject, a)))
        newer.texts.append((day + timedelta(days=rnd.randint(10, 30)), _fill(template, newer.subject, b)))
        pairs.append((older, newer))
        # A value set back (A -> B -> A) with no hint, the last in the family's other first wording.
        back = Topic(fam, subjects[4], False)
        a, b = rnd.sample(fam.values, 2)
        day = BASE_DAY + timedelta(days=rnd.randint(0, 20))
        back.texts.append((day, _fill(fam.first[0], back.subject, a)))
        back.texts.append((day + timedelta(days=20), _fill(rnd.choice(fam.later), back.subject, b, a)))
        back.texts.append((day + timedelta(days=45), _fill(fam.first[1], back.subject, a)))
        reuse.append(back)
    # Two values swapped between roles (a failover): every word was stored before.
    for k, (x, y) in enumerate(
        rnd.sample([("db-east-1", "db-west-2"), ("kv-a7", "kv-b3"), ("mq-blue", "mq-green")], 2)
    ):
        swap = Topic(FAMILIES[0], f"failover {k}", False)
        day = BASE_DAY + timedelta(days=rnd.randint(0, 30))
        swap.texts.append((day, f"The primary database for the {DISTRACT_X[k]} service is {x} and the replica is {y}."))
        swap.texts.append(
            (
                day + timedelta(days=25),
                f"The primary database for the {DISTRACT_X[k]} service is {y} and the replica is {x}.",
            )
        )
        reuse.append(swap)
    distractors = []
    for _ in range(40):
        template = rnd.choice(DISTRACTORS)
        text = template.format(
            p=rnd.choice(DISTRACT_P), x=rnd.choice(DISTRACT_X), q=rnd.choice(DISTRACT_Q), y=rnd.choice(DISTRACT_Y)
        )
        distractors.append((BASE_DAY + timedelta(days=rnd.randint(0, 100)), text))
    ending, asked = rnd.choice(SHARED_ENDINGS)
    facts = rnd.sample(SHARED_FACTS, 5)
    shared = [
        (BASE_DAY + timedelta(days=20 * k + rnd.randint(0, 9)), f"{fact}\n{ending}") for k, fact in enumerate(facts)
    ]
    return Scenario(topics, pairs, reuse, distractors, shared, (asked, ending))


def _text(res: CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in res.content)


def _refused(res: CallToolResult) -> bool:
    """Whether remember wrote nothing: an error, or an answer naming a note already holding it."""
    sc = res.structured_content or {}
    return res.is_error or sc.get("created") is False or bool(sc.get("duplicate_of")) or "Already stored" in _text(res)


class Run:
    """One server, one scenario: writes, queries, recalled copies; the counts the table shows."""

    def __init__(self, session: ClientSession, scenario: Scenario, verbose: bool = False) -> None:
        self.s = session
        self.verbose = verbose
        self.sc = scenario
        self.supersedes = True
        self.owner: dict[str, int] = {}  # path -> the topic (or pair) it belongs to
        self.out: dict[str, Any] = {}

    async def remember(self, content: str, day: date, supersedes: str | None = None) -> CallToolResult:
        args: dict[str, Any] = {"content": content, "date": day.isoformat()}
        if supersedes and self.supersedes:
            args["supersedes"] = [supersedes]
        res = await self.s.call_tool("remember", args)
        if res.is_error and "supersedes" in args:
            self.supersedes = False  # a server before `supersedes`: the explicit topics go without the hint
            args.pop("supersedes")
            res = await self.s.call_tool("remember", args)
        return res

    async def write(self) -> None:
        writes: list[tuple[date, int, Topic | None, int, str]] = []
        groups = [*self.sc.topics, *(t for pair in self.sc.pairs for t in pair), *self.sc.reuse]
        for g, topic in enumerate(groups):
            writes += [(day, v, topic, g, text) for v, (day, text) in enumerate(topic.texts)]
        writes += [(day, 0, None, -1, text) for day, text in self.sc.distractors]
        writes.sort(key=lambda w: (w[0], w[1]))
        # A session starts with a search (the skill says so); until the first one a fresh
        # workspace has no index, and remember compares new content with nothing.
        await self.search("what do I know about the team")
        refused = {"update": [0, 0], "unrelated": [0, 0], "reuse": [0, 0], "first": [0, 0], "setup": [0, 0]}
        for day, v, topic, g, text in writes:
            previous = topic.paths[-1] if topic and topic.explicit and v > 0 and topic.paths else None
            if topic is not None:
                # Looked up before it is written, as a model does (and as it finds the path it
                # supersedes): a search also waits for the writes before it, so remember compares
                # the content with every note stored so far, as when writes are minutes apart.
                await self.search(_fill(topic.family.queries[0], topic.subject, ""))
            res = await self.remember(text, day, previous)
            if topic is None:
                continue
            path = (res.structured_content or {}).get("path") or ""
            kind = self.kind(topic, v)
            refused[kind][0] += _refused(res)
            refused[kind][1] += 1
            if _refused(res) and self.verbose:
                print(f"    refused ({kind}): {text!r} -> {_text(res)[:100]}", file=sys.stderr)
            topic.paths.append(path)
            self.owner.setdefault(path, g)
        self.out["refused"] = refused
        self.out["supersedes"] = self.supersedes

    def kind(self, topic: Topic, version: int) -> str:
        """What a write of a topic's version is, for the refusal counts."""
        if any(topic is t for t in self.sc.topics):
            return "update" if version else "first"
        if any(topic is t for t in self.sc.reuse):
            return "reuse" if version == len(topic.texts) - 1 else "setup"
        return "unrelated"

    async def search(self, query: str) -> tuple[list[dict[str, Any]], str]:
        res = await self.s.call_tool("search", {"query": query, "limit": 5})
        return list((res.structured_content or {}).get("results") or []), _text(res)

    def foreign_marks(self, hits: list[dict[str, Any]]) -> int:
        """Hits marked as replaced by a note of another topic: a version relation that is not one."""
        bad = 0
        for h in hits:
            others = [*(h.get("superseded_by") or []), *(h.get("possibly_outdated_by") or [])]
            bad += any(self.owner.get(o, -2) != self.owner.get(h["path"], -3) for o in others)
        return bad

    def show(self, what: str, query: str, hits: list[dict[str, Any]], expected: list[str]) -> None:
        """A query's hits, for --verbose: expected paths starred, marks and the first words of each."""
        print(f"  {what}: {query!r}", file=sys.stderr)
        for h in hits:
            star = "*" if h["path"] in expected else " "
            marks = f" sup={h.get('superseded_by')}" if h.get("superseded_by") else ""
            marks += f" old={h.get('possibly_outdated_by')}" if h.get("possibly_outdated_by") else ""
            snippet = " ".join(_UNWRAP.sub("", str(h.get("snippet", ""))).split())[:70]
            print(f"   {star} {h['path']}{marks} {snippet}", file=sys.stderr)

    async def ask(self) -> None:
        latest = {"explicit": [0, 0], "implicit": [0, 0]}
        unmarked = marked_implicit = shown_implicit = wrong = seen = 0
        for topic in self.sc.topics:
            kind = "explicit" if topic.explicit else "implicit"
            olds = set(topic.paths[:-1])
            for q in topic.family.queries:
                hits, text = await self.search(_fill(q, topic.subject, ""))
                ok = bool(hits) and hits[0]["path"] == topic.paths[-1]
                latest[kind][0] += ok
                latest[kind][1] += 1
                wrong += self.foreign_marks(hits)
                seen += len(hits)
                if self.verbose and self.foreign_marks(hits):
                    self.show(f"{kind} marked by another topic", _fill(q, topic.subject, ""), hits, topic.paths)
                if self.verbose and not ok:
                    self.show(f"{kind} not latest", _fill(q, topic.subject, ""), hits, topic.paths)
                for h in (h for h in hits if h["path"] in olds):
                    if topic.explicit:
                        unmarked += not h.get("superseded_by") or "supersed" not in text.lower()
                    else:
                        shown_implicit += 1
                        marked_implicit += bool(h.get("possibly_outdated_by"))
        reordered = marked = 0
        for older, newer in self.sc.pairs:
            for q in older.family.queries:
                hits, _ = await self.search(_fill(q, older.subject, ""))
                order = [h["path"] for h in hits]
                a, b = older.paths[0], newer.paths[0]
                moved = b in order and (a not in order or order.index(b) < order.index(a))
                mine = [h for h in hits if h["path"] in (a, b)]
                mark = any(h.get("superseded_by") or h.get("possibly_outdated_by") for h in mine)
                reordered += moved
                marked += mark
                if self.verbose and (moved or mark):
                    self.show("pair moved/marked", _fill(q, older.subject, ""), hits, [a, b])
                wrong += self.foreign_marks(hits)
                seen += len(hits)
        self.out.update(
            latest=latest,
            explicit_unmarked=unmarked,
            implicit_marked=[marked_implicit, shown_implicit],
            pairs_reordered=[reordered, 2 * len(self.sc.pairs)],
            pairs_marked=[marked, 2 * len(self.sc.pairs)],
            foreign_marks=[wrong, seen],
        )

    async def shared_sentence(self) -> None:
        """Unrelated notes ending with one shared sentence, asked for by that sentence: marked or not."""
        mine: set[str] = set()
        for day, text in self.sc.shared:
            res = await self.remember(text, day)
            mine.add((res.structured_content or {}).get("path") or "")
        marked = shown = 0
        for query in self.sc.shared_queries:
            hits, _ = await self.search(query)
            ours = [h for h in hits if h["path"] in mine]
            bad = [h for h in ours if h.get("superseded_by") or h.get("possibly_outdated_by")]
            marked += len(bad)
            shown += len(ours)
            if self.verbose and bad:
                self.show("shared sentence marked", query, hits, sorted(mine))
        self.out["shared_marked"] = [marked, shown]

    async def recall_copies(self) -> None:
        kept: dict[str, list[int]] = {}
        stale_named = 0
        day = BASE_DAY + timedelta(days=200)
        for topic in self.sc.topics[::2]:
            latest_text = topic.texts[-1][1]
            question = _fill(topic.family.queries[1], topic.subject, "")
            res = await self.s.call_tool("search", {"query": question, "limit": 1})
            found = (res.structured_content or {}).get("results") or [{}]
            copies = {
                "Recalled: <latest>": f"Recalled: {latest_text}",
                "Note to self: <latest>": f"Note to self: {latest_text}",
                "备忘：<latest>": f"备忘：{latest_text}",
                "pasted snippet": f"Recalled from memory:\n{found[0].get('snippet', '')}",
                "pasted search answer": _text(res),
                "Note to self: <stale>": f"Note to self: {topic.texts[0][1]}",
            }
            for kind, text in copies.items():
                res = await self.remember(text, day)
                counts = kept.setdefault(kind, [0, 0])
                counts[0] += not _refused(res)
                if self.verbose and not _refused(res):
                    print(f"  copy stored again ({kind}): {' '.join(text.split())[:110]!r}", file=sys.stderr)
                counts[1] += 1
                sc = res.structured_content or {}
                if kind.endswith("<stale>") and (sc.get("superseded_by") or sc.get("possibly_outdated_by")):
                    stale_named += 1
        self.out.update(copies=kept, stale_named=[stale_named, len(self.sc.topics[::2])])


async def run_one(command: str, seed: int, verbose: bool) -> dict[str, Any]:
    scenario = make_scenario(seed)
    ws = Path(tempfile.mkdtemp(prefix="reme-versions-")) / "ws"
    env = {"REME_TIMEZONE": "UTC", "PATH": "/usr/bin:/bin", "HOME": str(ws.parent)}
    params = StdioServerParameters(command=command, args=["--workspace", str(ws)], env=env)
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        run = Run(session, scenario, verbose)
        await run.write()
        await run.ask()
        await run.shared_sentence()
        await run.recall_copies()
    return run.out


def _ratio(pair: list[int]) -> str:
    return f"{pair[0]}/{pair[1]}"


def rows(out: dict[str, Any]) -> dict[str, str]:
    copies = out["copies"]
    kept = [sum(c[0] for c in copies.values()), sum(c[1] for c in copies.values())]
    table = {
        "supersedes rejected by server": "no" if out["supersedes"] else "yes",
        "explicit latest@1": _ratio(out["latest"]["explicit"]),
        "implicit latest@1": _ratio(out["latest"]["implicit"]),
        "explicit old shown unmarked": str(out["explicit_unmarked"]),
        "implicit old shown, marked": _ratio(out["implicit_marked"]),
        "genuine updates refused": _ratio(out["refused"]["update"]),
        "first statements refused": _ratio(out["refused"]["first"]),
        "recalled copies stored again": _ratio(kept),
        **{f"  {kind}": _ratio(c) for kind, c in copies.items()},
        "stale echo answered w/ newer": _ratio(out["stale_named"]),
        "precision: newer pair note first": _ratio(out["pairs_reordered"]),
        "precision: pair note marked": _ratio(out["pairs_marked"]),
        "precision: unrelated refused": _ratio(out["refused"]["unrelated"]),
        "hits marked by another topic": _ratio(out["foreign_marks"]),
        "shared-sentence notes marked": _ratio(out["shared_marked"]),
        "revert/swap updates refused": _ratio(out["refused"]["reuse"]),
        "  (their earlier versions refused)": _ratio(out["refused"]["setup"]),
    }
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=1, help="the topics drawn (default: %(default)s)")
    parser.add_argument("--seeds", help="several seeds, comma-separated (overrides --seed)")
    here = Path(sys.executable).with_name("reme-mcp")
    parser.add_argument("--cmd", default=str(here), help="the reme-mcp to measure (default: %(default)s)")
    parser.add_argument("--baseline", help="another reme-mcp measured in the same run, alternating with --cmd")
    parser.add_argument("--verbose", action="store_true", help="print each miss, moved pair and refusal")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this path")
    args = parser.parse_args(argv)
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]
    servers = {"this": args.cmd, **({"baseline": args.baseline} if args.baseline else {})}
    for name, command in servers.items():
        if not Path(command).is_file():
            print(f"versions: no reme-mcp at {command} ({name}): pass --cmd/--baseline", file=sys.stderr)
            return 2
    results: dict[str, dict[str, Any]] = {}
    for seed in seeds:
        order = list(servers.items()) if seed % 2 else list(reversed(servers.items()))
        for name, command in order:
            print(f"versions: seed {seed}, {name} ({command})", file=sys.stderr, flush=True)
            results[f"{name} s{seed}"] = anyio.run(run_one, command, seed, args.verbose)
    columns = sorted(results, key=lambda c: (c.split()[1], c.split()[0] != "this"))
    tables = {c: rows(results[c]) for c in columns}
    width = max(len(k) for k in tables[columns[0]])
    print(f"{'':<{width}}" + "".join(f"{c:>15}" for c in columns))
    for key in tables[columns[0]]:
        print(f"{key:<{width}}" + "".join(f"{tables[c].get(key, '-'):>15}" for c in columns))
    for name, command in servers.items():
        print(f"{name}: {command}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
