"""One process of the load test (tests/test_load.py): it runs `llm brain ...` commands in a loop
through click's CliRunner (the same code path as the `llm` command, without paying Python's
start-up for every call) until a deadline, and writes what happened as JSON.

    python tests/load_worker.py recall SEED START END OUT.json
    python tests/load_worker.py ingest SEED START END OUT.json FOLDER

A recall worker asks seeded queries (words, identifiers, operators); an ingest worker keeps
adding, changing and deleting one-chunk notes in its own folder and re-ingests it (embedding
included). Environment: SECONDBRAIN_DB, OLLAMA_URL, LLM_USER_PATH as for `llm`.
"""
from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

WORDS = ["invoice", "garden", "ferry", "kernel", "backup", "passport", "INV/2026/00037", "C++",
         "what's next", "NEAR(a b)", '"unbalanced', "AND OR NOT", "løpende", "-", "note 12"]


def main(argv: list[str]) -> None:
    from click.testing import CliRunner
    from llm.cli import cli

    mode, seed, start, end, out = argv[0], int(argv[1]), float(argv[2]), float(argv[3]), argv[4]
    rng = random.Random(seed)
    runner = CliRunner()
    results = []
    files: dict[str, str] = {}
    folder = Path(argv[5]) if mode == "ingest" else None
    n = 0
    while time.time() < start:
        time.sleep(0.01)
    least = 3 if mode == "recall" else 2  # even on a machine too busy for the time given
    while time.time() < end or len(results) < least:
        t0 = time.monotonic()
        if mode == "recall":
            query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
            res = runner.invoke(cli, ["brain", "recall", "--json", "-k", "5", "--", query])
        else:
            for _ in range(rng.randint(2, 6)):  # new notes
                name = f"n{n:05d}.md"
                files[name] = f"Load note {n} from worker {seed}: {rng.choice(WORDS)} {rng.random():.12f}"
                (folder / name).write_text(files[name] + "\n")
                n += 1
            if len(files) > 4 and rng.random() < 0.5:  # a deleted note
                gone = rng.choice(sorted(files))
                (folder / gone).unlink()
                del files[gone]
            if len(files) > 4 and rng.random() < 0.5:  # a changed note
                changed = rng.choice(sorted(files))
                files[changed] = f"Changed note {changed} from worker {seed}: {rng.random():.12f}"
                (folder / changed).write_text(files[changed] + "\n")
            res = runner.invoke(cli, ["brain", "ingest", str(folder), "--json", "--no-progress"])
        results.append({
            "exit": res.exit_code, "seconds": round(time.monotonic() - t0, 3),
            "stdout": res.stdout[-2000:], "stderr": res.stderr[-2000:],
            "exception": repr(res.exception) if res.exception and res.exit_code not in (0, 1) else None,
        })
    Path(out).write_text(json.dumps({"mode": mode, "results": results, "files": sorted(files)}))


if __name__ == "__main__":
    main(sys.argv[1:])
