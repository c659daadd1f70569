#!/usr/bin/env python3
"""How much does our bookkeeping cost on top of the embedding server?

Builds a brain of N chunks (default 20,000) straight through the store, starts the test stub
in its own process answering "instantly" (precomputed vectors, pre-encoded JSON), then times:

  direct  the same batches (same texts, same prefix, same batch size) posted straight to the
          stub with httpx, replies decoded with .json(), from one thread kept on the CPUs
          our embedding workers keep to
  ours    `llm brain embed` (in this process, through llm's CLI) on the fresh brain: picking,
          posting, decoding, normalising, validating, packing, writing vec0 + flags

and prints both times (wall clock, best of --repeat, runs interleaved) and the ratio (target:
ours / direct <= 1.10), the median of the ratios of each interleaved pair (on a shared
machine the pairs say more than the bests), plus the client-side CPU time of each.

    python bench/bench_embed.py [--chunks 20000] [--batch-size 32] [--dim 768] [--repeat 2]
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
    """The bare client. It keeps to the CPUs our embedding workers keep to (see
    llm_secondbrain/cpus.py): a thread that stays on one CPU runs faster here, and the bare
    client should have that too, or the ratio would credit our bookkeeping with it."""
    import httpx

    from llm_secondbrain import cpus

    placement = cpus.split()
    with cpus.pinned(placement[0] if placement else None):
        c0 = time.process_time()
        t0 = time.perf_counter()
        with httpx.Client(base_url=url, timeout=120, trust_env=False) as client:
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
    parser.add_argument("--repeat", type=int, default=2, help="runs of each; the best counts")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    os.environ["LLM_USER_PATH"] = str(workdir / "llm")
    for key in ("SECONDBRAIN_EMBED_MODEL", "SECONDBRAIN_DOC_PREFIX", "SECONDBRAIN_QUERY_PREFIX"):
        os.environ.pop(key, None)

    template = workdir / "template.db"
    t0 = time.perf_counter()
    build_brain(template, args.chunks)
    print(f"built a brain of {args.chunks} chunks in {time.perf_counter() - t0:.1f} s")

    from llm_secondbrain import config
    from llm_secondbrain.ollama import get_embedder
    from llm_secondbrain.store import open_brain

    stub, url = start_stub(args.dim)
    os.environ["OLLAMA_URL"] = url
    try:
        settings = config.load()
        emb = get_embedder(settings)
        with open_brain(template) as brain:
            texts = [emb.doc_prefix + t for (t,) in brain.conn.execute("SELECT text FROM chunks ORDER BY id")]
        model = emb.model
        emb.close()

        run_direct(url, texts[: args.batch_size * 20], args.batch_size, model)  # warm up both ends
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
        stub.terminate()
        stub.wait()

    direct, ours = min(direct_times), min(our_times)
    pairs = sorted(o / d for o, d in zip(our_times, direct_times))
    print(f"ours:   {summary}")
    print(f"direct: {args.chunks} texts in batches of {args.batch_size}: "
          + ", ".join(f"{t:.2f} s" for t in direct_times))
    print("ours:   llm brain embed: " + ", ".join(f"{t:.2f} s" for t in our_times))
    print(f"client CPU: direct {min(direct_cpu):.2f} s, ours {min(our_cpu):.2f} s "
          f"(ours includes SQLite's work; the stub runs in its own process)")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"best direct {direct:.2f} s ({args.chunks / direct:.0f} chunks/s), "
          f"best ours {ours:.2f} s ({args.chunks / ours:.0f} chunks/s), "
          f"ratio {ours / direct:.3f} (target <= 1.10)")
    print(f"ratio of each interleaved pair: {', '.join(f'{r:.3f}' for r in pairs)}; "
          f"median {statistics.median(pairs):.3f}")


if __name__ == "__main__":
    main()
