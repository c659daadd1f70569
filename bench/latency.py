"""Synthetic brains for latency: N chunks of Zipf-distributed pseudo-words, each with a random
768-dimension unit vector written straight into vec_chunks (no embedding model involved), and
an `llm` embeddings collection holding the same vectors for `llm similar`."""
from __future__ import annotations

import hashlib
import os
import statistics
import subprocess
import sys
import time
from array import array
from pathlib import Path

import numpy as np

from llm_secondbrain import recall as R
from llm_secondbrain.store import open_brain, text_sha

DIM = 768
VOCAB = 30_000
SEED = 20260302


def _vocab(rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words, seen = [], set()
    while len(words) < VOCAB:
        w = "".join(rng.choice(letters, size=int(rng.integers(3, 10))))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def _zipf_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    # P(rank r) ~ 1 / r^1.1 over the vocabulary
    p = 1.0 / np.arange(1, VOCAB + 1) ** 1.1
    return rng.choice(VOCAB, size=n, p=p / p.sum())


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(root: Path, n: int, log=sys.stderr) -> tuple[Path, Path]:
    """(brain path, llm user dir) for a synthetic brain of n chunks; cached under root."""
    folder = root / f"synthetic-{n}"
    db, user = folder / "brain.db", folder / "llm"
    if (folder / "DONE").exists():
        return db, user
    folder.mkdir(parents=True, exist_ok=True)
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), user / "embeddings.db"):
        if p.exists():
            p.unlink()
    start = time.time()
    rng = np.random.default_rng(SEED)
    words = _vocab(rng)
    brain = open_brain(db)
    conn = brain.conn
    conn.execute(f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{DIM}])")
    import sqlite_utils
    from llm.embeddings_migrations import embeddings_migrations

    user.mkdir(exist_ok=True)
    edb = sqlite_utils.Database(user / "embeddings.db")
    embeddings_migrations.apply(edb)
    edb["collections"].insert({"id": 1, "name": "synthetic", "model": "synthetic-768"})
    batch = 5000
    for lo in range(0, n, batch):
        hi = min(n, lo + batch)
        lengths = rng.integers(40, 160, size=hi - lo)
        ids = _zipf_ids(rng, int(lengths.sum()))
        vecs = _unit(rng, hi - lo)
        texts, pos = [], 0
        for length in lengths:
            texts.append(" ".join(words[i] for i in ids[pos:pos + length]))
            pos += length
        with brain.write():
            for j, text in enumerate(texts):
                cid = lo + j + 1
                conn.execute(
                    "INSERT INTO chunks(id, sha, source, project, path, text, embedded, line_start, "
                    "line_end, created) VALUES (?,?,?,?,?,?,1,1,1,'2026-01-01')",
                    (cid, text_sha(text), "synthetic", "synthetic", f"/synthetic/{cid}.md", text),
                )
                conn.execute("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                             (cid, vecs[j].tobytes()))
        edb["embeddings"].insert_all(
            ({"collection_id": 1, "id": str(lo + j + 1), "embedding": vecs[j].tobytes(),
              "content": None, "content_hash": hashlib.md5(texts[j].encode()).digest(),
              "metadata": None, "updated": 0} for j in range(hi - lo)),
            batch_size=1000,
        )
    with brain.write():
        for key, value in (("embed_model", "synthetic-768"), ("embed_dim", str(DIM)),
                           ("doc_prefix", ""), ("query_prefix", "")):
            brain.set_meta(key, value)
    # query vectors: a few stored as items, so `llm similar COLLECTION ID` compares against
    # the same vector without embedding anything
    qvecs = _unit(np.random.default_rng(SEED + 1), 32)
    np.save(folder / "queries.npy", qvecs)
    edb["embeddings"].insert_all(
        {"collection_id": 1, "id": f"query-{i}", "embedding": qvecs[i].tobytes(), "content": None,
         "content_hash": hashlib.md5(f"q{i}".encode()).digest(), "metadata": None, "updated": 0}
        for i in range(len(qvecs))
    )
    edb.conn.close()
    brain.close()
    (folder / "DONE").write_text(f"{n} chunks")
    print(f"[latency] built {n} chunks in {time.time() - start:.0f}s", file=log, flush=True)
    return db, user


def query_texts(n: int) -> list[str]:
    """Queries of 2-6 words drawn from the mid-frequency band of the same vocabulary, plus a
    few natural-language-shaped ones with frequent words (long posting lists)."""
    rng = np.random.default_rng(SEED + 2)
    words = _vocab(np.random.default_rng(SEED))
    out = []
    for i in range(n):
        if i % 4 == 3:
            ids = rng.integers(0, 50, size=6)  # very frequent words
        else:
            ids = rng.integers(50, 5000, size=int(rng.integers(2, 7)))
        out.append(" ".join(words[j] for j in ids))
    return out


def time_recall(db: Path, queries: int = 20, modes=("hybrid", "dense", "lexical")) -> dict[str, float]:
    folder = db.parent
    qvecs = np.load(folder / "queries.npy")
    texts = query_texts(queries)
    brain = open_brain(db, create=False)
    out = {}
    try:
        for mode in modes:
            times = []
            for i in range(queries + 2):
                blob = array("f", qvecs[i % len(qvecs)]).tobytes()
                t = time.perf_counter()
                R.recall(brain.conn, texts[i % len(texts)], k=10, mode=mode, query_vector=lambda: blob)
                if i >= 2:  # two warm-up queries
                    times.append((time.perf_counter() - t) * 1000)
            out[mode] = statistics.median(times)
    finally:
        brain.close()
    return out


def time_llm_similar(user: Path, queries: int) -> tuple[float, float]:
    """(median wall ms of `llm similar synthetic query-i` as a subprocess, median ms of
    Collection.similar_by_id in process). Both scan every row in Python."""
    env = {**os.environ, "LLM_USER_PATH": str(user)}
    cli = []
    for i in range(queries):
        t = time.perf_counter()
        subprocess.run(["llm", "similar", "synthetic", f"query-{i}", "-n", "10"], env=env,
                       check=True, capture_output=True)
        cli.append((time.perf_counter() - t) * 1000)
    import llm
    import sqlite_utils

    coll = llm.Collection("synthetic", sqlite_utils.Database(user / "embeddings.db"), create=False)
    inproc = []
    for i in range(queries):
        t = time.perf_counter()
        coll.similar_by_id(f"query-{i}", number=10)
        inproc.append((time.perf_counter() - t) * 1000)
    coll.db.conn.close()
    return statistics.median(cli), statistics.median(inproc)
