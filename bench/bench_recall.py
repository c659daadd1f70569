#!/usr/bin/env python3
"""Recall quality, through the plugin's own code path. Prints figures; not a test. (Speed and
latency at scale: bench/speed.py.)

    python bench/bench_recall.py                 # SciFact test, notes set
    python bench/bench_recall.py --train         # SciFact train split too (what defaults were tuned on)
    python bench/bench_recall.py --only notes    # or: scifact
    python bench/bench_recall.py --max-chars 1000

Quality: brains are built by the plugin (segment -> Brain.stage -> embed_pending) and embedded by
the Ollama-compatible all-MiniLM-L6-v2 server in ../shared/retrieval (default
http://127.0.0.1:11435, `--url` or OLLAMA_URL; model name `all-minilm`, so no nomic prefixes),
then queried with `recall.recall()` — the function behind the CLI, the fragment and the tool —
with the query embedded by the plugin's embedder. A SciFact document ranks at its best chunk.
Brains are cached in SECONDBRAIN_BENCH_DIR (default $TMPDIR/secondbrain-bench): the first SciFact
build embeds ~10k chunks (minutes to tens of minutes on 2 cores, less with the server's --cache).

Sections whose inputs are missing (../shared, the server) are skipped with a note.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import brains  # noqa: E402

from llm_secondbrain import recall as R  # noqa: E402
from llm_secondbrain.ollama import EmbedError, get_embedder, normalise  # noqa: E402
from llm_secondbrain.config import max_chars_for  # noqa: E402
from llm_secondbrain.options import RecallOptions  # noqa: E402
from llm_secondbrain.store import open_brain  # noqa: E402

MODES = {
    # name: RecallOptions fields for recall.recall()
    "dense": {"mode": "dense"},
    "lexical": {"mode": "lexical"},
    "hybrid": {},  # the defaults: z-score fusion, lane weights from FUSION_RULES
    "hybrid-rrf": {"fusion": "rrf", "lexical_weight": 1.0},  # the old default
}


def ndcg_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum((2 ** r - 1) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rel: dict[str, int], k: int = 100) -> float:
    wanted = {d for d, s in rel.items() if s > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def documents(hits) -> list[str]:
    """Hits -> document ids, each document at its best chunk."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(brains.doc_id(hit.path), None)
    return list(seen)


def query_vectors(settings, queries: list[dict]) -> dict[str, bytes]:
    out = {}
    with get_embedder(settings) as embedder:
        for q in queries:
            out[q["_id"]] = array("f", normalise(embedder.embed_query(q["text"]))).tobytes()
    return out


def run_queries(db: Path, settings, queries: list[dict], qrels: dict, k: int,
                modes=MODES) -> dict[str, list[tuple[str, list[str]]]]:
    vectors = query_vectors(settings, queries)
    brain = open_brain(db, create=False)
    runs: dict[str, list] = {name: [] for name in modes}
    try:
        for q in queries:
            if q["_id"] not in qrels:
                continue
            blob = vectors[q["_id"]]
            for name, kwargs in modes.items():
                options = RecallOptions(k=k, per_note=1, **kwargs)  # ranked by document
                result = R.recall(brain.conn, q["text"], options, query_vector=blob)
                runs[name].append((q["_id"], documents(result.hits)))
    finally:
        brain.close()
    return runs


def scifact(args) -> None:
    if not (brains.SCIFACT / "corpus.jsonl").exists():
        print(f"SciFact: skipped ({brains.SCIFACT} not found)\n")
        return
    db = brains.build("scifact", brains.scifact_docs(), url=args.url, max_chars=args.max_chars)
    settings = brains.settings_for(db, args.url, args.max_chars)
    queries = brains.read_jsonl(brains.SCIFACT / "queries.jsonl")
    brain = open_brain(db, create=False)
    chunks = brain.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    brain.close()
    for split in (["train"] if args.train else []) + ["test"]:
        qrels = brains.read_qrels(brains.SCIFACT / "qrels" / f"{split}.tsv")
        start = time.time()
        # k=100 for recall@100: pool (z statistics) stays at its default, so the top 10 are
        # those of a k=10 query
        runs = run_queries(db, settings, queries, qrels, k=100)
        print(f"SciFact {split} ({len(qrels)} queries, 5,183 abstracts -> {chunks} chunks of "
              f"<= {args.max_chars} chars, all-minilm; {time.time() - start:.0f}s)")
        print(f"  {'mode':12s} nDCG@10  recall@100")
        for name, run in runs.items():
            n = statistics.fmean(ndcg_at(r, qrels[q]) for q, r in run)
            rc = statistics.fmean(recall_at(r, qrels[q]) for q, r in run)
            print(f"  {name:12s} {n:.4f}   {rc:.4f}")
        print()


def notes(args) -> None:
    db = brains.build("notes", brains.notes_docs(), url=args.url, max_chars=args.max_chars)
    settings = brains.settings_for(db, args.url, args.max_chars)
    queries = brains.read_jsonl(brains.NOTES / "queries.jsonl")
    qrels = brains.read_qrels(brains.NOTES / "qrels.tsv")
    kinds = {q["_id"]: q["kind"] for q in queries}
    runs = run_queries(db, settings, queries, qrels, k=10)
    print(f"Personal notes ({len(brains.notes_docs())} notes, bench/data/notes)")
    print(f"  {'mode':12s} {'kind':11s} nDCG@10  hit@1   answer@1")
    print("  (hit@1: the first hit is judged relevant - for identifier queries, it contains the"
          " identifier; answer@1: it has the best grade)")
    for name, run in runs.items():
        for kind in ("semantic", "identifier"):
            rows = [(q, r) for q, r in run if kinds[q] == kind]
            n = statistics.fmean(ndcg_at(r, qrels[q]) for q, r in rows)
            hit = statistics.fmean(bool(r) and qrels[q].get(r[0], 0) > 0 for q, r in rows)
            best = statistics.fmean(bool(r) and qrels[q].get(r[0], 0) == max(qrels[q].values())
                                    for q, r in rows)
            print(f"  {name:12s} {kind:11s} {n:.4f}   {hit:.3f}   {best:.3f}   ({len(rows)} queries)")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=os.environ.get("OLLAMA_URL") or brains.DEFAULT_URL)
    parser.add_argument("--max-chars", type=int, default=max_chars_for(brains.MODEL),
                        help="chunk size (default: what `llm brain ingest` uses for the model)")
    parser.add_argument("--train", action="store_true", help="also report the SciFact train split")
    parser.add_argument("--only", choices=["scifact", "notes"], action="append")
    args = parser.parse_args()
    sections = args.only or ["scifact", "notes"]
    up = brains.server_up(args.url)
    for section in ("scifact", "notes"):
        if section in sections and not up:
            print(f"{section}: skipped (no Ollama-compatible server at {args.url}; start "
                  f"../shared/retrieval/fake_ollama.py --port 11435 --cache FILE)\n")
            sections = [s for s in sections if s != section]
    try:
        if "scifact" in sections:
            scifact(args)
        if "notes" in sections:
            notes(args)
    except EmbedError as e:
        print(f"quality: stopped ({e.message})\n")


if __name__ == "__main__":
    main()
