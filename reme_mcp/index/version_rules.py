"""When two notes read as two versions of one fact: the rules, one predicate each.

A newer note is taken for another version of an older one (the older is then marked as possibly
outdated, never edited) only when every rule below holds for the pair. Each rule looks at what
the two notes keep (the subject) and what differs (the value), after the sentences both repeat
word for word are set aside (fact_shape.apart): a shared boilerplate line, a signature, a
"Questions go to #platform-help." says nothing of whether one note replaced the other.

The rules for the pair's text (`same_fact`):

1. `has_its_own_words`: each note says something besides the sentences both hold.
2. `one_fact_each`: each is short enough to be one fact.
3. `keeps_a_subject`: they keep enough of their words (numbers left out) in common.
4. `says_something_new`: the newer holds a word or a value the older does not.
5. `replaces_a_value`: a value of the older is replaced by another, or the newer words a change.

And what the pair is about, which the words alone cannot tell ("the orders service caches in
Redis" against "the billing service ..."), judged by rarity (IDF over the index):

6. `about_what_was_asked` (search): both notes are about what the question names. Its subject is
   its rarest words any hit holds (`subject_of`): the pair holds the rarest of them, both hold at
   least half of those either holds, and the newer keeps those the older holds unless it words a
   change (`names_what_was_asked`); no name or number the question asks for is held by one note
   only (`no_other_name_asked`). A question about the ledger service makes a checkout note no
   version of it, nor two notes that share only "service".
7. `about_the_same_thing` (no question: the memory page, `remember`'s answer): the older's rarest
   word that is no replaced value is kept by the newer, and two values replaced at once, a name
   among them, need the newer to word it as a change (Alice's phone and Bob's are two facts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from reme_mcp.index.analysis import query_term_set
from reme_mcp.index.fact_shape import FactShape, apart, fact_shape

# Notes longer than this are not one fact: two long notes share wording without being versions.
MAX_FACT_CHARS = 600
# Rule 3: at least this many shared words, and this share of the words of the shorter note.
MIN_SHARED_WORDS = 2
MIN_SHARED_SHARE = 0.34
# Rules 6 and 7: words at least this rare (by IDF), relative to the rarest, name the subject.
SUBJECT_RARITY = 0.9
# Rule 6: of the words naming what was asked that either note holds, both hold at least this share.
SUBJECT_KEPT = 0.5


@dataclass(frozen=True)
class Pair:
    """Two notes side by side, the sentences both hold set aside."""

    older_text: str
    newer_text: str
    older: FactShape
    newer: FactShape

    @property
    def replaced_values(self) -> frozenset[str]:
        """The analysed words of the values one note has and the other lacks."""
        return (self.older.value_words - self.newer.value_words) | (self.newer.value_words - self.older.value_words)


def pair(older: str, newer: str) -> Pair:
    old, new = apart(older, newer)
    return Pair(old, new, fact_shape(old), fact_shape(new))


def has_its_own_words(p: Pair) -> bool:
    """Each note says something besides the sentences both hold (a shared line is no version)."""
    return bool(p.older.words) and bool(p.newer.words)


def one_fact_each(p: Pair) -> bool:
    """Each note is short enough to be one fact: two long notes share wording without being versions."""
    return len(p.older_text) <= MAX_FACT_CHARS and len(p.newer_text) <= MAX_FACT_CHARS


def keeps_a_subject(p: Pair) -> bool:
    """The notes keep enough words in common, numbers left out ("555" in two phone numbers names nothing)."""
    shared = p.older.named & p.newer.named
    least = min(len(p.older.named), len(p.newer.named))
    return len(shared) >= MIN_SHARED_WORDS and len(shared) >= MIN_SHARED_SHARE * least


def says_something_new(p: Pair) -> bool:
    """The newer note holds a word or a value the older does not: else it only repeats it."""
    return not (p.newer.words <= p.older.words and p.newer.values <= p.older.values)


def replaces_a_value(p: Pair) -> bool:
    """A value of the older note gives way to another, or the newer words itself as a change."""
    return (bool(p.older.values - p.newer.values) and bool(p.newer.values - p.older.values)) or p.newer.changed


def same_fact(older: str, newer: str) -> bool:
    """Whether two texts read as two versions of one fact by their words alone (rules 1-5)."""
    return _same_fact(pair(older, newer))


def _same_fact(p: Pair) -> bool:
    return (
        has_its_own_words(p)
        and one_fact_each(p)
        and keeps_a_subject(p)
        and says_something_new(p)
        and replaces_a_value(p)
    )


def _rarest(weights: Mapping[str, float]) -> set[str]:
    top = max(weights.values(), default=0.0)
    return {word for word, weight in weights.items() if weight >= SUBJECT_RARITY * top and weight > 0}


def subject_of(query_weights: Mapping[str, float], texts: list[str]) -> frozenset[str]:
    """The question's words that name its subject among these hits: the rarest any of them holds."""
    held = {w: weight for w, weight in query_weights.items() if any(w in fact_shape(t).words for t in texts)}
    return frozenset(_rarest(held))


