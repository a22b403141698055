"""How far the fusion of the lexical and semantic rankings (index/semantic/fusion.py) follows one model.

Each model has its own scale of cosine similarity, so its floor, its doubt of the lexical
stage and its reordering weight are its own: the constants here were measured with
multilingual-e5-small, and a model that differs says so (use_embedder.TRUST).
"""

from __future__ import annotations

from dataclasses import dataclass

# Below this cosine similarity (of centred vectors, language_means.py) a chunk is not offered
# at all: unrelated text scores about 0.15-0.3, a paraphrase about 0.3-0.6 (docs/semantic.md).
MIN_SIMILARITY = 0.3

# A strong lexical stage's hits are reordered by meaning, each adding RERANK_WEIGHT times its
# cosine similarity to the question (about 0.3-0.6 for related text) to its reciprocal rank
# (1/61 for the best): enough to swap neighbours of like lexical score, never to lift a hit
# from the bottom of the list over the top (only the first RERANK_DEPTH are: index/semantic/fusion.py).
# On LoCoMo 0.01 / 0.02 / 0.03 took any@5 from 75.8 to 76.3 / 77.6 / 77.8 (docs/semantic.md).
RERANK_WEIGHT = 0.02

# Coverage cannot tell a question's words from its function words in a young workspace: among
# ten notes "we" is as rare as "production", so a note that shares only "we" with "How do we
# ship to production?" looks strong and the note that answers it is never offered. The model
# can: when its best chunk is more like the question than every lexical hit it was shown by
# more than DOUBT_FROM, the lexical stage's strength fades, gone at DOUBT_TO. On LoCoMo, where
# the lexical hits hold the questions' words, any@5 stays 78.9 (a ramp of 0.03-0.08 cost 0.7);
# bench/paraphrase.py with 30 notes, seeds 7-10, MRR rose on three (docs/semantic.md).
DOUBT_FROM, DOUBT_TO = 0.05, 0.10


@dataclass(frozen=True)
class Trust:
    """How far the fusion follows one model: each model has its own scale of cosine similarity
    and its own judgement of which lexical hit answers a question (docs/semantic.md).

    `floor`: the cosine under which a chunk is not offered; `doubt`: the margins at which the
    model's best chunk starts and ends fading a strong lexical stage (`doubted`); `rerank`: the
    weight of its cosine in reordering a strong lexical stage's hits."""

    floor: float = MIN_SIMILARITY
    doubt: tuple[float, float] = (DOUBT_FROM, DOUBT_TO)
    rerank: float = RERANK_WEIGHT


# multilingual-e5-small, and the hub's e5 models: the constants above, measured with it.
E5_TRUST = Trust()
