#!/usr/bin/env python3
"""What a long-lived MCP server buys: `recall` round trips over MCP (stdio, and Streamable
HTTP with `--http`, each through the SDK's own client) after the first call, beside one-shot
`llm brain recall` runs on the same brain, and the same query in process through the façade.
Stdio is measured again after HTTP: with the model server's `--cache` the first pass embeds
each query, the later ones find it cached, so compare HTTP with the second stdio pass. Prints
figures; not a test.

    python bench/bench_mcp.py                    # notes set, 30 MCP calls, 10 CLI runs
    python bench/bench_mcp.py --queries 60 --cli-runs 20 --mode lexical

The brain is the notes set (bench/data/notes) built by bench/brains.py and embedded by the
all-MiniLM server when it answers (`--url`, default http://127.0.0.1:11435), else by the test
suite's Ollama-compatible stub (tests/ollama_stub.py), which the output names. Queries are the
notes set's; every face asks for the same k and mode, and every query is embedded by the
server (nothing is cached between queries in our code).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests")]

import brains  # noqa: E402
from llm_secondbrain.api import SecondBrain  # noqa: E402


async def _session_times(session, start: float, queries: list[str], k: int, mode: str,
                         how: str) -> tuple[float, float, list[float]]:
    """Initialise an MCP client session and time a recall per query: (seconds from `start` to
    the initialised session, ms of the first recall, ms of the rest)."""
    await session.initialize()
    ready = time.perf_counter() - start
    times = []
    for query in queries:
        t = time.perf_counter()
        result = await session.call_tool("recall", {"query": query, "k": k, "mode": mode})
        times.append((time.perf_counter() - t) * 1000)
        if result.is_error or not result.structured_content["hits"]:
            raise RuntimeError(f"recall over {how} failed for {query!r}: {result.content}")
        if len(times) == 1:
            await asyncio.sleep(1.0)  # let the in-memory vector copy finish building
    return ready, times[0], times[1:]


def mcp_times(env: dict, queries: list[str], k: int, mode: str) -> tuple[float, float, list[float]]:
    """(seconds from spawn to an initialised session, ms of the first recall, ms of the rest)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "llm", "brain", "mcp"], env=env)
        start = time.perf_counter()
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await _session_times(session, start, queries, k, mode, "MCP")

    return asyncio.run(main())


def http_times(env: dict, queries: list[str], k: int, mode: str) -> tuple[float, float, list[float]]:
    """As mcp_times, over `llm brain mcp --http 127.0.0.1:0` with the SDK's own HTTP client
    (one session, as an agent keeps)."""
    import tempfile

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    err = tempfile.TemporaryFile("w+")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "llm", "brain", "mcp", "--http", "127.0.0.1:0"],
                            env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = None
        while url is None:
            err.seek(0)
            text = err.read()
            if "serving MCP on " in text:
                url = text.split("serving MCP on ")[1].split()[0]
            elif proc.poll() is not None:
                raise RuntimeError(f"llm brain mcp --http stopped: {text}")
            else:
                time.sleep(0.02)

        async def main():
            for _ in range(200):  # bound, not yet listening: a moment
                try:
                    async with streamable_http_client(url) as (read, write):
                        async with ClientSession(read, write) as session:
                            return await _session_times(session, start, queries, k, mode, "HTTP")
                except OSError:
                    await asyncio.sleep(0.05)
            raise RuntimeError("the HTTP server never answered")

        return asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(10)


def cli_times(env: dict, queries: list[str], k: int, mode: str) -> list[float]:
    times = []
    for query in queries:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "llm", "brain", "recall", query, "-k", str(k),
                        "--mode", mode, "--json"], env=env, check=True, capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
    return times


def api_times(db: Path, settings, queries: list[str], k: int, mode: str) -> list[float]:
    from llm_secondbrain.recall import vindex

    vindex.keep_warm()
    with SecondBrain.open(db, create=False, settings=settings) as brain:
        brain.search(queries[0], k=k, mode=mode)
        time.sleep(1.0)
        times = []
        for query in queries[1:]:
            t = time.perf_counter()
            brain.search(query, k=k, mode=mode)
            times.append((time.perf_counter() - t) * 1000)
    return times


