#!/usr/bin/env python3
"""Speed at scale: one harness for what a person waits for and what every `llm` command pays.
Prints figures; not a test. Each subcommand is described in bench/README.md (what it prints,
how long it takes); `python bench/speed.py SUBCOMMAND --help` lists its options.

  oneshot   fresh `llm` processes on a synthetic brain: CPU, wall and peak RSS of a recall
            (hybrid, dense, lexical, --exact) and of `llm -m echo -f brain:Q`, beside
            `llm --version` and `llm -m echo hi`
  inprocess recall() in a long-lived process: p50/p95 CPU per query after warm-up, the
            in-memory copy's size and build time
  recall    dense recall@10 of every path against vec0's exact scan: synthetic clustered
            vectors, and every SciFact chunk embedded by MiniLM (../shared/retrieval)
  startup   `llm --version` and `llm -m echo hi` in a venv with the plugin and one without it
            (nor its dependencies), interleaved
  ingest    `llm brain ingest --no-embed` against `sqlite-utils insert-files` + `enable-fts`
            on the same folders, and where ingest's time goes (scrub, segment, stage, FTS)
  churn     file growth under forget + re-add cycles, and what `llm brain vacuum` gives back
  similar   `llm similar` (llm's own embeddings, scanned in Python) over the same vectors
  search    one hybrid SecondBrain.search on a real brain, the model server's part apart

CPU is user + system time of the measured process only (children are measured with wait4; a
stub or model server embedding the query runs in its own process and is not counted). The
machine these figures come from is shared: use medians of interleaved runs.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import synthetic  # noqa: E402
from bench_embed import start_stub  # noqa: E402  (the tests' stub, in its own process)

SHARED = ROOT.parent / "shared"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


# --- child processes ---------------------------------------------------------------------------


def measure(cmd: list[str], env: dict, cwd: str | None = None) -> dict:
    """CPU (user + sys) and wall seconds, peak RSS in MB, and the output of one fresh process."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True, cwd=cwd)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{stderr.strip()[-800:]}")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss": usage.ru_maxrss / 1024,
            "stdout": stdout, "stderr": stderr}


def interleaved(kinds: dict[str, list[str]], env: dict, rounds: int, check=None) -> dict[str, list[dict]]:
    """Every kind once per round, in turn, so machine load falls on all alike; one warm-up
    round first (page cache, .pyc files)."""
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    for r in range(rounds + 1):
        for name, cmd in kinds.items():
            got = measure(cmd, env)
            if check:
                check(name, got)
            if r:
                runs[name].append(got)
    return runs


