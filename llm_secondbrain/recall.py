"""Dense, lexical and hybrid retrieval over the brain; reciprocal-rank fusion; query sanitising.

Three lanes feed one ranking:
- dense: KNN over vec_chunks with the query's embedding (meaning);
- lexical: FTS5 BM25 over a sanitised MATCH string (words);
- literal: chunks that contain an identifier from the query verbatim (INV/2026/00037, an IBAN
  however it is spaced). These rank first: near misses share most of their words and much of
  their meaning with the exact one, so neither of the other lanes can separate them reliably.
Hybrid fuses dense and lexical by weighted RRF; literal hits are ordered among themselves by
that fused score, so the one that also answers the rest of the question comes first.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

MODES = ("hybrid", "dense", "lexical")
DEFAULT_K = 10
DEFAULT_POOL = 50
DEFAULT_RRF_K = 60
DEFAULT_WEIGHTS = {"dense": 1.0, "lexical": 1.0}
MAX_QUERY_TERMS = 64
LITERAL_POOL = 1000
LITERAL_BONUS = 1.0

_WORD = re.compile(r"\w+", re.UNICODE)
# A token people type as one identifier: letters/digits joined by / - . _ : #
_TOKEN = re.compile(r"[^\W_]+(?:[/\-._:#][^\W_]+)*", re.UNICODE)
_SEP = re.compile(r"[/\-._:#]")


@dataclass
class Filters:
    project: str | None = None
    source: str | None = None
    path: str | None = None  # a glob, matched against the stored absolute path
    since: str | None = None  # ISO date or datetime, compared with the chunk's ts
    until: str | None = None

    def sql(self, alias: str = "c") -> tuple[str, list]:
        clauses, params = [], []
        if self.project is not None:
            clauses.append(f"{alias}.project = ?")
            params.append(self.project)
        if self.source is not None:
            clauses.append(f"{alias}.source = ?")
            params.append(self.source)
        if self.path:
            pattern = self.path if self.path.startswith(("/", "*")) else "*" + self.path
            clauses.append(f"{alias}.path GLOB ?")
            params.append(pattern)
        if self.since:
            clauses.append(f"coalesce({alias}.ts, {alias}.created) >= ?")
            params.append(self.since)
        if self.until:
            # a bare date means the whole day
            clauses.append(f"coalesce({alias}.ts, {alias}.created) < ?")
            params.append(self.until + "\uffff" if len(self.until) == 10 else self.until)
        return " AND ".join(clauses), params

    def __bool__(self) -> bool:
        return any((self.project, self.source, self.path, self.since, self.until))


@dataclass
class Hit:
    id: int
    text: str
    path: str | None
    line: int | None
    line_end: int | None
    project: str | None
    source: str | None
    ts: str | None
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)

    def as_dict(self) -> dict:
        return {
            "id": self.id, "path": self.path, "line": self.line, "line_end": self.line_end,
            "citation": self.citation, "project": self.project, "source": self.source,
            "ts": self.ts, "score": self.score, "ranks": self.ranks,
            "contributions": self.contributions, "text": self.text,
        }


@dataclass
class RecallResult:
    hits: list[Hit]
    mode: str  # the mode actually used, after any degradation
    notes: list[str] = field(default_factory=list)  # one-line reasons for degrading


# --- query analysis ----------------------------------------------------------------------------


def fts_query(query: str) -> str | None:
    """Every word quoted and OR-joined: no operator, column name or stray quote in the user's
    text can reach FTS5's query parser."""
    seen, terms = set(), []
    for word in _WORD.findall(query):
        word = word.strip("_")
        key = word.lower()
        if not word or key in seen:
            continue
        seen.add(key)
        terms.append('"' + word.replace('"', '""') + '"')
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return " OR ".join(terms) if terms else None


def _is_identifier(token: str) -> bool:
    has_digit = any(ch.isdigit() for ch in token)
    has_alpha = any(ch.isalpha() for ch in token)
    return has_digit and (has_alpha or bool(_SEP.search(token))) and len(token) >= 3


