#!/usr/bin/env python3
"""Recall on every kind of dev data, at the defaults, beside plain BM25, plain dense and their
RRF; negatives; latency. Prints figures; not a test.

    OLLAMA_URL=http://127.0.0.1:PORT python bench/bench_kinds.py            # every set, both splits
    python bench/bench_kinds.py --sets vault,ja --split tune                  # what tuning looks at
    python bench/bench_kinds.py --embedder stub                               # the test stub's vectors
    python bench/bench_kinds.py --latency                                     # in-process and one-shot

Sets (answers are paths relative to the folder ingested; classes as each set names them):
  til      ../shared/data/jbranchaud-til: 158 queries (semantic/exact/mixed), 25 negatives
  zh       ../shared/data/tldr-zh: 37 queries (semantic/exact/mixed), 8 negatives
  vault    bench/vault (make_vault.py, English): 88 queries (paraphrase/exact/mixed), 20 negatives
  ja       bench/vault (make_vault.py, Japanese manpages-ja): 21 queries, 6 negatives
  vault2   bench/vault2 (make_vault2.py: GNU info manuals, Python's language reference, package
           docs; descriptive titles): 60 queries (paraphrase/exact/mixed), 20 negatives
  scifact  ../shared/data/scifact: train claims (tune) and test claims (report), no negatives
`--split`: the vault sets carry `split: tune|report` per query (half each, frozen with the
queries); SciFact's are its train and test qrels; til and zh are development sets, reported whole.

Systems, each scored the way `llm brain eval` scores (binary relevance, ten notes, each note at its
best chunk): `hybrid` (recall's defaults: every option at its default), `dense` and `lexical`
(`--mode`), and three plain systems over whole notes: `bm25` (FTS5 `porter unicode61` over each
note's raw text, every query word quoted and OR-joined), `dense-note` (one MiniLM vector per
note: its text, truncated by the model at 256 word pieces) and `rrf` (their reciprocal-rank
fusion, k = 60, over each one's top 100). Negatives: how many got "nothing" (recall's
`relevant` flag; BM25 says nothing when no word matches; dense and RRF always answer).

The notes are ingested with `llm brain ingest FOLDER` (the front door: front matter, scrub,
chunking as a user gets them) into a brain kept under --work per set and embedder; a rerun
re-ingests nothing unchanged. `--embedder stub` runs tests/ollama_stub.py's hashed bag of
words (no model; to show the floor holds under another model's scores with no constant
changed). Latency (`--latency`, on til): median in-process `SecondBrain.search` per query
(query embedding included) and one-shot `llm brain recall` wall time, for this checkout and,
with `--today PATH` (a checkout of main), for today's code on its own brain.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "data"
VAULT = HERE / "vault"
VAULT2 = HERE / "vault2"
SYSTEMS = ("hybrid", "dense", "lexical", "bm25", "dense-note", "rrf")
METRICS = ("nDCG@10", "hit@1", "recall@10")
K = 10
DIGESTS = {"en": "3d2e3f5d442eb51a", "ja": "7108138cebab7788",  # the vaults the queries were written on
           "vault2": "876e60459661b599"}


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- data sets ---------------------------------------------------------------------------------


def extract(tar: Path, dest: Path, prefix: str = "") -> Path:
    if not dest.exists():
        tmp = dest.with_name(dest.name + ".part")
        tmp.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tar) as t:
            members = [m for m in t.getmembers() if m.isfile() and m.name.endswith(".md")
                       and m.name.startswith(prefix)]
            t.extractall(tmp, members=members, filter="data")
        tmp.rename(dest)
    return dest


def vault(work: Path, lang: str) -> Path:
    root = work / "vault"
    if not (root / lang).exists():
        subprocess.run([sys.executable, str(VAULT / "make_vault.py"), str(root)], check=True)
    sys.path.insert(0, str(VAULT))
    import make_vault

    notes = {str(p.relative_to(root / lang)): p.read_text(encoding="utf-8")
             for p in (root / lang).rglob("*.md")}
    if make_vault.digest(notes) != DIGESTS[lang]:
        print(f"warning: the {lang} vault here differs from the one its queries were written on "
              f"(digest {make_vault.digest(notes)}, not {DIGESTS[lang]}): figures are not comparable",
              file=sys.stderr)
    return root / lang


def vault2(work: Path) -> Path:
    """The second development vault (bench/vault2/make_vault2.py), built once under `work`."""
    root = work / "vault2"
    if not root.exists():
        subprocess.run([sys.executable, str(VAULT2 / "make_vault2.py"), str(root)], check=True,
                       stdout=subprocess.DEVNULL)
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.md"), key=lambda p: str(p.relative_to(root))):
        h.update(str(path.relative_to(root)).encode() + b"\n" + path.read_bytes() + b"\0")
    if h.hexdigest()[:16] != DIGESTS["vault2"]:
        print(f"warning: vault2 here differs from the one its queries were written on (digest "
              f"{h.hexdigest()[:16]}, not {DIGESTS['vault2']}): figures are not comparable", file=sys.stderr)
    return root


def scifact(work: Path) -> tuple[Path, list[dict], list[dict]]:
    folder = work / "scifact"
    folder.mkdir(parents=True, exist_ok=True)
    texts = {d["_id"]: d["title"] + "\n" + d["text"] for d in read_jsonl(DATA / "scifact" / "corpus.jsonl")}
    for doc, text in texts.items():
        path = folder / f"{doc}.txt"
        if not path.exists():
            path.write_text(text, encoding="utf-8")
    queries = {d["_id"]: d["text"] for d in read_jsonl(DATA / "scifact" / "queries.jsonl")}
    splits = []
    for split, name in (("train", "tune"), ("test", "report")):
        answers: dict[str, list[str]] = {}
        with open(DATA / "scifact" / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
            next(f)
            for line in f:
                q, d, s = line.rstrip("\n").split("\t")
                if int(s) > 0:
                    answers.setdefault(q, []).append(f"{d}.txt")
        splits += [{"id": q, "query": queries[q], "answers": a, "class": "claim", "split": name}
                   for q, a in answers.items()]
    return folder, splits, []


def load_set(name: str, work: Path) -> tuple[Path, list[dict], list[dict]]:
    """(folder to ingest, queries, negatives) of a set."""
    if name == "til":
        d = DATA / "jbranchaud-til"
        return (extract(d / "notes.tar.gz", work / "til"), read_jsonl(d / "queries.jsonl"),
                read_jsonl(d / "negatives.jsonl"))
    if name == "zh":
        d = DATA / "tldr-zh"
        return (extract(d / "notes.tar.gz", work / "zh", "pages.zh/"), read_jsonl(d / "queries.jsonl"),
                read_jsonl(d / "negatives.jsonl"))
    if name in ("vault", "ja"):
        lang = "en" if name == "vault" else "ja"
        return (vault(work, lang), read_jsonl(VAULT / f"queries-{lang}.jsonl"),
                read_jsonl(VAULT / f"negatives-{lang}.jsonl"))
    if name == "vault2":
        return (vault2(work), read_jsonl(VAULT2 / "queries.jsonl"), read_jsonl(VAULT2 / "negatives.jsonl"))
    if name == "scifact":
        return scifact(work)
    raise SystemExit(f"unknown set {name!r}")


# --- the plugin --------------------------------------------------------------------------------


def env_for(db: Path, url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SECONDBRAIN_")}
    env.update({"SECONDBRAIN_EMBED_MODEL": "all-minilm", "SECONDBRAIN_DB": str(db), "OLLAMA_URL": url})
    return env


def code_digest(root: Path) -> str:
    """What the stored chunks and their vectors depend on (readers, chunking, the store, what
    is embedded): a brain is rebuilt when this changes, since an unchanged file is otherwise
    never read again, nor an embedded chunk embedded again."""
    h = hashlib.sha256()
    pkg = root / "llm_secondbrain"
    for path in sorted([*pkg.glob("ingest/**/*.py"), pkg / "segment.py", pkg / "store.py", pkg / "embed.py"]):
        h.update(path.read_bytes())
    return h.hexdigest()[:8]


def build(name: str, folder: Path, work: Path, url: str, embedder: str, root: Path = ROOT,
          python: str = sys.executable) -> Path:
    db = work / "brains" / f"{name}-{embedder}-{code_digest(root)}" / "brain.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    env = env_for(db, url)
    env["PYTHONPATH"] = str(root)
    start = time.time()
    # run from the brain's folder: `python -m` and `-c` put the current folder first on
    # sys.path, which would import the checkout the bench was started from, not `root`
    done = subprocess.run([python, "-m", "llm", "brain", "ingest", str(folder), "--no-progress"],
                          env=env, text=True, capture_output=True, cwd=db.parent)
    if done.returncode:
        raise SystemExit(f"ingest of {name} failed:\n{done.stderr}")
    print(f"[{name}] {done.stdout.strip()} ({time.time() - start:.0f}s)", file=sys.stderr, flush=True)
    return db


def plugin_runs(db: Path, url: str, queries: list[dict], modes=("hybrid", "dense", "lexical"),
                timings: dict | None = None, handed: dict | None = None
                ) -> dict[str, dict[str, tuple[list[str], bool]]]:
    """{mode: {query id: (ranked note paths, relevant)}} through the Python API. `handed`
    collects, per query id, what `-f brain:QUERY` gives a model at the defaults (the
    fragment's k, the passages `for_a_model` keeps, its character budget): (passages, chars)."""
    from llm_secondbrain import config
    from llm_secondbrain.api import SecondBrain, context_text
    from llm_secondbrain.faces.fragment import FRAGMENT_K

    settings = config.load(env_for(db, url), db=db)
    out: dict = {m: {} for m in modes}
    with SecondBrain.open(db, settings=settings, create=False) as sb:
        for q in queries:
            for mode in modes:
                start = time.perf_counter()
                result = sb.search(q["query"], mode=mode, k=K, per_note=1)
                if timings is not None:
                    timings.setdefault(mode, []).append(time.perf_counter() - start)
                out[mode][q["id"]] = (list(dict.fromkeys(h.path for h in result.hits if h.path)),
                                      result.relevant)
            if handed is not None:
                result = sb.search(q["query"], k=FRAGMENT_K)
                result.hits = result.for_a_model()
                text = context_text(result, settings.fragment_chars) if result.hits else ""
                handed[q["id"]] = (len(result.hits), len(text))
    return out


# --- plain systems over whole notes --------------------------------------------------------------


def notes_of(folder: Path) -> dict[str, str]:
    return {str(p): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in (".md", ".txt")}


def bm25_runs(notes: dict[str, str], queries: list[dict]) -> dict[str, tuple[list[str], bool]]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE n USING fts5(path UNINDEXED, body, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO n VALUES (?, ?)", notes.items())
    out = {}
    for q in queries:
        terms = list(dict.fromkeys(t.lower() for t in re.findall(r"\w+", q["query"])))
        expr = " OR ".join('"' + t + '"' for t in terms)
        rows = conn.execute("SELECT path FROM n WHERE n MATCH ? ORDER BY bm25(n) LIMIT 100",
                            (expr,)).fetchall() if expr else []
        out[q["id"]] = ([r[0] for r in rows], bool(rows))
    return out


def embed_texts(url: str, texts: list[str], batch: int = 32) -> list[list[float]]:
    import httpx

    vectors: list[list[float]] = []
    with httpx.Client(timeout=600) as client:
        for i in range(0, len(texts), batch):
            r = client.post(url.rstrip("/") + "/api/embed",
                            json={"model": "all-minilm", "input": texts[i:i + batch]})
            r.raise_for_status()
            vectors += r.json()["embeddings"]
    return vectors


def dense_note_runs(notes: dict[str, str], queries: list[dict], url: str, cache: Path) -> dict:
    import numpy as np

    paths = list(notes)
    key = hashlib.sha256(json.dumps(paths).encode() + url.encode()).hexdigest()[:10]
    file = cache / f"notes-{key}.npy"
    if file.exists():
        docs = np.load(file)
    else:
        docs = np.asarray(embed_texts(url, [notes[p].strip() or p for p in paths]), dtype=np.float32)
        np.save(file, docs)
    qv = np.asarray(embed_texts(url, [q["query"] for q in queries]), dtype=np.float32)
    scores = qv @ docs.T
    out = {}
    for q, row in zip(queries, scores):
        order = np.argsort(-row)[:100]
        out[q["id"]] = ([paths[i] for i in order], True)
    return out


def rrf_runs(a: dict, b: dict, k: int = 60) -> dict:
    out = {}
    for qid in a:
        score: dict[str, float] = {}
        for run in (a[qid][0], b[qid][0]):
            for rank, path in enumerate(run[:100], start=1):
                score[path] = score.get(path, 0.0) + 1 / (k + rank)
        out[qid] = (sorted(score, key=lambda p: -score[p]), True)
    return out


# --- scoring -----------------------------------------------------------------------------------


def score(run: dict, queries: list[dict]) -> dict[str, dict[str, float]]:
    from llm_secondbrain.faces.evaluate import score_one

    groups: dict[str, list[dict]] = {}
    for q in queries:
        m = score_one(run[q["id"]][0], q["answers"])
        m["empty"] = float(not run[q["id"]][0])
        groups.setdefault(q["class"], []).append(m)
        groups.setdefault("all", []).append(m)
    return {c: {"n": len(rows), **{k: statistics.fmean(r[k] for r in rows) for k in (*METRICS, "empty")}}
            for c, rows in groups.items()}


def table(title: str, scores: dict[str, dict], negatives: dict[str, tuple[int, int]]) -> str:
    classes = sorted({c for s in scores.values() for c in s}, key=lambda c: (c == "all", c))
    lines = [f"### {title}", "", "| system | " + " | ".join(
        f"{c} (n={next(iter(scores.values()))[c]['n']})" for c in classes) + " | negatives: nothing |",
             "|---|" + "---|" * len(classes) + "---|"]
    for system, by_class in scores.items():
        cells = [" / ".join(f"{by_class[c][m]:.3f}" for m in METRICS) for c in classes]
        neg = negatives.get(system)
        lines.append(f"| {system} | " + " | ".join(cells) + f" | {f'{neg[0]} of {neg[1]}' if neg else '-'} |")
    lines.append("")
    lines.append("Cells: nDCG@10 / hit@1 / recall@10.")
    return "\n".join(lines)


def with_typo(queries: list[dict], kind: str, seed: int = 7) -> list[dict]:
    """The queries, each meaning query (paraphrase, semantic) with one typo in its longest word of
    five letters or more, seeded: `swap` two neighbouring letters, `omit` one, `sub` (replace)
    one; never the first letter nor the last two. Negatives and token queries are left alone."""
    rng = random.Random(seed)
    out = []
    for q in queries:
        found = list(re.finditer(r"[a-z]{5,}", q["query"])) if q["class"] in ("paraphrase", "semantic") else []
        if not found:
            out.append(q)
            continue
        m = max(found, key=lambda m: len(m.group(0)))
        w, i = m.group(0), rng.randrange(1, len(m.group(0)) - 2)
        if kind == "swap":
            typo = w[:i] + w[i + 1] + w[i] + w[i + 2:]
        elif kind == "omit":
            typo = w[:i] + w[i + 1:]
        else:
            typo = w[:i] + rng.choice([c for c in "etaoinsrhl" if c != w[i]]) + w[i + 1:]
        out.append({**q, "query": q["query"][:m.start()] + typo + q["query"][m.end():]})
    return out


def run_set(name: str, args, work: Path, out: dict) -> None:
    folder, queries, negatives = load_set(name, work)
    if args.typos:
        queries = with_typo(queries, args.typos)
    db = build(name, folder, work, args.url, args.embedder)
    notes = notes_of(folder)
    handed: dict = {}
    runs = plugin_runs(db, args.url, queries + negatives, handed=handed)
    if not args.no_plain:
        bm25 = bm25_runs(notes, queries + negatives)
        runs["bm25"] = bm25
        if args.embedder == "minilm":
            runs["dense-note"] = dense_note_runs(notes, queries + negatives, args.url, work)
            runs["rrf"] = rrf_runs(bm25, runs["dense-note"])
    splits = sorted({q.get("split", "all") for q in queries})
    wanted = [s for s in splits if args.split in ("all", s)]
    for split in wanted:
        qs = [q for q in queries if q.get("split", "all") == split]
        ns = [q for q in negatives if q.get("split", "all") in (split, "all")] if split != "tune" or name != "scifact" else []
        scores = {s: score(runs[s], qs) for s in runs}
        neg = {s: (sum(not (runs[s][q["id"]][1] and runs[s][q["id"]][0]) for q in ns), len(ns))
               for s in runs} if ns else {}
        title = f"{name}" + (f", {split} half" if split != "all" else "") + f" ({args.embedder})"
        print(table(title, scores, neg))
        empty = {s: sum(1 for q in qs if not (runs[s][q["id"]][1] and runs[s][q["id"]][0])) for s in runs
                 if s in ("hybrid", "dense", "lexical")}
        print("Answerable queries answered \"nothing\": "
              + ", ".join(f"{s} {n} of {len(qs)}" for s, n in empty.items()))
        given = [handed[q["id"]] for q in ns]
        if given:
            print(f"`-f brain:` on the {len(ns)} negatives hands a model {sum(p for p, _ in given)} passages, "
                  f"{sum(c for _, c in given):,} characters in all ({sum(1 for p, _ in given if p)} "
                  f"negatives get any; at most {max(c for _, c in given):,} characters)")
        print()
        out[f"{name}/{split}"] = {"scores": scores, "negatives": neg, "empty": empty,
                                  "handed": {q["id"]: handed[q["id"]] for q in ns}}
    if args.dump:
        with open(args.dump, "a", encoding="utf-8") as f:
            for q in queries + negatives:
                row = {"set": name, "id": q["id"], "class": q["class"], "split": q.get("split", "all"),
                       "answers": q["answers"]}
                for s in runs:
                    row[s] = {"top": runs[s][q["id"]][0][:10], "relevant": runs[s][q["id"]][1]}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


# --- latency -----------------------------------------------------------------------------------


def latency(args, work: Path) -> None:
    """In-process and one-shot recall times on til, for this checkout and (--today) another,
    interleaved (A, B, A, B ...) so load from other work on the machine hits both alike."""
    folder, queries, _ = load_set("til", work)
    sample = queries[:: max(1, len(queries) // 30)][:30]
    codes = [("this checkout", ROOT, sys.executable)] + (
        [(f"today ({args.today})", Path(args.today), args.today_python or sys.executable)]
        if args.today else [])
    envs, dirs = [], []
    for label, root, python in codes:
        db = build("til-latency" if root == ROOT else "til-today", folder, work, args.url, args.embedder,
                   root=root, python=python)
        env = env_for(db, args.url)
        env["PYTHONPATH"] = str(root)
        envs.append(env)
        dirs.append(db.parent)  # not the checkout the bench runs from (see build)
    script = (
        "import json, sys, time, statistics\n"
        "from llm_secondbrain import config\nfrom llm_secondbrain.api import SecondBrain\n"
        f"qs = json.loads({json.dumps(json.dumps([q['query'] for q in sample]))})\n"
        "sb = SecondBrain.open(config.load().db_path, create=False)\n"
        "sb.search(qs[0])\nout = {}\n"
        "for mode in ('hybrid', 'dense', 'lexical'):\n"
        "    t = []\n"
        "    for q in qs:\n"
        "        s = time.perf_counter(); sb.search(q, mode=mode); t.append(time.perf_counter() - s)\n"
        "    out[mode] = t\n"
        "print(json.dumps(out))\n")
    inproc: list[dict[str, list[float]]] = [{} for _ in codes]
    shots: list[list[float]] = [[] for _ in codes]
    for _ in range(2):
        for i, (_, _, python) in enumerate(codes):
            done = subprocess.run([python, "-c", script], env=envs[i], text=True, capture_output=True,
                                  check=True, cwd=dirs[i])
            for mode, times in json.loads(done.stdout).items():
                inproc[i].setdefault(mode, []).extend(times)
    for q in sample[:10]:
        for i, (_, _, python) in enumerate(codes):
            start = time.perf_counter()
            subprocess.run([python, "-m", "llm", "brain", "recall", q["query"]], env=envs[i], cwd=dirs[i],
                           capture_output=True, check=True)
            shots[i].append(time.perf_counter() - start)
    print("### Latency (til, median ms, runs interleaved; the machine was shared with other work)\n")
    print("| code | in-process hybrid | dense | lexical | one-shot `llm brain recall` |")
    print("|---|---:|---:|---:|---:|")
    for (label, _, _), times, shot in zip(codes, inproc, shots):
        med = {m: statistics.median(t) * 1000 for m, t in times.items()}
        print(f"| {label} | {med['hybrid']:.1f} | {med['dense']:.1f} | {med['lexical']:.1f} | "
              f"{statistics.median(shot) * 1000:.0f} |")
    print()


def start_stub(work: Path) -> tuple[str, subprocess.Popen]:
    port_file = work / "stub.port"
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "ollama_stub.py"), "--port", "0",
                             "--port-file", str(port_file)], stdout=subprocess.DEVNULL)
    for _ in range(100):
        if port_file.exists() and port_file.read_text().strip():
            return f"http://127.0.0.1:{port_file.read_text().strip()}", proc
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the stub server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="til,zh,vault,ja,vault2,scifact")
    parser.add_argument("--split", choices=("tune", "report", "all"), default="all")
    parser.add_argument("--url", default=os.environ.get("OLLAMA_URL", "http://127.0.0.1:11435"))
    parser.add_argument("--embedder", choices=("minilm", "stub"), default="minilm")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "secondbrain-kinds")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain whole-note systems")
    parser.add_argument("--latency", action="store_true", help="time recall on til instead")
    parser.add_argument("--today", help="with --latency: a checkout of today's code to time beside")
    parser.add_argument("--today-python", help="the Python to run --today with (its dependencies)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--dump", type=Path, help="append every query's top ten here (JSON lines)")
    parser.add_argument("--typos", choices=("swap", "omit", "sub"),
                        help="one seeded typo in every paraphrase and semantic query (with_typo)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    stub = None
    if args.embedder == "stub":
        args.url, stub = start_stub(args.work)
    try:
        if args.latency:
            latency(args, args.work)
            return
        out: dict = {}
        for name in args.sets.split(","):
            run_set(name, args, args.work, out)
        if args.json:
            args.json.write_text(json.dumps(out, indent=1))
    finally:
        if stub:
            stub.terminate()


if __name__ == "__main__":
    main()