def llm_env(db: Path | None, url: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SECONDBRAIN_")}
    env["LLM_USER_PATH"] = tempfile.mkdtemp(prefix="speed-llm-")
    if db is not None:
        env["SECONDBRAIN_DB"] = str(db)
    if url is not None:
        env["OLLAMA_URL"] = url
        env["SECONDBRAIN_EMBED_MODEL"] = synthetic.MODEL
    return env


# --- oneshot -----------------------------------------------------------------------------------


def oneshot(args) -> None:
    llm = [args.python, "-m", "llm"]
    query = synthetic.query_texts(1)[0]
    stub, url = start_stub(synthetic.DIM)
    try:
        for n in sizes(args.sizes):
            db = synthetic.brain(n)
            env = llm_env(db, url)
            recall = llm + ["brain", "recall", query, "-k", "10"]
            kinds = {"llm --version": llm + ["--version"],
                     "llm -m echo hi": llm + ["-m", "echo", "hi"],
                     "recall (hybrid)": recall,
                     "recall --mode dense": recall + ["--mode", "dense"],
                     "recall --mode lexical": recall + ["--mode", "lexical"],
                     "recall --exact": recall + ["--exact"],
                     "-m echo -f brain:Q": llm + ["-m", "echo", "hi", "-f", f"brain:{query}"]}
            explain = measure(recall + ["--explain"], env)["stdout"]
            path = next((line for line in explain.splitlines() if line.startswith("[dense:")), "[dense: ?]")

            def check(name: str, got: dict) -> None:
                if "answering lexically" in got["stderr"]:
                    raise SystemExit(f"{name} answered lexically: {got['stderr'].strip()}")

            runs = interleaved(kinds, env, args.rounds, check)
            print(f"\none-shot, {n:,} chunks ({os.path.getsize(db) / 2**30:.2f} GB), {args.rounds} interleaved "
                  f"rounds of fresh processes ({args.python}); {path}")
            print(f"  {'command':24s} {'CPU s':>7s} {'+ CPU s':>8s} {'wall s':>7s} {'peak RSS MB':>12s}")
            base = {"": statistics.median(r["cpu"] for r in runs["llm --version"]),
                    "echo": statistics.median(r["cpu"] for r in runs["llm -m echo hi"])}
            for name, got in runs.items():
                cpu = statistics.median(r["cpu"] for r in got)
                over = cpu - base["echo" if "echo" in name else ""]
                print(f"  {name:24s} {cpu:7.3f} {over:+8.3f} {statistics.median(r['wall'] for r in got):7.2f} "
                      f"{max(r['rss'] for r in got):12.0f}")
            print("  (+ CPU: beyond llm --version; for the echo rows beyond llm -m echo hi)")
    finally:
        stub.terminate()
        stub.wait()


# --- in process --------------------------------------------------------------------------------


def inprocess(args) -> None:
    from llm_secondbrain.options import RecallOptions
    from llm_secondbrain.recall import recall, vindex
    from llm_secondbrain.store import open_brain

    for n in sizes(args.sizes):
        db = synthetic.brain(n)
        vectors = [q.tobytes() for q in synthetic.query_vectors(db)]
        texts = synthetic.query_texts(len(vectors))
        vindex.forget_cache()
        vindex.keep_warm()
        with open_brain(db, create=False) as brain:
            conn = brain.conn
            c0, t0 = time.process_time(), time.perf_counter()
            index = vindex.get(conn)  # what the background build does, timed in this thread
            build_cpu, build_wall = time.process_time() - c0, time.perf_counter() - t0
            print(f"\nin process, {n:,} chunks: the in-memory copy of the bits is {index.nbytes / 1e6:.0f} MB, "
                  f"built in {build_cpu:.2f} s CPU ({build_wall:.2f} s wall); queries {len(vectors)}, 2 warm-up, "
                  "query embedding excluded")
            print(f"  {'mode':10s} {'p50 CPU ms':>11s} {'p95 CPU ms':>11s} {'p50 wall ms':>12s}   dense path")
            for mode in ("hybrid", "dense", "lexical", "exact"):
                options = RecallOptions(k=10, mode="dense" if mode == "exact" else mode, exact=mode == "exact")
                cpu, wall, how = [], [], ""
                count = len(vectors) if mode != "exact" else 7
                for i in range(count + 2):
                    c0, t0 = time.process_time(), time.perf_counter()
                    result = recall(conn, texts[i % len(texts)], options, vectors[i % len(vectors)])
                    if i >= 2:
                        cpu.append((time.process_time() - c0) * 1000)
                        wall.append((time.perf_counter() - t0) * 1000)
                    how = result.dense or "-"
                print(f"  {mode:10s} {statistics.median(cpu):11.1f} {pct(cpu, 0.95):11.1f} "
                      f"{statistics.median(wall):12.1f}   {how}")
        print(f"  peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        vindex.forget_cache()


# --- recall@10 against the exact scan ---------------------------------------------------------


def _recall_at_10(conn, vectors: list[bytes], paths: tuple[str | None, ...], floor: float | None = None):
    """{path: (recall@10, recall@10 with ties, recall@10 of the exact hits with cosine >= floor)}
    over the queries. "With ties" is ann-benchmarks' epsilon recall (epsilon 0.01): a hit counts
    when its distance is within 1 % of the exact tenth's, so that which of several vectors at the
    same distance a path returns does not count (on the 100k synthetic brain the exact top ten
    is ~5 vectors of the query's cluster, then noise at cosine ~0.15 a thousandth apart). The
    planned path runs first, as a one-shot process would meet it (no copy in memory)."""
    from llm_secondbrain.recall import vindex

    exact = [vindex.nearest(conn, v, 200, exact=True).found[:10] for v in vectors]
    out = {}
    for p in paths:
        vindex.forget_cache()
        got = []
        for v, top in zip(vectors, exact):
            strong = {i for i, d in top if floor is None or 1 - d * d / 2 >= floor}
            hits = vindex.nearest(conn, v, 200, path=p).found[:10]
            found = {i for i, _ in hits}
            got.append((len(found & {i for i, _ in top}) / 10,
                        sum(d <= top[-1][1] * 1.01 for _, d in hits) / 10,
                        len(found & strong) / len(strong) if strong else 1.0))
        out[p] = tuple(float(np.mean(column)) for column in zip(*got))
    return out


def recall_check(args) -> None:
    from llm_secondbrain.recall import vindex
    from llm_secondbrain.store import open_brain

    paths = (None, "bits", "memory")
    for n in sizes(args.sizes):
        db = synthetic.brain(n)
        vectors = [q.tobytes() for q in synthetic.query_vectors(db)]
        with open_brain(db, create=False) as brain:
            how, floor = vindex.nearest(brain.conn, vectors[0], 200).how, _floor(brain.conn)
            got = _recall_at_10(brain.conn, vectors, paths, floor)
        _print_recall(f"synthetic clustered 768-dim, {n:,} chunks, {len(vectors)} held-out queries "
                      f"(planned: {how})", got, floor)
        vindex.forget_cache()
    import brains

    url = args.url
    if not (brains.SCIFACT / "corpus.jsonl").exists() or not brains.server_up(url):
        print(f"\nreal embeddings: skipped (needs ../shared/data/scifact and a MiniLM server at {url})")
        return
    from llm_secondbrain.config import max_chars_for
    from llm_secondbrain.ollama import serialize, shared_embedder

    chars = max_chars_for(brains.MODEL)
    db = brains.build("scifact", brains.scifact_docs(), url=url, max_chars=chars)
    settings = brains.settings_for(db, url, chars)
    queries = brains.read_jsonl(brains.SCIFACT / "queries.jsonl")
    embedder = shared_embedder(settings)
    vectors = [serialize(embedder.embed_query(q["text"])) for q in queries[:args.real_queries]]
    with open_brain(db, create=False) as brain:
        brain.build_bits()  # a brain cached by an earlier version
        n = brain.conn.execute("SELECT count(*) FROM vec_bits").fetchone()[0]
        how, floor = vindex.nearest(brain.conn, vectors[0], 200).how, _floor(brain.conn)
        got = _recall_at_10(brain.conn, vectors, paths, floor)
    _print_recall(f"every SciFact chunk embedded by all-minilm ({n:,} chunks, 384-dim), {len(vectors)} "
                  f"SciFact queries (planned: {how})", got, floor)
    vindex.forget_cache()


def _floor(conn) -> float:
    """The cosine recall's relevance floor asks of the best passage in this brain (recall.floor:
    FLOOR_SD deviations above the mean of random pairs, on the brain's own scale)."""
    from llm_secondbrain.recall import floor

    mean, sd = floor.scale(conn)
    return mean + floor.FLOOR_SD * sd


def _print_recall(what: str, got: dict, floor: float) -> None:
    """One table of recall_check: recall@10 per path, all hits and those reaching the floor."""
    label = {None: "as planned", "bits": "bits in SQL", "memory": "bits in memory"}
    print(f"\nrecall@10 against the exact scan, {what}")
    for p, (every, ties, floored) in got.items():
        print(f"  {label[p]:15s} {every:.3f}   with ties (epsilon 0.01) {ties:.3f}   "
              f"(of the exact top 10 with cosine >= {floor:.3f}: {floored:.3f})")


# --- start-up ----------------------------------------------------------------------------------


def make_venvs(folder: Path) -> tuple[Path, Path]:
    """`with`: llm, llm-echo and this checkout (no extras, as `llm install` gives); `without`:
    llm and llm-echo only. Built once; `with` is reinstalled from this checkout every time."""
    made = []
    for name, packages in (("with", ["llm-echo", str(ROOT)]), ("without", ["llm", "llm-echo"])):
        venv = folder / name
        if not (venv / "bin" / "llm").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *packages], check=True)
        elif name == "with":
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--force-reinstall", "--no-deps",
                            str(ROOT)], check=True)
        shutil.rmtree(ROOT / "build", ignore_errors=True)  # pip leaves it in the checkout
        made.append(venv)
    return made[0], made[1]


