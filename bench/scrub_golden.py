#!/usr/bin/env python3
"""Byte-identical check of the scrubber's output over every corpus on this machine.

    python3 bench/scrub_golden.py --record base     # write bench/out/scrub_golden/base.json.gz
    python3 bench/scrub_golden.py --check base      # compare today's output with it
    python3 bench/scrub_golden.py --check base --show 5 --sets own,peer

A refactoring step that is meant to change nothing is checked against the output recorded
before it: every document of every set in ``scrub_sets`` (the corpora, real notes, this
machine's documents, the synthetic sets; about 11,600 texts, 47 MB) is scrubbed with the
defaults (and the e-mail cases with ``strip_emails=True`` too) and its output compared. Prints
how many documents differ per set, and with ``--show N`` the first differences (the scrubbed
outputs around the first changed character, old then new). Takes about 20 s (the first run
renders the man pages into bench/out, about two minutes).
Exits 1 when any output differs, 2 when the recording is missing.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "scrub_golden")
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)

import scrub_sets  # noqa: E402


def outputs(docs) -> dict[str, str]:
    from llm_secondbrain.scrub import scrub

    out = {}
    for d in docs:
        out[d.id] = scrub(d.text)
        if d.source == "email":
            out[d.id + "#emails"] = scrub(d.text, strip_emails=True)
    return out


def _first_diff(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", metavar="NAME")
    g.add_argument("--check", metavar="NAME")
    ap.add_argument("--sets", default="", help="comma-separated sets (default: all)")
    ap.add_argument("--show", type=int, default=0, help="print this many differences")
    a = ap.parse_args(argv)

    names = [s for s in a.sets.split(",") if s] or None
    docs = scrub_sets.load(names)
    t0 = time.perf_counter()
    now = outputs(docs)
    took = time.perf_counter() - t0
    from llm_secondbrain.scrub import rules_identity

    name = a.record or a.check
    path = os.path.join(OUT, name + ".json.gz")
    if a.record:
        os.makedirs(OUT, exist_ok=True)
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump({"rules": rules_identity(), "outputs": now}, f)
        print(f"recorded {len(now)} outputs of {len(docs)} documents to {path} "
              f"(rules {rules_identity()}, scrubbed in {took:.1f} s)")
        return 0
    if not os.path.exists(path):
        print(f"scrub_golden: no recording at {path}; run --record {name} first", file=sys.stderr)
        return 2
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rec = json.load(f)
    old = rec["outputs"]
    by_set: Counter = Counter()
    total: Counter = Counter()
    shown = 0
    for doc_id, text in now.items():
        set_name = doc_id.split("/", 1)[0]
        total[set_name] += 1
        if doc_id not in old:
            continue
        if old[doc_id] != text:
            by_set[set_name] += 1
            if shown < a.show:
                shown += 1
                i = _first_diff(old[doc_id], text)
                lo = max(0, i - 80)
                print(f"--- {doc_id} (at {i})\n  old: {old[doc_id][lo:i + 120]!r}\n  new: {text[lo:i + 120]!r}")
    compared = sum(1 for k in now if k in old)
    print(f"compared {compared} outputs with '{name}' (recorded under {rec['rules']}, now {rules_identity()}); "
          f"scrubbed in {took:.1f} s")
    for set_name in sorted(total):
        print(f"  {set_name:<10} {by_set[set_name]:>5} of {total[set_name]:>5} differ")
    diff = sum(by_set.values())
    print("IDENTICAL" if not diff else f"{diff} outputs DIFFER")
    return 0 if not diff else 1


if __name__ == "__main__":
    sys.exit(main())
