"""Staleness at recall: has a hit's file changed or vanished since it was ingested?

Only the files among the hits are stat-ed (a handful, whatever the brain's size), and compared
with the ledger's size and mtime, so recall stays fast and a model is never handed a paragraph
that may no longer be in the file without a warning.
"""
from __future__ import annotations

import os
from typing import Iterable

from . import Hit
from ..store import SCRUBBED_NAME, Brain


def stale_hits(brain: Brain, hits: Iterable[Hit]) -> tuple[set[int], set[str]]:
    """The ids of hits whose file differs from the ledger (size or mtime) or is gone, and
    those files. Names that are not file paths (stdin's `-`, `llm:...`) are never stale."""
    hits = list(hits)
    # (a file stored under a scrubbed name cannot be found on disk by it: never called stale)
    paths = sorted({h.path for h in hits if h.path and os.path.isabs(h.path) and SCRUBBED_NAME not in h.path})
    if not paths:
        return set(), set()
    marks = ",".join("?" * len(paths))
    ledger = {path: (size, mtime_ns) for path, size, mtime_ns in brain.conn.execute(
        f"SELECT path, size, mtime_ns FROM files WHERE path IN ({marks})", paths)}
    changed: set[str] = set()
    for path in paths:
        size, mtime_ns = ledger.get(path, (None, None))
        if size is None:  # no stat recorded (a brain from the seed script): nothing to compare
            continue
        try:
            st = os.stat(path)
        except OSError:
            changed.add(path)
            continue
        if st.st_size != size or st.st_mtime_ns != mtime_ns:
            changed.add(path)
    return {h.id for h in hits if h.path in changed}, changed


def stale_note(files: int) -> str:
    if files == 1:
        return "1 of these notes changed since it was ingested: run llm brain update"
    return f"{files} of these notes changed since they were ingested: run llm brain update"
