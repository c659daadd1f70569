#!/usr/bin/env python3
"""Where scrubbing a document spends its time, beside the naive baseline's nine regexes.

    python3 bench/scrub_cost.py            # secret-dense and real text
    python3 bench/scrub_cost.py --sets dense

For each kind of text of ``scrub_speed.py`` (secret-dense: every positive of the own and peer
corpora; real: the real notes and this machine's documents), in one process, CPU time per
document, best of five passes:

- the naive baseline (../shared/secrets/baseline_scrub.py) and this scrubber, whole;
- the passes every text gets whatever it holds: lower-casing, the one Aho-Corasick pass that
  finds the catalogue's keywords and the label stems, the token-candidate scan (runs of 20
  token characters or more);
- the rest: reading and judging what those passes found (how many token candidates, label
  stems and detector runs a document has), and of that the time spent inside the named filter
  chains (``filters.first_release``, replayed on the arguments one scrubbing pass gave it).

The figures say whether the scrubber is slower than the baseline because of how it scans a text
or because of the judgements it makes on what it finds. Takes about a minute.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import scrub_sets  # noqa: E402


def _best(f, n: int = 5) -> float:
    best = 1e9
    for _ in range(n):
        c0 = time.process_time()
        f()
        best = min(best, time.process_time() - c0)
    return best


def _chain_calls(docs: list[str]) -> list[tuple]:
    """The arguments of every outermost named-filter-chain call one scrubbing pass makes."""
    from llm_secondbrain.scrub import filters, scrub, tokens

    calls: list[tuple] = []
    depth = [0]
    real = filters.first_release

    def recording(chain, *args):
        if depth[0] == 0:
            calls.append((chain, args))
        depth[0] += 1
        try:
            return real(chain, *args)
        finally:
            depth[0] -= 1

    filters.first_release = tokens.first_release = recording
    try:
        for t in docs:
            scrub(t)
    finally:
        filters.first_release = tokens.first_release = real
    return calls


def report(kind: str, docs: list[str]) -> None:
    from llm_secondbrain.scrub import engine, filters, labels, scrub, tokens

    sys.path.insert(0, scrub_sets.SECRETS)
    from baseline_scrub import scrub as naive

    engine._init()
    n = len(docs)
    size = sum(len(t.encode("utf-8")) for t in docs)
    lows = [engine._lower(t) for t in docs]
    scans = [engine._PREFILTER.scan(low) for low in lows]
    per = lambda seconds: seconds / n * 1e6  # noqa: E731
    for t in docs:
        scrub(t)
    whole = _best(lambda: [scrub(t) for t in docs])
    base = _best(lambda: [naive(t) for t in docs])
    lower = _best(lambda: [engine._lower(t) for t in docs])
    prefilter = _best(lambda: [engine._PREFILTER.scan(low) for low in lows])
    cand = _best(lambda: [list(tokens._CAND.finditer(t)) for t in docs])
    calls = _chain_calls(docs)
    first = filters.first_release
    chains = _best(lambda: [first(chain, *args) for chain, args in calls])
    candidates = sum(1 for t in docs for _ in tokens._CAND.finditer(t))
    stems = sum(sum(1 for _ in labels._stems(low, list(found), [])) for low, (_, found) in zip(lows, scans))
    readers = sum(len(rules) for rules, _ in scans)
    passes = lower + prefilter + cand
    print(f"{kind} text: {n} documents, {size / n:,.0f} bytes each on average; CPU µs per document, best of 5")
    print(f"  naive baseline (9 regular expressions)      {per(base):8.1f}   ({size / 1e6 / base:.2f} MB/s)")
    print(f"  this scrubber                               {per(whole):8.1f}   ({size / 1e6 / whole:.2f} MB/s, "
          f"{base / whole:.2f}x the baseline)")
    print(f"    passes every text gets                    {per(passes):8.1f}   (lower-casing {per(lower):.1f}, "
          f"keywords and label stems in one pass {per(prefilter):.1f}, token candidates {per(cand):.1f})")
    print(f"    reading and judging what they found       {per(whole - passes):8.1f}   ({candidates / n:.2f} token "
          f"candidates, {stems / n:.2f} label stems, {readers / n:.2f} detector runs a document)")
    print(f"      of which inside named filter chains     {per(chains):8.1f}   ({len(calls) / n:.2f} chain calls a "
          f"document, {chains / max(1, len(calls)) * 1e6:.1f} µs each)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="dense,real", help="dense, real or both")
    a = ap.parse_args(argv)
    for kind in a.sets.split(","):
        if kind == "dense":
            docs = [d.text for d in scrub_sets.load(["own", "peer"]) if d.secrets]
        else:
            docs = [d.text for d in scrub_sets.load(["notes", "machine"])]
        report(kind, docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