def names_what_was_asked(p: Pair, subject: frozenset[str], query_weights: Mapping[str, float]) -> bool:
    """The notes hold the words naming what was asked (subject_of): the rarest of them one note at
    least, both at least half of those either holds, and the newer all the older holds unless it
    words a change. Two notes on the checkout and the mailer service are no versions of anything
    for a question on the ledger service, while the newer may word the rest otherwise ("go to" and
    "moved to", 码是 and 码改)."""
    both = subject & p.older.words & p.newer.words
    either = subject & (p.older.words | p.newer.words)
    rarest = max((query_weights.get(w, 0.0) for w in subject), default=0.0)
    holds_rarest = any(query_weights.get(w, 0.0) >= rarest for w in either)
    # A word of the subject the older holds and the newer drops is its wording only in a note that
    # words a change ("go to" before "moved to"); else the newer is about something else.
    dropped = bool((subject & p.older.words) - p.newer.words) and not p.newer.changed
    return bool(both) and holds_rarest and not dropped and len(both) >= SUBJECT_KEPT * len(either)


def _asked_forms(values: frozenset[str]) -> set[str]:
    """How a question names these values: a name as the analyser reads it, an identifier or number
    whole ("store" in a question names no bucket "acme-store-eu3")."""
    forms: set[str] = set()
    for value in values:
        forms.update(query_term_set(value) if value.isalpha() else {value})
    return forms


def no_other_name_asked(p: Pair, query_weights: Mapping[str, float]) -> bool:
    """No word of the question is a value (a name, a number) of one note and missing from the other:
    asked about Bob's phone, Alice's note is no older version of Bob's."""
    one_sided = (_asked_forms(p.older.values) - p.newer.words) | (_asked_forms(p.newer.values) - p.older.words)
    return not any(w in one_sided for w in query_weights)


def about_what_was_asked(p: Pair, query_weights: Mapping[str, float], subject: frozenset[str]) -> bool:
    """Rule 6: both notes are about what the question names."""
    return names_what_was_asked(p, subject, query_weights) and no_other_name_asked(p, query_weights)


def about_the_same_thing(p: Pair, rarity: Mapping[str, float]) -> bool:
    """With no question: the older's rarest word that is no replaced value is kept by the newer, and
    a name replaced along with every other value needs the newer to word it as a change."""
    own = {w: rarity.get(w, 0.0) for w in p.older.words - p.replaced_values if not any(c.isdigit() for c in w)}
    if not all(w in p.newer.words for w in _rarest(own)):
        return False
    gone = p.older.values - p.newer.values
    all_replaced = len(gone) >= 2 and gone == p.older.values
    names_gone = any(not any(c.isdigit() for c in v) for v in gone)
    return p.newer.changed or not (all_replaced and names_gone)


def versions_for_query(older: str, newer: str, query_weights: Mapping[str, float], subject: frozenset[str]) -> bool:
    """Rules 1-6: the newer note is another version of the older one, for this question; `subject` is
    subject_of the question among the hits."""
    p = pair(older, newer)
    return _same_fact(p) and about_what_was_asked(p, query_weights, subject)


def rarity_among(texts: list[str]) -> dict[str, float]:
    """Each word's IDF among these texts (the notes most like one note, found by its own words):
    how rare a word is among its neighbours, for rule 7 where no index-wide count is at hand."""
    shapes = [fact_shape(t).words for t in texts]
    words = set().union(*shapes) if shapes else set()
    return {w: math.log(1 + len(shapes) / (1 + sum(w in held for held in shapes))) for w in words}


def versions_by_themselves(older: str, newer: str, rarity: Mapping[str, float]) -> bool:
    """Rules 1-5 and 7: the newer note is another version of the older one, with no question asked."""
    p = pair(older, newer)
    return _same_fact(p) and about_the_same_thing(p, rarity)
