"""A fast, in-process view of the brain's vectors for dense recall at scale.

sqlite-vec 0.1 has no ANN index: a KNN query scans every float vector in C, about 1 ms per
1,000 768-dim rows here, so a million chunks cost over a second per query. A process that
asks more than once keeps a read-only copy of the vectors in memory (read through vec0's
public SQL) and answers in two steps:

- up to EXACT_ROWS candidates: one exact BLAS matrix-vector product (float32);
- beyond that: Hamming distance over the sign bits of every vector (64-bit popcount, about
  20x cheaper than the float scan) picks a candidate pool, which is then rescored exactly.

The copy costs memory and a load, so a one-shot command (one `llm brain recall`, one
`-f brain:` fragment) never builds it: the copy is built in the background from a process's
second query on (or at once after `keep_warm()`, for servers), and meanwhile vec0 answers
exactly. The vectors in `vec_chunks` stay the source of truth: every write to them bumps
`meta.vectors_version` in the same transaction, and a copy whose version is not the brain's
is never used, so a vector replaced under the same chunk id by another process is never
ranked by its old value. `recall --exact` bypasses the copy.
"""
from __future__ import annotations

import os
import threading

import numpy as np

EXACT_ROWS = 150_000  # below this, an exact float scan is cheap enough
MIN_CANDIDATES = 4096  # Hamming pool rescored exactly, at least
CANDIDATE_FACTOR = 8  # ... and at least this many per requested hit (a lane asks for 200)

_lock = threading.Lock()


class DenseIndex:
    def __init__(self, ids: np.ndarray, vectors: np.ndarray):
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        bits = np.packbits(self.vectors > 0, axis=1)
        pad = (-bits.shape[1]) % 8
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        self.bits = np.ascontiguousarray(bits).view(np.uint64)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        return self.ids.nbytes + self.vectors.nbytes + self.bits.nbytes

    def search(self, query: np.ndarray, n: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top `n` (id, L2 distance) for a unit query, optionally among `allowed` ids only."""
        query = np.asarray(query, dtype=np.float32)
        rows = None
        if allowed is not None:
            rows = np.flatnonzero(np.isin(self.ids, allowed, assume_unique=False))
            if rows.size == 0:
                return []
        count = len(self) if rows is None else rows.size
        if count <= EXACT_ROWS:
            vecs = self.vectors if rows is None else self.vectors[rows]
            scores = vecs @ query
            cand = rows
        else:
            qbits = np.packbits(query > 0)
            qbits = np.pad(qbits, (0, (-qbits.size) % 8)).view(np.uint64)
            bits = self.bits if rows is None else self.bits[rows]
            ham = np.bitwise_count(bits ^ qbits).sum(axis=1, dtype=np.uint16)
            pool = min(count, max(MIN_CANDIDATES, CANDIDATE_FACTOR * n))
            pick = np.argpartition(ham, pool - 1)[:pool]
            cand = pick if rows is None else rows[pick]
            scores = self.vectors[cand] @ query
        n = min(n, scores.size)
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        positions = top if cand is None else cand[top]
        dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * scores[top]))
        return [(int(self.ids[p]), float(d)) for p, d in zip(positions, dist)]


_blas = None


def one_blas_thread():
    """A context in which BLAS uses one thread: while the lexical lane runs beside a dense
    search, a matrix-vector product spread over every core only makes the two queue."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")


def ids_array(rows) -> np.ndarray:
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


VERSION_KEY = "vectors_version"


def version(conn) -> str:
    """The brain's vector version: bumped by every write to vec_chunks (store.bump_vectors)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (VERSION_KEY,)).fetchone()
    return row[0] if row else "0"


def load(conn, dim: int, table: str = "vec_chunks") -> tuple[str, DenseIndex]:
    """(vector version, index), read in one read transaction so the two agree."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        stamp = version(conn)
        ids, vecs = [], []
        for rowid, blob in conn.execute(f'SELECT rowid, embedding FROM "{table}"'):
            ids.append(rowid)
            vecs.append(blob)
    finally:
        if own:
            conn.execute("COMMIT")
    if not ids:
        return stamp, DenseIndex(np.empty(0, np.int64), np.empty((0, dim), np.float32))
    matrix = np.frombuffer(b"".join(vecs), np.float32).reshape(len(ids), dim)
    return stamp, DenseIndex(np.asarray(ids, np.int64), matrix)


def _db_path(conn) -> str:
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main":
            return os.path.realpath(path) if path else ""
    return ""


_cache: dict[str, tuple[str, DenseIndex]] = {}
_asked: dict[str, int] = {}
_building: set[str] = set()
_long_lived = False


def keep_warm() -> None:
    """Say this process is long-lived (a server, an agent): build the copy from the first
    query on instead of the second."""
    global _long_lived
    _long_lived = True


def get(conn, dim: int, table: str = "vec_chunks") -> DenseIndex:
    """The current copy of this brain's vectors, built now (in this thread) if needed."""
    key = f"{_db_path(conn)}:{table}"
    cached = _cache.get(key)
    if cached is None or cached[0] != version(conn):
        _cache[key] = cached = load(conn, dim, table)
    return cached[1]


def warm(conn, dim: int, table: str = "vec_chunks") -> DenseIndex | None:
    """The copy if it is current; otherwise None (the caller scans vec0 exactly), after
    starting a background build on its own connection when this process has asked before
    or is long-lived."""
    path = _db_path(conn)
    key = f"{path}:{table}"
    cached = _cache.get(key)
    if cached is not None and cached[0] == version(conn):
        return cached[1]
    with _lock:
        _asked[key] = _asked.get(key, 0) + 1
        start = path and key not in _building and (_long_lived or _asked[key] >= 2)
        if start:
            _building.add(key)
    if start:
        threading.Thread(target=_build, args=(path, key, dim, table), daemon=True,
                         name="secondbrain-vindex").start()
    return None


def _build(path: str, key: str, dim: int, table: str) -> None:
    from ..store import _raw_connect

    try:
        conn, _ = _raw_connect(path, None)
        try:
            _cache[key] = load(conn, dim, table)
        finally:
            conn.close()
    except Exception:  # a failed warm-up only means the exact scan keeps answering
        pass
    finally:
        with _lock:
            _building.discard(key)


def forget_cache() -> None:
    global _long_lived
    _cache.clear()
    _asked.clear()
    _long_lived = False
