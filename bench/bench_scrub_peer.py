#!/usr/bin/env python3
"""Score the scrubber on other scanners' fixtures (``../shared/secrets/peer``), split the way issue 15 asks.

    python3 bench/bench_scrub_peer.py                  # the table
    python3 bench/bench_scrub_peer.py --misses 20 --fps 20   # plus sample misses / false positives

The shared scorer counts every positive alike; scanners' own positives include placeholders
(``placeholder_like``), so the bar is recall over the positives that are *not* placeholder-like.
This script loads the gzipped JSON lines itself, uses the scorer's leak check (whole secret or any
8-character window of it survives), and prints recall by placeholder flag, by shape (prefixed /
structural / bare) and by ``label_near``, the strict (``difficulty: normal``) and borderline
false-positive rates, and context kept. Exits 2 when the corpus is absent, 1 when the bar is missed.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRETS = os.path.normpath(os.path.join(REPO, "..", "shared", "secrets"))
PEER = os.path.join(SECRETS, "peer")

BAR = {"recall": 0.97, "strict_fp": 0.03}


def _load_scorer():
    path = os.path.join(SECRETS, "score.py")
    if not os.path.isfile(path) or not os.path.exists(os.path.join(PEER, "positives.jsonl.gz")):
        print(f"bench_scrub_peer: peer corpus not found at {PEER}", file=sys.stderr)
        sys.exit(2)
    spec = importlib.util.spec_from_file_location("secrets_score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rate(hits: list[bool]) -> str:
    return f"{sum(hits) / len(hits):.3f} ({sum(hits)}/{len(hits)})" if hits else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--misses", type=int, default=0, help="print this many missed positives")
    ap.add_argument("--fps", type=int, default=0, help="print this many strict false positives")
    ap.add_argument("--borderline", type=int, default=0, help="print this many borderline changes")
    a = ap.parse_args(argv)

    score = _load_scorer()
    sys.path.insert(0, REPO)
    from llm_secondbrain.scrub import scrub  # noqa: E402

    positives = score.load_jsonl(os.path.join(PEER, "positives.jsonl"))
    negatives = score.load_jsonl(os.path.join(PEER, "negatives.jsonl"))

    groups: dict[str, list[bool]] = defaultdict(list)
    ctx: list[float] = []
    misses = []
    for rec in positives:
        out = scrub(rec["text"])
        ok = not score.leak_check(rec, out)
        if rec.get("placeholder_like"):
            groups["placeholder_like"].append(ok)
            continue
        groups["all (not placeholder)"].append(ok)
        groups["shape=" + rec.get("shape", "?")].append(ok)
        groups["label_near=" + str(bool(rec.get("label_near")))].append(ok)
        groups[f"shape={rec.get('shape')}, label_near={bool(rec.get('label_near'))}"].append(ok)
        a_ = score.strip_secrets(rec, rec["text"])
        b_ = score.strip_secrets(rec, out)
        ctx.append(score.matched_chars(a_, b_) / max(1, len(a_)))
        if not ok:
            misses.append((rec, out))

    fp: dict[str, list[bool]] = defaultdict(list)
    fp_examples: dict[str, list] = defaultdict(list)
    for rec in negatives:
        out = scrub(rec["text"])
        changed = out != rec["text"]
        d = rec.get("difficulty", "normal")
        fp[d].append(changed)
        if changed:
            fp_examples[d].append((rec, out))

    print(f"peer corpus: {PEER}  ({len(positives)} positives, {len(negatives)} negatives)")
    print("recall")
    for key in sorted(groups, key=lambda k: (k != "all (not placeholder)", k)):
        print(f"  {key:<42}{_rate(groups[key]):>22}")
    print(f"context kept (not placeholder)              {sum(ctx) / max(1, len(ctx)):.3f}")
    print("false positives (text changed)")
    print(f"  {'strict (difficulty: normal)':<42}{_rate(fp['normal']):>22}")
    print(f"  {'borderline (lenient)':<42}{_rate(fp['borderline']):>22}")

    for rec, out in misses[:a.misses]:
        print(f"\nMISS {rec['id']} {rec['kind']} shape={rec.get('shape')} label_near={rec.get('label_near')}"
              f"\n  secret: {rec['secret'][:80]!r}\n  text:   {rec['text'][:400]!r}\n  out:    {out[:400]!r}")
    for d, n in (("normal", a.fps), ("borderline", a.borderline)):
        for rec, out in fp_examples[d][:n]:
            print(f"\nFP[{d}] {rec['id']} {rec['kind']} ({rec.get('why', '')})"
                  f"\n  text: {rec['text'][:400]!r}\n  out:  {out[:400]!r}")

    recall = sum(groups["all (not placeholder)"]) / max(1, len(groups["all (not placeholder)"]))
    strict = sum(fp["normal"]) / max(1, len(fp["normal"]))
    ok = recall >= BAR["recall"] and strict <= BAR["strict_fp"]
    print(f"\nbar (recall not placeholder >= {BAR['recall']}, strict FP <= {BAR['strict_fp']}): "
          + ("MET" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
