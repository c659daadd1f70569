#!/usr/bin/env python3
"""In-process latency of one hybrid `SecondBrain.search` on a real brain, split into what the
embedding server takes and what is ours. Prints figures; not a test.

    ~/.venvs/minilm/bin/python bench/model_server.py --port 11502 &   # sockets as Ollama's
    OLLAMA_URL=http://127.0.0.1:11502 python bench/bench_search_latency.py BRAIN.db QUERIES.jsonl

For each of --n queries (a golden file's "query" fields, in order), after --warmup searches:
- embed: the query's embedding as the plugin asks for it (`shared_embedder(...).embed_query`,
  an HTTP round trip to the server: tokenising and the model run there);
- recall: `recall.recall()` with that vector (dense + lexical + literal lanes, fusion, hits);
- search: the whole `SecondBrain.search` (fingerprint check, embed, recall, stale check).
search - embed is everything the plugin adds around the model. Medians and 90th percentiles in ms.
Run the server without --cache to time the model; with a cache, embed is a cache lookup.
Use bench/model_server.py rather than ../shared/retrieval/fake_ollama.py directly: the latter
leaves Nagle's algorithm on, unlike Ollama, and every kept-alive request then stalls ~40 ms
(see model_server.py). The last row times the server alone, one new connection per request.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()

    from llm_secondbrain import config
    from llm_secondbrain.api import SecondBrain
    from llm_secondbrain.ollama import serialize, shared_embedder
    from llm_secondbrain.options import RecallOptions
    from llm_secondbrain.recall import recall

    env = {k: v for k, v in os.environ.items() if not k.startswith("SECONDBRAIN_")}
    env["SECONDBRAIN_EMBED_MODEL"] = "all-minilm"
    settings = config.load(env, db=args.db)
    with open(args.queries, encoding="utf-8") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()][:args.n]
    times = {"embed": [], "recall": [], "search": []}
    with SecondBrain.open(args.db, settings=settings) as sb:
        embedder = shared_embedder(sb.model_settings())
        chunks = sb.brain.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        for q in queries[:args.warmup]:
            sb.search(q, k=10)
        for q in queries:
            t0 = time.perf_counter()
            vector = serialize(embedder.embed_query(q))
            t1 = time.perf_counter()
            recall(sb.brain.conn, q, RecallOptions(k=10), vector)
            t2 = time.perf_counter()
            result = sb.search(q, k=10)
            t3 = time.perf_counter()
            assert result.mode != "lexical", result.notes  # meaning answered (dense alone: no word matched)
            times["embed"].append((t1 - t0) * 1000)
            times["recall"].append((t2 - t1) * 1000)
            times["search"].append((t3 - t2) * 1000)
    print(f"Hybrid search latency, {args.db} ({chunks} chunks), {len(queries)} queries of "
          f"{args.queries.name}, server {settings.ollama_url}")
    print(f"  {'part':28s} {'median':>8s} {'p90':>8s}")
    for name, label in (("embed", "query embedding (server)"), ("recall", "recall() (ours)"),
                        ("search", "SecondBrain.search (all)")):
        print(f"  {label:28s} {statistics.median(times[name]):8.1f} {pct(times[name], 0.9):8.1f}")
    ours = [s - e for s, e in zip(times["search"], times["embed"])]
    print(f"  {'search - embed (ours, est.)':28s} {statistics.median(ours):8.1f} {pct(ours, 0.9):8.1f}")
    # The server alone, one new connection per request (as curl does): a kept-alive connection
    # to a server that writes headers and body in two sends (Python's http.server) waits for
    # Nagle and the peer's delayed ACK, ~40 ms on Linux, which the embed row above includes.
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(settings.ollama_url)
    fresh = []
    for q in queries:
        body = json.dumps({"model": settings.embed_model, "input": [q]})
        t0 = time.perf_counter()
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
        conn.request("POST", "/api/embed", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        conn.close()
        fresh.append((time.perf_counter() - t0) * 1000)
        assert response.status == 200, response.status
    print(f"  {'server, new connection each':28s} {statistics.median(fresh):8.1f} {pct(fresh, 0.9):8.1f}")


if __name__ == "__main__":
    main()