def startup(args) -> None:
    with_plugin, without = make_venvs(Path(args.venvs))
    env = llm_env(None, None)
    for label, argv in (("llm --version", ["--version"]), ("llm -m echo hi", ["-m", "echo", "hi"])):
        kinds = {"with": [str(with_plugin / "bin" / "llm"), *argv], "without": [str(without / "bin" / "llm"), *argv]}
        runs = interleaved(kinds, env, args.runs)
        cpu = {k: statistics.median(r["cpu"] for r in v) * 1000 for k, v in runs.items()}
        wall = {k: statistics.median(r["wall"] for r in v) * 1000 for k, v in runs.items()}
        rss = {k: statistics.median(r["rss"] for r in v) for k, v in runs.items()}
        print(f"{label:15s} CPU {cpu['with']:.0f} ms with the plugin, {cpu['without']:.0f} without: "
              f"{cpu['with'] - cpu['without']:+.0f} ms (wall {wall['with'] - wall['without']:+.0f} ms, "
              f"RSS {rss['with'] - rss['without']:+.1f} MB); medians of {args.runs} interleaved runs")
    numpy = subprocess.run([str(with_plugin / "bin" / "python"), "-c", "import numpy"], capture_output=True)
    print(f"NumPy in the venv with the plugin: {'yes' if numpy.returncode == 0 else 'no'}")


