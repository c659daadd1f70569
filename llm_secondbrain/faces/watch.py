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
import queue
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterator

import watchfiles

from ..ingest import IngestReport, sources, upkeep
from ..ingest import roots as roots_mod

if TYPE_CHECKING:
    from ..api import SecondBrain

DEBOUNCE_MS = 1600  # the longest a burst is gathered into one batch
STEP_MS = 50  # a batch is let go after this much quiet
# Editor droppings beyond watchfiles' defaults (.swp, ~, .#*): Emacs autosaves (#note#),
# Vim's write test (4913), partial downloads and atomic-save temporaries that tools leave.
NOISE_PATTERNS = (r"^#.*#$", r"^4913$", r"\.(tmp|crdownload|part)$", r"^\.goutputstream-")


class Filter(watchfiles.DefaultFilter):
    """watchfiles' defaults plus our noise folders and files, editor droppings, and the brain
    file with its side files (writing the brain must never wake the watcher)."""

    def __init__(self, brain_path: str, *, only: set[str] | None = None):
        brain = sources.resolve(brain_path)
        super().__init__(
            ignore_dirs=sorted(set(watchfiles.DefaultFilter.ignore_dirs) | sources.NOISE_DIRS),
            ignore_entity_patterns=(*watchfiles.DefaultFilter.ignore_entity_patterns, *NOISE_PATTERNS,
                                    *(f"^{re.escape(n)}$" for n in sources.NOISE_FILES)),
        )
        self.brain_files = {brain, *(f"{brain}{s}" for s in ("-wal", "-shm", "-journal"))}
        self.only = only  # a file root's folder: only the root itself counts

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        if self.only is not None and path not in self.only:
            return False
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


class Watch:
    """Watchers on `chosen` roots, armed on entering (before the caller's full reconcile, so
    nothing that changes meanwhile is missed) and stopped on leaving; `batches()` yields one
    Batch per debounced burst of changes until Ctrl-C (KeyboardInterrupt reaches the caller
    between or inside batches; either way every file is whole or untouched). Roots missing
    at the start are not watched.

    Folders are watched recursively; a file root through its folder, not recursively, since
    an atomic save replaces the file and a watch on the file itself would end with it. Each
    runs in a thread feeding one queue; a watcher that fails (the OS's watch limit, a folder
    that became unreadable) ends the command with its reason instead of freezing silently."""

    def __init__(self, sb: "SecondBrain", chosen: list[roots_mod.Root], *, embed: bool = True,
                 debounce_ms: int = DEBOUNCE_MS):
        self.sb, self.embed, self.debounce_ms = sb, embed, debounce_ms
        self.watched = [r for r in chosen if r.exists]
        if not self.watched:
            raise ValueError("nothing to watch: every root is missing")
        self.stop = threading.Event()
        self.found: queue.Queue = queue.Queue()

    def __enter__(self) -> "Watch":
        brain = str(self.sb.brain.path)
        files = {r.path for r in self.watched if not r.is_folder}
        groups = [(sorted(r.path for r in self.watched if r.is_folder), Filter(brain), True),
                  (sorted({os.path.dirname(p) for p in files}), Filter(brain, only=files), False)]
        for paths, flt, recursive in groups:
            if paths:
                threading.Thread(target=self._listen, args=(paths, flt, recursive), daemon=True,
                                 name="secondbrain-watch").start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()

    def _listen(self, paths: list[str], flt: Filter, recursive: bool) -> None:
        try:
            for changes in watchfiles.watch(*paths, watch_filter=flt, debounce=self.debounce_ms,
                                            step=STEP_MS, stop_event=self.stop,
                                            recursive=recursive, raise_interrupt=False):
                self.found.put({path for _, path in changes})
        except Exception as e:  # noqa: BLE001 - handed to the main thread, which says why
            self.found.put(e)

    def batches(self) -> Iterator[Batch]:
        while True:
            paths = _take(self.found)
            while not self.found.empty():
                paths |= _take(self.found)
            known = roots_mod.all_roots(self.sb.brain)  # a forget meanwhile is followed from this batch on
            report, touched = upkeep.reconcile(self.sb.brain, self.sb.model_settings(), paths, known)
            roots_mod.mark_updated(self.sb.brain, touched)
            if self.sb.brain.purge_search_index():  # what a batch replaced leaves no trace, watch running or not:
                self.sb.brain.checkpoint(say=False)  # not in the -wal either (the next batch tries again)
            embedding = self.sb.embed_pending_quietly() if self.embed else None
            missing = [r.path for r in self.watched if not os.path.exists(r.path)]
            yield Batch(datetime.now(), len(paths), report, embedding, missing)


def _take(found: queue.Queue) -> set[str]:
    item = found.get()
    if isinstance(item, Exception):
        raise WatchError(f"watching stopped: {item}")
    return item


class WatchError(Exception):
    """The OS stopped reporting changes; said in one line rather than left to freeze."""
