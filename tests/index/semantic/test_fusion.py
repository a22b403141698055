"""How the lexical and the semantic rankings are joined (index/semantic/fusion.py)."""

from __future__ import annotations

from reme_mcp.index.semantic.fusion import fuse, take_turns
from reme_mcp.index.semantic.models.trust import E5_TRUST

# Lexical hits as (chunk id, text); the model's ranking as (chunk id, cosine similarity).
LEXICAL = [(f"daily/2026-11-0{i}/n.md#1", f"we talked about item {i} today") for i in range(1, 7)]


def _fused(
    query: str, semantic: list[tuple[str, float]], covered: float = 0.9, notes: set[str] | None = None
) -> list[str]:
    turns = (lambda chunk: True) if notes is None else notes.__contains__
    order = fuse(
        LEXICAL, semantic, lambda h: h[0], lambda h: h[1], query, [covered] * len(LEXICAL), None, takes_turns=turns
    )
    return [chunk for chunk, _ in order]


def test_the_models_first_chunk_is_shown_beside_a_strong_lexical_ranking() -> None:
    # The words found their hits well (coverage 0.9), and the model ranks first two chunks they
    # missed: they come second and third, not after the words' near-misses.
    meant = [("digest/answer.md#1", 0.62), ("digest/other.md#4", 0.41), (LEXICAL[0][0], 0.35)]
    order = _fused("what did we decide about the thing", meant)
    assert order[:4] == [LEXICAL[0][0], "digest/answer.md#1", "digest/other.md#4", LEXICAL[1][0]]
    assert set(order) == {c for c, _ in LEXICAL} | {c for c, _ in meant}


def test_the_model_leads_where_the_words_found_little() -> None:
    meant = [("digest/answer.md#1", 0.62), ("digest/other.md#4", 0.41)]
    order = _fused("what did we decide about the thing", meant, covered=0.05)
    assert order[:2] == ["digest/answer.md#1", "digest/other.md#4"]


def test_a_dialogs_messages_do_not_take_turns() -> None:
    # The model judges which message answers a question worse than the words do: its messages
    # join only by the fused ranks, below a strong lexical stage's hits.
    meant = [("session/dialog/s1.jsonl#3", 0.62), ("digest/answer.md#1", 0.55)]
    order = _fused("what did we decide about the thing", meant, notes={"digest/answer.md#1"})
    assert order[:2] == [LEXICAL[0][0], "digest/answer.md#1"]
    assert "session/dialog/s1.jsonl#3" not in order  # a strong lexical stage adds no chunk of the model's


def test_a_verbatim_hit_keeps_the_lead_and_a_strong_lexical_stage_answers_alone() -> None:
    meant = [("digest/answer.md#1", 0.62)]
    order = _fused("item 3 today", meant)
    assert order[0] == LEXICAL[2][0]
    assert order[1:] == [c for c, _ in LEXICAL if c != LEXICAL[2][0]]


def test_chunks_under_the_models_floor_are_not_offered() -> None:
    order = _fused("what did we decide", [("digest/unrelated.md#1", 0.05)])
    assert "digest/unrelated.md#1" not in order


def test_a_note_the_model_ranks_first_takes_its_turn_a_little_under_the_floor() -> None:
    # Cross-language paraphrases of hand-written notes score just under the floor that keeps a
    # chunk out of the fused ranks; with no verbatim hit the model's first note still shows.
    near_floor = 0.9 * E5_TRUST.floor
    order = _fused("what did we decide about the thing", [("digest/answer.md#1", near_floor)])
    assert order[:2] == [LEXICAL[0][0], "digest/answer.md#1"]
    unrelated = _fused("what did we decide about the thing", [("digest/answer.md#1", 0.5 * E5_TRUST.floor)])
    assert "digest/answer.md#1" not in unrelated


def test_two_chinese_characters_held_verbatim_keep_the_lead_as_four_letters_do() -> None:
    lexical = [("daily/2026-11-01/a.md#1", "数据库的优化器换了"), ("daily/2026-11-02/b.md#1", "优化了缓存")]
    meant = [("digest/other.md#1", 0.62)]

    def fused(query: str) -> list[str]:  # a weak lexical stage: the model leads unless a hit is verbatim
        order = fuse(lexical, meant, lambda h: h[0], lambda h: h[1], query, [0.05, 0.05], None)
        return [chunk for chunk, _ in order]

    assert fused("优化器")[0] == "daily/2026-11-01/a.md#1"
    assert fused("优化")[0] == "daily/2026-11-01/a.md#1"
    assert fused("优")[0] == "digest/other.md#1"  # one character is as two letters: no lead
    assert fused("化器")[0] == "daily/2026-11-01/a.md#1"


def test_turns_take_each_chunk_once_and_the_models_pass_over_a_file_already_shown() -> None:
    def file_of(chunk: str) -> str:
        return chunk.rpartition("#")[0]

    fused = ["a#1", "a#9", "b#1", "c#1"]  # two messages of one dialog stay side by side
    meant = ["x#1", "x#5", "a#9", "y#1"]
    # Two turns of the model's to one of the fused ranking's.
    assert take_turns(fused, meant, False, file_of) == ["a#1", "x#1", "y#1", "a#9", "b#1", "c#1", "x#5"]
    assert take_turns(fused, meant, True, file_of) == ["x#1", "a#9", "a#1", "y#1", "b#1", "c#1", "x#5"]
    assert take_turns(fused, [], False, file_of) == fused