# --- ingest ------------------------------------------------------------------------------------


def til_folder() -> Path | None:
    data = SHARED / "data" / "jbranchaud-til" / "notes.tar.gz"
    if not data.exists():
        return None
    notes = synthetic.work() / "til-notes"
    if not notes.exists():
        notes.mkdir(parents=True)
        with tarfile.open(data) as tar:
            tar.extractall(notes, filter="data")
    return notes


def _profile_ingest(folder: Path) -> dict[str, float]:
    """Seconds (CPU of this process) of one in-process ingest, by part. FTS is the rebuild of
    the index over the same rows, the cost of what the insert triggers did inside stage."""
    from llm_secondbrain import config
    from llm_secondbrain.ingest import ingest
    from llm_secondbrain.store import open_brain

    tmp = Path(tempfile.mkdtemp(prefix="speed-profile-"))
    settings = config.load({"SECONDBRAIN_DB": str(tmp / "brain.db")})
    profile = cProfile.Profile(time.process_time)
    with open_brain(tmp / "brain.db") as brain:
        profile.enable()
        ingest(brain, [str(folder)], settings)
        profile.disable()
        c0 = time.process_time()
        with brain.write():
            brain.conn.execute("INSERT INTO fts_chunks(fts_chunks) VALUES ('rebuild')")
        fts = time.process_time() - c0
    shutil.rmtree(tmp, ignore_errors=True)
    stats = pstats.Stats(profile).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
    total = sum(tt for _cc, _nc, tt, _ct, _callers in stats.values())

    def cumulative(where: str, name: str) -> float:
        return max((ct for (file, _line, fn), (_cc, _nc, _tt, ct, _callers) in stats.items()
                    if fn == name and where in file.replace(os.sep, "/")), default=0.0)

    segment = cumulative("llm_secondbrain/segment", "segment")
    parts = {"read": cumulative("ingest/__init__", "_read"),
             "scrub (the gate)": cumulative("ingest/gate", "document") - segment,
             "segment": segment,
             # the batches' writes: each file's stage, then the batch's new chunks with their
             # FTS triggers (store.Batch)
             "stage (SQL, FTS triggers)": cumulative("llm_secondbrain/store", "flush")}
    parts["other"] = total - sum(parts.values())
    parts["of which FTS (rebuild)"] = fts
    parts["total"] = total
    return parts


