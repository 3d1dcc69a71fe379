"""A lexical reranker: BM25 over the candidates, no model, offline, deterministic.

Dense retrieval places texts that mean alike near each other, and so blurs the
words that tell two such texts apart: an order number, a product's name, a
customer's detail. BM25 scores each candidate by the query's words it holds,
weighting the words that are rare among the candidates, so of twenty notes about
late parcels the one naming the query's order comes first. It understands no
paraphrase: a candidate that shares no word with the query scores 0 and keeps
its place behind those that do (ties keep the store's order).

Stateless, so safe on every thread.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from flink_agents_ltm.api.rerankers import BaseReranker

__all__ = ["LexicalReranker"]

_WORD = re.compile(r"[^\W_]+")
_STOP_WORDS = ("a an and are as at be by can could did do does for from had has have how i in is "
               "it its me my of on or our so that the their them there this to was we were what "
               "when where which who why will with would you your")
_STOP = frozenset(_STOP_WORDS.split())


def terms(text: str) -> list[str]:
    """The words of ``text`` that count: lower case, stop words out, a plural ``s`` off."""
    found = []
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


class LexicalReranker(BaseReranker):
    """BM25 (``k1``, ``b``) of the query's words in each candidate, with the inverse document
    frequency taken over the candidates themselves."""

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        for name, value in (("k1", k1), ("b", b)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"LexicalReranker {name} is a number >= 0, got {value!r}")
        if b > 1:
            raise ValueError(f"LexicalReranker b is between 0 and 1, got {b!r}")
        self.k1, self.b = float(k1), float(b)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        wanted = set(terms(query))
        counted = [Counter(terms(document)) for document in documents]
        if not wanted or not counted:
            return [0.0] * len(counted)
        average = sum(sum(c.values()) for c in counted) / len(counted) or 1.0
        total = len(counted)
        idf = {}
        for term in wanted:
            having = sum(1 for c in counted if term in c)
            idf[term] = math.log(1 + (total - having + 0.5) / (having + 0.5))
        scores = []
        for counts in counted:
            length = sum(counts.values())
            norm = self.k1 * (1 - self.b + self.b * length / average)
            scores.append(sum(idf[t] * counts[t] * (self.k1 + 1) / (counts[t] + norm)
                              for t in wanted if t in counts))
        return scores
