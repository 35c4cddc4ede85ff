"""``KeywordIndex``: the keyword rule of :mod:`akgentic.vector.hybrid`, kept as an index.

A record matches a query when every whitespace-separated term of the folded query
(NFKC + casefold) is a substring of one of the record's folded fields, the rule of
:func:`akgentic.vector.hybrid.keyword_match`. Scanning every record per query costs
O(records); this index keeps, per record, its folded text, and for the whole corpus an
inverted index from tokens (the text split on whitespace) to records and from the 1-,
2- and 3-character grams of a token to the tokens holding them. A term without
whitespace is a substring of a text exactly when it is a substring of one of its
tokens, so a query resolves through the tokens that contain its rarest term.

Updates cost O(the record's tokens); a query costs O(matching tokens + candidates).
Cards keep one index per kind of record and update it on every mutation.

Example::

    index: KeywordIndex[int] = KeywordIndex()
    index.put(7, ["Deploy the web service"])
    assert index.search("WEB deploy") == [7]
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

from akgentic.vector.hybrid import fold

__all__ = ["KeywordIndex", "query_terms"]

K = TypeVar("K", bound=Hashable)

_SEP = "\x00"
_GRAM = 3
# Past this share of the records, walking the records in order and stopping at the
# limit is cheaper than collecting the candidates.
_DENSE_SHARE = 8


def query_terms(query: str) -> list[str]:
    """The folded terms of ``query`` (NUL characters, which no field shares, dropped)."""
    terms = (t.replace(_SEP, "") for t in fold(query).split())
    return [t for t in terms if t]


def _grams(token: str) -> set[str]:
    return {token[i : i + n] for n in range(1, _GRAM + 1) for i in range(len(token) - n + 1)}


class KeywordIndex(Generic[K]):
    """Records keyed by ``K``, searchable by the keyword rule, in insertion order.

    Re-putting a key keeps its place; a key removed and put again goes last.
    """

    def __init__(self) -> None:
        # Every key gets an ordinal, given in insertion order: postings hold ordinals,
        # so candidates sort as plain ints and hash without calling into the key.
        self._ordinals: dict[K, int] = {}
        self._keys: dict[int, K] = {}
        self._texts: dict[int, str] = {}
        self._tokens: dict[int, frozenset[str]] = {}
        self._next = 0
        self._postings: dict[str, set[int]] = {}
        self._by_gram: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._texts)

    def __contains__(self, key: object) -> bool:
        return key in self._ordinals

    # ------------------------------------------------------------ mutation

    def put(self, key: K, fields: Iterable[str]) -> None:
        """Index (or re-index) ``key`` by ``fields``."""
        text = fold(_SEP.join(f for f in fields if f))
        tokens = frozenset(text.replace(_SEP, " ").split())
        ordinal = self._ordinals.get(key)
        if ordinal is None:
            ordinal = self._ordinals[key] = self._next
            self._keys[ordinal] = key
            self._next += 1
            old: frozenset[str] = frozenset()
        else:
            old = self._tokens[ordinal]
        for token in old - tokens:
            self._unpost(token, ordinal)
        for token in tokens - old:
            posting = self._postings.get(token)
            if posting is None:
                posting = self._postings[token] = set()
                for gram in _grams(token):
                    self._by_gram.setdefault(gram, set()).add(token)
            posting.add(ordinal)
        self._texts[ordinal] = text
        self._tokens[ordinal] = tokens

    def discard(self, key: K) -> None:
        """Forget ``key`` (nothing happens when it is not indexed)."""
        ordinal = self._ordinals.pop(key, None)
        if ordinal is None:
            return
        del self._keys[ordinal]
        del self._texts[ordinal]
        for token in self._tokens.pop(ordinal):
            self._unpost(token, ordinal)

    def _unpost(self, token: str, ordinal: int) -> None:
        posting = self._postings[token]
        posting.discard(ordinal)
        if posting:
            return
        del self._postings[token]
        for gram in _grams(token):
            holders = self._by_gram[gram]
            holders.discard(token)
            if not holders:
                del self._by_gram[gram]

    # --------------------------------------------------------------- query

    def _tokens_with(self, term: str) -> list[str]:
        """The indexed tokens that contain ``term``."""
        if len(term) <= _GRAM:
            return list(self._by_gram.get(term, ()))
        sets = []
        for i in range(len(term) - _GRAM + 1):
            holders = self._by_gram.get(term[i : i + _GRAM])
            if not holders:
                return []
            sets.append(holders)
        sets.sort(key=len)
        first, rest = sets[0], sets[1:]
        return [t for t in first if term in t and all(t in s for s in rest)]

    def search(self, query: str, limit: int | None = None) -> list[K]:
        """The keys matching ``query``, in insertion order, at most ``limit`` of them."""
        terms = query_terms(query)
        if not terms or (limit is not None and limit < 1):
            return []
        # Per term: the tokens holding it and an upper bound of the records it reaches.
        reach: list[tuple[int, str, list[str]]] = []
        for term in dict.fromkeys(terms):
            tokens = self._tokens_with(term)
            if not tokens:
                return []
            reach.append((sum(len(self._postings[t]) for t in tokens), term, tokens))
        reach.sort(key=lambda item: item[0])
        bound, _rarest, tokens = reach[0]
        texts, keys = self._texts, self._keys
        if limit is not None and bound * _DENSE_SHARE > len(texts):
            wanted = [term for _n, term, _t in reach]
            found: list[K] = []
            for ordinal, text in texts.items():
                if all(t in text for t in wanted):
                    found.append(keys[ordinal])
                    if len(found) >= limit:
                        break
            return found
        candidates: set[int] = set()
        for token in tokens:
            candidates |= self._postings[token]
        others = [term for _n, term, _t in reach[1:]]
        if others:
            candidates = {o for o in candidates if all(t in texts[o] for t in others)}
        if limit is None or limit >= len(candidates):
            ordered = sorted(candidates)
        else:
            ordered = heapq.nsmallest(limit, candidates)
        return [keys[o] for o in ordered]
