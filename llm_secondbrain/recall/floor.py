"""The relevance floor: does any hit say something about the query ("nothing matches")? And
where, below the top hit, do the passages stop being about it?

A raw cosine means different things under different models (all-MiniLM-L6-v2 puts two random
passages of a notes collection at 0.10 +- 0.12, the tests' bag-of-words stub at 0.23 +- 0.04 on
six short notes), so the floor is read on the brain's own scale: the mean and the standard
deviation of the cosine between passages of the brain picked evenly over it (`scale`, a fixed
sample of store.SCALE_SAMPLE vectors, kept per brain and vector version). The best passage must
stand FLOOR_SD of those deviations above that mean, judged by the score the dense lane ranks it by:
its cosine read in its note's context (lanes.in_context), not the bare cosine. In a vault of
manuals a paragraph deep in an unrelated page can sit near a question it does not answer
(`journalctl --vacuum-size` for "PostgreSQL VACUUM FULL ..."); its note does not open on the
question's subject, and that pulls it under the floor. A note of one passage is its own
opening: there nothing changes (jbranchaud-til, tldr-zh). Measured on the bench vault: tune
half 8 -> 9 of 10 negatives "nothing", then the held-out half once, 4 -> 6 of 10, no answerable
question lost and no nDCG@10 changed in either.

Meaning alone cannot separate every unanswerable question: under MiniLM the best passage for
"How do I roll back a Kubernetes deployment?" in notes that never mention Kubernetes stands as
high as that of a paraphrased question with an answer. What separates them is a name the brain
has never seen (`foreign_names`: written with capitals or in a code span, and in no passage):
such a question needs NAME_FLOOR_SD, which only a near restatement of a passage reaches.
Words the brain has never seen weigh in the same way, more gently: an ordinary word no passage
holds ("crontab", "logrotate", "quarterly budget") is a part of the question no note can
answer, so the best passage must stand UNSEEN_SD more deviations above the mean, times the share
of the query's weight (idf) those words carry. A paraphrase with an answer also uses words its
note does not ("unguessable"), and a typo makes a word unseen, so the step is half a deviation
at most, where a name's is three. Measured on the bench vault (both halves had been looked at
before): 15 -> 18 of 20 negatives "nothing", one answerable question more left empty (3 -> 4 of
88: "a hung program", 1.61 deviations, needs 1.70); jbranchaud-til, tldr-zh and manpages-ja
unchanged. A step of 1.0 gives the same verdicts there, but with one typo in every paraphrase
(two letters swapped, one dropped or one replaced) it left 3-5 more of them empty; 0.5 leaves
0-2 more (`bench_kinds.py --typos`). Chinese, Japanese and Korean characters are left out: the
index holds them one by one (cjk.py), and a character the notes never use says little about
whether they answer a question.
A rare token the literal lane found (an identifier, a flag, not a product name written in a
sentence) is relevant in every mode, and so is a passage holding every content word of the
query.

Words speak on their own too (`--mode lexical`, no vectors, and in hybrid beside meaning): a
query that names something the brain never mentions gets nothing from them, and otherwise one
of the lexical lane's best passages must hold LEXICAL_COVER of the query's weight (each word
weighted by its inverse document frequency, so a rare word counts for more than a common one).
Words never answer a query whose words no passage holds weigh UNSEEN_CAP of it or more: for
"Ansible playbook to install packages on all hosts" in notes that never say Ansible or playbook,
a passage holding "install", "packages" and "hosts" holds 42 % of the weight, and it is no
answer (bench vault2, report half: 6 -> 7 of 10 negatives "nothing" with MiniLM, 7 -> 8 with the
stub; every other verdict on every dev set the same). A question in the notes' own words, or one
whose unseen words are a typo or two, stays under the cap.

Hybrid at the defaults (bench/bench_kinds.py), unanswerable questions that get nothing /
answerable ones that do, with MiniLM and with the tests' stub vectors, no constant changed:
jbranchaud-til 22 of 25 / 0 of 158 and 25 of 25 / 9 of 158; the bench vault 18 of 20 / 4 of 88
and 19 of 20 / 14 of 88; tldr-zh 6 of 8 / 5 of 37 and 3 of 8 / 0 of 37; manpages-ja 5 of 6 /
0 of 21 and 5 of 6 / 0 of 21.
"""
from __future__ import annotations