def identifiers(query: str) -> list[str]:
    """Identifier-like tokens of the query, with runs of spaced digit groups joined
    (`NO93 8601 1117 947` -> `NO9386011117947`), longest first."""
    tokens = _TOKEN.findall(query)
    found: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        j = i + 1
        # join following all-digit groups to a token that has digits: IBANs, card-like numbers
        if any(ch.isdigit() for ch in tok) and not _SEP.search(tok):
            while j < len(tokens) and tokens[j].isdigit() and len(tokens[j]) <= 6:
                j += 1
        joined = "".join(tokens[i:j])
        if j - i > 1 and _is_identifier(joined):
            found.append(joined)
        elif _is_identifier(tok):
            found.append(tok)
        i = j if j - i > 1 and _is_identifier(joined) else i + 1
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=len, reverse=True)[:8]


def literal_pattern(identifier: str) -> re.Pattern[str]:
    """Matches the identifier as written, case-insensitively, allowing whitespace between its
    characters (people space IBANs and account numbers), but not inside a longer identifier."""
    body = r"\s?".join(re.escape(ch) for ch in identifier)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.I)


def _literal_fts(identifier: str) -> str:
    """A cheap FTS pre-filter for chunks that may hold the identifier: its words as a phrase,
    the words run together, and the first four characters as a prefix (for a compact
    identifier the chunk may have spaced)."""
    words = [w for w in _WORD.findall(identifier) if w.strip("_")]
    parts = ['"' + " ".join(words) + '"']
    compact = "".join(words)
    if len(words) > 1:
        parts.append('"' + compact + '"')
    if len(compact) >= 8 and len(words) == 1:
        parts.append('"' + compact[:4] + '"*')
    return " OR ".join(parts)


# --- the lanes -----------------------------------------------------------------------------


def _filtered(sql: str, filters: Filters | None, params: list) -> tuple[str, list]:
    if filters:
        where, fparams = filters.sql("c")
        return sql + " AND " + where, params + fparams
    return sql, params


def lexical(conn, query: str, pool: int, filters: Filters | None = None) -> list[tuple[int, float]]:
    match = fts_query(query)
    if not match:
        return []
    sql, params = _filtered(
        "SELECT c.id, bm25(fts_chunks) FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
        "WHERE fts_chunks MATCH ?", filters, [match],
    )
    return conn.execute(sql + " ORDER BY bm25(fts_chunks) LIMIT ?", params + [pool]).fetchall()


def dense(conn, vector: bytes, pool: int, filters: Filters | None = None) -> list[tuple[int, float]]:
    """KNN by L2 distance over unit vectors. With filters the candidate ids go into the KNN
    itself (`rowid IN (...)`): vec0 applies other WHERE clauses after its top-k, which would
    silently return fewer than k hits."""
    if filters:
        where, params = filters.sql("c")
        return conn.execute(
            "SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? "
            f"AND rowid IN (SELECT c.id FROM chunks c WHERE {where}) ORDER BY distance",
            [vector, pool, *params],
        ).fetchall()
    return conn.execute(
        "SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        [vector, pool],
    ).fetchall()


def literal(conn, query: str, filters: Filters | None = None) -> list[int]:
    """Ids of chunks that contain an identifier of the query verbatim, best-BM25 first."""
    out: list[int] = []
    for ident in identifiers(query):
        pattern = literal_pattern(ident)
        sql, params = _filtered(
            "SELECT c.id, c.text FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
            "WHERE fts_chunks MATCH ?", filters, [_literal_fts(ident)],
        )
        for cid, text in conn.execute(sql + " ORDER BY bm25(fts_chunks) LIMIT ?", params + [LITERAL_POOL]):
            if cid not in out and pattern.search(text):
                out.append(cid)
    return out


# --- fusion ------------------------------------------------------------------------------------


