"""The lanes: dense (KNN over the vectors), lexical (FTS5 BM25) and literal (chunks holding a
code-like term of the query as written), the filters they share, and each chunk's document."""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass

from ..options import MAX_POOL, RecallOptions
from ..segment import title
from ..store import id_batches
from .query import (
    _WORD, _BACKTICKS, _phrase_fts, _phrase_needed, _prose_compound, code_spans,
    content_words, fts_query, literal_terms, quoted, words as query_words,
)

LEXICAL_BUDGET = 10_000  # postings one lexical query may score (bounded_words)
LITERAL_POOL = 1000
# An identifier names one thing, so a handful of files hold it (the invoice, the dispute, the
# payment). A token that more files hold is a term of the subject (p53, CD4, IL-10): it is left
# to the other lanes, which weigh it like any rare word. Near misses do not count: they do not
# contain the identifier. (SciFact train: promoting such terms cost 0.008 nDCG@10.)
LITERAL_MAX_FILES = 5
NOTE_CONTEXT = 0.25  # how much a dense hit's note's opening counts (in_context)


@dataclass
class Filters:
    project: str | None = None
    source: str | None = None
    path: str | None = None  # a glob, matched against the stored absolute path
    since: str | None = None  # ISO date or datetime, compared with the chunk's ts
    until: str | None = None
    format: str | None = None  # the reader a source was read with (files.format)
    exclude_source: str | None = None
    role: str | None = None  # user / assistant: who wrote a conversation chunk
    kind: str | None = None  # comma-separated kind ids (recall.kind): only these
    exclude_kind: str | None = None  # ... or all but these

    def sql(self, alias: str = "c") -> tuple[str, list]:
        clauses, params = [], []
        if self.project is not None:
            clauses.append(f"{alias}.project = ?")
            params.append(self.project)
        if self.source is not None:
            clauses.append(f"{alias}.source = ?")
            params.append(self.source)
        if self.exclude_source is not None:
            clauses.append(f"{alias}.source IS NOT ?")
            params.append(self.exclude_source)
        if self.role is not None:
            clauses.append(f"{alias}.role = ?")
            params.append(self.role)
        if self.path:
            pattern = self.path if self.path.startswith(("/", "*")) else "*" + self.path
            clauses.append(f"{alias}.path GLOB ?")
            params.append(pattern)
        if self.since:
            clauses.append(f"coalesce({alias}.ts, {alias}.created) >= ?")
            params.append(self.since)
        if self.until:
            # already the end of its day when a date was given (dates.parse, end=True)
            clauses.append(f"coalesce({alias}.ts, {alias}.created) < ?")
            params.append(self.until)
        if self.format:
            clauses.append(f"{alias}.path IN (SELECT path FROM files WHERE format = ?)")
            params.append(self.format)
        for value, op in ((self.kind, "IN"), (self.exclude_kind, "NOT IN")):
            if value:
                from .kind import sql as kind_sql

                ids = value.split(",")
                clauses.append(f"{kind_sql(alias)} {op} ({','.join('?' * len(ids))})")
                params.extend(ids)
        return " AND ".join(clauses), params

    def __bool__(self) -> bool:
        return bool(self.sql()[0])

    @classmethod
    def of(cls, options: RecallOptions) -> "Filters":
        """The filtering fields of the options (each Filters field is a RecallOptions field)."""
        return cls(**{f.name: getattr(options, f.name) for f in dataclasses.fields(cls)})



def lexical_match(conn, query: str) -> str | None:
    """The lane's FTS5 query: the content words outside code spans (rarest first within
    LEXICAL_BUDGET), OR each code span as one phrase, its stopwords kept: a note holding
    `rel="noopener"` as written scores that phrase's rarity, and the span's words are not
    counted twice (once alone, once in the phrase). A compound written as prose keeps its
    content words among the others (`_phrase_needed`)."""
    spans = code_spans(query)
    prose = _BACKTICKS.sub(" ", query)
    for span in spans:
        if not _prose_compound(span, query):
            prose = prose.replace(span, " ")
    words = fts_query(bounded_words(conn, content_words(prose))) if _WORD.search(prose) else None
    phrases = [_phrase_fts(span) for span in spans if _phrase_needed(span, query)]
    parts = [p for p in [words, *phrases] if p]
    return " OR ".join(dict.fromkeys(parts)) if parts else None