import math
import os
import threading

from ..cjk import RUN as CJK_RUN
from ..store import kept_scale, measure_scale
from .lanes import Filters, _filtered, document_frequency
from .query import _bare_name, content_terms, literal_terms, names, quoted

FLOOR_SD = 1.5  # the best passage, in deviations above the mean of random pairs
NAME_FLOOR_SD = 4.5  # ... when the query names something the brain never mentions
UNSEEN_SD = 0.5  # ... and this many more, times the share of the query's weight no passage holds
TAIL_SD = 2.0  # a model is given passages down to this far below the top one
LEXICAL_COVER = 0.4  # words only: the share of the query's weight one passage must hold
UNSEEN_CAP = 0.5  # ... and words only never answer when words no passage holds weigh this much
COVER_DEPTH = 10  # ... looked for among the lexical lane's best this many
DF_CAP = 5000  # a word's chunks counted up to this many (its weight barely moves past it)

_scales: dict[tuple[str, str], tuple[float, float]] = {}
_lock = threading.Lock()


def scale(conn) -> tuple[float, float] | None:
    """(mean, standard deviation) of the cosine between two passages of this brain picked at
    random, under the model its vectors come from; None without vectors. Kept by the embedder
    (store.kept_scale); measured here (store.measure_scale) when a write since then changed the
    vectors, once per process and vector version."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vectors_version'").fetchone()
    key = (_db_path(conn), row[0] if row else "0")  # bumped by every write to the vectors
    with _lock:
        if key in _scales:
            return _scales[key]
    found = kept_scale(conn) or measure_scale(conn)
    if found is not None:
        with _lock:
            _scales[key] = found
    return found


def _db_path(conn) -> str:
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main":
            return os.path.realpath(path) if path else f"memory:{id(conn)}"
    return ""


def foreign_names(conn, query: str) -> list[str]:
    """Names in the query (`names`: written with capitals, or in a code span) that no passage
    of the brain holds, as the word index reads them."""
    out = []
    for name in names(query):
        if not conn.execute("SELECT 1 FROM fts_chunks WHERE fts_chunks MATCH ? LIMIT 1",
                            (quoted(name),)).fetchone():
            out.append(name)
    return out


def _weights(conn, query: str) -> dict[str, tuple[int, float]]:
    """{content word of the query: (chunks holding it, counted up to DF_CAP; its idf)}."""
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0] or 1
    out = {}
    for term in content_terms(query):
        df = document_frequency(conn, term, DF_CAP)
        out[term] = (df, math.log(1 + (total - df + 0.5) / (df + 0.5)))
    return out


def coverage(conn, query: str, ids: list[int], spaced: bool = False) -> float:
    """The largest share of the query's content-word weight (idf) that one of `ids` holds;
    `spaced`: of its words in scripts written with spaces (Chinese, Japanese and Korean
    characters left out, as in `unseen_share`), 1.0 when it has none."""
    weights = _weights(conn, query)
    if spaced:
        weights = {t: w for t, w in weights.items() if not CJK_RUN.search(t)}
        if not weights:
            return 1.0
    if not weights or not ids:
        return 0.0
    held = {cid: 0.0 for cid in ids}
    marks = ",".join("?" * len(ids))
    for term, (df, idf) in weights.items():
        if df:
            for (cid,) in conn.execute(f"SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ? AND "
                                       f"rowid IN ({marks})", [quoted(term), *ids]):
                held[cid] += idf
    weight = sum(idf for _, idf in weights.values())
    return max(held.values()) / weight if weight else 0.0


def unseen_share(conn, query: str, spaced: bool = True) -> float:
    """The share of the query's content-word weight (idf) in words no passage holds;
    `spaced`: of its words in scripts written with spaces (Chinese, Japanese and Korean
    characters left out), as `coverage` reads them."""
    weights = _weights(conn, query)
    if spaced:
        weights = {t: w for t, w in weights.items() if not CJK_RUN.search(t)}
    total = sum(idf for _, idf in weights.values())
    return sum(idf for df, idf in weights.values() if not df) / total if total else 0.0


def _floor(conn, query: str) -> tuple[float, float] | None:
    """(the score the best passage must reach, the step unseen words may add to it), or None
    without vectors: FLOOR_SD deviations above the brain's mean and up to UNSEEN_SD more, or
    NAME_FLOOR_SD when the query names something no passage holds (no step then)."""
    found = scale(conn)
    if found is None:
        return None
    mean, sd = found
    if foreign_names(conn, query):
        return mean + NAME_FLOOR_SD * sd, 0.0
    return mean + FLOOR_SD * sd, UNSEEN_SD * sd


def dense_floor(conn, query: str) -> float | None:
    """The score the best passage must reach for this query in this brain before unseen words
    raise it (`_clears`), or None without vectors; the tail given to a model stops at it."""
    floor = _floor(conn, query)
    return floor[0] if floor is not None else None


def _clears(conn, query: str, best: float) -> bool:
    """Does the best dense score `best` clear this query's floor, raised by `unseen_share` of
    its step? The share is looked up only when the best passage stands within that step."""
    floor = _floor(conn, query)
    if floor is None:  # one or two passages: no scale yet
        return True
    base, step = floor
    return best >= base and (best >= base + step or best >= base + step * unseen_share(conn, query))


def relevant(conn, query: str, lanes: dict[str, list[tuple[int, float]]], holders: dict,
             filters: Filters | None = None) -> bool:
    """Does any hit clear the relevance floor? A rare token the literal lane found does, and so
    does a passage holding every content word of the query, a dense hit whose score clears
    `dense_floor` (raised for unseen words: `_clears`), or words: `coverage` reaching
    LEXICAL_COVER in a query that names nothing the brain has never seen and whose unseen
    words weigh less than UNSEEN_CAP of it (`unseen_share` over the words `coverage` weighs:
    every character of a Chinese or Japanese query counts). Hybrid asks both
    lanes, so it never says "nothing" where `--mode lexical` answers (a model that reads a
    language or a paraphrase poorly leaves the words to speak). A dense hit's score is the
    lane's own (`lanes`: read in its note's context), so a paragraph deep in a manual about
    something else speaks for less."""
    if holders and any(not _bare_name(term, query) for term, _, _ in literal_terms(query)):
        return True
    lexical = [cid for cid, _ in lanes.get("lexical", [])[:COVER_DEPTH]]
    if lanes.get("dense") and _clears(conn, query, max(score for _, score in lanes["dense"])):
        return True
    if _holds_every_word(conn, query, filters):
        return True
    return (bool(lexical) and not foreign_names(conn, query) and coverage(conn, query, lexical) >= LEXICAL_COVER
            and unseen_share(conn, query, spaced=False) < UNSEEN_CAP)


def _holds_every_word(conn, query: str, filters: Filters | None) -> bool:
    found = content_terms(query)
    if not found:
        return False
    match = " AND ".join(quoted(w) for w in found)
    sql, params = _filtered("SELECT 1 FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
                            "WHERE fts_chunks MATCH ?", filters, [match])
    return conn.execute(sql + " LIMIT 1", params).fetchone() is not None


def tail(conn, query: str, cosines: list[float | None], lexical: list[float | None],
         holders: list[bool]) -> int:
    """How many of the hits (in rank order) a model is given. When the literal lane found a
    rare token, its holders: the rest only share words or meaning with it. Otherwise the hits
    down to the first one far below the top: with meaning, a cosine below the floor or TAIL_SD
    deviations below the top hit's; with words only, a BM25 score under half the top's."""
    if any(holders):
        return next((i for i, held in enumerate(holders) if not held), len(holders))
    found = scale(conn) if any(c is not None for c in cosines) else None
    if found is None:
        top = lexical[0] if lexical and lexical[0] else None
        if top is None:
            return len(lexical)
        return next((i for i, s in enumerate(lexical) if s is None or s < top / 2), len(lexical))
    top = next((c for c in cosines if c is not None), None)
    bar = max(dense_floor(conn, query) or -1.0, top - TAIL_SD * found[1])
    return next((i for i, c in enumerate(cosines) if i and (c is None or c < bar)), len(cosines))
