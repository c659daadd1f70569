"""Building benchmark brains through the plugin (ingest + embed), cached between runs.

A brain is built once per (data set, chunk size, model) and kept under the work dir
(`SECONDBRAIN_BENCH_DIR`, default `$TMPDIR/secondbrain-bench`), so a rerun only opens it.
Each document is cut by the plugin's `segment` (chunk size `SECONDBRAIN_MAX_CHARS`), staged with
`Brain.stage` under the path `<name>/<doc id>.txt`, and embedded by the plugin's backlog
(`SecondBrain.embed`, i.e. `embed_pending`) through the Ollama-compatible MiniLM server. (Scrubbing
is skipped: benchmark texts hold no secrets, and redaction would only change a few chunk texts.)
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from llm_secondbrain import config
from llm_secondbrain.api import SecondBrain
from llm_secondbrain.segment import segment
from llm_secondbrain.store import ChunkRow

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
SCIFACT = SHARED / "data" / "scifact"
NOTES = HERE / "data" / "notes"
MODEL = "all-minilm"
DEFAULT_URL = "http://127.0.0.1:11435"


def work_dir() -> Path:
    root = Path(os.environ.get("SECONDBRAIN_BENCH_DIR") or Path(tempfile.gettempdir()) / "secondbrain-bench")
    root.mkdir(parents=True, exist_ok=True)
    return root


def server_up(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url.rstrip("/") + "/api/version", timeout=3) as r:
            return r.status == 200
    except OSError:
        return False


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            q, d, s = line.rstrip("\n").split("\t")
            qrels.setdefault(q, {})[d] = int(s)
    return qrels


def settings_for(db: Path, url: str, max_chars: int) -> config.Settings:
    env = {"SECONDBRAIN_EMBED_MODEL": MODEL, "OLLAMA_URL": url,
           "SECONDBRAIN_MAX_CHARS": str(max_chars)}
    return config.load(env, db=db)


def build(name: str, docs: list[tuple[str, str]], *, url: str, max_chars: int,
          log=sys.stderr) -> Path:
    """Ingest `docs` (id, text) into a cached brain and embed it; returns the brain path.
    Document ids become file names, so a hit's path gives its document back."""
    digest = hashlib.sha256(json.dumps(docs).encode()).hexdigest()[:10]
    root = work_dir() / f"{name}-{max_chars}-{MODEL}-{digest}"
    db = root / "brain.db"
    done = root / "DONE"
    if done.exists():
        return db
    root.mkdir(parents=True, exist_ok=True)
    settings = settings_for(db, url, max_chars)
    start = time.time()
    with SecondBrain.open(db, settings=settings) as brain:
        chunks = 0
        for doc_id, text in docs:
            rows = [ChunkRow(s.text, s.line_start, s.line_end)
                    for s in segment(text, settings.max_chars, settings.min_chars)]
            chunks += brain.brain.stage(path=f"{name}/{doc_id}.txt", chunks=rows, project=name,
                                        source="bench", ts=None).added
        print(f"[{name}] staged {len(docs)} documents, {chunks} new chunks", file=log, flush=True)
        pending = brain.brain.conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0]
        done_count = [0]

        def tick(n: int) -> None:
            done_count[0] += n
            if done_count[0] % 1024 < n:
                rate = done_count[0] / max(time.time() - start, 1e-9)
                print(f"[{name}] embedded {done_count[0]}/{pending} ({rate:.0f}/s)", file=log, flush=True)

        report = brain.embed(on_batch=tick)
        print(f"[{name}] {report.summary()} in {time.time() - start:.0f}s", file=log, flush=True)
        if report.remaining:
            raise RuntimeError(f"{report.remaining} chunks were not embedded")
    done.write_text(time.strftime("%Y-%m-%d %H:%M:%S"))
    return db


def doc_id(path: str | None) -> str:
    """The document id a hit belongs to (its file name without .txt)."""
    name = os.path.basename(path or "")
    return name[:-4] if name.endswith(".txt") else name


def scifact_docs() -> list[tuple[str, str]]:
    return [(d["_id"], d["title"] + "\n" + d["text"]) for d in read_jsonl(SCIFACT / "corpus.jsonl")]


def notes_docs() -> list[tuple[str, str]]:
    return [(d["_id"], d["text"]) for d in read_jsonl(NOTES / "corpus.jsonl")]