def rrf(lanes: dict[str, Sequence[int]], rrf_k: int, weights: dict[str, float]) -> dict[int, dict]:
    """Weighted reciprocal-rank fusion: score(d) = sum_c w_c / (rrf_k + rank_c(d))."""
    fused: dict[int, dict] = {}
    for lane, ids in lanes.items():
        weight = weights.get(lane, 1.0)
        for rank, cid in enumerate(ids, start=1):
            entry = fused.setdefault(cid, {"score": 0.0, "ranks": {}, "contributions": {}})
            contribution = weight / (rrf_k + rank)
            entry["score"] += contribution
            entry["ranks"][lane] = rank
            entry["contributions"][lane] = contribution
    return fused


def _hits(conn, scored: list[tuple[int, dict]]) -> list[Hit]:
    if not scored:
        return []
    ids = [cid for cid, _ in scored]
    rows = {
        r[0]: r
        for r in conn.execute(
            "SELECT id, text, path, line_start, line_end, project, source, coalesce(ts, created) "
            f"FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids,
        )
    }
    hits = []
    for cid, info in scored:
        r = rows.get(cid)
        if r is None:
            continue
        hits.append(Hit(
            id=r[0], text=r[1], path=r[2], line=r[3], line_end=r[4], project=r[5], source=r[6],
            ts=r[7], score=round(info["score"], 6), ranks=info.get("ranks", {}),
            contributions={k: round(v, 6) for k, v in info.get("contributions", {}).items()},
        ))
    return hits


def recall(
    conn,
    query: str,
    *,
    k: int = DEFAULT_K,
    mode: str = "hybrid",
    filters: Filters | None = None,
    query_vector: Callable[[], bytes | None] | None = None,
    pool: int = DEFAULT_POOL,
    rrf_k: int = DEFAULT_RRF_K,
    weights: dict[str, float] | None = None,
) -> RecallResult:
    """Rank chunks for `query`. `query_vector` returns the serialised, normalised query
    embedding, or None (with the reason already noted by the caller) when dense is unavailable."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    weights = {**DEFAULT_WEIGHTS, **(weights or {})}
    pool = max(pool, k)
    lanes: dict[str, list[int]] = {}
    dense_scores: dict[int, float] = {}
    used = mode
    if mode in ("hybrid", "dense"):
        vector = query_vector() if query_vector else None
        if vector is None:
            used = "lexical"
        else:
            found = dense(conn, vector, pool, filters)
            lanes["dense"] = [cid for cid, _ in found]
            dense_scores = {cid: 1 - d * d / 2 for cid, d in found}  # cosine of unit vectors
    lexical_scores: dict[int, float] = {}
    if used in ("hybrid", "lexical"):
        found = lexical(conn, query, pool, filters)
        lanes["lexical"] = [cid for cid, _ in found]
        lexical_scores = {cid: -score for cid, score in found}

    if used == "dense":
        scored = [(cid, {"score": dense_scores[cid], "ranks": {"dense": r}})
                  for r, cid in enumerate(lanes["dense"], 1)]
    elif used == "lexical":
        scored = [(cid, {"score": lexical_scores[cid], "ranks": {"lexical": r}})
                  for r, cid in enumerate(lanes["lexical"], 1)]
    else:
        fused = rrf(lanes, rrf_k, weights)
        scored = sorted(fused.items(), key=lambda kv: -kv[1]["score"])

    exact = literal(conn, query, filters)
    if exact:
        position = {cid: i for i, (cid, _) in enumerate(scored)}
        info = dict(scored)
        first = sorted(exact, key=lambda cid: (position.get(cid, math.inf), exact.index(cid)))
        head = []
        for rank, cid in enumerate(first, start=1):
            entry = dict(info.get(cid, {"score": 0.0, "ranks": {}, "contributions": {}}))
            # +1 puts every literal hit above any fused score (those are below 2 / rrf_k)
            entry["score"] = entry["score"] + LITERAL_BONUS
            entry["ranks"] = {**entry.get("ranks", {}), "literal": rank}
            entry["contributions"] = {**entry.get("contributions", {}), "literal": LITERAL_BONUS}
            head.append((cid, entry))
        chosen = set(exact)
        scored = head + [(cid, e) for cid, e in scored if cid not in chosen]
    return RecallResult(_hits(conn, scored[:k]), used)
