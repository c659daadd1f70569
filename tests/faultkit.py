"""Helpers for the fault, load and hostile-input tests (tests/test_faults.py, test_load.py,
test_hostile.py): a seeded corpus, the brain's consistency invariants read with a plain
sqlite3, its content as a comparable set, and source-tree snapshots.

Everything here reads the brain with the stdlib sqlite3 (which cannot load sqlite-vec): vec0
keeps its rowids in the ordinary shadow table `vec_chunks_rowids`, so nothing our code does can
hide an orphan vector. Vector *values* are read through `open_brain` where a test needs them.
"""
from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import stat
from pathlib import Path

WORDS = (
    "invoice garden sourdough kernel lifetimes borrow checker windowsill tomatoes sensor battery "
    "nordlys meeting deploy backup restore schedule quarterly plan budget travel receipt server "
    "rack firmware update ticket customer contract renewal holiday ferry bergen oslo harbour "
    "printer toner passport dentist landlord heating insurance pension mortgage kayak"
).split()


def paragraph(rng: random.Random, tag: str, lo: int = 12, hi: int = 30) -> str:
    return f"{tag}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi))) + "."


def write_files(root: Path, files: dict[str, str | None]) -> None:
    """Write {relative path: text}; None deletes the file."""
    for rel, text in files.items():
        p = root / rel
        if text is None:
            p.unlink(missing_ok=True)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


class Corpus:
    """A seeded folder of notes (version 1) and a seeded edit of it (version 2): files changed
    (some paragraphs kept, some rewritten, order shuffled), deleted and added. A few paragraphs
    appear in several files, so per-file identity and vector reuse are exercised too."""

    def __init__(self, seed: int = 1, n_files: int = 60, paras: int = 8, changed: int = 15,
                 deleted: int = 15, added: int = 6, short_deleted: int = 0):
        rng = random.Random(seed)
        shared = [paragraph(rng, f"shared {i}") for i in range(5)]
        self.v1: dict[str, str] = {}
        for f in range(n_files):
            ps = [paragraph(rng, f"f{f} p{p}") for p in range(paras)]
            if f % 5 == 0:
                ps.insert(rng.randrange(len(ps)), shared[f % len(shared)])
            self.v1[f"d{f % 4}/note{f:03d}.md"] = "\n\n".join(ps) + "\n"
        names = sorted(self.v1)
        rng.shuffle(names)
        self.changed = sorted(names[:changed])
        self.deleted = sorted(names[changed:changed + deleted])
        self.edit: dict[str, str | None] = {}
        for rel in self.changed:
            ps = self.v1[rel].strip().split("\n\n")
            keep = [p for p in ps if rng.random() < 0.6]
            new = [paragraph(rng, f"{rel} edit {i}") for i in range(rng.randint(1, 4))]
            both = keep + new
            rng.shuffle(both)
            self.edit[rel] = "\n\n".join(both) + "\n"
        for i in range(short_deleted):  # one-chunk notes, all removed by the edit
            rel = f"short/s{i:03d}.md"
            self.v1[rel] = paragraph(rng, f"short {i}", 4, 8) + "\n"
            self.deleted.append(rel)
        for rel in self.deleted:
            self.edit[rel] = None
        for i in range(added):
            self.edit[f"d{i % 4}/added{i:02d}.md"] = "\n\n".join(
                paragraph(rng, f"added {i} p{p}") for p in range(paras)) + "\n"
        self.v2 = {k: v for k, v in {**self.v1, **self.edit}.items() if v is not None}

    def write_v1(self, root: Path) -> None:
        write_files(root, self.v1)

    def apply_edit(self, root: Path) -> None:
        write_files(root, self.edit)


# -- reading the brain ---------------------------------------------------------------------------


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=60, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 60000")
    return conn


