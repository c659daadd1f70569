#!/usr/bin/env python3
"""What the scrub gate and "gone means gone" cost (issue 32), through the real CLI in
subprocesses, this checkout beside another one (the commit before the gate), interleaved.

1. Ingest throughput, `llm brain ingest FOLDER --no-embed` into a fresh brain: wall and CPU (user
   + sys) of the command, median of interleaved runs, on the real dev notes (jbranchaud-til, extracted)
   and on a folder of documents (PDFs, DOCX, EPUB, an mbox, notebooks: every reader whose parts
   the gate joins), built with the tests' document builders.
2. At 100,000 chunks (10,000 notes of 10 long paragraphs): one changed file re-ingested, and one
   file forgotten, wall and CPU of each command and the brain's size after; this checkout's
   purge (optimize, then the index rows written again) beside the baseline's (optimize only).

    git worktree add /tmp/base32 93f0397        # the commit before the gate
    python3 bench/bench_gate.py --baseline /tmp/base32 [--this CHECKOUT] [--runs 5] [--notes 10000]

Each checkout runs with PYTHONPATH pointing at it, so `llm` loads that checkout's plugin. Takes
about 15 minutes on two cores (the 100k-chunk brains are built once per checkout).
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests")]
TIL = REPO.parent / "shared" / "data" / "jbranchaud-til" / "notes.tar.gz"
WORDS = ("harbour crane invoice budget ferry schedule north region audit shipment ledger crate "
         "meeting friday marina office boathouse approved repaint hull keeper lighthouse lamp "
         "island storm supply boat mainland tide gauge residual surge november report").split()


def llm(checkout: Path, brain: Path, *args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one `llm ...` run with `checkout`'s plugin; fails loudly."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "SECONDBRAIN_DB": str(brain),
           "OLLAMA_URL": "http://127.0.0.1:9", "LLM_USER_PATH": str(brain.parent / "llm")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # from a folder that holds no checkout: `python -m llm` puts the current folder first on
    # sys.path, ahead of PYTHONPATH, and a run from the repository would load this checkout
    subprocess.run([sys.executable, "-m", "llm", *args], env=env, check=True, cwd=brain.parent,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def prose(rng: random.Random, words: int) -> str:
    return " ".join(f"{rng.choice(WORDS)}{rng.randrange(1000)}" if i % 7 == 0 else rng.choice(WORDS)
                    for i in range(words))


def documents(folder: Path, rng: random.Random) -> None:
    import docfixtures as fx
    from datetime import datetime, timedelta, timezone

    folder.mkdir(parents=True)
    for n in range(20):
        (folder / f"report-{n}.pdf").write_bytes(fx.pdf_bytes([[prose(rng, 12) for _ in range(30)]
                                                               for _ in range(4)], title=f"Report {n}"))
        fx.docx_file(folder / f"memo-{n}.docx", title=f"Memo {n}", paragraphs=[
            (prose(rng, 3), "Heading 1" if i % 4 == 0 else None) for i in range(40)])
        (folder / f"book-{n}.epub").write_bytes(fx.epub_bytes(f"Book {n}", [
            (prose(rng, 3), prose(rng, 150)) for _ in range(6)]))
        (folder / f"nb-{n}.ipynb").write_bytes(fx.notebook_bytes([("markdown", prose(rng, 80))] * 5))
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    (folder / "inbox.mbox").write_bytes(fx.mbox_bytes([
        fx.message(prose(rng, 4), f"p{i % 30}@example.org", start + timedelta(hours=i), prose(rng, 120),
                   message_id=f"m{i}@x") for i in range(800)]))


def throughput(checkouts: dict[str, Path], folders: dict[str, Path], runs: int, work: Path) -> None:
    """`ingest --no-embed` of each folder into a fresh brain, each checkout in turn, `runs` times:
    median wall and CPU seconds of each, and the ratio of CPU this checkout / the baseline."""
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(runs):
        for label, folder in folders.items():
            for name, checkout in checkouts.items():
                brain = work / f"t-{name}" / "brain.db"
                shutil.rmtree(brain.parent, ignore_errors=True)
                brain.parent.mkdir(parents=True)
                times.setdefault((label, name), []).append(
                    llm(checkout, brain, "brain", "ingest", str(folder), "--no-embed", "--no-progress"))
    print(f"ingest --no-embed into a fresh brain, median of {runs} interleaved runs:")
    for label, folder in folders.items():
        files = sum(1 for p in folder.rglob("*") if p.is_file())
        cpu = {}
        cells = []
        for name in checkouts:
            wall = statistics.median(w for w, _ in times[(label, name)])
            cpu[name] = statistics.median(c for _, c in times[(label, name)])
            cells.append(f"{name} {wall:6.2f} s wall {cpu[name]:6.2f} s CPU ({files / wall:5.0f} files/s)")
        print(f"  {label:10s} ({files:,} files)  " + "  |  ".join(cells)
              + f"  |  CPU ratio {cpu['this'] / cpu['baseline']:.2f}")


def purge_cost(checkouts: dict[str, Path], notes: int, work: Path) -> None:
    rng = random.Random(7)
    folder = work / "many"
    folder.mkdir()
    for n in range(notes):
        (folder / f"n{n:05d}.md").write_text("\n\n".join(prose(rng, 190) for _ in range(10)) + "\n")
    for name, checkout in checkouts.items():
        brain = work / f"p-{name}" / "brain.db"
        brain.parent.mkdir()
        wall, cpu = llm(checkout, brain, "brain", "ingest", str(folder), "--no-embed", "--no-progress")
        size = brain.stat().st_size
        chunks = sqlite3.connect(brain).execute("SELECT count(*) FROM chunks").fetchone()[0]
        target = folder / "n00042.md"
        target.write_text("\n\n".join(prose(rng, 190) for _ in range(10)) + "\n")
        change = llm(checkout, brain, "brain", "ingest", str(folder), "--no-embed", "--no-progress")
        forget = llm(checkout, brain, "brain", "forget", str(folder / "n00043.md"))
        print(f"  {name:9s} first ingest of {chunks:,} chunks {wall:6.1f} s wall ({cpu:.1f} CPU), {size / 1e6:.0f} MB; "
              f"changed file {change[0]:.1f} s wall ({change[1]:.1f} CPU); forget {forget[0]:.1f} s wall "
              f"({forget[1]:.1f} CPU); brain after {brain.stat().st_size / 1e6:.0f} MB")
        target.write_text("\n\n".join(prose(random.Random(42), 190) for _ in range(10)) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout (a git worktree)")
    parser.add_argument("--this", type=Path, default=REPO, help="the checkout measured (default: this one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--skip-purge", action="store_true")
    args = parser.parse_args()
    checkouts = {"this": args.this.resolve(), "baseline": args.baseline.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        til = work / "til"
        til.mkdir()
        with tarfile.open(TIL) as tar:
            tar.extractall(til, filter="data")
        documents(work / "documents", random.Random(3))
        throughput(checkouts, {"til notes": til, "documents": work / "documents"}, args.runs, work)
        if not args.skip_purge:
            purge_cost(checkouts, args.notes, work)


if __name__ == "__main__":
    main()
