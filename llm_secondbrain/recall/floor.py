"""The relevance floor: does any hit say something about the query ("nothing matches")?"""
from __future__ import annotations

from .lanes import Filters, _filtered
from .query import MAX_QUERY_TERMS, content_words

# all-MiniLM-L6-v2: the best cosine below which no hit is about the query (chosen on a negative
# set: SciFact queries against personal notes and the reverse; see bench/bench_til.py)
DENSE_FLOOR = 0.30


def relevant(conn, query: str, lanes: dict[str, list[tuple[int, float]]], holders: dict,
             filters: Filters | None = None) -> bool:
    """Does any hit clear the relevance floor? A literal term found does, and so does a chunk
    holding every content word of the query. Otherwise, with meaning available, the best
    cosine must reach DENSE_FLOOR: unrelated text shares some common words with almost any
    query, so a partial lexical match proves nothing. Without meaning any lexical match counts
    (a lexical search cannot tell more)."""
    if holders:
        return True
    if "dense" in lanes and lanes["dense"] and lanes["dense"][0][1] >= DENSE_FLOOR:
        return True
    words = list(dict.fromkeys(w.lower() for w in content_words(query).split()))[:MAX_QUERY_TERMS]
    if "dense" not in lanes:
        return bool(lanes.get("lexical"))
    if not words:
        return False
    match = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
    sql, params = _filtered("SELECT 1 FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
                            "WHERE fts_chunks MATCH ?", filters, [match])
    return conn.execute(sql + " LIMIT 1", params).fetchone() is not None
