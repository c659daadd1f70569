#!/usr/bin/env python3
"""jbranchaud-til through the plugin's own front door: extract the notes to /tmp, ingest them
with `llm brain ingest` (no flags: the defaults a user gets), score `llm brain eval` per mode,
and print the table. Not a test.

    OLLAMA_URL=http://127.0.0.1:PORT python bench/bench_til.py   # MiniLM server, see ../shared/retrieval

The brain is kept in $TMPDIR/secondbrain-til (a rerun re-ingests nothing that is unchanged).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "jbranchaud-til"


def llm(*args: str, env: dict) -> str:
    """Run `llm brain ...` as a user would, in this checkout (PYTHONPATH)."""
    done = subprocess.run([sys.executable, "-m", "llm", "brain", *args], env=env, text=True,
                          capture_output=True, check=True)
    return done.stdout


def main() -> None:
    if not (DATA / "notes.tar.gz").exists():
        sys.exit(f"skipped: {DATA} not found")
    work = Path(tempfile.gettempdir()) / "secondbrain-til"
    notes = work / "notes"
    if not notes.exists():
        notes.mkdir(parents=True)
        with tarfile.open(DATA / "notes.tar.gz") as tar:
            tar.extractall(notes, filter="data")
    env = {**os.environ, "SECONDBRAIN_EMBED_MODEL": "all-minilm",
           "SECONDBRAIN_DB": str(work / "brain.db"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))}
    env.pop("SECONDBRAIN_MAX_CHARS", None)  # the figures are the defaults'
    print(llm("ingest", str(notes), "--no-progress", env=env).strip())
    print(llm("eval", str(DATA / "queries.jsonl"), env=env))


if __name__ == "__main__":
    main()
