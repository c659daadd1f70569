"""The dense lane's search: a query vector's nearest stored vectors, fast at a million chunks.

sqlite-vec 0.1 has no ANN index: its KNN scans every float vector, about 1 ms per 1,000
768-dim rows here, so one query over a million chunks costs 1.0-1.3 s of CPU. The brain also
keeps the sign bit of every vector component in a plain table, `vec_bits` (store.py), written
in the same transaction as `vec_chunks`. A search over it takes two steps:

1. rank every chunk's bits by Hamming distance to the query's bits and keep the nearest
   1,000 or so: in SQL (sqlite-vec's vec_distance_hamming, ~0.12 s at a million 768-dim
   chunks), or, in a long-lived process with NumPy installed, from an in-memory copy of the
   bits (~100 MB at a million; ~15 ms a query), which also re-ranks its shortlist by the
   query's own values so that a quarter as many need reading;
2. read just those candidates' vectors by rowid and rank them exactly (vec_distance_l2).

Sign bits keep the order of nearby vectors well enough that the exact top ten are among the
candidates (recall@10 against the exact scan: `bench/speed.py recall`). `plan` takes the exact
scan instead when asked to (`--exact`), when the brain is small enough that scanning it costs
less than step 2 alone, when the vectors' dimension has no whole bytes of bits, or when the
bits are not in step with the vectors (a brain embedded before they existed, until the next
embed or vacuum builds them); `Dense.how` says which and why, for `--explain`.

The bits are trusted only while the brain's `bits_version` equals its `vectors_version`
(store.py bumps both in the writer's transaction), and an in-memory copy only while its own
version is the brain's, so no search ever ranks by a vector the brain no longer holds.
NumPy is optional: with it installed, every `llm` command pays its import (sqlite-utils
imports it), so the one-shot path never needs it.
"""
from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from typing import Sequence

MIN_CANDIDATES = 1000  # rescored exactly, at least (real MiniLM vectors need ~1,000 at 384 bits)
CANDIDATE_FACTOR = 5  # ... and this many per hit asked for (a lane asks for 200)
DEFAULT_CHUNK_SIZE = 1024  # vec0's, for tables made before store.VEC_CHUNK_SIZE
# In memory the Hamming step keeps twice the candidates, ranks them by the query's values and
# reads a quarter of the candidates (250 for a lane of 200): 8x fewer read than kept.
RESCORED_SHARE, SHORTLIST_FACTOR = 4, 8
SAMPLE_ROWS, CUT_MARGIN = 4096, 4  # the cut: 4x the share of rows wanted, in a sample of 4,096
BLOCK_ROWS = 65_536  # rows per pass of the in-memory Hamming step (2.5x faster than whole columns)
# The plan's costs in ns of CPU, fitted to a fresh process's first query here (768 dims, 10k to
# 1M chunks; 384 dims; vec0 blobs of 16 and of 1,024): an exact scan, per vector and dimension;
# a Hamming step, per vector (a fixed part and per dimension); reading one candidate, a fixed
# part and per byte of the vec0 blob that holds it (its pages are walked up to the vector).
# With blobs of 16 the two paths cost the same near 13k 768-dim chunks (~17 ms).
EXACT_NS_PER_DIM = 1.4
BITS_NS, BITS_NS_PER_DIM = 60.0, 0.08
READ_NS, READ_NS_PER_BLOB_BYTE = 10_000.0, 0.06


@dataclass
class Dense:
    found: list[tuple[int, float]]  # (chunk id, L2 distance), nearest first
    how: str  # the path taken and why, for --explain


def candidates(n: int) -> int:
    """Vectors read and ranked exactly after a Hamming step in SQL."""
    return max(MIN_CANDIDATES, CANDIDATE_FACTOR * n)


