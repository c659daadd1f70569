#!/usr/bin/env python3
"""SciFact through the plugin's own front door, with the defaults a user gets: one file per
abstract (title, newline, text), `llm brain ingest FOLDER --no-progress` with
SECONDBRAIN_EMBED_MODEL=all-minilm and no other setting (the chunk size follows the model), then
`llm brain eval SPLIT.jsonl --json` per mode. Prints the table; not a test.

    OLLAMA_URL=http://127.0.0.1:PORT python bench/bench_scifact.py            # test and train
    OLLAMA_URL=... python bench/bench_scifact.py --split train --per-class    # claims by shape
    OLLAMA_URL=... python bench/bench_scifact.py --floor /tmp/til-queries.jsonl

The documents, the golden files and the brain live in --work (default $TMPDIR/secondbrain-scifact;
--docs and --db override). A rerun re-ingests nothing unchanged. The golden files follow
`llm brain eval`: {"id", "query", "answers": ["<corpus id>.txt", ...], "class"}, answers from
qrels/<split>.tsv (score > 0).

--floor: the relevance floor (`RecallResult.relevant`, "nothing matches") through the Python
API: the false "nothing" rate of the answerable test claims against this brain, and the false
"something" rate of other queries (a golden file of another corpus) against it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCIFACT = HERE.parent.parent / "shared" / "data" / "scifact"
MODES = ("hybrid", "dense", "lexical")
METRICS = ("hit@1", "MRR@10", "nDCG@10", "recall@10")


def env_for(db: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SECONDBRAIN_")}
    env.update({"SECONDBRAIN_EMBED_MODEL": "all-minilm", "SECONDBRAIN_DB": str(db),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))})
    return env


def llm(*args: str, env: dict) -> str:
    done = subprocess.run([sys.executable, "-m", "llm", "brain", *args], env=env, text=True,
                          capture_output=True)
    if done.returncode:
        sys.exit(f"llm brain {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_docs(docs: Path) -> int:
    """One file per abstract, written only when missing or different."""
    docs.mkdir(parents=True, exist_ok=True)
    n = 0
    for d in read_jsonl(SCIFACT / "corpus.jsonl"):
        path = docs / f"{d['_id']}.txt"
        text = d["title"] + "\n" + d["text"]
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        n += 1
    return n


def write_golden(split: str, out: Path) -> int:
    queries = {d["_id"]: d["text"] for d in read_jsonl(SCIFACT / "queries.jsonl")}
    answers: dict[str, list[str]] = {}
    with open(SCIFACT / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            q, d, s = line.rstrip("\n").split("\t")
            if int(s) > 0:
                answers.setdefault(q, []).append(f"{d}.txt")
    with open(out, "w", encoding="utf-8") as f:
        for q, docs in answers.items():
            f.write(json.dumps({"id": q, "query": queries[q], "answers": docs, "class": "scifact"}) + "\n")
    return len(answers)


def print_table(title: str, report: dict) -> None:
    print(title)
    print(f"  {'mode':8s} {'class':10s} {'n':>4s}  " + "  ".join(f"{m:>9s}" for m in METRICS))
    for mode, classes in report["modes"].items():
        for cls in sorted(classes, key=lambda c: (c == "all", c)):
            row = classes[cls]
            print(f"  {mode:8s} {cls:10s} {row['n']:4d}  " + "  ".join(f"{row[m]:9.4f}" for m in METRICS))
    print()


def by_shape(golden: Path, out: Path) -> Path:
    """The golden file with each claim's class set to the fusion rule that applies to it."""
    from llm_secondbrain.recall import adaptive_weights

    rows = read_jsonl(golden)
    with open(out, "w", encoding="utf-8") as f:
        for row in rows:
            _, why = adaptive_weights(row["query"])
            row["class"] = why.split(":")[0].replace(" ", "-")[:10]
            f.write(json.dumps(row) + "\n")
    return out


def floor(db: Path, golden: Path, others: list[Path]) -> None:
    from llm_secondbrain import config
    from llm_secondbrain.api import SecondBrain

    settings = config.load(env_for(db), db=db)
    with SecondBrain.open(db, settings=settings) as sb:
        def nothing_rate(rows):
            return sum(not sb.search(r["query"], k=10).relevant for r in rows) / len(rows)
        rows = read_jsonl(golden)
        print("Relevance floor against this brain (DENSE_FLOOR, hybrid defaults, k=10)")
        print(f"  answerable {golden.name}: false 'nothing' {nothing_rate(rows):.3f} ({len(rows)} queries)")
        for other in others:
            rows = read_jsonl(other)
            rate = 1 - nothing_rate(rows)
            print(f"  unanswerable {other}: false 'something' {rate:.3f} ({len(rows)} queries)")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "secondbrain-scifact")
    parser.add_argument("--docs", type=Path, help="the abstracts' folder (default WORK/docs)")
    parser.add_argument("--db", type=Path, help="the brain (default WORK/brain.db)")
    parser.add_argument("--split", choices=["test", "train"], action="append")
    parser.add_argument("--mode", choices=MODES, action="append")
    parser.add_argument("--per-class", action="store_true",
                        help="also split the claims by the fusion rule that applies to them")
    parser.add_argument("--floor", type=Path, action="append", default=[],
                        help="a golden file of another corpus: its false 'something' rate here")
    parser.add_argument("--no-ingest", action="store_true", help="score the brain as it is")
    args = parser.parse_args()
    if not (SCIFACT / "corpus.jsonl").exists():
        sys.exit(f"skipped: {SCIFACT} not found")
    args.work.mkdir(parents=True, exist_ok=True)
    docs = args.docs or args.work / "docs"
    db = args.db or args.work / "brain.db"
    env = env_for(db)
    if not args.no_ingest:
        n = write_docs(docs)
        start = time.time()
        out = llm("ingest", str(docs), "--no-progress", env=env).strip()
        print(f"ingest of {n} abstracts ({time.time() - start:.0f}s): {out}\n")
    chunks = subprocess.run([sys.executable, "-c", (
        "import sys; from llm_secondbrain.store import open_brain; b = open_brain(sys.argv[1], create=False); "
        "print(*b.conn.execute('SELECT count(*), sum(embedded = 1), max(length(text)) FROM chunks').fetchone())")
        , str(db)], env=env, text=True, capture_output=True).stdout.split()
    if chunks:
        print(f"brain {db}: {chunks[0]} chunks, {chunks[1]} embedded, longest {chunks[2]} chars\n")
    modes = [m for mode in (args.mode or MODES) for m in ("--mode", mode)]
    for split in args.split or ["test", "train"]:
        golden = args.work / f"{split}.jsonl"
        n = write_golden(split, golden)
        if args.per_class:
            golden = by_shape(golden, args.work / f"{split}-by-rule.jsonl")
        start = time.time()
        report = json.loads(llm("eval", str(golden), "--json", *modes, env=env))
        print_table(f"SciFact {split} ({n} claims; llm brain eval, {time.time() - start:.0f}s)", report)
    if args.floor:
        floor(db, args.work / "test.jsonl", args.floor)


if __name__ == "__main__":
    main()
