"""Synthetic brains and folders for the speed benchmarks (bench/speed.py), built once and cached
under $SECONDBRAIN_BENCH_DIR (default $TMPDIR/secondbrain-bench).

A brain of N chunks: text of 40-120 Zipf-distributed pseudo-words (a 50,000-word vocabulary,
letters only, so no word looks like an identifier to the literal lane), and 768-dim unit
vectors drawn around 20,000 random unit centres with noise giving a mean cosine of 0.8 to the
centre (or uniformly, `clustered=False`). The brain is made by this checkout's store: chunks
are inserted in bulk (the FTS triggers index them), vectors go through `Brain.put_vectors`, so
the sign bits and the vector table's layout are the defaults. Held-out query vectors are drawn
the same way (queries.npy); query texts are 3-6 words of the same distribution.

A folder for ingest: F notes of P paragraphs of 45 such words (about 300 characters, one
chunk each at the default chunk size).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from llm_secondbrain.scrub import rules_identity
from llm_secondbrain.store import VEC_CHUNK_SIZE, open_brain, text_sha, vectors_table_sql

DIM = 768
VOCAB = 50_000
CENTRES = 20_000
NOISE = 0.75  # |noise| relative to the unit centre: mean cosine 1/sqrt(1 + 0.75^2) = 0.8
SEED = 6
QUERIES = 30
MODEL = "synthetic-768"  # the fingerprint the brain records; the test stub answers any name


def work() -> Path:
    root = Path(os.environ.get("SECONDBRAIN_BENCH_DIR") or Path(tempfile.gettempdir()) / "secondbrain-bench")
    root.mkdir(parents=True, exist_ok=True)
    return root


def vocab() -> np.ndarray:
    cons, vows = "bcdfghjklmnprstvz", "aeiou"
    words = []
    for i in range(VOCAB):
        w, x = "", i
        while True:
            w += cons[x % len(cons)] + vows[(x // len(cons)) % len(vows)]
            x //= len(cons) * len(vows)
            if x == 0:
                break
        words.append(w + "n" * (i % 2))
    return np.array(words)


def zipf_p() -> np.ndarray:
    p = 1.0 / np.arange(1, VOCAB + 1)
    return p / p.sum()


class Vectors:
    """Clustered (or uniform) unit vectors, reproducible by seed."""

    def __init__(self, clustered: bool, seed: int = SEED):
        self.clustered = clustered
        rng = np.random.default_rng(seed)
        self.centres = rng.standard_normal((CENTRES, DIM)).astype(np.float32)
        self.centres /= np.linalg.norm(self.centres, axis=1, keepdims=True)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        noise = rng.standard_normal((n, DIM)).astype(np.float32)
        if self.clustered:
            v = self.centres[rng.integers(0, CENTRES, n)] + np.float32(NOISE / np.sqrt(DIM)) * noise
        else:
            v = noise
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def brain(n: int, clustered: bool = True, log=sys.stderr) -> Path:
    """The path of a synthetic brain of `n` chunks, built now if it is not cached."""
    name = f"synthetic-{n}-{'clustered' if clustered else 'uniform'}-c{VEC_CHUNK_SIZE}"
    folder = work() / name
    db = folder / "brain.db"
    if (folder / "DONE").exists():
        with open_brain(db) as b:
            b.keep_scale()  # as the embedder leaves it (a brain cached before it kept one)
        return db
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    t0 = time.time()
    rng = np.random.default_rng(SEED + n)
    vectors, words, p = Vectors(clustered), vocab(), zipf_p()
    rules = rules_identity()  # as if scrubbed by today's rules: no ingest re-scrubs them
    with open_brain(db) as b:
        conn = b.conn
        with b.write():
            conn.execute(vectors_table_sql(DIM))
        batch = 10_000
        for lo in range(0, n, batch):
            hi = min(n, lo + batch)
            v = vectors.draw(rng, hi - lo)
            lengths = rng.integers(40, 120, size=hi - lo)
            ids = rng.choice(VOCAB, size=int(lengths.sum()), p=p)
            rows, pos = [], 0
            for j, length in enumerate(lengths):
                text = " ".join(words[ids[pos:pos + length]])
                pos += length
                rows.append((lo + j + 1, text_sha(text), f"/synthetic/{(lo + j) // 100}.md", text))
            with b.write():
                conn.executemany(
                    "INSERT INTO chunks(id, sha, source, project, path, text, embedded, line_start, "
                    "line_end, scrub_version, created) VALUES (?, ?, 'synthetic', 'synthetic', ?, ?, 1, "
                    "1, 1, ?, '2026-01-01')", [(*row, rules) for row in rows])
                b.put_vectors([(lo + j + 1, v[j].tobytes()) for j in range(hi - lo)])
            print(f"  building {name}: {hi:,} / {n:,} ({time.time() - t0:.0f} s)", file=log, end="\r")
        with b.write():
            for key, value in (("embed_model", MODEL), ("embed_dim", str(DIM)), ("doc_prefix", ""),
                               ("query_prefix", "")):
                b.set_meta(key, value)
        b.keep_scale()
    np.save(folder / "queries.npy", vectors.draw(np.random.default_rng(SEED + 999), QUERIES))
    (folder / "DONE").write_text(f"{n} chunks in {time.time() - t0:.0f} s")
    print(f"\n  built {name} in {time.time() - t0:.0f} s", file=log)
    return db


def query_vectors(db: Path) -> np.ndarray:
    return np.load(db.parent / "queries.npy")


def query_texts(n: int) -> list[str]:
    rng = np.random.default_rng(SEED + 7)
    words, p = vocab(), zipf_p()
    return [" ".join(words[rng.choice(VOCAB, size=int(rng.integers(3, 7)), p=p)]) for _ in range(n)]


def folder(files: int, paras: int) -> tuple[Path, int]:
    """(a folder of `files` notes of `paras` paragraphs, its size in bytes), cached."""
    root = work() / f"corpus-{files}x{paras}"
    if (root / "DONE").exists():
        return root, int((root / "DONE").read_text())
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    rng = np.random.default_rng(SEED + 3)
    words, p = vocab(), zipf_p()
    total = 0
    for f in range(files):
        ids = rng.choice(VOCAB, size=paras * 45, p=p)
        text = "\n\n".join(" ".join(words[ids[i * 45:(i + 1) * 45]]) for i in range(paras))
        sub = root / f"d{f // 500:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"note{f:05d}.md").write_text(text + "\n")
        total += len(text) + 1
    (root / "DONE").write_text(str(total))
    return root, total