def rescored(n: int) -> int:
    """... and after the in-memory step, which ranks its shortlist by the query's values."""
    return max(n, candidates(n) // RESCORED_SHARE)


def nearest(conn, vector: bytes, n: int, where: str = "", params: Sequence = (),
            exact: bool = False, path: str | None = None) -> Dense:
    """The `n` stored vectors nearest to the unit `vector` (float32 bytes), among the chunks
    matching `where` (SQL over `chunks c`, with `params`) when given. `path` ("exact", "bits"
    or "memory") overrides the plan's choice, for benchmarks and tests of each path; the
    bits must still be in step, and "memory" builds the copy now."""
    if path is None or exact:
        path, how, index = plan(conn, len(vector) // 4, n, bool(where), exact)
    else:
        path, how, index = _forced(conn, path, bool(where))
    if index is not None:
        return Dense(rescore(conn, vector, index.shortlist(query_bits(conn, vector), vector, rescored(n)), n), how)
    if path == "bits":
        return Dense(rescore(conn, vector, sql_candidates(conn, vector, candidates(n), where, params), n), how)
    return Dense(exact_scan(conn, vector, n, where, params), how)


def plan(conn, dim: int, n: int, filtered: bool, exact: bool) -> tuple[str, str, BitIndex | None]:
    """("exact" | "bits" | "memory", why, the in-memory copy for "memory") for a search of
    `n` hits among `dim`-dim vectors."""
    if exact:
        return "exact", "exact scan of every vector (asked for)", None
    if dim % 8:
        return "exact", f"exact scan ({dim}-dim vectors have no sign-bit index: it needs whole bytes)", None
    if not _version(conn):
        return "exact", ("exact scan (the sign-bit index is not in step with the vectors yet; "
                         "llm brain embed or vacuum builds it)"), None
    rows = conn.execute("SELECT max(id) FROM vec_bits").fetchone()[0] or 0
    want = candidates(n)
    if not _bits_pay(rows, dim, _chunk_size(conn), want):
        return "exact", f"exact scan (a small brain: up to {rows:,} vectors scan faster than a bit search)", None
    index = None if filtered else warm(conn)
    if index is not None:
        return ("memory", f"sign-bit search in memory of up to {rows:,} vectors; {rescored(n) * SHORTLIST_FACTOR:,} "
                f"nearest re-ranked by the query's values, {rescored(n):,} rescored exactly", index)
    return "bits", f"sign-bit search in SQL of up to {rows:,} vectors; {want:,} candidates rescored exactly", None


def _forced(conn, path: str, filtered: bool) -> tuple[str, str, BitIndex | None]:
    if path == "exact" or not _version(conn):
        return "exact", "exact scan (asked for, or the sign-bit index is not in step)", None
    if path == "memory" and not filtered and _numpy() is not None:
        return "memory", "sign-bit search in memory (asked for)", get(conn)
    return "bits", "sign-bit search in SQL (asked for)", None


def _bits_pay(rows: int, dim: int, chunk_size: int, want: int) -> bool:
    """Does the bit search cost less than the exact scan here? (the costs at the top)"""
    scan = rows * dim * EXACT_NS_PER_DIM
    bits = rows * (BITS_NS + dim * BITS_NS_PER_DIM)
    reads = min(want, rows) * (READ_NS + READ_NS_PER_BLOB_BYTE * chunk_size * dim * 4)
    return bits + reads < scan


def _chunk_size(conn) -> int:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vec_chunks' AND type = 'table'").fetchone()
    match = re.search(r"chunk_size\s*=\s*(\d+)", row[0] or "") if row else None
    return int(match.group(1)) if match else DEFAULT_CHUNK_SIZE


def exact_scan(conn, vector: bytes, n: int, where: str = "", params: Sequence = ()) -> list[tuple[int, float]]:
    """vec0's KNN over every vector. A filter goes into the search as `rowid IN (...)`: vec0
    applies other WHERE clauses after its top-k, which would silently return fewer hits."""
    if where:
        return conn.execute(
            "SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? "
            f"AND rowid IN (SELECT c.id FROM chunks c WHERE {where}) ORDER BY distance",
            [vector, n, *params]).fetchall()
    return conn.execute("SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? "
                        "ORDER BY distance", (vector, n)).fetchall()


def sql_candidates(conn, vector: bytes, want: int, where: str = "", params: Sequence = (),
                   sample: int = SAMPLE_ROWS) -> list[int]:
    """The `want` chunk ids whose bits are nearest the query's, ranked in SQL. Unfiltered, a
    distance cut taken from the first `sample` rows keeps all but a few thousand rows out of
    SQLite's sorter (-10 % at a million); when fewer than `want` rows pass it, the search
    runs again without one."""
    distance = "vec_distance_hamming(vec_bit(b.bits), vec_quantize_binary(?))"
    if where:
        sql = (f"SELECT b.id FROM chunks c JOIN vec_bits b ON b.id = c.id WHERE {where} "
               f"ORDER BY {distance} LIMIT ?")
        return [r[0] for r in conn.execute(sql, [*params, vector, want])]
    rows = conn.execute("SELECT max(id) FROM vec_bits").fetchone()[0] or 0
    if rows > sample * 4:
        seen = sorted(r[0] for r in conn.execute(f"SELECT {distance} FROM vec_bits b LIMIT ?", (vector, sample)))
        cut = seen[min(len(seen) - 1, sample * CUT_MARGIN * want // rows)]
        found = [r[0] for r in conn.execute(
            f"SELECT id FROM (SELECT b.id, {distance} AS d FROM vec_bits b) WHERE d <= ? ORDER BY d LIMIT ?",
            (vector, cut, want))]
        if len(found) == want:
            return found
    return [r[0] for r in conn.execute(f"SELECT b.id FROM vec_bits b ORDER BY {distance} LIMIT ?", (vector, want))]


def rescore(conn, vector: bytes, ids: Sequence[int], n: int) -> list[tuple[int, float]]:
    """The `n` nearest of `ids` by exact L2 distance. Each vector is read by rowid (json_each
    drives the join: vec0 answers `rowid = ?` from its index but scans every row for
    `rowid IN (...)`), in id order, which is vec0's storage order."""
    if not ids:
        return []
    return conn.execute(
        "SELECT v.rowid, vec_distance_l2(v.embedding, ?) AS d FROM json_each(?) j "
        "CROSS JOIN vec_chunks v ON v.rowid = j.value ORDER BY d LIMIT ?",
        (vector, json.dumps(sorted(ids)), n)).fetchall()


def query_bits(conn, vector: bytes) -> bytes:
    """The query's sign bits, by the same function that made the stored ones."""
    return conn.execute("SELECT vec_quantize_binary(?)", (vector,)).fetchone()[0]


# --- the in-memory copy of the bits (long-lived processes with NumPy) -----------------------


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy if hasattr(numpy, "bitwise_count") else None  # NumPy 2


class BitIndex:
    """Every chunk's sign bits in memory, as 64-bit words, one array per word position (so a
    Hamming step is a few passes over contiguous arrays)."""

    def __init__(self, ids, bits, width: int):
        np = _numpy()
        self.ids = np.asarray(ids, dtype=np.int64)
        self.width = width  # bytes of bits per vector (dimension / 8)
        rows = np.frombuffer(bits, np.uint8).reshape(len(self.ids), width)
        pad = (-width) % 8
        if pad:
            rows = np.pad(rows, ((0, 0), (0, pad)))
        self.words = np.ascontiguousarray(np.ascontiguousarray(rows).view(np.uint64).T)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        return self.ids.nbytes + self.words.nbytes

    def search(self, query: bytes, want: int) -> list[int]:
        """The `want` ids nearest by Hamming distance to `query` (bits as stored)."""
        return self.ids[self._nearest(query, want)].tolist()

    def shortlist(self, query: bytes, vector: bytes, want: int) -> list[int]:
        """The `want` ids to rescore: the 8 x `want` nearest by Hamming distance, re-ranked by
        the query's own values against their signs (the dot product of the float query with
        each vector's +-1 signs). That estimate ranks far better than Hamming distance, which
        weighs a component near zero as much as the largest, so a quarter as many candidates
        need reading (SciFact with MiniLM: recall@10 0.998 from 250 of 2,000; by Hamming distance
        alone 250 give 0.988, 1,000 0.999)."""
        np = _numpy()
        rows = self._nearest(query, want * SHORTLIST_FACTOR)
        if len(rows) <= want:
            return self.ids[rows].tolist()
        q = np.frombuffer(vector, np.float32)[:self.width * 8].reshape(self.width, 8)
        table = _signs() @ q.T  # (256, width): what each byte value adds at each position
        codes = np.ascontiguousarray(self.words[:, rows].T).view(np.uint8)[:, :self.width]
        score = table[codes, np.arange(self.width)].sum(axis=1)
        best = np.argpartition(-score, want - 1)[:want]
        return self.ids[rows[best]].tolist()

    def _nearest(self, query: bytes, want: int):
        """Row positions of the `want` nearest by Hamming distance (ties at the cut: first)."""
        np = _numpy()
        n = len(self.ids)
        if want >= n:
            return np.arange(n)
        q = np.frombuffer(query + bytes((-len(query)) % 8), np.uint64)
        distance = np.empty(n, np.uint16)
        block = min(n, BLOCK_ROWS)
        xor, count = np.empty(block, np.uint64), np.empty(block, np.uint8)
        for lo in range(0, n, block):  # a block's temporaries stay in the CPU's cache
            hi = min(n, lo + block)
            acc, x, c = distance[lo:hi], xor[:hi - lo], count[:hi - lo]
            acc[:] = 0
            for word, column in zip(q, self.words):
                np.bitwise_xor(column[lo:hi], word, out=x)
                np.bitwise_count(x, out=c)
                np.add(acc, c, out=acc)
        # the distance at which `want` are reached, from a histogram: cheaper than a partition
        cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), want))
        inside = np.flatnonzero(distance < cut)
        edge = np.flatnonzero(distance == cut)[:want - len(inside)]
        return np.concatenate((inside, edge))


_SIGNS = None


def _signs():
    """(256, 8): for each byte value, +1 where its bit k is set, else -1 (bit k is component
    8j + k of byte j: vec_quantize_binary packs the least significant bit first)."""
    global _SIGNS
    if _SIGNS is None:
        np = _numpy()
        bits = (np.arange(256)[:, None] >> np.arange(8)) & 1
        _SIGNS = (bits * 2 - 1).astype(np.float32)
    return _SIGNS


def load(conn) -> tuple[str, BitIndex]:
    """(vectors version, copy of the bits), read in one read transaction so the two agree,
    into arrays made to size (a list of a million small objects first would triple the peak)."""
    np = _numpy()
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        version = _version(conn)
        count, width = conn.execute("SELECT count(*), max(length(bits)) FROM vec_bits").fetchone()
        ids, bits = np.empty(count, np.int64), np.empty(count * (width or 0), np.uint8)
        cursor, at = conn.execute("SELECT id, bits FROM vec_bits ORDER BY id"), 0
        while rows := cursor.fetchmany(8192):
            ids[at:at + len(rows)] = [r[0] for r in rows]
            bits[at * width:(at + len(rows)) * width] = np.frombuffer(b"".join(r[1] for r in rows), np.uint8)
            at += len(rows)
    finally:
        if own:
            conn.execute("COMMIT")
    return version, BitIndex(ids, bits, width or 0)


def _version(conn) -> str:
    """The brain's vectors version when its bits are in step, else "" (no copy is current)."""
    found = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('vectors_version', 'bits_version')"))
    version = found.get("vectors_version", "0")
    return version if found.get("bits_version") == version else ""


def _db_path(conn) -> str:
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main":
            return os.path.realpath(path) if path else ""
    return ""


_lock = threading.Lock()
_cache: dict[str, tuple[str, BitIndex]] = {}
_asked: dict[str, int] = {}
_building: set[str] = set()
_long_lived = False


def keep_warm() -> None:
    """Say this process is long-lived (a server, an agent): build the copy from the first
    query on instead of the second."""
    global _long_lived
    _long_lived = True


def get(conn) -> BitIndex:
    """The current copy of this brain's bits, built now (in this thread) if needed."""
    key = _db_path(conn)
    cached = _cache.get(key)
    if cached is None or not cached[0] or cached[0] != _version(conn):
        _cache[key] = cached = load(conn)
    return cached[1]


def warm(conn) -> BitIndex | None:
    """The copy if it is current; otherwise None (the caller searches in SQL), after starting
    a background build on its own connection when this process has asked before or is
    long-lived, and NumPy is there to search it. A one-shot command never builds one."""
    path = _db_path(conn)
    cached = _cache.get(path)
    if cached is not None and cached[0] and cached[0] == _version(conn):
        return cached[1]
    with _lock:
        _asked[path] = _asked.get(path, 0) + 1
        start = bool(path) and path not in _building and (_long_lived or _asked[path] >= 2)
        start = start and _numpy() is not None  # (asked only here: a one-shot never imports it)
        if start:
            _building.add(path)
    if start:
        threading.Thread(target=_build, args=(path,), daemon=True, name="secondbrain-vindex").start()
    return None


def _build(path: str) -> None:
    from ..store import _raw_connect

    try:
        conn, _ = _raw_connect(path, None)
        try:
            _cache[path] = load(conn)
        finally:
            conn.close()
    except Exception:  # a failed warm-up only means the SQL search keeps answering
        pass
    finally:
        with _lock:
            _building.discard(path)


def forget_cache() -> None:
    global _long_lived
    _cache.clear()
    _asked.clear()
    _long_lived = False
