#!/usr/bin/env python3
"""Scrubbing throughput, this tree against another revision and the naive baseline, interleaved.

    python3 bench/scrub_speed.py                           # this tree and the naive baseline
    python3 bench/scrub_speed.py --against /tmp/scrub-base # and another checkout (git worktree)
    python3 bench/scrub_speed.py --rounds 9

Two kinds of text: real text (the real notes and this machine's documents from ``scrub_sets``,
where secrets are rare) and secret-dense text (every positive of the own and peer corpora).
Each round runs one fresh process per contender (this tree, ``--against``, the naive baseline
of ../shared/secrets) in turn, so machine noise hits all alike; each process scrubs the whole
set once to warm up and then three times, and prints the best MB/s (10^6 bytes of UTF-8) in
wall-clock and in CPU time (on a shared machine CPU time is the steadier figure). Prints the
median MB/s of each contender and the median of the per-round ratios. Takes about five minutes
with the default 5 rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
import scrub_sets
kind, target = sys.argv[1], sys.argv[2]
if kind == "real":
    docs = [d.text for d in scrub_sets.load(["notes", "machine"])]
else:
    docs = [d.text for d in scrub_sets.load(["own", "peer"]) if d.secrets]
if target == "baseline":
    sys.path.insert(0, scrub_sets.SECRETS)
    from baseline_scrub import scrub
else:
    sys.path.insert(0, target)
    from llm_secondbrain.scrub import scrub
size = sum(len(t.encode("utf-8")) for t in docs)
for t in docs:
    scrub(t)
wall = cpu = 1e9
for _ in range(3):  # best of three passes, in wall-clock and in CPU time
    t0, c0 = time.perf_counter(), time.process_time()
    for t in docs:
        scrub(t)
    wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
print(json.dumps([size / 1e6 / wall, size / 1e6 / cpu]))
"""


def _run(kind: str, target: str) -> list[float]:
    out = subprocess.run([sys.executable, "-c", _CHILD.format(here=HERE), kind, target],
                         capture_output=True, text=True, check=True, cwd="/")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", help="another checkout of the repository (e.g. a git worktree of main)")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    contenders = {"this tree": REPO}
    if a.against:
        contenders["against"] = os.path.abspath(a.against)
    for kind in ("real", "dense"):
        names = dict(contenders)
        names["naive baseline"] = "baseline"
        runs: dict[str, list[list[float]]] = {n: [] for n in names}
        for _ in range(a.rounds):
            for name, target in names.items():
                runs[name].append(_run(kind, target))
        for i, clock in enumerate(("wall-clock", "CPU time")):
            print(f"{kind} text, {clock}: MB/s, median of {a.rounds} interleaved rounds")
            for name, v in runs.items():
                print(f"  {name:<16}{statistics.median(x[i] for x in v):>8.2f}   ({', '.join(f'{x[i]:.2f}' for x in v)})")
            for other in names:
                if other != "this tree":
                    ratios = [x[i] / y[i] for x, y in zip(runs["this tree"], runs[other])]
                    print(f"  this tree / {other}: median {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
