#!/usr/bin/env python3
"""Hostile documents (issue 34): what each costs and what comes of it, through the real CLI.

1. Shapes: an 8 KB EPUB of 400,000 nested <div>s, a 16.5 MB HTML page of nested <div>s, an
   EPUB of a few MB that inflates to 248 MB of distinct paragraphs under every zip-bomb limit, an e-mail nested
   5,000 multiparts deep, and the six files that each once stopped a whole ingest (a notebook
   with a 5,000-digit number, a page with charset "undefined", a DOCX with one damaged zip
   header, a PDF with an unknown filter, an EPUB with a broken deflate stream, the deep
   e-mail). Each is put in a folder beside one good note and ingested with
   `llm brain ingest FOLDER --no-embed --json` into a fresh brain: wall seconds, peak RSS of
   the command and everything it started (wait4), and the outcome (skipped and why, or read:
   chunks stored, cut at --max-size). With --baseline another checkout runs the same, each
   run stopped after --cap seconds.
2. --fuzz N: N seeded mutants per format (tests/fuzzkit.py, the fuzz test's generator, read in
   this process): files, read, skipped, escapes (any exception but a skip), slowest file.
3. --mcp: `llm brain mcp` on a small embedded brain, its embedding server answering after
   30 s: how long a 1 MB and a 5 MB recall query take to be answered, then, while a hybrid
   recall waits on the slow server, how long `stats` and a lexical recall take, and when and
   how the slow call is answered (the default SECONDBRAIN_CALL_SECONDS, 10).
4. --throughput: ingest --no-embed of the real dev notes (jbranchaud-til, extracted) and of a
   folder of documents (bench_gate.py's), CPU and wall, median of --runs interleaved runs,
   this checkout beside --baseline: what the bounds and the worker process cost ordinary files.

    git worktree add /tmp/base34 a5b330d      # this branch's start
    python3 bench/bench_hostile.py --baseline /tmp/base34 --fuzz 1000 --throughput

Each checkout runs with PYTHONPATH pointing at it, from a folder that holds no checkout (`python
-m llm` puts the current folder first on sys.path, so a run from a checkout would load that
checkout's plugin whatever PYTHONPATH says). Shapes: about 2 minutes for this checkout
(the baseline: up to --cap per shape); --fuzz 1000: about 1 minute; --throughput with 5 runs:
about 10 minutes on two cores.
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import docfixtures as fx  # noqa: E402  (the tests' document builders)

SENTENCES = [f"The keeper notes entry {i}: the tide gauge read {i * 7 % 100} cm at the north quay, "
             f"and the supply boat came in from the mainland." for i in range(64)]


def nested_epub() -> bytes:
    """A book of one chapter nested 400,000 <div>s deep: about 2 KB zipped."""
    depth = 400_000
    return fx.epub_bytes("Nested", [("Deep", "<div>" * depth + "The bottom of the well." + "</div>" * depth)])


def nested_html() -> bytes:
    """16.5 MB of nested <div>s around one sentence."""
    depth = (16_500_000 - 60) // 11
    return b"<html><body>" + b"<div>" * depth + b"The bottom of the page." + b"</div>" * depth + b"</body></html>"


def inflating_epub() -> bytes:
    """40 chapters of 6.2 MB of text each, paragraphs told apart by a number (so their chunks
    are not one chunk stored once): every member under the zip-bomb ratio's floor, the whole
    under its total, the book 248 MB of text."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", (
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:'
            'container"><rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package'
            '+xml"/></rootfiles></container>'))
        items, refs, number = [], [], 0
        block = " ".join(SENTENCES[:9])
        for i in range(40):
            paragraphs = []
            for _ in range(6_200_000 // (len(block) + 20)):
                number += 1
                paragraphs.append(f"<p>Entry {number}. {block}</p>\n")
            items.append(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>')
            refs.append(f'<itemref idref="c{i}"/>')
            z.writestr(f"c{i}.xhtml", '<html xmlns="http://www.w3.org/1999/xhtml"><body>'
                       + "".join(paragraphs) + "</body></html>")
        z.writestr("content.opf", (
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Log</dc:title></metadata>'
            f"<manifest>{''.join(items)}</manifest><spine>{''.join(refs)}</spine></package>"))
    return buffer.getvalue()


def shapes(work: Path) -> dict[str, tuple[str, bytes]]:
    out = {"nested EPUB": ("nested.epub", nested_epub()), "nested HTML": ("nested.html", nested_html()),
           "inflating EPUB": ("inflating.epub", inflating_epub())}
    recipes = fx.bad_files(work)
    out["deep multipart mail"] = ("deep.eml", recipes.pop("deep.eml"))
    for name, raw in recipes.items():
        out[f"bad {name}"] = (name, raw)
    return out


def run_cli(checkout: Path, work: Path, folder: Path, cap: float) -> tuple[float, float, dict | None]:
    """(wall s, peak RSS MB of the command and its children, the --json report or None when
    it was stopped at `cap`)."""
    brain = work / "brain" / "brain.db"
    shutil.rmtree(brain.parent, ignore_errors=True)
    brain.parent.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(checkout), "SECONDBRAIN_DB": str(brain),
           "OLLAMA_URL": "http://127.0.0.1:9", "LLM_USER_PATH": str(brain.parent / "llm")}
    out = work / "out.json"
    with out.open("wb") as stdout:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "llm", "brain", "ingest", str(folder), "--no-embed",
                                 "--json", "--no-progress"], env=env, stdout=stdout,
                                stderr=subprocess.DEVNULL, start_new_session=True, cwd=work)
        timer = threading.Timer(cap, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
    except ProcessLookupError:
        pass
    report = None
    if proc.returncode == 0:
        report = json.loads(out.read_text().strip().splitlines()[-1])
    return wall, usage.ru_maxrss / 1024, report


def outcome(report: dict | None, name: str, cap: float) -> str:
    if report is None:
        return f"stopped after {cap:g} s"
    skipped = {Path(f["path"]).name: f["reason"] for f in report["skipped_files"]}
    if name in skipped:
        what = f"skipped: {skipped[name]}"
    else:
        what = f"read ({report['chunks_added'] - 1:,} chunks)"
        if report.get("cut_files"):
            what += ", cut at --max-size"
    good = "good note stored" if report["ingested"] >= 1 and "good.md" not in skipped else "GOOD NOTE LOST"
    return f"{what}; {good}"


def bench_shapes(checkouts: dict[str, Path], work: Path, cap: float) -> None:
    print("Hostile shapes: ingest FOLDER (the shape + one good note) --no-embed, fresh brain")
    print(f"  {'shape':26s} {'on disk':>9s}  " + "  ".join(f"{n:>38s}" for n in checkouts))
    for label, (name, raw) in shapes(work).items():
        folder = work / "shape"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / name).write_bytes(raw)
        (folder / "good.md").write_text("A good note beside a bad file: the ferry leaves at nine.\n")
        cells = []
        for checkout in checkouts.values():
            wall, rss, report = run_cli(checkout, work, folder, cap)
            worker = (report or {}).get("reading") or {}
            rss = max(rss, worker.get("peak_rss_mb", 0.0))
            cells.append(f"{wall:7.1f} s {rss:6.0f} MB {outcome(report, name, cap)}")
        print(f"  {label:26s} {len(raw) / 1024:7.0f} KB  " + "  |  ".join(cells), flush=True)


