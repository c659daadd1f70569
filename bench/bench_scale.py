"""Recall at a million chunks: latency, dense recall against the exact scan, ingest at scale,
re-ingest, file size, plugin start-up. Builds its synthetic brains itself (seeded) under
$SECONDBRAIN_BENCH_DIR (default /tmp/secondbrain-bench) and prints a table.

    python bench/bench_scale.py                       # 100k and 1M
    python bench/bench_scale.py --sizes 100000        # quicker
    python bench/bench_scale.py --only latency,startup

Synthetic data, as issue 6 specifies: chunk text drawn from a Zipf-distributed vocabulary of
50,000 words, queries of 3-6 words from the same distribution; 768-dim unit vectors drawn
around 20,000 random unit centres with noise giving a mean cosine of ~0.8 to the centre, queries
drawn the same way and held out; and uniformly random vectors for comparison. Vectors are
written directly into vec_chunks (no model); query embedding is excluded from the timings.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

import numpy as np

from llm_secondbrain import recall as R
from llm_secondbrain.recall import vindex
from llm_secondbrain.options import RecallOptions
from llm_secondbrain.store import open_brain, text_sha

DIM = 768
VOCAB = 50_000
CENTRES = 20_000
NOISE = 0.75  # |noise| relative to the unit centre: mean cosine 1/sqrt(1 + 0.75^2) = 0.8
SEED = 6
QUERIES = 30


def work() -> Path:
    root = Path(os.environ.get("SECONDBRAIN_BENCH_DIR") or Path(tempfile.gettempdir()) / "secondbrain-bench")
    root.mkdir(parents=True, exist_ok=True)
    return root


def vocab() -> np.ndarray:
    """50,000 distinct letter-only pseudo-words (digits would make every word look like an
    identifier to the literal lane)."""
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
    assert len(set(words)) == VOCAB
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


def build(n: int, clustered: bool = True, text: bool = True) -> Path:
    name = f"scale-{n}-{'clustered' if clustered else 'uniform'}{'' if text else '-vec'}"
    folder = work() / name
    db = folder / "brain.db"
    if (folder / "DONE").exists():
        return db
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    t0 = time.time()
    rng = np.random.default_rng(SEED + n)
    vecs = Vectors(clustered)
    words, p = vocab(), zipf_p()
    brain = open_brain(db)
    conn = brain.conn
    conn.execute(f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{DIM}])")
    batch = 10_000
    for lo in range(0, n, batch):
        hi = min(n, lo + batch)
        v = vecs.draw(rng, hi - lo)
        rows = []
        if text:
            lengths = rng.integers(40, 120, size=hi - lo)
            ids = rng.choice(VOCAB, size=int(lengths.sum()), p=p)
            pos = 0
            for j, length in enumerate(lengths):
                t = " ".join(words[ids[pos:pos + length]])
                pos += length
                rows.append((lo + j + 1, text_sha(t), f"/synthetic/{(lo + j) // 100}.md", t))
        else:
            rows = [(lo + j + 1, f"s{lo + j}", f"/synthetic/{(lo + j) // 100}.md", f"chunk {lo + j}")
                    for j in range(hi - lo)]
        with brain.write():
            conn.executemany(
                "INSERT INTO chunks(id, sha, source, project, path, text, embedded, line_start, line_end, "
                "scrub_version, created) VALUES (?, ?, 'synthetic', 'synthetic', ?, ?, 1, 1, 1, 2, '2026-01-01')",
                rows)
            conn.executemany("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                             [(lo + j + 1, v[j].tobytes()) for j in range(hi - lo)])
        print(f"  building {name}: {hi:,} / {n:,} ({time.time() - t0:.0f}s)", file=sys.stderr, end="\r")
    with brain.write():
        for key, value in (("embed_model", "synthetic-768"), ("embed_dim", str(DIM)),
                           ("doc_prefix", ""), ("query_prefix", "")):
            brain.set_meta(key, value)
    brain.close()
    qrng = np.random.default_rng(SEED + 999)
    np.save(folder / "queries.npy", vecs.draw(qrng, QUERIES))
    (folder / "DONE").write_text(f"{n} chunks in {time.time() - t0:.0f}s")
    print(f"\n  built {name} in {time.time() - t0:.0f}s", file=sys.stderr)
    return db


def query_texts(n: int) -> list[str]:
    rng = np.random.default_rng(SEED + 7)
    words, p = vocab(), zipf_p()
    return [" ".join(words[rng.choice(VOCAB, size=int(rng.integers(3, 7)), p=p)]) for _ in range(n)]


def median_ms(fn, items, warmup: int = 2) -> float:
    times = []
    for i, item in enumerate(items):
        t = time.perf_counter()
        fn(item)
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def latency_and_recall(n: int, clustered: bool = True, text: bool = True) -> dict:
    db = build(n, clustered, text)
    qv = np.load(db.parent / "queries.npy")
    texts = query_texts(len(qv))
    brain = open_brain(db, create=False)
    conn = brain.conn
    out = {"n": n, "size_bytes": os.path.getsize(db)}
    t = time.perf_counter()
    index = vindex.get(conn, DIM)
    out["index_build_s"] = time.perf_counter() - t
    out["index_mb"] = index.nbytes / 1e6
    blobs = [array("f", q).tobytes() for q in qv]
    exact = [[i for i, _ in R.dense(conn, b, 10, exact=True)] for b in blobs]
    fast = [[i for i, _ in R.dense(conn, b, 10)] for b in blobs]
    out["recall@10"] = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, fast)]))
    out["dense_fast_ms"] = median_ms(lambda b: R.dense(conn, b, 10), blobs)
    out["dense_exact_ms"] = median_ms(lambda b: R.dense(conn, b, 10, exact=True), blobs[:7])
    if text:
        pairs = list(zip(texts, blobs))
        out["lexical_ms"] = median_ms(
            lambda tb: R.recall(conn, tb[0], RecallOptions(k=10, mode="lexical")), pairs)
        out["hybrid_ms"] = median_ms(lambda tb: R.recall(conn, tb[0], RecallOptions(k=10), tb[1]), pairs)
    brain.close()
    return out


def llm_similar_ms(n: int, queries: int = 2) -> float:
    """Median ms of `llm similar` (every row scanned in Python) over the same clustered vectors."""
    import llm
    import sqlite_utils
    from llm.embeddings_migrations import embeddings_migrations

    db = build(n)
    path = db.parent / "llm-embeddings.db"
    if not (db.parent / "LLM_DONE").exists():
        path.unlink(missing_ok=True)
        edb = sqlite_utils.Database(path)
        embeddings_migrations.apply(edb)
        edb["collections"].insert({"id": 1, "name": "synthetic", "model": "synthetic-768"})
        brain = open_brain(db, create=False)
        rows = brain.conn.execute("SELECT rowid, embedding FROM vec_chunks")
        while True:
            part = rows.fetchmany(5000)
            if not part:
                break
            edb["embeddings"].insert_all(
                ({"collection_id": 1, "id": str(r), "embedding": e, "content": None,
                  "content_hash": str(r).encode(), "metadata": None, "updated": 0} for r, e in part),
                batch_size=5000)
        brain.close()
        edb.conn.close()
        (db.parent / "LLM_DONE").write_text("ok")
    coll = llm.Collection("synthetic", sqlite_utils.Database(path), create=False)
    qv = np.load(db.parent / "queries.npy")
    times = []
    for q in qv[:queries]:
        t = time.perf_counter()
        coll.similar_by_vector(q.tolist(), number=10)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def write_corpus(folder: Path, files: int, paras: int) -> int:
    """`files` notes of `paras` paragraphs (~300 chars each, one chunk each at MAX_CHARS=400)."""
    if (folder / "DONE").exists():
        return int((folder / "DONE").read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = np.random.default_rng(SEED + 3)
    words, p = vocab(), zipf_p()
    total = 0
    for f in range(files):
        ids = rng.choice(VOCAB, size=paras * 45, p=p)
        text = "\n\n".join(" ".join(words[ids[i * 45:(i + 1) * 45]]) for i in range(paras))
        sub = folder / f"d{f // 500:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"note{f:05d}.md").write_text(text + "\n")
        total += len(text) + 1
    (folder / "DONE").write_text(str(total))
    return total


def run_cli(args: list[str], env: dict) -> tuple[float, int]:
    """(seconds, peak RSS in MB) of one `llm ...` run in a child process."""
    t = time.perf_counter()
    code = ("import resource, sys; from llm.cli import cli\n"
            "try:\n    cli(sys.argv[1:])\nexcept SystemExit as e:\n    pass\n"
            "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    rss = [int(l.split()[1]) for l in res.stderr.splitlines() if l.startswith("RSS ")]
    if res.returncode != 0:
        raise SystemExit(f"llm {' '.join(args)} failed: {res.stderr.strip()[-300:]}")
    return took, (rss[0] / 1024 if rss else float("nan"))


def ingest_scale(files: int, paras: int) -> dict:
    folder = work() / f"corpus-{files}x{paras}"
    total = write_corpus(folder, files, paras)
    out = {"files": files, "chunks_expected": files * paras, "mb": total / 1e6}
    tmp = Path(tempfile.mkdtemp(prefix="scale-ingest-"))
    env = {**os.environ, "SECONDBRAIN_DB": str(tmp / "brain.db"), "LLM_USER_PATH": str(tmp / "llm"),
           "SECONDBRAIN_MAX_CHARS": "400", "OLLAMA_URL": "http://127.0.0.1:9"}
    took, rss = run_cli(["brain", "ingest", str(folder), "--no-embed", "--json"], env)
    out.update(ingest_s=took, ingest_mb_s=total / 1e6 / took, ingest_rss_mb=rss)
    again, _ = run_cli(["brain", "ingest", str(folder), "--no-embed", "--json"], env)
    out.update(reingest_s=again, reingest_ratio=again / took)
    brain = open_brain(tmp / "brain.db", create=False)
    out["chunks"] = brain.stats()["chunks"]
    brain.close()
    out["brain_bytes_per_chunk"] = os.path.getsize(tmp / "brain.db") / max(1, out["chunks"])
    # sqlite-utils insert-files + enable-fts on the same files, same run
    su = tmp / "su.db"
    t = time.perf_counter()
    subprocess.run(["sqlite-utils", "insert-files", str(su), "files", str(folder), "--text"],
                   check=True, capture_output=True)
    subprocess.run(["sqlite-utils", "enable-fts", str(su), "files", "content"], check=True,
                   capture_output=True)
    out["sqlite_utils_s"] = time.perf_counter() - t
    out["sqlite_utils_mb_s"] = total / 1e6 / out["sqlite_utils_s"]
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def startup(runs: int = 15) -> dict:
    """`llm --version` with every plugin against LLM_LOAD_PLUGINS=llm-echo (all but ours),
    interleaved so machine load hits both alike."""
    envs = {"with": dict(os.environ), "without": {**os.environ, "LLM_LOAD_PLUGINS": "llm-echo"}}
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(runs):
        for name, env in envs.items():
            t = time.perf_counter()
            subprocess.run(["llm", "--version"], env=env, check=True, capture_output=True)
            times[name].append((time.perf_counter() - t) * 1000)
    with_plugin, without = statistics.median(times["with"]), statistics.median(times["without"])
    return {"llm_version_ms": with_plugin, "no_plugins_ms": without, "added_ms": with_plugin - without}


def churn() -> dict:
    """File growth under forget + re-add cycles, and what `llm brain vacuum` gives back."""
    db = build(20_000, text=True)
    tmp = Path(tempfile.mkdtemp(prefix="scale-churn-")) / "brain.db"
    shutil.copy(db, tmp)
    brain = open_brain(tmp, create=False)
    conn = brain.conn
    rng = np.random.default_rng(1)
    sizes = [os.path.getsize(tmp)]
    for cycle in range(3):
        victims = rng.choice(20_000, size=5_000, replace=False) + 1
        rows = conn.execute(
            f"SELECT c.id, c.sha, c.path, c.text, v.embedding FROM chunks c JOIN vec_chunks v ON v.rowid = c.id "
            f"WHERE c.id IN ({','.join(map(str, victims))})").fetchall()
        with brain.write():
            brain._delete_ids([r[0] for r in rows])
            conn.executemany(
                "INSERT INTO chunks(id, sha, source, project, path, text, embedded, scrub_version, created) "
                "VALUES (?, ?, 'synthetic', 'synthetic', ?, ?, 1, 2, '2026-01-01')", [r[:4] for r in rows])
            conn.executemany("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                             [(r[0], r[4]) for r in rows])
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sizes.append(os.path.getsize(tmp))
    brain.close()
    env = {**os.environ, "SECONDBRAIN_DB": str(tmp)}
    subprocess.run(["llm", "brain", "vacuum"], env=env, check=True, capture_output=True)
    return {"sizes_mb": [s / 1e6 for s in sizes], "after_vacuum_mb": os.path.getsize(tmp) / 1e6}


def real_recall() -> str:
    """Dense recall@10 of the fast path against the exact scan on real embeddings: SciFact
    through the MiniLM server (bench/brains.py's cached brain), test queries."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import brains
    from bench_recall import query_vectors

    url = os.environ.get("SECONDBRAIN_BENCH_URL", brains.DEFAULT_URL)
    if not (brains.SCIFACT / "corpus.jsonl").exists() or not brains.server_up(url):
        return "real embeddings: skipped (needs ../shared/data/scifact and the MiniLM server)"
    db = brains.build("scifact", brains.scifact_docs(), url=url, max_chars=1000)
    settings = brains.settings_for(db, url, 1000)
    test = set(brains.read_qrels(brains.SCIFACT / "qrels" / "test.tsv"))
    queries = [q for q in brains.read_jsonl(brains.SCIFACT / "queries.jsonl") if q["_id"] in test]
    vectors = list(query_vectors(settings, queries).values())
    brain = open_brain(db, create=False)
    conn = brain.conn
    index = vindex.get(conn, len(vectors[0]) // 4)
    exact = [[i for i, _ in R.dense(conn, v, 10, exact=True)] for v in vectors]
    out = []
    for label, rows in (("default path", vindex.EXACT_ROWS), ("Hamming path forced", 0)):
        saved, vindex.EXACT_ROWS = vindex.EXACT_ROWS, rows
        try:
            fast = [[i for i, _ in index.search(np.frombuffer(v, np.float32), 10)] for v in vectors]
        finally:
            vindex.EXACT_ROWS = saved
        score = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, fast)])
        out.append(f"{label} {score:.3f}")
    brain.close()
    return (f"real embeddings (SciFact, all-minilm, {len(index):,} chunks, {len(vectors)} test queries): "
            "dense recall@10 against the exact scan: " + ", ".join(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--only", default="latency,uniform,real,similar,ingest,startup,churn")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    only = set(args.only.split(","))
    t0 = time.time()
    if "startup" in only:
        s = startup()
        print(f"llm --version: {s['llm_version_ms']:.0f} ms with the plugin, {s['no_plugins_ms']:.0f} ms "
              f"without it: the plugin adds {s['added_ms']:+.0f} ms (medians of 15, interleaved)")
    if "latency" in only:
        print("\nclustered vectors (20k centres, mean cos 0.8), Zipf text; medians over "
              f"{QUERIES - 2} warm queries, k=10, query embedding excluded")
        print(f"{'chunks':>9} {'hybrid ms':>10} {'dense ms':>9} {'lexical ms':>11} {'exact ms':>9} "
              f"{'recall@10':>10} {'index MB':>9} {'build s':>8} {'B/chunk':>8}")
        for n in sizes:
            r = latency_and_recall(n)
            print(f"{n:>9,} {r['hybrid_ms']:>10.1f} {r['dense_fast_ms']:>9.1f} {r['lexical_ms']:>11.1f} "
                  f"{r['dense_exact_ms']:>9.1f} {r['recall@10']:>10.3f} {r['index_mb']:>9.0f} "
                  f"{r['index_build_s']:>8.1f} {r['size_bytes'] / n:>8.0f}", flush=True)
    if "uniform" in only:
        for n in sizes[:1]:
            r = latency_and_recall(n, clustered=False, text=False)
            print(f"uniform random vectors, {n:,}: recall@10 {r['recall@10']:.3f} "
                  f"(no structure for any index; no target), dense {r['dense_fast_ms']:.1f} ms")
    if "real" in only:
        print(real_recall())
    if "similar" in only:
        n = min(sizes)
        ms = llm_similar_ms(n)
        print(f"llm similar over the same {n:,} vectors: {ms:,.0f} ms per query in process "
              f"(~{ms * 1_000_000 / n / 1000:,.0f} s extrapolated to 1M)")
    if "ingest" in only:
        for files, paras in ((1_000, 100), (10_000, 100)):
            r = ingest_scale(files, paras)
            print(f"ingest {r['files']:,} files / {r['chunks']:,} chunks / {r['mb']:.0f} MB: "
                  f"{r['ingest_s']:.0f} s = {r['ingest_mb_s']:.2f} MB/s, peak RSS {r['ingest_rss_mb']:.0f} MB; "
                  f"sqlite-utils insert-files + enable-fts: {r['sqlite_utils_s']:.0f} s = "
                  f"{r['sqlite_utils_mb_s']:.2f} MB/s; unchanged re-ingest {r['reingest_s']:.1f} s "
                  f"= {r['reingest_ratio']:.1%} of the first; {r['brain_bytes_per_chunk']:.0f} B/chunk", flush=True)
    if "churn" in only:
        r = churn()
        print("churn (20k chunks, 3 cycles of forgetting and re-adding 5k): file MB "
              + " -> ".join(f"{s:.1f}" for s in r["sizes_mb"]) + f"; after llm brain vacuum {r['after_vacuum_mb']:.1f}")
    print(f"\n(total {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
