#!/usr/bin/env python3
"""How fast `llm brain ingest --llm-logs` reads llm's logs, and how long it holds a read lock.

    PYTHONPATH=. python3 bench/bench_llm_logs.py              # 2,000 turns in 400 conversations
    PYTHONPATH=. python3 bench/bench_llm_logs.py --turns 10000

Writes a logs.db with llm itself (the echo model, the llm Python API) in a temp folder, then
times: the first ingest, a second run with nothing new, a run after one new turn, and the
longest single read statement on logs.db (what a concurrent `llm` prompt may have to wait for;
llm's own connection gives up after 5 s). Stores without embedding (--no-embed), so the
figures are the reading, scrubbing and staging alone.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def build_log(path: Path, turns: int, per_conversation: int) -> None:
    import llm
    import sqlite_utils
    from llm.migrations import migrate

    db = sqlite_utils.Database(path)
    migrate(db)
    model = llm.get_model("echo")
    conversation = None
    for i in range(turns):
        if i % per_conversation == 0:
            conversation = model.conversation()
        response = conversation.prompt(
            f"Question {i}: how do I configure the reverse proxy for service {i % 37}? "
            "It returns 502 after the certificate renewal and the logs show a timeout. " * 3)
        response.text()
        response.log_to_db(db)
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--per-conversation", type=int, default=5)
    args = parser.parse_args()

    from llm_secondbrain.ingest import llm_logs
    from llm_secondbrain.api import SecondBrain

    longest = [0.0]
    plain_all = llm_logs.LogReader._all

    def timed_all(self, sql, params=()):
        start = time.perf_counter()
        try:
            return plain_all(self, sql, params)
        finally:
            longest[0] = max(longest[0], time.perf_counter() - start)

    llm_logs.LogReader._all = timed_all  # measuring only: the figures are about this call

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LLM_USER_PATH"] = tmp
        logs = Path(tmp) / "logs.db"
        start = time.perf_counter()
        build_log(logs, args.turns, args.per_conversation)
        print(f"logged {args.turns} turns in {args.turns // args.per_conversation} conversations "
              f"with llm in {time.perf_counter() - start:.1f} s ({logs.stat().st_size / 1e6:.1f} MB)")
        with SecondBrain.open(Path(tmp) / "brain.db") as sb:
            for label in ("first ingest", "second run, nothing new", "after one new turn"):
                if label == "after one new turn":
                    build_log(logs, 1, 1)
                longest[0] = 0.0
                start = time.perf_counter()
                report = sb.ingest([], llm_logs=True, embed=False)
                took = time.perf_counter() - start
                rate = f"{args.turns / took:,.0f} turns/s; " if label == "first ingest" else ""
                print(f"{label:>26}: {took:6.2f} s  ({rate}"
                      f"{report.ingested} conversations stored, {report.unchanged} unchanged, "
                      f"{report.chunks_added} chunks added; longest read {longest[0] * 1000:.1f} ms)")


if __name__ == "__main__":
    sys.exit(main())