def check_invariants(path: Path) -> dict:
    """Assert the brain is consistent; return counts. Safe on a brain a killed process left
    behind (opening it replays the committed part of the WAL, like any next run would)."""
    if not path.exists():  # killed before the file was made: connecting would create it
        return {"chunks": 0, "embedded": 0, "pending": 0, "failed": 0, "files": 0, "vectors": 0}
    conn = connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        if "chunks" not in tables:  # killed before the schema was committed
            return {"chunks": 0, "embedded": 0, "pending": 0, "failed": 0, "files": 0, "vectors": 0}
        # FTS5: the index agrees with the external content table (rank 1 = check content too).
        conn.execute("INSERT INTO fts_chunks(fts_chunks, rank) VALUES ('integrity-check', 1)")
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks")]
        assert len(ids) == len(set(ids))
        fts_ids = [r[0] for r in conn.execute("SELECT id FROM fts_chunks_docsize")]
        assert sorted(fts_ids) == sorted(ids), "FTS rows and chunks disagree (orphan or missing)"
        dupes = conn.execute(
            "SELECT path, sha, count(*) FROM chunks GROUP BY path, sha HAVING count(*) > 1").fetchall()
        assert not dupes, f"duplicate chunks: {dupes[:3]}"
        embedded = {r[0] for r in conn.execute("SELECT id FROM chunks WHERE embedded = 1")}
        vec_ids: list[int] = []
        if "vec_chunks_rowids" in tables:
            vec_ids = [r[0] for r in conn.execute("SELECT rowid FROM vec_chunks_rowids")]
        assert len(vec_ids) == len(set(vec_ids)), "a chunk has two vectors"
        assert set(vec_ids) <= set(ids), f"orphan vectors: {sorted(set(vec_ids) - set(ids))[:5]}"
        assert set(vec_ids) == embedded, (
            f"embedded=1 without a vector: {sorted(embedded - set(vec_ids))[:5]}; "
            f"vector without embedded=1: {sorted(set(vec_ids) - embedded)[:5]}")
        if "vec_bits" in tables:  # the sign bits mirror the vectors while their versions agree
            versions = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('vectors_version', 'bits_version')"))
            if versions.get("bits_version") == versions.get("vectors_version", "0"):
                bit_ids = {r[0] for r in conn.execute("SELECT id FROM vec_bits")}
                assert bit_ids == set(vec_ids), (
                    f"bits without a vector: {sorted(bit_ids - set(vec_ids))[:5]}; "
                    f"vector without bits: {sorted(set(vec_ids) - bit_ids)[:5]}")
        states = dict(conn.execute("SELECT embedded, count(*) FROM chunks GROUP BY embedded").fetchall())
        assert set(states) <= {-1, 0, 1}, states
        ledger = {r[0] for r in conn.execute("SELECT path FROM files")}
        chunk_paths = {r[0] for r in conn.execute("SELECT DISTINCT path FROM chunks")}
        assert chunk_paths <= ledger, f"chunks of files the ledger does not know: {sorted(chunk_paths - ledger)[:3]}"
        return {"chunks": len(ids), "embedded": states.get(1, 0), "pending": states.get(0, 0),
                "failed": states.get(-1, 0), "files": len(ledger), "vectors": len(vec_ids)}
    finally:
        conn.close()


def content(path: Path) -> set[tuple]:
    """The brain's content, independent of row ids: (sha, path, text, embedded, line span)."""
    conn = connect(path)
    try:
        return set(conn.execute(
            "SELECT sha, path, text, embedded, line_start, line_end, project, source FROM chunks"))
    finally:
        conn.close()


def ledger(path: Path) -> dict[str, tuple]:
    """Each file's ledger entry, its content hash by whether there is one: the hash is keyed
    with the brain's own salt, so two brains made apart hold different ones for the same bytes
    (the replaced-files checks compare it under one salt)."""
    conn = connect(path)
    try:
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT path, project, source, size, mtime_ns, content_sha IS NOT NULL FROM files")}
    finally:
        conn.close()


def vectors_by_chunk(path: Path) -> dict[tuple[str, str], bytes]:
    """(path, sha) -> the stored vector's bytes, read through sqlite-vec."""
    from llm_secondbrain.store import open_brain

    with open_brain(path, create=False) as brain:
        if not brain.has_vectors_table():
            return {}
        by_id = {cid: (p, sha) for cid, p, sha in brain.conn.execute("SELECT id, path, sha FROM chunks")}
        # one scan of vec0 (a join on rowid would scan it once per chunk)
        return {by_id.get(rowid, ("orphan", rowid)): bytes(blob)
                for rowid, blob in brain.conn.execute("SELECT rowid, embedding FROM vec_chunks")}


def wrong_bits(path: Path) -> int:
    """How many sign-bit rows differ from their vector's signs (read through sqlite-vec)."""
    from llm_secondbrain.store import open_brain

    with open_brain(path, create=False) as brain:
        if not brain.has_vectors_table():
            return 0
        return brain.conn.execute(
            "SELECT count(*) FROM vec_bits b CROSS JOIN vec_chunks v ON v.rowid = b.id "
            "WHERE b.bits IS NOT vec_quantize_binary(v.embedding)").fetchone()[0]


def knn_ids(path: Path, k: int) -> set[int]:
    """Every rowid a full KNN over vec_chunks can return (vec0's own view of its rows)."""
    from llm_secondbrain.store import open_brain

    with open_brain(path, create=False) as brain:
        if not brain.has_vectors_table():
            return set()
        probe = brain.conn.execute("SELECT embedding FROM vec_chunks LIMIT 1").fetchone()
        if probe is None:
            return set()
        return {r[0] for r in brain.conn.execute(
            "SELECT rowid FROM vec_chunks WHERE embedding MATCH ? AND k = ?", (probe[0], k))}


# -- source trees --------------------------------------------------------------------------------


def tree_snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root (root included): type, mode, size, bytes digest, mtime and ctime.
    No atime: reading may update it. ctime moves on any write, chmod, rename or link change."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [".", *dirnames, *filenames]:
            p = os.path.join(dirpath, name) if name != "." else dirpath
            st = os.lstat(p)
            digest = None
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
                digest = h.hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(p)
            out[os.path.relpath(p, root)] = (
                stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size, digest,
                st.st_mtime_ns, st.st_ctime_ns,
            )
    return out