def p90(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.9 * len(values))) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("OLLAMA_URL") or brains.DEFAULT_URL)
    parser.add_argument("--queries", type=int, default=30, help="MCP recall calls (the first is reported apart)")
    parser.add_argument("--cli-runs", type=int, default=10, help="one-shot llm brain recall runs")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "dense", "lexical"))
    parser.add_argument("--max-chars", type=int, default=1600)
    args = parser.parse_args()

    stub = None
    url, name, embedder = args.url, "notes", f"all-minilm at {args.url}"
    if not brains.server_up(url):
        from ollama_stub import OllamaStub

        stub = OllamaStub().__enter__()
        url, name, embedder = stub.url, "notes-stub", "the test stub (hashed bag of words)"
    try:
        db = brains.build(name, brains.notes_docs(), url=url, max_chars=args.max_chars)
        settings = brains.settings_for(db, url, args.max_chars)
        texts = [q["text"] for q in brains.read_jsonl(brains.NOTES / "queries.jsonl")]
        queries = [texts[i % len(texts)] for i in range(args.queries)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SECONDBRAIN_DB": str(db), "OLLAMA_URL": url,
               "SECONDBRAIN_EMBED_MODEL": brains.MODEL, "SECONDBRAIN_MAX_CHARS": str(args.max_chars)}
        with SecondBrain.open(db, create=False, settings=settings) as brain:
            chunks = brain.stats()["chunks"]
        print(f"brain: {db} ({chunks} chunks); embeddings: {embedder}; k={args.k}, mode={args.mode}")
        ready, first, rest = mcp_times(env, queries, args.k, args.mode)
        http_ready, http_first, http_rest = http_times(env, queries, args.k, args.mode)
        # stdio again, after HTTP: the model server's cache now holds every query for both
        ready2, _, rest2 = mcp_times(env, queries, args.k, args.mode)
        cli = cli_times(env, queries[:args.cli_runs], args.k, args.mode)
        api = api_times(db, settings, queries, args.k, args.mode)
    finally:
        if stub is not None:
            stub.__exit__(None, None, None)
    print(f"{'face':<44}{'median ms':>10}{'p90 ms':>10}{'n':>5}")
    print(f"{'MCP recall round trip, after the first call':<44}{statistics.median(rest):>10.1f}"
          f"{p90(rest):>10.1f}{len(rest):>5}")
    print(f"{'MCP recall, first call':<44}{first:>10.1f}{'':>10}{1:>5}")
    print(f"{'MCP server start (spawn to initialised)':<44}{ready * 1000:>10.0f}{'':>10}{1:>5}")
    print(f"{'MCP stdio again, after HTTP (same cache)':<44}{statistics.median(rest2):>10.1f}"
          f"{p90(rest2):>10.1f}{len(rest2):>5}")
    print(f"{'MCP over HTTP: recall after the first call':<44}{statistics.median(http_rest):>10.1f}"
          f"{p90(http_rest):>10.1f}{len(http_rest):>5}")
    print(f"{'MCP over HTTP: first call':<44}{http_first:>10.1f}{'':>10}{1:>5}")
    print(f"{'MCP over HTTP: start (spawn to initialised)':<44}{http_ready * 1000:>10.0f}{'':>10}{1:>5}")
    print(f"{'llm brain recall, one-shot process':<44}{statistics.median(cli):>10.1f}"
          f"{p90(cli):>10.1f}{len(cli):>5}")
    print(f"{'SecondBrain.search in process (reference)':<44}{statistics.median(api):>10.1f}"
          f"{p90(api):>10.1f}{len(api):>5}")
    print(f"one-shot CLI / MCP round trip: {statistics.median(cli) / statistics.median(rest):.0f}x")


if __name__ == "__main__":
    main()