def _check_indexed(db: Path, folder: Path) -> None:
    """Stop unless the baseline's FTS index finds a word of the folder: a baseline that indexed
    an empty column made ingest look three times slower than it was."""
    import re
    import sqlite3

    word = next(m.group(0) for p in sorted(folder.rglob("*.md")) for m in [re.search(r"[^\W\d_]{4,}", p.read_text())] if m)
    conn = sqlite3.connect(db)
    try:
        found = conn.execute("SELECT count(*) FROM files_fts WHERE files_fts MATCH ?", (f'"{word}"',)).fetchone()[0]
    finally:
        conn.close()
    if not found:
        sys.exit(f"sqlite-utils' FTS index in {db} finds nothing for {word!r}: the baseline indexed no text")


def ingest_check(args) -> None:
    corpora = []
    til = til_folder() if args.only != "synthetic" else None
    if til is not None:
        corpora.append(("jbranchaud-til", til))
    if args.only != "til":
        corpora.append((f"synthetic {args.files:,} files", synthetic.folder(args.files, args.paras)[0]))
    for label, folder in corpora:
        files = sum(1 for p in folder.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
        tmp = Path(tempfile.mkdtemp(prefix="speed-ingest-"))
        env = llm_env(tmp / "brain.db", None)
        env["OLLAMA_URL"] = "http://127.0.0.1:9"  # --no-embed: nothing is asked of a server
        su = str(Path(args.python).parent / "sqlite-utils")
        # each checkout's `llm_secondbrain` first on the path, run from a folder holding no
        # checkout (`python -m` puts the working folder first)
        checkouts = {"ingest": ROOT, **({"baseline": Path(args.baseline).resolve()} if args.baseline else {})}
        cpu: dict[str, list[float]] = {name: [] for name in (*checkouts, "sqlite-utils")}
        for r in range(args.rounds + 1):
            for name, checkout in checkouts.items():
                for p in tmp.glob("*.db*"):
                    p.unlink()
                got = measure([args.python, "-m", "llm", "brain", "ingest", str(folder), "--no-embed",
                               "--no-progress", "--json"], {**env, "PYTHONPATH": str(checkout)}, cwd=str(tmp))
                if r:
                    cpu[name].append(got["cpu"])
                if name == "ingest":
                    chunks = json.loads(got["stdout"])["chunks_added"]
            # --text names the text column content_text: indexing "content" indexed nothing
            a = measure([su, "insert-files", str(tmp / "su.db"), "files", str(folder), "--text"], env)
            b = measure([su, "enable-fts", str(tmp / "su.db"), "files", "content_text"], env)
            if not r:
                _check_indexed(tmp / "su.db", folder)
            (tmp / "su.db").unlink()
            if r:
                cpu["sqlite-utils"].append(a["cpu"] + b["cpu"])
        ours, theirs = statistics.median(cpu["ingest"]), statistics.median(cpu["sqlite-utils"])
        print(f"\ningest --no-embed, {label} ({files:,} files, {size:.1f} MB, {chunks:,} chunks): "
              f"{ours:.2f} s CPU; sqlite-utils insert-files + enable-fts {theirs:.2f} s: {ours / theirs:.1f}x "
              f"(medians of {args.rounds} interleaved rounds)")
        if args.baseline:
            base = statistics.median(cpu["baseline"])
            print(f"  the baseline ({checkouts['baseline']}) in the same rounds: {base:.2f} s CPU, "
                  f"{base / theirs:.1f}x")
        parts = _profile_ingest(folder)
        print("  where an in-process ingest's CPU goes (cProfile, so slower than the run above): " + ", ".join(
            f"{k} {v:.2f} s" for k, v in parts.items()))
        shutil.rmtree(tmp, ignore_errors=True)


# --- churn, llm similar, search on a real brain -----------------------------------------------


def churn(args) -> None:
    from llm_secondbrain.store import open_brain

    src = synthetic.brain(args.chunks)
    tmp = Path(tempfile.mkdtemp(prefix="speed-churn-")) / "brain.db"
    shutil.copy(src, tmp)
    rng = np.random.default_rng(1)
    sizes_mb = [os.path.getsize(tmp) / 1e6]
    with open_brain(tmp, create=False) as brain:
        conn = brain.conn
        for _ in range(3):
            victims = [int(v) for v in rng.choice(args.chunks, size=args.chunks // 4, replace=False) + 1]
            rows = conn.execute(
                "SELECT c.id, c.sha, c.path, c.text, v.embedding FROM json_each(?) j CROSS JOIN chunks c "
                "ON c.id = j.value CROSS JOIN vec_chunks v ON v.rowid = c.id", (json.dumps(victims),)).fetchall()
            with brain.write():
                brain._delete_ids([r[0] for r in rows])
                conn.executemany("INSERT INTO chunks(id, sha, source, project, path, text, embedded, created) "
                                 "VALUES (?, ?, 'synthetic', 'synthetic', ?, ?, 1, '2026-01-01')",
                                 [r[:4] for r in rows])
                brain.put_vectors([(r[0], r[4]) for r in rows])
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            sizes_mb.append(os.path.getsize(tmp) / 1e6)
    env = llm_env(tmp, None)
    took = measure([args.python, "-m", "llm", "brain", "vacuum"], env)
    print(f"churn ({args.chunks:,} chunks, 3 cycles of forgetting and re-adding a quarter): file MB "
          + " -> ".join(f"{s:.1f}" for s in sizes_mb)
          + f"; after llm brain vacuum {os.path.getsize(tmp) / 1e6:.1f} ({took['cpu']:.1f} s CPU)")
    shutil.rmtree(tmp.parent, ignore_errors=True)


def similar(args) -> None:
    """`llm similar`'s own scan over the same vectors, for scale: it decodes every vector in Python."""
    import llm
    import sqlite_utils
    from llm.embeddings_migrations import embeddings_migrations

    from llm_secondbrain.store import open_brain

    db = synthetic.brain(args.chunks)
    path = db.parent / "llm-embeddings.db"
    if not (db.parent / "LLM_DONE").exists():
        path.unlink(missing_ok=True)
        edb = sqlite_utils.Database(path)
        embeddings_migrations.apply(edb)
        edb["collections"].insert({"id": 1, "name": "synthetic", "model": synthetic.MODEL})
        with open_brain(db, create=False) as brain:
            rows = brain.conn.execute("SELECT rowid, embedding FROM vec_chunks")
            while part := rows.fetchmany(5000):
                edb["embeddings"].insert_all(
                    ({"collection_id": 1, "id": str(r), "embedding": e, "content": None,
                      "content_hash": str(r).encode(), "metadata": None, "updated": 0} for r, e in part),
                    batch_size=5000)
        edb.conn.close()
        (db.parent / "LLM_DONE").write_text("ok")
    coll = llm.Collection("synthetic", sqlite_utils.Database(path), create=False)
    times = []
    for q in synthetic.query_vectors(db)[:2]:
        c0 = time.process_time()
        coll.similar_by_vector(q.tolist(), number=10)
        times.append(time.process_time() - c0)
    ms = statistics.median(times) * 1000
    print(f"llm similar over the same {args.chunks:,} vectors: {ms:,.0f} ms CPU per query in process "
          f"(~{ms * 1_000_000 / args.chunks / 1000:,.0f} s at a million)")


def search(args) -> None:
    """One hybrid SecondBrain.search on a real brain, split into the query's embedding (an HTTP
    round trip to the model server) and everything else (ours). Run the server through
    bench/model_server.py: Python's http.server leaves Nagle on and stalls kept-alive
    requests ~40 ms, Ollama (Go) does not."""
    from llm_secondbrain import config
    from llm_secondbrain.api import SecondBrain
    from llm_secondbrain.ollama import serialize, shared_embedder
    from llm_secondbrain.options import RecallOptions
    from llm_secondbrain.recall import recall

    env = {k: v for k, v in os.environ.items() if not k.startswith("SECONDBRAIN_")}
    env["SECONDBRAIN_EMBED_MODEL"] = "all-minilm"
    env["OLLAMA_URL"] = args.url
    settings = config.load(env, db=args.db)
    with open(args.queries, encoding="utf-8") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()][:args.n]
    times: dict[str, list[float]] = {"embed": [], "recall": [], "search": []}
    with SecondBrain.open(args.db, settings=settings) as sb:
        embedder = shared_embedder(sb.model_settings())
        chunks = sb.brain.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        for q in queries[:3]:
            sb.search(q, k=10)
        for q in queries:
            t0 = time.perf_counter()
            vector = serialize(embedder.embed_query(q))
            t1 = time.perf_counter()
            recall(sb.brain.conn, q, RecallOptions(k=10), vector)
            t2 = time.perf_counter()
            sb.search(q, k=10)
            t3 = time.perf_counter()
            times["embed"].append((t1 - t0) * 1000)
            times["recall"].append((t2 - t1) * 1000)
            times["search"].append((t3 - t2) * 1000)
    print(f"hybrid search, {args.db} ({chunks:,} chunks), {len(queries)} queries, server {args.url} (ms)")
    for name, label in (("embed", "query embedding (server)"), ("recall", "recall() (ours)"),
                        ("search", "SecondBrain.search (all)")):
        print(f"  {label:28s} median {statistics.median(times[name]):7.1f}  p90 {pct(times[name], 0.9):7.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    py = {"default": sys.executable, "help": "the Python whose `llm` is measured (a venv with the plugin)"}
    p = sub.add_parser("oneshot")
    p.add_argument("--sizes", default="100000,1000000")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--python", **py)
    p.set_defaults(fn=oneshot)
    p = sub.add_parser("inprocess")
    p.add_argument("--sizes", default="100000,1000000")
    p.set_defaults(fn=inprocess)
    p = sub.add_parser("recall")
    p.add_argument("--sizes", default="100000,1000000")
    p.add_argument("--url", default=os.environ.get("OLLAMA_URL") or "http://127.0.0.1:11435",
                   help="a MiniLM server (../shared/retrieval/fake_ollama.py --cache FILE)")
    p.add_argument("--real-queries", type=int, default=300)
    p.set_defaults(fn=recall_check)
    p = sub.add_parser("startup")
    p.add_argument("--venvs", default=str(synthetic.work() / "venvs"), help="where the two venvs are made")
    p.add_argument("--runs", type=int, default=21)
    p.set_defaults(fn=startup)
    p = sub.add_parser("ingest")
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--paras", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--python", **py)
    p.add_argument("--baseline", help="another checkout (a git worktree) whose ingest runs in the same rounds")
    p.add_argument("--only", choices=("til", "synthetic"), help="one of the two folders")
    p.set_defaults(fn=ingest_check)
    p = sub.add_parser("churn")
    p.add_argument("--chunks", type=int, default=20_000)
    p.add_argument("--python", **py)
    p.set_defaults(fn=churn)
    p = sub.add_parser("similar")
    p.add_argument("--chunks", type=int, default=100_000)
    p.set_defaults(fn=similar)
    p = sub.add_parser("search")
    p.add_argument("db", type=Path)
    p.add_argument("queries", type=Path, help="JSON lines with a 'query' field")
    p.add_argument("--url", default=os.environ.get("OLLAMA_URL") or "http://127.0.0.1:11502")
    p.add_argument("--n", type=int, default=50)
    p.set_defaults(fn=search)
    args = ap.parse_args()
    t0 = time.time()
    args.fn(args)
    print(f"\n(speed.py {args.command}: {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
