"""Tests for reme_mcp.index.analysis: the tokens it emits, and retrieval in a real Whoosh index."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import index
from whoosh.fields import ID, TEXT, Schema
from whoosh.qparser import OrGroup, QueryParser
from whoosh.query import Phrase

from reme_mcp.index.analysis import identifier_parts, memory_analyzer, query_term_set


def texts(value: str, mode: str = "index") -> list[str]:
    return [t.text for t in memory_analyzer()(value, mode=mode)]


def tokens(value: str, mode: str = "index") -> list[tuple[str, int, int, int]]:
    ana = memory_analyzer()
    return [(t.text, t.pos, t.startchar, t.endchar) for t in ana(value, positions=True, chars=True, mode=mode)]


class TinyIndex:
    """A real on-disk Whoosh index with one TEXT field analyzed by memory_analyzer."""

    def __init__(self, directory: Path, docs: dict[str, str]) -> None:
        self.schema = Schema(path=ID(stored=True, unique=True), content=TEXT(analyzer=memory_analyzer()))
        ix = index.create_in(str(directory), self.schema)
        with ix.writer() as writer:
            for path, content in docs.items():
                writer.add_document(path=path, content=content)
        # Reopen from disk, so the pickled schema (and its analyzer) is the one used.
        self.ix = index.open_dir(str(directory))

    def search(self, query: str) -> list[str]:
        parser = QueryParser("content", self.ix.schema, group=OrGroup)
        with self.ix.searcher() as searcher:
            return [hit["path"] for hit in searcher.search(parser.parse(query), limit=None)]

    def phrase(self, text: str) -> list[str]:
        words = texts(text, mode="query")
        with self.ix.searcher() as searcher:
            return [hit["path"] for hit in searcher.search(Phrase("content", words), limit=None)]


CORPUS = {
    "secret.md": "这个项目的测试口令是蓝鲸-731",
    "weather.md": "今天北京的天气很好，我们去公园散步。",
    "whale.md": "蓝色的大海里有很多鱼",
    "sushi.md": "東京で寿司を食べた",
    "ramen.md": "大阪でラーメンを食べました",
    "meeting.md": "회의는 금요일에 열립니다",
    "monday.md": "월요일에 점심을 먹었습니다",
    "backend.md": "用 Go 写后端",
    "frontend.md": "用 Python 写前端",
    "release23.md": "升级到 v2.3 之后一切正常",
    "release24.md": "v2.4 released last week",
    "whoosh.md": "pinned whoosh-reloaded 2.7.5 in the lock file",
    "cafe.md": "Meeting at the café on Friday",
    "tea.md": "Meeting at the teahouse on Monday",
    "width.md": "the licence key is abc123 for staging",
    "width2.md": "ＸＹＺ７８９ ticket",
    "snake.md": "call snake_case_name before saving",
    "camel.md": "the CamelCase widget renders twice",
    "file.md": "the bug is in file.py near the top",
    "err.md": "the client failed with ERR_CONN_RESET again",
    "http.md": "getHTTPResponse returns None on timeout",
    "deploy.md": "we deployed the service on Tuesday",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> TinyIndex:
    return TinyIndex(tmp_path_factory.mktemp("ix"), CORPUS)


# --- tokens -----------------------------------------------------------------


def test_cjk_run_becomes_characters_and_overlapping_bigrams() -> None:
    assert texts("口令是") == ["口", "口令", "令", "令是", "是"]
    assert texts("口令是", mode="query") == ["口", "口令", "令", "令是", "是"]
    assert texts("鲸", mode="query") == ["鲸"]


def test_cjk_positions_and_offsets_are_consecutive() -> None:
    assert tokens("口令是 go") == [
        ("口", 0, 0, 1),
        ("口令", 1, 0, 2),
        ("令", 2, 1, 2),
        ("令是", 3, 1, 3),
        ("是", 4, 2, 3),
        ("go", 5, 4, 6),
    ]
    assert tokens("x 蓝鲸", mode="query") == [("x", 0, 0, 1), ("蓝", 1, 2, 3), ("蓝鲸", 2, 2, 4), ("鲸", 3, 3, 4)]


def test_scripts_are_split_at_their_boundaries() -> None:
    assert texts("用Go写后端", mode="query") == ["用", "go", "写", "写后", "后", "后端", "端"]
    assert texts("蓝鲸-731", mode="query") == ["蓝", "蓝鲸", "鲸", "731"]
    assert texts("금요일에 비", mode="query") == ["금", "금요", "요", "요일", "일", "일에", "에", "비"]


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("snake_case_name", ["snake_case_name", "snake", "case", "name"]),
        ("CamelCase", ["camelcas", "camel", "case"]),
        ("file.py", ["file.py", "file", "py"]),
        ("ERR_CONN_RESET", ["err_conn_reset", "err", "conn", "reset"]),
        ("getHTTPResponse", ["gethttprespons", "get", "http", "respons"]),
        ("my_module.MyClass", ["my_module.myclass", "my", "modul", "myclass", "my", "class"]),
        ("v2.3", ["v2.3", "v2", "3"]),
        ("plain", ["plain"]),
    ],
)
def test_identifiers_emit_the_whole_then_the_parts(identifier: str, expected: list[str]) -> None:
    assert texts(identifier) == expected


def test_identifier_parts_are_spans_of_the_original_text() -> None:
    assert identifier_parts("getHTTPResponse") == [(0, 3), (3, 7), (7, 15)]
    assert identifier_parts("word") == []
    assert tokens("x file.py") == [("x", 0, 0, 1), ("file.py", 1, 2, 9), ("file", 2, 2, 6), ("py", 3, 7, 9)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ＡＢＣ１２３", ["abc123"]),
        ("ｖ２．３　ｆｉｌｅ．ｐｙ", ["v2.3", "v2", "3", "file.py", "file", "py"]),  # full-width joiners
        ("Café", ["cafe"]),
        ("cafe\u0301", ["cafe"]),  # decomposed accent stays inside the word
        ("STRASSE Straße", ["strass", "strass"]),
        ("ｶﾞｲﾄﾞ", ["ガ", "ガイ", "イ", "イド", "ド"]),  # half-width katakana folds to full width
        ("が", ["が"]),  # Japanese voicing marks are not accents
    ],
)
def test_width_case_and_accent_folding(text: str, expected: list[str]) -> None:
    assert texts(text, mode="query") == expected


def test_stop_words_are_dropped_only_from_queries() -> None:
    assert texts("the cat is here") == ["the", "cat", "is", "here"]
    assert texts("the cat is here", mode="query") == ["cat", "here"]
    assert texts("the of", mode="query") == []


def test_english_words_are_stemmed() -> None:
    assert texts("deployed deployments running") == ["deploy", "deploy", "run"]


def test_analyzer_survives_pickling_as_whoosh_stores_it() -> None:
    ana = pickle.loads(pickle.dumps(memory_analyzer()))
    assert ana == memory_analyzer()
    assert [t.text for t in ana("Deployed getHTTPResponse 口令")] == [
        *("deploy", "gethttprespons", "get", "http", "respons"),
        *("口", "口令", "令"),
    ]


# --- retrieval in a real index ------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("口令", "secret.md"),
        ("蓝鲸", "secret.md"),
        ("这个项目的测试口令是什么？", "secret.md"),
        ("寿司", "sushi.md"),
        ("금요일", "meeting.md"),
        ("Go 后端", "backend.md"),
        ("v2.3", "release23.md"),
        ("2.7.5", "whoosh.md"),
        ("cafe", "cafe.md"),
        ("CAFÉ", "cafe.md"),
        ("ＡＢＣ１２３", "width.md"),
        ("xyz789", "width2.md"),
        ("deploying", "deploy.md"),
    ],
)
def test_query_finds_the_note_first(corpus: TinyIndex, query: str, expected: str) -> None:
    results = corpus.search(query)
    assert results, f"{query!r} found nothing"
    assert results[0] == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("snake_case_name", "snake.md"),
        ("snake", "snake.md"),
        ("name", "snake.md"),
        ("CamelCase", "camel.md"),
        ("camel", "camel.md"),
        ("case", "camel.md"),
        ("file.py", "file.md"),
        ("file", "file.md"),
        ("py", "file.md"),
        ("ERR_CONN_RESET", "err.md"),
        ("conn", "err.md"),
        ("reset", "err.md"),
        ("getHTTPResponse", "http.md"),
        ("HTTP", "http.md"),
        ("response", "http.md"),
        ("HTTPResponse", "http.md"),
    ],
)
def test_identifiers_are_found_whole_and_by_parts(corpus: TinyIndex, query: str, expected: str) -> None:
    assert expected in corpus.search(query)


def test_two_character_query_ranks_the_bigram_above_a_shared_character(corpus: TinyIndex) -> None:
    # 蓝鲸 shares the character 蓝 with whale.md, but only secret.md has the bigram.
    assert corpus.search("蓝鲸") == ["secret.md", "whale.md"]
    assert corpus.search("后端")[0] == "backend.md"


def test_question_sharing_only_single_characters_finds_the_note(tmp_path: Path) -> None:
    ix = TinyIndex(tmp_path, {"cat.md": "我的猫名叫小白，今年三岁了", "food.md": "昨天晚上吃了火锅，味道很辣"})
    assert ix.search("猫叫什么名字") == ["cat.md"]


def test_single_character_query_finds_its_character(corpus: TinyIndex) -> None:
    assert corpus.search("鲸") == ["secret.md"]


def test_stop_word_only_query_is_empty_not_an_error(corpus: TinyIndex) -> None:
    assert corpus.search("the of") == []


def test_phrase_queries_line_up_with_indexed_positions(corpus: TinyIndex) -> None:
    assert corpus.phrase("测试口令") == ["secret.md"]
    assert corpus.phrase("口令是蓝鲸 731") == ["secret.md"]
    assert corpus.phrase("ERR_CONN_RESET again") == ["err.md"]
    assert corpus.phrase("getHTTPResponse returns") == ["http.md"]
    assert corpus.phrase("口令蓝鲸") == []


# --- robustness ----------------------------------------------------------------

HOSTILE = [
    "",
    "a" * 10_000,
    "口" * 10_000,
    "_".join(["part"] * 3_000),
    "!?.,;:-—…()[]{}«»“”「」。、",
    "\x00\x01\x02\x1b[31m\x7f\u200b\u200d\ufeff",
    "\ud800 lone \udfff surrogates \ud83d",
    "emoji 😀👩‍👩‍👧 🇨🇳 ok",
    "\u0301\u0301 marks first",
    "ﷺ ﬁle ㈱ ½ Ⅻ",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("mode", ["index", "query"])
def test_hostile_input_yields_clean_tokens(text: str, mode: str) -> None:
    seen = tokens(text, mode=mode)
    for term, pos, start, end in seen:
        assert term
        term.encode("utf-8")  # Whoosh stores terms as UTF-8; a lone surrogate would raise.
        assert pos >= 0
        assert 0 <= start < end <= len(text)
    positions = [pos for _, pos, _, _ in seen]
    assert positions == sorted(positions)


def test_hostile_input_indexes_and_searches(tmp_path: Path) -> None:
    docs = {f"h{i}.md": text for i, text in enumerate(HOSTILE)}
    ix = TinyIndex(tmp_path, docs)
    assert "h7.md" in ix.search("emoji")
    assert "h2.md" in ix.search("口口")
    assert ix.search("😀") == []


def test_huge_tokens_are_left_out_but_their_parts_kept() -> None:
    assert texts("a" * 10_000) == []
    assert texts("_".join(["part"] * 3)) == ["part_part_part", "part", "part", "part"]
    assert len(texts("_".join(["part"] * 3_000))) == 3_000


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_analyzes_without_error(text: str) -> None:
    for mode in ("index", "query"):
        for term, _, start, end in tokens(text, mode=mode):
            assert term
            term.encode("utf-8")
            assert 0 <= start <= end <= len(text)


_PIECES = [
    *"abcXYZ_-./@:' 09",
    "the",
    "deploys",
    "getHTTPResponse",
    "file.py",
    "Café",
    "ＡＢＣ１",
    "口令是",
    "が",
    "ｶﾞ",
    "\u0301",
    "ﬁ",
]
_MIXED = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), _MIXED))
def test_query_term_set_is_the_analyzers_query_terms(text: str) -> None:
    assert query_term_set(text) == frozenset(texts(text, mode="query"))


def test_query_term_set_examples() -> None:
    text = "Deploys of my_module.MyClass: 口令是 Café, the ＡＢＣ１２３ and a " + "x" * 200
    assert query_term_set(text) == frozenset(texts(text, mode="query"))
    assert {"deploy", "my_module.myclass", "class", "口令", "令", "cafe", "abc123"} <= query_term_set(text)
