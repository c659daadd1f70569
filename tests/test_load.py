"""Load: two processes ingesting (each its own folder, with embedding) and four recalling, at
once, on one brain, for a bounded time. No 'database is locked' may reach the user, every
recall answers, and at the end the chunk counts add up (issue 7)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faultkit import check_invariants, connect
from ollama_stub import OllamaStub

LOAD_SECONDS = 10.0
HERE = Path(__file__).parent


@pytest.mark.slow
def test_two_ingesting_and_four_recalling_at_once(tmp_path, run, monkeypatch):
    brain = tmp_path / "brain" / "brain.db"
    with OllamaStub() as stub:
        stub.keep_requests = False
        stub.delay = 0.01
        monkeypatch.setenv("OLLAMA_URL", stub.url)
        seed_folder = tmp_path / "seed"
        seed_folder.mkdir()
        (seed_folder / "a.md").write_text("INV/2026/00037 paid on time; the garden invoice is settled.\n")
        run("brain", "ingest", seed_folder, "--no-progress")  # recalls start on an existing brain

        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        start = time.time() + 4  # every worker imports first, then all begin together
        end = start + LOAD_SECONDS
        procs = []
        for i in range(2):
            folder = tmp_path / f"in{i}"
            folder.mkdir()
            out = tmp_path / f"ingest{i}.json"
            procs.append((out, folder, subprocess.Popen(
                [sys.executable, str(HERE / "load_worker.py"), "ingest", str(100 + i), str(start),
                 str(end), str(out), str(folder)], env=env)))
        for i in range(4):
            out = tmp_path / f"recall{i}.json"
            procs.append((out, None, subprocess.Popen(
                [sys.executable, str(HERE / "load_worker.py"), "recall", str(200 + i), str(start),
                 str(end), str(out)], env=env)))
        try:
            for _out, _folder, proc in procs:
                assert proc.wait(timeout=LOAD_SECONDS + 240) == 0
        finally:
            for _out, _folder, proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

    reports = [(json.loads(out.read_text()), folder) for out, folder, _p in procs]
    n_recalls = n_ingests = 0
    slowest = 0.0
    for report, folder in reports:
        for r in report["results"]:
            said = r["stdout"] + r["stderr"]
            assert "locked" not in said.lower() and "busy" not in said.lower(), said
            assert "Traceback" not in said and r["exception"] is None, r
            assert r["exit"] == 0, r
            slowest = max(slowest, r["seconds"])
        if report["mode"] == "recall":
            n_recalls += len(report["results"])
            assert report["results"], "a recall worker never got to ask"
        else:
            n_ingests += len(report["results"])
            assert len(report["results"]) >= 2, "an ingest worker hardly ran"
    print(f"\n{n_ingests} ingests and {n_recalls} recalls in {LOAD_SECONDS:.0f} s; slowest call {slowest:.2f} s")
    assert n_recalls >= 12

    # Nothing lost: each folder's notes are exactly its files, one chunk each, all embedded.
    counts = check_invariants(brain)
    conn = connect(brain)
    for report, folder in reports:
        if folder is None:
            continue
        rows = conn.execute("SELECT path, text FROM chunks WHERE path LIKE ? ORDER BY path",
                            (f"{folder}/%",)).fetchall()
        assert [Path(p).name for p, _t in rows] == report["files"]
        assert all(t == (folder / Path(p).name).read_text().strip() for p, t in rows)
    total_files = sum(len(r["files"]) for r, f in reports if f is not None) + 1
    assert counts["chunks"] == total_files == counts["files"]
    assert counts["embedded"] == counts["chunks"] and counts["pending"] == 0
