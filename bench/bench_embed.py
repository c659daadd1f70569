#!/usr/bin/env python3
"""How much does our bookkeeping cost on top of the embedding server?

Builds a brain of N chunks straight through the store, then times, in interleaved pairs:

  direct  the same batches (same texts, same prefix, same batch size) posted straight to the
          server with httpx, one request after another, replies decoded with .json()
  ours    `llm brain embed` (in this process, through llm's CLI) on a fresh copy of the brain:
          picking, posting, decoding, validating, writing vec0 + flags

and prints the median of the ratios ours / direct of each pair, plus the client CPU time.

Where users live, the model dominates: point --url at a real embedding server (the MiniLM
server in ../shared/retrieval, started WITHOUT --cache) with --model all-minilm; the target
there is a median ratio <= 1.05. Without --url it starts the test stub in its own process,
answering "instantly" (precomputed vectors): a sanity check of our overhead (<= 2), not a target.

    python bench/bench_embed.py --url http://127.0.0.1:11435 --model all-minilm --dim 384 --chunks 300 --repeat 3
    python bench/bench_embed.py [--chunks 20000] [--batch-size 32] [--dim 768] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

WORDS = ("alpha beta gamma delta invoice garden rust borrow checker sourdough meeting notes "
         "project deadline server backup kernel lambda vector search hybrid recall memory "
         "python sqlite ollama embedding chunk paragraph quarterly report budget travel").split()


def text_for(i: int) -> str:
    """A paragraph of about 400 characters, different for every i."""
    words = [WORDS[(i * 7 + k * 13 + (i >> k % 5)) % len(WORDS)] for k in range(55)]
    return f"Paragraph {i}: " + " ".join(words) + f". Reference {i:06d}."


def build_brain(path: Path, n: int) -> None:
    from llm_secondbrain.store import ChunkRow, open_brain

    per_file = 100
    with open_brain(path) as brain:
        for start in range(0, n, per_file):
            rows = [ChunkRow(text_for(i), i - start + 1, i - start + 1)
                    for i in range(start, min(n, start + per_file))]
            brain.stage(path=f"/bench/{start // per_file:05d}.md", chunks=rows,
                        project="bench", source="files", ts=None)


def start_stub(dim: int) -> tuple[subprocess.Popen, str]:
    port_file = Path(tempfile.mkdtemp()) / "port"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "ollama_stub.py"), "--port", "0", "--dim", str(dim),
         "--fast", "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not port_file.exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the stub did not start")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port_file.read_text().strip()}"


def run_direct(url: str, texts: list[str], batch: int, model: str) -> tuple[float, float]:
    """The bare client: post every batch, decode the answer, nothing else."""
    import httpx

    c0 = time.process_time()
    t0 = time.perf_counter()
    with httpx.Client(base_url=url, timeout=600, trust_env=False) as client:
        for start in range(0, len(texts), batch):
            r = client.post("/api/embed", json={"model": model, "input": texts[start:start + batch]})
            r.raise_for_status()
            vectors = r.json()["embeddings"]
            assert len(vectors) == len(texts[start:start + batch])
    return time.perf_counter() - t0, time.process_time() - c0


def run_ours(db: Path, batch: int) -> tuple[float, float, str]:
    from click.testing import CliRunner
    from llm.cli import cli

    c0 = time.process_time()
    t0 = time.perf_counter()
    result = CliRunner().invoke(
        cli, ["brain", "embed", "--batch-size", str(batch), "--no-progress", "--db", str(db)]
    )
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if result.exit_code != 0:
        raise SystemExit(f"llm brain embed failed: {result.output}")
    return elapsed, cpu, result.output.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved pairs of runs")
    parser.add_argument("--url", help="a running embedding server (default: start the instant stub)")
    parser.add_argument("--model", default="nomic-embed-text", help="the model name to embed with")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    os.environ["LLM_USER_PATH"] = str(workdir / "llm")
    for key in ("SECONDBRAIN_DOC_PREFIX", "SECONDBRAIN_QUERY_PREFIX"):
        os.environ.pop(key, None)
    os.environ["SECONDBRAIN_EMBED_MODEL"] = args.model

    template = workdir / "template.db"
    t0 = time.perf_counter()
    build_brain(template, args.chunks)
    print(f"built a brain of {args.chunks} chunks in {time.perf_counter() - t0:.1f} s")

    from llm_secondbrain import config
    from llm_secondbrain.ollama import get_embedder
    from llm_secondbrain.store import open_brain

    stub, url = (None, args.url) if args.url else start_stub(args.dim)
    os.environ["OLLAMA_URL"] = url
    try:
        settings = config.load()
        emb = get_embedder(settings)
        with open_brain(template) as brain:
            texts = [emb.doc_prefix + t for (t,) in brain.conn.execute("SELECT text FROM chunks ORDER BY id")]
        model = emb.model
        emb.close()

        run_direct(url, texts[: args.batch_size * 2], args.batch_size, model)  # warm up both ends
        direct_times, our_times, direct_cpu, our_cpu, summary = [], [], [], [], ""
        for n in range(args.repeat):
            elapsed, cpu = run_direct(url, texts, args.batch_size, model)
            direct_times.append(elapsed)
            direct_cpu.append(cpu)
            db = workdir / f"run{n}.db"
            with open_brain(template) as brain:  # a fresh copy of the unembedded brain
                brain.conn.execute("VACUUM INTO ?", (str(db),))
            elapsed, cpu, summary = run_ours(db, args.batch_size)
            our_times.append(elapsed)
            our_cpu.append(cpu)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
    finally:
        if stub is not None:
            stub.terminate()
            stub.wait()

    pairs = sorted(o / d for o, d in zip(our_times, direct_times))
    target = "<= 1.05 against a real model" if args.url else "<= 2: a sanity check against the instant stub"
    print(f"server: {url} ({'real model ' + args.model if args.url else 'instant stub'})")
    print(f"ours:   {summary}")
    print(f"direct: {args.chunks} texts in batches of {args.batch_size}: "
          + ", ".join(f"{t:.2f} s" for t in direct_times))
    print("ours:   llm brain embed: " + ", ".join(f"{t:.2f} s" for t in our_times))
    print(f"client CPU: direct {statistics.median(direct_cpu):.2f} s, ours {statistics.median(our_cpu):.2f} s "
          f"(ours includes SQLite's work; the server runs in its own process)")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"ratio ours/direct of each interleaved pair: {', '.join(f'{r:.3f}' for r in pairs)}; "
          f"median {statistics.median(pairs):.3f} (target {target})")


if __name__ == "__main__":
    main()