def bounded_words(conn, text: str, budget: int = LEXICAL_BUDGET) -> str:
    """The words of `text`, rarest first, while their postings add up to at most `budget`
    (the rarest word always stays). FTS5 scores every chunk that holds any query word, so in a
    big brain one very common word costs a scan of most of the index; such words carry little
    BM25 weight (idf), so leaving them out keeps the lane fast and barely moves its ranking.
    Each word's count stops past the budget (`document_frequency`): counting a word that most
    of a million chunks hold cost 20 ms. Small brains never reach the budget."""
    words = list(dict.fromkeys(w.lower() for w in query_words(text) if w.strip("_")))
    if len(words) < 2:
        return text
    df = {word: document_frequency(conn, word, budget + 1) for word in words}
    if sum(df.values()) <= budget:
        return text
    kept, total = [], 0
    for word in sorted(words, key=lambda w: df[w]):  # words past the budget: in the query's order
        if kept and total + df[word] > budget:
            break
        kept.append(word)
        total += df[word]
    return " ".join(kept)


def document_frequency(conn, word: str, cap: int) -> int:
    """How many chunks hold `word` as the index reads it (stemmed), counting up to `cap`."""
    return conn.execute("SELECT count(*) FROM (SELECT 1 FROM fts_chunks WHERE fts_chunks MATCH ? "
                        "LIMIT ?)", (quoted(word), cap)).fetchone()[0]


def _filtered(sql: str, filters: Filters | None, params: list) -> tuple[str, list]:
    if filters:
        where, fparams = filters.sql("c")
        return sql + " AND " + where, params + fparams
    return sql, params


def lexical(conn, query: str, pool: int, filters: Filters | None = None) -> list[tuple[int, float]]:
    """(id, bm25) of the best `pool` chunks, best first (FTS5's bm25 is negative: lower is
    better). Function words are left out of the query when anything else is left."""
    match = lexical_match(conn, query)
    if not match:
        return []
    if not filters:
        # No join: FTS5 then ranks inside the index (ORDER BY rank), many times faster on
        # common words than sorting a joined result.
        return conn.execute(
            "SELECT rowid, rank FROM fts_chunks WHERE fts_chunks MATCH ? ORDER BY rank LIMIT ?",
            (match, pool),
        ).fetchall()
    sql, params = _filtered(
        "SELECT c.id, bm25(fts_chunks) FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
        "WHERE fts_chunks MATCH ?", filters, [match],
    )
    return conn.execute(sql + " ORDER BY bm25(fts_chunks) LIMIT ?", params + [pool]).fetchall()


def dense(conn, vector: bytes, pool: int, filters: Filters | None = None,
          exact: bool = False) -> list[tuple[int, float]]:
    """KNN by L2 distance over unit vectors: (id, distance), nearest first."""
    return _dense(conn, vector, pool, filters, exact).found


def _dense(conn, vector: bytes, pool: int, filters: Filters | None, exact: bool):
    """The dense lane's search (vindex.nearest: the sign-bit index, or vec0's exact scan
    when that is faster or asked for), with the filters inside the search itself."""
    from .vindex import nearest

    where, params = filters.sql("c") if filters else ("", [])
    return nearest(conn, vector, pool, where, params, exact=exact)


def literal(conn, query: str, filters: Filters | None = None) -> dict[int, tuple[int, bool, int]]:
    """Chunks that contain a literal term of the query as written: id -> (how many of the
    terms it holds, whether its note is about one: the note's title or file name names it,
    how often the terms occur in it), best-BM25 first. A term held by more than LITERAL_MAX_FILES files is a word of the
    subject, not a token someone looks for (p53, `xargs`), and promotes nothing."""
    out: dict[int, tuple[int, bool, int]] = {}
    for _, pattern, prefilter in literal_terms(query):
        loose = re.compile(pattern.pattern, re.I)
        sql, params = _filtered(
            "SELECT c.id, c.text, c.path, c.ref, c.title FROM fts_chunks "
            "JOIN chunks c ON c.id = fts_chunks.rowid WHERE fts_chunks MATCH ?", filters, [prefilter],
        )
        holders, files = [], set()
        for cid, text, path, ref, head in conn.execute(sql + " ORDER BY bm25(fts_chunks) LIMIT ?",
                                                       params + [LITERAL_POOL]):
            if not loose.search(text):
                continue
            files.add(_group_key(cid, path, ref))  # how rare the term is ignores case
            count = len(pattern.findall(text))
            if count:
                name = os.path.basename(path or "")
                about = bool(pattern.search(f"{head or title(text) or ''}\n{name}"))
                holders.append((cid, about, count))
        if len(files) > LITERAL_MAX_FILES:
            continue
        for cid, about, count in holders:
            held, was_about, seen = out.get(cid, (0, False, 0))
            out[cid] = (held + 1, was_about or about, seen + count)
    return out


