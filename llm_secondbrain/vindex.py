"""A fast, in-process view of the brain's vectors for dense recall at scale.

sqlite-vec 0.1 has no ANN index: a KNN query scans every float vector in C, about 1 ms per
1,000 768-dim rows here, so a million chunks cost over a second per query. This module keeps
a read-only copy of the vectors in memory, bulk-loaded from vec0's own storage (its chunk
blobs of 1,024 vectors), and answers in two steps:

- up to EXACT_ROWS candidates: one exact BLAS matrix-vector product (float32);
- beyond that: Hamming distance over the sign bits of every vector (64-bit popcount, about
  20x cheaper than the float scan) picks a candidate pool, which is then rescored exactly.

The float vectors in `vec_chunks` stay the source of truth: nothing here is written to the
brain, so forget, reembed, vacuum and crashes cannot leave it inconsistent. The copy is cached
per process and per brain, and rebuilt when the vectors change (vec0's rowid sequence and row
count are the change stamp). `recall --exact` bypasses it.
"""
from __future__ import annotations

import os
import threading

import numpy as np

EXACT_ROWS = 150_000  # below this, an exact float scan is cheap enough
MIN_CANDIDATES = 4096  # Hamming pool rescored exactly, at least
CANDIDATE_FACTOR = 8  # ... and at least this many per requested hit (a lane asks for 200)

_lock = threading.Lock()
_cache: dict[str, tuple[tuple, "DenseIndex"]] = {}


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


def _stamp(conn, table: str) -> tuple:
    seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (f"{table}_rowids",)).fetchone()
    count = conn.execute(f'SELECT count(*) FROM "{table}_rowids"').fetchone()[0]
    return (seq[0] if seq else 0, count)


def _bulk_load(conn, table: str, dim: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Read vec0's chunk blobs directly: 1,024 vectors per row instead of one per row. Returns
    None when the storage is not laid out as expected, and the caller reads row by row."""
    try:
        chunks = conn.execute(
            f'SELECT chunk_id, size, validity, rowids FROM "{table}_chunks" ORDER BY chunk_id'
        ).fetchall()
        ids, vecs = [], []
        for chunk_id, size, validity, rowids in chunks:
            row = conn.execute(
                f'SELECT vectors FROM "{table}_vector_chunks00" WHERE rowid = ?', (chunk_id,)
            ).fetchone()
            if row is None or len(row[0]) != size * dim * 4 or len(rowids) != size * 8:
                return None
            valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size].astype(bool)
            ids.append(np.frombuffer(rowids, np.int64)[valid])
            vecs.append(np.frombuffer(row[0], np.float32).reshape(size, dim)[valid])
    except Exception:  # a different sqlite-vec layout: use the public interface instead
        return None
    if not ids:
        return np.empty(0, np.int64), np.empty((0, dim), np.float32)
    return np.concatenate(ids), np.concatenate(vecs)


def _row_load(conn, table: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
    ids, vecs = [], []
    for rowid, blob in conn.execute(f'SELECT rowid, embedding FROM "{table}"'):
        ids.append(rowid)
        vecs.append(np.frombuffer(blob, np.float32))
    if not ids:
        return np.empty(0, np.int64), np.empty((0, dim), np.float32)
    return np.asarray(ids, np.int64), np.vstack(vecs)


def load(conn, dim: int, table: str = "vec_chunks") -> tuple[tuple, DenseIndex]:
    """(change stamp, index) read in one transaction."""
    with _lock:
        # read the stamp and the vectors in one read transaction, so they agree
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            stamp = _stamp(conn, table)
            loaded = _bulk_load(conn, table, dim)
            if loaded is None or len(loaded[0]) != stamp[1]:
                loaded = _row_load(conn, table, dim)
        finally:
            if own:
                conn.execute("COMMIT")
        return stamp, DenseIndex(*loaded)


def _db_path(conn) -> str:
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main":
            return os.path.realpath(path) if path else ""
    return ""


def _current(conn, key: str, table: str) -> DenseIndex | None:
    """The cached index under `key` if the vectors have not changed since it was built."""
    cached = _cache.get(key)
    if cached is None:
        return None
    # nothing committed by anyone since this connection last checked: still current
    marker = (id(conn), conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
    if _checked.get(key) == marker:
        return cached[1]
    if cached[0] != _stamp(conn, table):
        return None
    _checked[key] = marker
    return cached[1]


def get(conn, dim: int, table: str = "vec_chunks") -> DenseIndex:
    """The cached index of this brain, (re)built now if the vectors changed since."""
    key = f"{_db_path(conn)}:{table}"
    index = _current(conn, key, table)
    if index is None:
        _cache[key] = load(conn, dim, table)
        index = _cache[key][1]
    return index


def warm(conn, dim: int, table: str = "vec_chunks") -> DenseIndex | None:
    """The cached index if it is current; otherwise None, after starting a background build
    (on its own connection) so the next query in this process finds it. A one-shot command
    thus never pays for the build, and a long-lived process (an agent, a chat with the tool)
    pays once."""
    path = _db_path(conn)
    key = f"{path}:{table}"
    index = _current(conn, key, table)
    if index is not None:
        return index
    if path and key not in _building:
        _building.add(key)
        threading.Thread(target=_build, args=(path, key, dim, table), daemon=True,
                         name="secondbrain-vindex").start()
    return None


_building: set[str] = set()
_checked: dict[str, tuple] = {}


def _build(path: str, key: str, dim: int, table: str) -> None:
    from .store import _raw_connect

    try:
        conn, _ = _raw_connect(path, None)
        try:
            conn.execute("PRAGMA mmap_size = 1073741824")
            _cache[key] = load(conn, dim, table)
        finally:
            conn.close()
    except Exception:  # a failed warm-up only means the exact scan keeps answering
        pass
    finally:
        _building.discard(key)


def forget_cache() -> None:
    _cache.clear()
    _checked.clear()
