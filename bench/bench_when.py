#!/usr/bin/env python3
"""Time in the question, measured: the time-phrase set (`when_set.py`) through the façade,
with the parsing (the default) and without it (`no_dates=True`, the phrase a word of the query).

    ~/.venvs/minilm/bin/python bench/model_server.py --port 11537 --cache /tmp/minilm-37.sqlite &
    PYTHONPATH=. python3 bench/bench_when.py --url http://127.0.0.1:11537

Prints, for all queries, the dev part and the held-out part (see when_set.py), by class:
- window right: time queries whose window read (`result.when`, in local dates) is exactly the
  gold window; content queries where no window was left in the answer (no phrase read, or
  every date searched after nothing in the window matched);
- fell back: queries where nothing in the window cleared the relevance floor, so every date
  was searched;
- in-window: the share of the top-10 hits dated inside the gold window (time queries);
- nDCG@10 (binary, by document) with and without parsing, over the hits a user is shown
  (none when no hit clears the relevance floor).
The set is built for today, so the dates move with the day it runs; the figures are for the
day printed. Takes about 1 minute (the first run embeds ~110 texts: ~20 s more).
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
from datetime import date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from brains import server_up, settings_for  # noqa: E402
from when_set import build  # noqa: E402

from llm_secondbrain.api import SecondBrain  # noqa: E402
from llm_secondbrain.store import ChunkRow  # noqa: E402


def stage(brain: SecondBrain, docs: list[dict]) -> None:
    for d in docs:
        if d["kind"] == "note":
            brain.brain.stage(path=f"when/{d['id']}.md", chunks=[ChunkRow(d["text"], 1, 1)], project="when",
                              source="files", ts=d["ts"])
            continue
        path = f"llm:{d['id']}"  # a logged conversation: the user's turn and the answer
        for i, (role, text) in enumerate((("user", d["text"]), ("assistant", d["answer"]))):
            brain.brain.stage(path=path, chunks=[ChunkRow(text, None, None)], project="when", source="llm",
                              ts=d["ts"], role=role, ref=f"{d['id']}-turn", replace=i == 0)


def doc_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md").removeprefix("llm:")


def ndcg(ranked: list[str], answers: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in answers)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(answers), k)))
    return dcg / ideal if ideal else 0.0


def local_day(instant: str | None, *, end: bool = False) -> date | None:
    if instant is None:
        return None
    moment = datetime.fromisoformat(instant).astimezone()
    return (moment - timedelta(seconds=1)).date() if end else moment.date()


def shown(result) -> list[str]:
    if not result.relevant:
        return []
    return list(dict.fromkeys(doc_of(h.path) for h in result.hits))


def run(url: str) -> None:
    docs, queries = build()
    days = {d["id"]: date.fromisoformat(d["day"]) for d in docs}
    work = Path(tempfile.mkdtemp(prefix="bench-when-"))
    settings = settings_for(work / "brain.db", url, 1000)
    rows = []
    with SecondBrain.open(work / "brain.db", settings=settings) as brain:
        stage(brain, docs)
        report = brain.embed()
        if report.remaining:
            sys.exit(f"bench_when: {report.remaining} chunks not embedded")
        for q in queries:
            parsed = brain.search(q["query"], k=10)
            plain = brain.search(q["query"], k=10, no_dates=True)
            when = parsed.when
            first, last = (date.fromisoformat(q[f]) if q[f] else None for f in ("first", "last"))
            if q["class"] == "time":  # the window read, whether or not it was kept
                right = bool(when) and (local_day(when.since), local_day(when.until, end=True)) == (first, last)
            else:
                right = when is None or when.fallback

            def inside(ids: list[str]) -> float | None:
                if q["class"] != "time" or not ids:
                    return None
                top = ids[:10]
                return sum((first is None or days[i] >= first) and (last is None or days[i] <= last)
                           for i in top) / len(top)

            answers = set(q["answers"])
            rows.append({**q, "right": right, "when": when.phrase if when else None,
                         "fallback": bool(when and when.fallback),
                         "ndcg": ndcg(shown(parsed), answers), "ndcg_plain": ndcg(shown(plain), answers),
                         "inside": inside(shown(parsed)), "inside_plain": inside(shown(plain))})
    print(f"time-phrase set built for {date.today().isoformat()} ({datetime.now().astimezone().tzname()}): "
          f"{len(docs)} documents ({sum(d['kind'] == 'conversation' for d in docs)} conversations), "
          f"{len(queries)} queries; all-MiniLM-L6-v2 at {url}")
    print(f"{'part':<9} {'class':<8} {'n':>3}  {'window right':>12}  {'fell back':>9}  {'in-window top10':>16}  "
          f"{'nDCG@10 parsed':>14}  {'no parsing':>10}")
    for part, keep in (("all", lambda r: True), ("dev", lambda r: not r["held_out"]),
                       ("held-out", lambda r: r["held_out"])):
        for cls in ("time", "content"):
            sel = [r for r in rows if keep(r) and r["class"] == cls]
            if not sel:
                continue
            right = sum(r["right"] for r in sel)
            ins = [r["inside"] for r in sel if r["inside"] is not None]
            ins_plain = [r["inside_plain"] for r in sel if r["inside_plain"] is not None]
            inside = (f"{sum(ins) / len(ins):.2f} vs {sum(ins_plain) / len(ins_plain):.2f}"
                      if ins and ins_plain else "-")
            fell = sum(r["fallback"] for r in sel)
            print(f"{part:<9} {cls:<8} {len(sel):>3}  {right:>5}/{len(sel):<6}  {fell:>9}  {inside:>16}  "
                  f"{sum(r['ndcg'] for r in sel) / len(sel):>14.3f}  {sum(r['ndcg_plain'] for r in sel) / len(sel):>10.3f}")
    misses = [r for r in rows if not r["right"] or r["ndcg"] < r["ndcg_plain"]
              or (r["fallback"] and r["class"] == "time")]
    if misses:
        print("\ntime queries that fell back, and queries where the window is wrong or parsing lost ground:")
        for r in misses:
            print(f"  {r['query']!r}: read {r['when']!r}{' (fell back)' if r['fallback'] else ''}, "
                  f"gold {r['first']}..{r['last']}, nDCG {r['ndcg']:.2f} vs {r['ndcg_plain']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:11537")
    args = parser.parse_args()
    if not server_up(args.url):
        sys.exit(f"bench_when: no embedding server at {args.url} (see the docstring)")
    run(args.url)


if __name__ == "__main__":
    main()
