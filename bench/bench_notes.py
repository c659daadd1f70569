#!/usr/bin/env python3
"""The personal-notes set (bench/data/notes) through the plugin's own front door, with the
defaults a user gets: each note written to its file (`path` in corpus.jsonl), `llm brain ingest
FOLDER --no-progress` with SECONDBRAIN_EMBED_MODEL=all-minilm and no other setting (so scrub and
the model's chunk size apply), then scored per mode and kind. Prints figures; not a test.

    OLLAMA_URL=http://127.0.0.1:PORT python bench/bench_notes.py

Two scorings of the same brain:
- graded, through the Python API (`SecondBrain.search`, k=10, one chunk per note), as
  bench_recall.py scores it: nDCG@10 with grades 2/1, hit@1 = the first note is judged
  relevant (for an identifier: it holds the identifier), answer@1 = it has the best grade;
- binary, `llm brain eval --json` with answers = every note judged relevant.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scifact import env_for, llm, print_table, read_jsonl  # noqa: E402

NOTES = HERE / "data" / "notes"
MODES = ("hybrid", "dense", "lexical")


def ndcg_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum((2 ** r - 1) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "secondbrain-notes")
    parser.add_argument("--db", type=Path, help="the brain (default WORK/brain.db)")
    args = parser.parse_args()
    folder = args.work / "notes"
    db = args.db or args.work / "brain.db"
    corpus = read_jsonl(NOTES / "corpus.jsonl")
    by_id = {d["_id"]: d["path"] for d in corpus}
    for d in corpus:
        path = args.work / d["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != d["text"]:
            path.write_text(d["text"], encoding="utf-8")
    env = env_for(db)
    print(llm("ingest", str(folder), "--no-progress", env=env).strip(), "\n")

    queries = read_jsonl(NOTES / "queries.jsonl")
    qrels: dict[str, dict[str, int]] = {}
    with open(NOTES / "qrels.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            q, d, s = line.rstrip("\n").split("\t")
            qrels.setdefault(q, {})[by_id[d]] = int(s)

    from llm_secondbrain import config
    from llm_secondbrain.api import SecondBrain

    root = str(args.work.resolve()) + os.sep

    def note(path: str | None) -> str:  # the stored absolute path -> corpus.jsonl's path
        path = path or ""
        return (path[len(root):] if path.startswith(root) else path).replace(os.sep, "/")

    print(f"Personal notes, graded ({len(corpus)} notes, {len(queries)} queries; SecondBrain.search)")
    print(f"  {'mode':8s} {'kind':11s} nDCG@10  hit@1  answer@1")
    misses = []
    with SecondBrain.open(db, settings=config.load(env, db=db)) as sb:
        for mode in MODES:
            for kind in ("semantic", "identifier"):
                rows = []
                for q in (q for q in queries if q["kind"] == kind):
                    hits = sb.search(q["text"], mode=mode, k=10, per_note=1).hits
                    ranked = list(dict.fromkeys(note(h.path) for h in hits))
                    rel = qrels[q["_id"]]
                    first = rel.get(ranked[0], 0) if ranked else 0
                    rows.append((ndcg_at(ranked, rel), first > 0, first == max(rel.values())))
                    if mode == "hybrid" and kind == "identifier" and first == 0:
                        misses.append((q["text"], ranked[:1]))
                print(f"  {mode:8s} {kind:11s} {statistics.fmean(r[0] for r in rows):.4f}   "
                      f"{statistics.fmean(r[1] for r in rows):.3f}  {statistics.fmean(r[2] for r in rows):.3f}"
                      f"   ({len(rows)} queries)")
    for text, top in misses:
        print(f"  hybrid identifier miss: {text!r} -> {top}")
    print()

    golden = args.work / "golden.jsonl"
    with open(golden, "w", encoding="utf-8") as f:
        for q in queries:
            answers = [p for p, s in qrels[q["_id"]].items() if s > 0]
            f.write(json.dumps({"id": q["_id"], "query": q["text"], "answers": answers,
                                "class": q["kind"]}) + "\n")
    report = json.loads(llm("eval", str(golden), "--json", env=env))
    print_table("Personal notes, binary (llm brain eval; answers = every note judged relevant)", report)


if __name__ == "__main__":
    main()
