"""`llm brain watch`: keep the brain up to date while it runs.

The OS reports only what happens while we listen, so the caller first reconciles every root in
full (`SecondBrain.update`); then `follow` turns file-system events into debounced batches of
paths (watchfiles, the `[watch]` extra, imported by this module only) and reconciles each path
against the disk (`roots.reconcile`): event order, atomic saves and renames do not matter,
since only what is on the disk when the batch runs counts. Embedding runs after each batch, in
the same thread: simple, and Ctrl-C between two batches leaves nothing half-done (every file
is staged in one transaction, and the embedding loop is resumable).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterator

import watchfiles

from . import roots as roots_mod
from . import sources
from .ingest import IngestReport

if TYPE_CHECKING:
    from .api import SecondBrain

DEBOUNCE_MS = 1600  # the longest a burst is gathered into one batch
STEP_MS = 50  # a batch is let go after this much quiet
# Editor droppings beyond watchfiles' defaults (.swp, ~, .#*): Emacs autosaves (#note#),
# Vim's write test (4913), partial downloads and atomic-save temporaries that tools leave.
NOISE_PATTERNS = (r"^#.*#$", r"^4913$", r"\.(tmp|crdownload|part)$", r"^\.goutputstream-")


class Filter(watchfiles.DefaultFilter):
    """watchfiles' defaults plus our noise folders and files, editor droppings, and the brain
    file with its side files (writing the brain must never wake the watcher)."""

    def __init__(self, brain_path: str):
        brain = sources.resolve(brain_path)
        super().__init__(
            ignore_dirs=sorted(set(watchfiles.DefaultFilter.ignore_dirs) | sources.NOISE_DIRS),
            ignore_entity_patterns=(*watchfiles.DefaultFilter.ignore_entity_patterns, *NOISE_PATTERNS,
                                    *(f"^{re.escape(n)}$" for n in sources.NOISE_FILES)),
        )
        self.brain_files = {brain, *(f"{brain}{s}" for s in ("-wal", "-shm", "-journal"))}

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        return path not in self.brain_files and super().__call__(change, path)


@dataclass
class Batch:
    """What one batch of changed paths did."""

    at: datetime
    paths: int
    report: IngestReport
    embedding: dict | None
    missing: list[str]

    def line(self) -> str:
        r = self.report
        text = (f"{self.at:%H:%M:%S} {self.paths} changed: {r.ingested} ingested, "
                f"{r.unchanged} unchanged, {r.files_removed} removed; chunks "
                f"{r.chunks_added} added, {r.chunks_removed} removed")
        if sum(r.skipped.values()):
            text += f"; {sum(r.skipped.values())} skipped"
        embedding = self.embedding or {}
        if embedding.get("error"):
            text += f"; embedding pending ({embedding['error'].rstrip('.')})"
        elif embedding.get("model"):
            text += f"; embedded {embedding['embedded'] + embedding['reused']}"
        for root in self.missing:
            text += f"; root missing, chunks kept: {root}"
        return text


def follow(sb: "SecondBrain", chosen: list[roots_mod.Root], *, embed: bool = True,
           debounce_ms: int = DEBOUNCE_MS) -> Iterator[Batch]:
    """Yield one Batch per debounced burst of changes under `chosen` roots, until Ctrl-C
    (KeyboardInterrupt reaches the caller between or inside batches; either way every file
    is whole or untouched). Roots that are missing when it starts are not watched."""
    watched = [r for r in chosen if r.exists]
    if not watched:
        raise ValueError("nothing to watch: every root is missing")
    known = roots_mod.all_roots(sb.brain)
    flt = Filter(str(sb.brain.path))
    for changes in watchfiles.watch(*(r.path for r in watched), watch_filter=flt,
                                    debounce=debounce_ms, step=STEP_MS, raise_interrupt=True):
        paths = {path for _, path in changes}
        report, touched = roots_mod.reconcile(sb.brain, sb.settings, paths, known)
        roots_mod.mark_updated(sb.brain, touched)
        embedding = sb.embed_pending_quietly() if embed else None
        missing = [r.path for r in watched if not os.path.exists(r.path)]
        yield Batch(datetime.now(), len(paths), report, embedding, missing)