def _group_key(cid: int, path: str | None, ref: str | None) -> tuple:
    """The document a chunk belongs to: its file (and ref, e.g. one logged conversation);
    a chunk from stdin without either is a document of its own."""
    return (path, ref) if (path or ref) else (None, cid)


def documents(conn, ids) -> dict[int, tuple]:
    """Chunk id -> its document key (`_group_key`)."""
    ids = list(dict.fromkeys(ids))
    out: dict[int, tuple] = {}
    for part, marks in id_batches(ids):
        for cid, path, ref in conn.execute(f"SELECT id, path, ref FROM chunks WHERE id IN ({marks})", part):
            out[cid] = _group_key(cid, path, ref)
    return out



def in_context(conn, found: list[tuple[int, float]], vector: bytes) -> list[tuple[int, float]]:
    """Dense hits scored in their note's context: each passage's cosine blended with the
    cosine of its note's opening passage (the title and what the note is about), NOTE_CONTEXT
    of it. A passage of a long manual that happens to share a question's words reads as the
    option list it is; the note that opens on the question's subject comes first. (Measured
    on jbranchaud-til hybrid 0.960 -> 0.963, the bench vault's tune half paraphrase 0.598 ->
    0.611; 0.4 gave 0.964 and 0.603.) Best first."""
    if not found:
        return found
    ids = [cid for cid, _ in found]
    first: dict[int, int] = {}
    for part, marks in id_batches(ids):
        first.update(conn.execute(
            "SELECT c.id, (SELECT o.id FROM chunks o WHERE o.path IS c.path AND o.ref IS c.ref "
            f"ORDER BY o.line_start, o.id LIMIT 1) FROM chunks c WHERE c.path IS NOT NULL AND c.id IN ({marks})",
            part).fetchall())
    openers = sorted({o for cid, o in first.items() if o != cid})
    opening: dict[int, float] = {}
    for rowid in openers:  # vec0 reads by rowid one at a time (rowid IN scans every row)
        row = conn.execute("SELECT CASE WHEN length(embedding) = ? THEN 1 - vec_distance_cosine(embedding, ?) "
                           "END FROM vec_chunks WHERE rowid = ?", (len(vector), vector, rowid)).fetchone()
        if row and row[0] is not None:
            opening[rowid] = row[0]
    blended = [(cid, (1 - NOTE_CONTEXT) * cos + NOTE_CONTEXT * opening.get(first.get(cid, cid), cos))
               for cid, cos in found]
    return sorted(blended, key=lambda item: -item[1])


def _lanes(conn, query: str, options: RecallOptions, vector: bytes | None,
           filters: Filters) -> tuple[dict[str, list[tuple[int, float]]], str, str | None, dict[int, float]]:
    """Each lane's (id, score) candidates, higher is better (dense: cosine in its note's
    context, `in_context`; lexical: -bm25), the mode actually used, how the dense lane searched
    (for --explain), and each dense hit's own cosine (for the floor). The lanes run one after
    the other: on real queries the lexical lane takes a millisecond or two, too little to be
    worth a thread kept in the caller's process."""
    fetch = min(max(options.pool, options.k * options.per_note), MAX_POOL)
    lanes: dict[str, list[tuple[int, float]]] = {}
    used, how = options.mode, None
    if used in ("hybrid", "dense"):
        if vector is None:
            used = "lexical"
        else:
            found = _dense(conn, vector, fetch, filters, options.exact)
            how = found.how
            cosines = [(cid, 1 - d * d / 2) for cid, d in found.found]  # cosine of unit vectors
            lanes["dense"] = in_context(conn, cosines, vector)
    if used in ("hybrid", "lexical"):
        lanes["lexical"] = [(cid, -score) for cid, score in lexical(conn, query, fetch, filters)]
        if used == "hybrid" and not lanes["lexical"]:
            used = "dense"  # no lexical match: dense alone
            del lanes["lexical"]
    return lanes, used, how, dict(cosines) if "dense" in lanes else {}
