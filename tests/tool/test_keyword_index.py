"""``KeywordIndex`` finds exactly what the keyword rule of ``akgentic.vector.hybrid`` finds."""

from __future__ import annotations

import random

from akgentic.tool.keyword_index import KeywordIndex, query_terms
from akgentic.vector.hybrid import keyword_match

_WORDS = ["ab", "abc", "b", "Straße", "STRASSE", "x y", "topic1", "topic12", "é", "e\u0301", "🙂"]


def _text(rng: random.Random) -> str:
    return " ".join(
        rng.choice(_WORDS) + rng.choice(["", "z", "1"]) for _ in range(rng.randint(0, 4))
    )


def test_index_agrees_with_keyword_match_through_puts_and_discards() -> None:
    rng = random.Random(7)
    index: KeywordIndex[int] = KeywordIndex()
    records: dict[int, list[str]] = {}
    checked_hits = 0
    for _step in range(2000):
        key = rng.randint(0, 40)
        roll = rng.random()
        if roll < 0.6:
            fields = [_text(rng), _text(rng)]
            index.put(key, fields)
            records[key] = fields
        elif roll < 0.8:
            index.discard(key)
            records.pop(key, None)
        query = _text(rng)
        limit = rng.choice([None, 1, 3, 10])
        wanted = [k for k, fields in records.items() if keyword_match(query, fields)]
        if limit is not None:
            wanted = wanted[:limit]
        assert index.search(query, limit) == wanted, (query, limit)
        checked_hits += len(wanted)
    assert len(index) == len(records)
    assert checked_hits > 100


def test_search_keeps_insertion_order_and_a_reput_keeps_its_place() -> None:
    index: KeywordIndex[str] = KeywordIndex()
    for name in ["c", "a", "b"]:
        index.put(name, [f"deploy {name}"])
    index.put("c", ["deploy again"])
    assert index.search("deploy") == ["c", "a", "b"]
    index.discard("c")
    index.put("c", ["deploy last"])
    assert index.search("DEPLOY") == ["a", "b", "c"]
    assert index.search("deploy", limit=2) == ["a", "b"]


def test_terms_match_inside_words_and_across_fields_but_not_across_them() -> None:
    index: KeywordIndex[int] = KeywordIndex()
    index.put(1, ["Deploy the web service", "Straße"])
    assert index.search("web deploy strasse") == [1]
    assert index.search("eb serv") == [1]
    assert index.search("web service") == [1]
    assert index.search("webservice") == []
    assert index.search("servicestraße") == []
    assert index.search("   ") == []


def test_a_discarded_record_leaves_no_token_behind() -> None:
    index: KeywordIndex[int] = KeywordIndex()
    index.put(1, ["unique-word"])
    index.put(1, ["other"])
    assert index.search("unique") == []
    index.discard(1)
    assert index.search("other") == []
    assert 1 not in index


def test_query_terms_fold_and_drop_nul() -> None:
    assert query_terms("  STRASSE \x00 a\x00b ") == ["strasse", "ab"]