def bench_fuzz(count: int, work: Path) -> None:
    import fuzzkit

    logging.disable(logging.CRITICAL)
    print(f"Fuzz: {count} seeded mutants per format, read in this process")
    total = collections.Counter()
    for fmt, (name, raw) in fuzzkit.fixtures(work).items():
        counts, slowest = collections.Counter(), (0.0, "")
        for how, data in fuzzkit.mutants(fmt, raw, 0, count):
            result, seconds = fuzzkit.read(name, data)
            counts["escape" if result.startswith("ESCAPE") else result.split(":")[0]] += 1
            if result.startswith("ESCAPE"):
                print(f"    escape: {how}: {result}")
            slowest = max(slowest, (seconds, how))
        total.update(counts)
        print(f"  {fmt:9s} files {count:5d}  read {counts['ok']:5d}  skipped {counts['skip']:5d}  "
              f"escapes {counts['escape']}  slowest {slowest[0] * 1000:6.1f} ms ({slowest[1]})", flush=True)
    print(f"  all       files {sum(total.values()):5d}  read {total['ok']:5d}  skipped {total['skip']:5d}  "
          f"escapes {total['escape']}")


def bench_mcp(checkouts: dict[str, Path], work: Path) -> None:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError
    from ollama_stub import OllamaStub

    notes = work / "mcp-notes"
    notes.mkdir()
    for i, text in enumerate(["The boiler service is booked with Varme AS every October.",
                              "Cabin opening checklist: water pump, fuse box, chimney sweep.",
                              "INV/2026/00037 was disputed: billed twice for the workshop."]):
        (notes / f"n{i}.md").write_text(text + "\n")

    async def timed(session, name, args):
        start = time.perf_counter()
        try:
            result = await session.call_tool(name, args)
            said = "tool error" if result.is_error else "answered"
        except MCPError as e:
            said = f"error {e.error.code}"
        return time.perf_counter() - start, said

    async def session_run(env, checkout):
        params = StdioServerParameters(command=sys.executable, args=["-m", "llm", "brain", "mcp"], env=env,
                                       cwd=str(work))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            big = [await timed(session, "recall", {"query": "boiler service " * (size // 15)})
                   for size in (1_000_000, 5_000_000)]
            slow = asyncio.ensure_future(timed(session, "recall", {"query": "boiler service"}))
            await asyncio.sleep(1)
            others = [await timed(session, "stats", {}),
                      await timed(session, "recall", {"query": "cabin water pump", "mode": "lexical"})]
            return big, others, await slow

    print("MCP: a 30 s embedding server; seconds to each answer")
    with OllamaStub() as stub:
        for name, checkout in checkouts.items():
            brain = work / f"mcp-{name}" / "brain.db"
            brain.parent.mkdir()
            env = {**os.environ, "PYTHONPATH": str(checkout), "SECONDBRAIN_DB": str(brain),
                   "OLLAMA_URL": stub.url, "LLM_USER_PATH": str(brain.parent / "llm")}
            subprocess.run([sys.executable, "-m", "llm", "brain", "ingest", str(notes), "--no-progress"],
                           env=env, check=True, capture_output=True, cwd=work)
            stub.delay = 30
            try:
                big, others, slow = asyncio.run(asyncio.wait_for(session_run(env, checkout), 600))
            finally:
                stub.delay = 0
            cells = [f"1 MB query {big[0][0]:.2f} ({big[0][1]})", f"5 MB query {big[1][0]:.2f} ({big[1][1]})",
                     f"stats {others[0][0]:.2f}", f"lexical recall {others[1][0]:.2f}",
                     f"the slow hybrid recall {slow[0]:.1f} ({slow[1]})"]
            print(f"  {name:9s} " + "; ".join(cells), flush=True)


def bench_throughput(checkouts: dict[str, Path], runs: int, work: Path) -> None:
    from bench_gate import TIL, documents, throughput

    folders = {"til notes": work / "til", "documents": work / "documents"}
    folders["til notes"].mkdir()
    with tarfile.open(TIL) as tar:
        tar.extractall(folders["til notes"], filter="data")
    documents(folders["documents"], random.Random(3))
    throughput(checkouts, folders, runs, work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout (a git worktree) to run beside this one")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds after which a shape's run is stopped")
    parser.add_argument("--fuzz", type=int, default=0, metavar="N", help="N mutants per format")
    parser.add_argument("--mcp", action="store_true")
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-shapes", action="store_true")
    args = parser.parse_args()
    checkouts = {"this": REPO}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if not args.no_shapes:
            bench_shapes(checkouts, work, args.cap)
        if args.fuzz:
            bench_fuzz(args.fuzz, work)
        if args.mcp:
            bench_mcp(checkouts, work)
        if args.throughput:
            if "baseline" not in checkouts:
                parser.error("--throughput compares with --baseline")
            bench_throughput(checkouts, args.runs, work)


if __name__ == "__main__":
    main()
