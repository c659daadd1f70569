"""One-shot recall where users live: a single `llm brain recall` process on a big brain.

Builds (or reuses) bench_scale's synthetic brain of N chunks (default 1,000,000, 768-dim
clustered vectors), starts the test stub in its own process to embed the query, and runs in
interleaved rounds, each as a fresh process:

  llm --version                   the floor every `llm` command pays
  llm brain recall QUERY          the default (hybrid), as a user types it
  llm brain recall QUERY --exact  the same without the in-memory copy of the vectors

It prints the median wall time and the peak RSS of each (os.wait4 per child), and checks the
mode that answered: a fingerprint mismatch that silently answered lexically would make the
figures meaningless, so any "answering lexically" note fails the run.

    python bench/bench_oneshot.py [--chunks 1000000] [--rounds 5]
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
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_embed import start_stub  # noqa: E402
from bench_scale import build, query_texts  # noqa: E402


def run_measured(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, stderr) of one fresh process, its rusage taken by wait4."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {stderr}")
    return elapsed, usage.ru_maxrss / 1024, stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    db = build(args.chunks)
    stub, url = start_stub(768)
    env = {**os.environ, "SECONDBRAIN_DB": str(db), "OLLAMA_URL": url,
           "SECONDBRAIN_EMBED_MODEL": "synthetic-768",
           "LLM_USER_PATH": tempfile.mkdtemp(prefix="bench-oneshot-")}
    llm = [sys.executable, "-m", "llm"]
    queries = query_texts(args.rounds)
    kinds = {"llm --version": lambda q: llm + ["--version"],
             "llm brain recall": lambda q: llm + ["brain", "recall", q, "-k", "10"],
             "llm brain recall --exact": lambda q: llm + ["brain", "recall", q, "-k", "10", "--exact"]}
    times: dict[str, list[float]] = {k: [] for k in kinds}
    peaks: dict[str, list[float]] = {k: [] for k in kinds}
    try:
        run_measured(kinds["llm brain recall"](queries[0]), env)  # warm the page cache
        for r in range(args.rounds):
            for name, make in kinds.items():
                elapsed, peak, stderr = run_measured(make(queries[r]), env)
                if "answering lexically" in stderr:
                    raise SystemExit(f"{name} answered lexically, not hybrid: {stderr.strip()}")
                times[name].append(elapsed)
                peaks[name].append(peak)
    finally:
        stub.terminate()
        stub.wait()
    print(f"brain: {db} ({args.chunks:,} chunks, {os.path.getsize(db) / 2**30:.1f} GB); "
          f"{args.rounds} interleaved rounds, each a fresh process; hybrid answered every recall")
    print(f"{'command':<28} {'median s':>9} {'peak RSS MB':>12}")
    for name in kinds:
        print(f"{name:<28} {statistics.median(times[name]):>9.2f} {max(peaks[name]):>12.0f}")
    base = statistics.median(times["llm --version"])
    for name in list(kinds)[1:]:
        print(f"{name}: {statistics.median(times[name]) - base:.2f} s beyond llm --version")


if __name__ == "__main__":
    main()
