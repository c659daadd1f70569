#!/usr/bin/env python3
"""The scrubber's figures on every set, the held-out third apart: what issue 33 asks to report.

    python3 bench/scrub_measure.py                 # the table
    python3 bench/scrub_measure.py --list machine  # also every redaction in a set, with its verdict
    python3 bench/scrub_measure.py --misses scanners --fps scanners   # misses / false positives
    python3 bench/scrub_measure.py --sets scanners --by-source        # per scanner too

For each set of ``scrub_sets`` (dev = the part rules were tuned on, held = the fixed third left
out): recall (a secret counts as caught when neither it nor any 8-character window of it
survives, the corpus scorer's leak check), strict false positives (negatives that changed at all),
context kept (share of the non-secret text kept), idempotence (``scrub(scrub(x)) == scrub(x)``),
and for real text the redactions per 500 documents (a value redacted in several places of a
document counts once), each with the verdict a person gave it in
``bench/data/scrub_verdicts.tsv`` (by document and a hash of the value; the value is never
printed: its first two characters and its length are): right (a secret), fixture (a literal
credential in a test or a documentation example: not a secret, but written as one, where the
same line in a person's files holds a real one), wrong (not a credential at all). With
``--by-source`` each figure is given per source too (this machine's documents: stdlib,
stdlib-tests, pydoc, man, readme, doc). Takes about a minute.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import scrub_sets  # noqa: E402

VERDICTS = os.path.join(HERE, "data", "scrub_verdicts.tsv")
_MARK = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


def _scorer():
    path = os.path.join(scrub_sets.SECRETS, "score.py")
    spec = importlib.util.spec_from_file_location("secrets_score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def leaked(secret: str, out: str, original: str) -> bool:
    """The whole secret or any 8-character window of it survives (windows also found outside the
    secret in the original do not count)."""
    if secret in out:
        return True
    context = original.replace(secret, "\x00")
    return any(secret[i:i + 8] not in context and secret[i:i + 8] in out for i in range(len(secret) - 7))


def value_hash(value: str) -> str:
    return hashlib.sha1(value.encode()).hexdigest()[:12]


def load_verdicts() -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    if os.path.exists(VERDICTS):
        with open(VERDICTS, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    doc, h, verdict, *note = line.rstrip("\n").split("\t")
                    out[(doc, h)] = (verdict, note[0] if note else "")
    return out


def _rate(hits: list[bool]) -> str:
    return f"{sum(hits) / len(hits):.3f} ({sum(hits)}/{len(hits)})" if hits else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="own,peer,scanners,languages,otherwise,structured,notes,machine")
    ap.add_argument("--list", default="", help="sets whose every redaction is printed")
    ap.add_argument("--misses", default="", help="sets whose misses are printed")
    ap.add_argument("--fps", default="", help="sets whose strict false positives are printed")
    ap.add_argument("--held", action="store_true", help="print held-out misses and FPs too (default: dev only)")
    ap.add_argument("--by-source", action="store_true", help="recall and FP per source (scanner, corpus) too")
    a = ap.parse_args(argv)
    from llm_secondbrain.scrub import explain, scrub

    score = _scorer()
    verdicts = load_verdicts()
    show_list, show_miss, show_fp = (set(x.split(",")) - {""} for x in (a.list, a.misses, a.fps))
    for name in a.sets.split(","):
        docs = scrub_sets.load([name])
        if not docs:
            print(f"{name}: not on this machine")
            continue
        recall: dict[str, list[bool]] = defaultdict(list)
        fp: dict[str, list[bool]] = defaultdict(list)
        ctx: dict[str, list[float]] = defaultdict(list)
        redactions: dict[str, int] = defaultdict(int)
        judged: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        n_docs: dict[str, int] = defaultdict(int)
        idem = []
        for d in docs:
            part = "held" if d.held else "dev"
            out = scrub(d.text)
            idem.append(scrub(out) == out)
            n_docs[part] += 1
            n_docs[f"{part} {d.source}"] += 1
            if d.secrets is not None:
                ok = not any(leaked(s, out, d.text) for s in d.secrets)
                recall[part + (" placeholder" if d.placeholder else "")].append(ok)
                if a.by_source:
                    recall[f"{part} {d.source}" + (" placeholder" if d.placeholder else "")].append(ok)
                if not d.placeholder:
                    a_ = score.strip_secrets({"secret": d.secrets[0], "secret_parts": d.secrets[1:]}, d.text)
                    b_ = score.strip_secrets({"secret": d.secrets[0], "secret_parts": d.secrets[1:]}, out)
                    ctx[part].append(score.matched_chars(a_, b_) / max(1, len(a_)))
                if not ok and name in show_miss and (a.held or not d.held):
                    print(f"MISS [{part}{' placeholder' if d.placeholder else ''}] {d.id} {d.source} {d.extra.get('rule', '')}\n  secret: {d.secrets[0][:70]!r}"
                          f"\n  text: {d.text[:300]!r}\n  out:  {out[:300]!r}")
            elif d.source != "email":
                changed = out != d.text
                if name in ("own", "peer", "scanners", "languages", "otherwise"):
                    fp[part + (" strict" if d.strict else " borderline")].append(changed)
                    if a.by_source:
                        fp[f"{part} {d.source}" + (" strict" if d.strict else " borderline")].append(changed)
                    if changed and d.strict and name in show_fp and (a.held or not d.held):
                        print(f"FP [{part}] {d.id} {d.source} {d.extra.get('rule', '')}\n  text: {d.text[:300]!r}\n  out:  {out[:300]!r}")
                if changed and name in ("notes", "machine", "synthetic"):
                    found, _ = explain(d.text)
                    seen = set()  # a value redacted in several places is one redaction
                    for r in found:
                        v = d.text[r.start:r.end]
                        if r.rules == ("allowed",) or v in seen:
                            continue
                        seen.add(v)
                        verdict, note = verdicts.get((d.id, value_hash(v)), ("?", ""))
                        for key in ((part, f"{part} {d.source}") if a.by_source else (part,)):
                            redactions[key] += 1
                            judged[key][verdict] += 1
                        if name in show_list:
                            lo, hi = max(0, r.start - 50), min(len(d.text), r.end + 40)
                            excerpt = (d.text[lo:r.start] + f"«{v[:2]}…{len(v)}»" + d.text[r.end:hi]).replace("\n", "⏎")
                            print(f"{verdict:<6} {part:<4} {d.id}\t{value_hash(v)}\t{','.join(r.rules)}\t{r.kind}\t{excerpt}")
        print(f"== {name}: {len(docs)} documents")
        for key in sorted(recall):
            print(f"  recall {key:<24}{_rate(recall[key]):>22}")
        for key in sorted(ctx):
            print(f"  context kept {key:<18}{sum(ctx[key]) / len(ctx[key]):>22.3f}")
        for key in sorted(fp):
            print(f"  FP {key:<28}{_rate(fp[key]):>22}")
        for part in sorted(redactions):
            j = judged[part]
            print(f"  redactions {part:<20}{redactions[part]:>6} in {n_docs[part]} docs = "
                  f"{redactions[part] * 500 / n_docs[part]:.2f} per 500 (right {j['right']}, fixture {j['fixture']}, "
                  f"wrong {j['wrong']}, unjudged {j['?']})")
        print(f"  idempotent {'':<20}{_rate(idem):>22}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
