"""The embedding backlog: pick `embedded = 0`, batch, normalise, validate, write vectors,
quarantine what cannot be embedded.

Invariants, kept by writing whole batches in short transactions (kill the process at any
moment and the next run continues where it stopped):

- a chunk has `embedded = 1` exactly when `vec_chunks` holds one vector for it;
- no vector exists without its chunk (`store._delete_ids` removes both together);
- a chunk that cannot be embedded (refused by the server, wrong dimension, not finite) has
  `embedded = -1` and a short `embed_error` (never its text), and later runs skip it.

The brain remembers the model fingerprint (meta `embed_model`, `embed_dim`, `doc_prefix`,
`query_prefix`) the first time it embeds; another model is refused until `reembed`.
The vector table is created when the model's first answer tells us its dimension.
"""
from __future__ import annotations

import contextlib
import json
import queue
import re
import struct
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .config import Settings
from .ollama import (
    Embedder,
    EmbedError,
    InputRejected,
    ServerError,
    get_embedder,
    normalise,
)
from .store import DB_ERRORS, Brain

DEFAULT_BATCH_SIZE = 32
PROBE_TEXT = "secondbrain: what dimension are your vectors?"
META_KEYS = ("embed_model", "embed_dim", "doc_prefix", "query_prefix")
REEMBED_KEY = "reembed_target"
AHEAD = 1  # batches queued beyond those the server is working on, while one is written
READ_AHEAD = 8  # batches of pending rows read per SELECT
GROUP_SECONDS = 0.25  # longest a group of batches holds the write lock


class FingerprintMismatch(EmbedError):
    """The brain's vectors come from another model (or prefix, or dimension)."""


@dataclass
class EmbedReport:
    embedded: int = 0  # chunks given a vector the model made in this run
    reused: int = 0  # chunks given a vector copied from a chunk with the same text
    failed: int = 0  # chunks quarantined (embedded = -1) in this run
    remaining: int = 0  # chunks still pending (embedded = 0) after the run
    quarantined: int = 0  # all chunks with embedded = -1 after the run
    reset: int = 0  # failed chunks put back in the queue by --retry-failed
    model: str = ""
    dim: int | None = None
    reembed: bool = False

    def as_dict(self) -> dict:
        return {
            "embedded": self.embedded, "reused": self.reused, "failed": self.failed,
            "remaining": self.remaining, "quarantined": self.quarantined, "reset": self.reset,
            "model": self.model, "dim": self.dim, "reembed": self.reembed,
        }

    def summary(self) -> str:
        verb = "re-embedded" if self.reembed else "embedded"
        parts = [f"{verb} {self.embedded + self.reused} chunks ({self.reused} reused)"]
        parts.append(f"{self.failed} failed")
        parts.append(f"{self.remaining} remaining")
        if self.quarantined > self.failed:
            parts.append(f"{self.quarantined} quarantined in all (retry: llm brain embed --retry-failed)")
        elif self.failed:
            parts.append("retry them with: llm brain embed --retry-failed")
        where = f"{self.model}, {self.dim} dimensions" if self.dim else self.model
        return "; ".join(parts) + (f" — {where}" if where else "")


# ---------------------------------------------------------------------------------------------
# Fingerprint.


def vec_table_dim(brain: Brain) -> int | None:
    """The dimension `vec_chunks` was created with, or None when there is no table."""
    row = brain.conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'vec_chunks' AND type = 'table'"
    ).fetchone()
    if not row or not row[0]:
        return None
    match = re.search(r"float\[(\d+)\]", row[0])
    return int(match.group(1)) if match else None


def read_fingerprint(brain: Brain) -> dict | None:
    """The recorded fingerprint, or None when the brain has never been embedded."""
    model = brain.get_meta("embed_model")
    if model is None:
        return None
    dim = brain.get_meta("embed_dim")
    return {
        "embed_model": model,
        "embed_dim": int(dim) if dim else None,
        "doc_prefix": brain.get_meta("doc_prefix") or "",
        "query_prefix": brain.get_meta("query_prefix") or "",
    }


def _describe(model: str, doc_prefix: str, with_prefix: bool) -> str:
    return f"{model} (document prefix {doc_prefix!r})" if with_prefix else model


def check_fingerprint(brain: Brain, embedder: Embedder) -> None:
    """Raise FingerprintMismatch when the brain's vectors were made another way. Recall calls
    this too: a query embedded with another model than the chunks finds nonsense."""
    stored = read_fingerprint(brain)
    if stored is None:
        return
    same_model = stored["embed_model"] == embedder.name
    if same_model and stored["doc_prefix"] == embedder.doc_prefix:
        return
    old = _describe(stored["embed_model"], stored["doc_prefix"], same_model)
    new = _describe(embedder.name, embedder.doc_prefix, same_model)
    raise FingerprintMismatch(
        f"this brain was embedded with {old} but the current model is {new} — "
        f"rebuild every vector with: llm brain reembed (or set SECONDBRAIN_EMBED_MODEL back)"
    )


def _mismatch_dim(embedder: Embedder, got: int, have: int) -> FingerprintMismatch:
    return FingerprintMismatch(
        f"{embedder.name} now returns {got}-dimension vectors but this brain holds {have} — "
        f"rebuild every vector with: llm brain reembed"
    )


# ---------------------------------------------------------------------------------------------
# The backlog.


def pending_count(brain: Brain) -> int:
    return brain.conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0]


def embed_pending(
    brain: Brain,
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    retry_failed: bool = False,
    progress: bool = False,
    reembed: bool = False,
    on_batch: Callable[[int], None] | None = None,
) -> EmbedReport:
    """Embed every pending chunk of `brain`; returns what happened.

    `embedder` defaults to `get_embedder(settings)`. `progress=True` shows a bar on stderr
    when stderr is a terminal. Raises ollama.OllamaUnreachable, ModelMissing, ServerError,
    FingerprintMismatch (all EmbedError, one-line messages); chunks not yet written stay
    pending, so a later run continues.
    """
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    own = embedder is None
    if embedder is None:
        if settings is None:
            raise ValueError("embed_pending needs settings or an embedder")
        embedder = get_embedder(settings)
    try:
        return _Backlog(brain, embedder, batch_size, progress, on_batch).run(retry_failed, reembed)
    finally:
        if own:
            embedder.close()


def reembed_all(brain: Brain, settings: Settings | None = None, **kwargs) -> EmbedReport:
    """Rebuild every vector with the current model. Crash safe: the first transaction drops
    the vectors, puts every chunk back in the queue and records the target; a rerun after a
    kill continues the backlog instead of starting over."""
    return embed_pending(brain, settings, reembed=True, **kwargs)


class _Backlog:
    def __init__(self, brain: Brain, embedder: Embedder, batch_size: int, progress: bool,
                 on_batch: Callable[[int], None] | None):
        self.brain = brain
        self.conn = brain.conn
        self.embedder = embedder
        self.batch_size = batch_size
        self.progress = progress
        self.on_batch = on_batch
        self.dim: int | None = None
        self.probed_dim: int | None = None
        self.report = EmbedReport(model=embedder.name)
        # a caller's own embedder may not say; one request at a time is always safe
        self.threads = max(1, int(getattr(embedder, "concurrency", 1)))
        self.depth = self.threads + AHEAD  # batches in flight at most
        # Answers of the batches written since the current page of pending rows was read,
        # and of those in flight then: twins the page's SQL lookup could not see yet.
        self._recent: deque[dict[str, bytes | str]] = deque(maxlen=READ_AHEAD + self.depth)

    # -- the run -------------------------------------------------------------------------------

    def run(self, retry_failed: bool, reembed: bool) -> EmbedReport:
        report = self.report
        report.reembed = reembed
        if retry_failed:
            with self.brain.write():
                report.reset = self.conn.execute(
                    "UPDATE chunks SET embedded = 0, embed_error = NULL WHERE embedded = -1"
                ).rowcount
        # What the vectors depend on (the query prefix does not change them).
        target = json.dumps({"embed_model": self.embedder.name, "doc_prefix": self.embedder.doc_prefix},
                            sort_keys=True)
        if reembed:
            self._start_reembed(target)
        check_fingerprint(self.brain, self.embedder)
        if read_fingerprint(self.brain) is not None:
            self._record_query_prefix()
        total = pending_count(self.brain)
        if total:
            self._prepare_table()
            self._drain(total)
        report.dim = self.dim or vec_table_dim(self.brain)
        report.remaining = pending_count(self.brain)
        report.quarantined = self.conn.execute(
            "SELECT count(*) FROM chunks WHERE embedded = -1"
        ).fetchone()[0]
        if report.remaining == 0 and self.brain.get_meta(REEMBED_KEY) is not None:
            with self.brain.write():
                self.brain.set_meta(REEMBED_KEY, None)
        return report

    def _start_reembed(self, target: str) -> None:
        stored = read_fingerprint(self.brain)
        resuming = self.brain.get_meta(REEMBED_KEY) == target and (
            stored is None
            or (stored["embed_model"] == self.embedder.name
                and stored["doc_prefix"] == self.embedder.doc_prefix)
        )
        if resuming:
            return
        # Ask the model first: an unreachable server must not cost the user their vectors.
        self._probe()
        with self.brain.write():
            self.conn.execute("DROP TABLE IF EXISTS vec_chunks")
            self.conn.execute(
                "UPDATE chunks SET embedded = 0, embed_error = NULL WHERE embedded != 0 OR embed_error IS NOT NULL"
            )
            for key in META_KEYS:
                self.brain.set_meta(key, None)
            self.brain.set_meta(REEMBED_KEY, target)

    def _probe(self) -> int:
        """Ask the model for one vector to learn its dimension (once per run)."""
        if self.probed_dim is None:
            vectors = self.embedder.embed_documents([PROBE_TEXT])
            try:
                self.probed_dim = len(normalise(vectors[0]))
            except (ValueError, IndexError) as e:
                raise ServerError(f"{self.embedder.name} returned an unusable vector: {e}") from None
        return self.probed_dim

    def _prepare_table(self) -> None:
        """Know the dimension; create the vector table and record the fingerprint if new."""
        table_dim = vec_table_dim(self.brain)
        stored = read_fingerprint(self.brain)
        if table_dim is not None and stored is not None and stored["embed_dim"] == table_dim:
            self.dim = table_dim
            return
        dim = self._probe()
        if table_dim is not None and table_dim != dim:
            # A table without a recorded fingerprint (a brain from the seed script), or one
            # whose record disagrees: its vectors cannot be mixed with this model's.
            raise _mismatch_dim(self.embedder, dim, table_dim)
        fp = self.embedder.fingerprint()
        with self.brain.write():
            if table_dim is None:
                self.conn.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_chunks USING vec0(embedding float[{dim}])"
                )
            self.brain.set_meta("embed_model", fp["embed_model"])
            self.brain.set_meta("embed_dim", str(dim))
            self.brain.set_meta("doc_prefix", fp["doc_prefix"])
            self.brain.set_meta("query_prefix", fp["query_prefix"])
        self.dim = dim

    def _record_query_prefix(self) -> None:
        """The query prefix does not change stored vectors; keep the record current."""
        if (self.brain.get_meta("query_prefix") or "") != self.embedder.query_prefix:
            with self.brain.write():
                self.brain.set_meta("query_prefix", self.embedder.query_prefix)

    def _drain(self, total: int) -> None:
        bar = None
        if self.progress and sys.stderr.isatty():
            import click

            bar = click.progressbar(length=total, label="embedding", file=sys.stderr)
            bar.__enter__()
        # vec0 keeps vectors in blobs of 1,024; a page cache that holds one keeps each
        # batch's write from re-reading it (about 4x faster on 768 dimensions).
        # Checkpointing less often saves most of the fsyncs of a long run; the WAL is folded
        # back when the brain closes.
        cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        autocheckpoint = self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        if -65536 < cache < 0 or 0 < cache < 16384:
            self.conn.execute("PRAGMA cache_size = -65536")
        if 0 < autocheckpoint < 8192:
            self.conn.execute("PRAGMA wal_autocheckpoint = 8192")
        try:
            self._pipeline(bar)
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(cache)}")
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {int(autocheckpoint)}")
            if bar is not None:
                bar.__exit__(None, None, None)

    def _pipeline(self, bar) -> None:
        """Overlap the server and SQLite: worker threads embed the next batches while this
        thread (the only one that touches the connection) writes finished ones, in order.

        Finished batches share one transaction while the next batch is already back; the
        transaction commits before this thread waits for the server (or after GROUP_SECONDS),
        so the write lock is never held across a network wait and a kill loses at most the
        batches of one short group."""
        worker = _Worker(self.threads)
        group = _WriteGroup(self.brain)
        in_flight: deque[_Job] = deque()
        batches = self._pending_batches()
        try:
            while True:
                rows = next(batches, None)
                if rows is not None:
                    in_flight.append(self._prepare(rows, in_flight, worker))
                    if len(in_flight) < self.depth:
                        continue
                if not in_flight:
                    break
                job = in_flight.popleft()
                if not job.done():
                    group.commit()  # never hold the write lock while the server works
                self._finish(job, group)
                if bar is not None:
                    bar.update(len(job.rows))
                if self.on_batch is not None:
                    self.on_batch(len(job.rows))
            group.commit()
        except BaseException:
            group.close_after_error()
            raise
        finally:
            worker.stop()

    def _pending_batches(self) -> Iterator[list[tuple[int, str, str, int | None]]]:
        """Pending chunks in id order, batch by batch, read a few batches at a time (as one
        JSON row: see `_write`), each with the id of an embedded chunk of the same text."""
        last_id = 0
        while True:
            (page,) = self.conn.execute(
                "SELECT json_group_array(json_array(id, sha, text, "
                # `+embedded`: look up by sha; the planner would otherwise walk every embedded row.
                "  (SELECT min(t.id) FROM chunks t WHERE t.sha = p.sha AND +t.embedded = 1))) "
                "FROM (SELECT id, sha, text FROM chunks WHERE embedded = 0 AND id > ? ORDER BY id LIMIT ?) p",
                (last_id, self.batch_size * READ_AHEAD),
            ).fetchone()
            rows = sorted(tuple(row) for row in json.loads(page))
            if not rows:
                return
            last_id = rows[-1][0]
            for start in range(0, len(rows), self.batch_size):
                yield rows[start:start + self.batch_size]

    # -- one batch -----------------------------------------------------------------------------

    def _prepare(self, rows: list[tuple[int, str, str, int | None]], in_flight: "deque[_Job]",
                 worker: "_Worker") -> "_Job":
        """Find what can be reused, queue the rest for the server. `rows` carry the id of an
        embedded twin (same text) when the page was read."""
        texts: dict[str, str] = {}
        twins: dict[int, str] = {}
        for _cid, sha, text, twin in rows:
            texts.setdefault(sha, text)
            if twin is not None:
                twins.setdefault(twin, sha)
        job = _Job([(cid, sha, text) for cid, sha, text, _twin in rows])
        job.results = self._vectors_of(twins) if twins else {}
        for sha in texts:
            if sha not in job.results and isinstance(res := self._answered(sha), bytes):
                job.results[sha] = res
        job.reused = set(job.results)
        # A text an earlier batch is embedding right now: take its answer, do not ask twice.
        asked = set().union(*(j.todo_shas for j in in_flight))
        job.deferred = {sha for sha in texts if sha not in job.results and sha in asked}
        todo = [(sha, t) for sha, t in texts.items() if sha not in job.results and sha not in job.deferred]
        job.todo_shas = {sha for sha, _t in todo}
        if todo:
            worker.submit(job, lambda: self._embed_isolating(todo))
        return job

    def _finish(self, job: "_Job", group: "_WriteGroup") -> None:
        results = job.wait()  # re-raises what the worker raised
        for sha in job.deferred:
            res = self._answered(sha)
            results[sha] = res if res is not None else "its twin in an earlier batch was not embedded"
            if isinstance(res, bytes):
                job.reused.add(sha)
        with group.batch():
            ok, bad, live = self._write(job.rows, results, job.reused)
        self._count(ok, bad, live)
        self._recent.append(results)

    def _answered(self, sha: str) -> bytes | str | None:
        for results in reversed(self._recent):
            if sha in results:
                return results[sha]
        return None

    def _vectors_of(self, twins: dict[int, str]) -> dict[str, bytes]:
        """The vectors of embedded twins (chunk id -> sha), by sha."""
        marks = ",".join("?" * len(twins))
        return {
            twins[rowid]: bytes(blob)
            for rowid, blob in self.conn.execute(
                f"SELECT rowid, embedding FROM vec_chunks WHERE rowid IN ({marks})", list(twins)
            )
        }

    def _embed_isolating(self, items: list[tuple[str, str]]) -> dict[str, bytes | str]:
        """Embed `items` (sha, text); a refused request is split in halves until the refused
        input stands alone and is marked failed, so one bad chunk never stops the batch."""
        try:
            vectors = self.embedder.embed_documents([text for _sha, text in items])
        except InputRejected as e:
            if len(items) == 1:
                return {items[0][0]: _safe_reason(f"rejected by the server: {e.reason}", items[0][1])}
            mid = len(items) // 2
            out = self._embed_isolating(items[:mid])
            out.update(self._embed_isolating(items[mid:]))
            return out
        return dict(zip((sha for sha, _text in items), self._validate(vectors)))

    def _validate(self, vectors: list) -> list[bytes | str]:
        """Each vector as float32 bytes of unit length, or the reason it is unusable. Runs in
        the worker thread: the model's values are packed once (struct is the cheapest way from
        a list of floats to bytes), the norms are taken in one numpy call, and only a vector
        that is not unit length already is normalised (in float64)."""
        fmt = f"{self.dim}f"
        out: list[bytes | str] = []
        packed: list[int] = []
        for vector in vectors:
            if not isinstance(vector, (list, tuple)):
                out.append("vector holds something that is not a number")
                continue
            if len(vector) != self.dim:
                # One odd vector is that chunk's problem; the model changing size is not.
                if self._probe() != self.dim:
                    raise _mismatch_dim(self.embedder, self.probed_dim, self.dim)
                out.append(f"wrong dimension: got {len(vector)}, expected {self.dim}")
                continue
            try:
                out.append(struct.pack(fmt, *vector))
            except struct.error:
                out.append("vector holds something that is not a number")
                continue
            except OverflowError:
                out.append("vector is not finite (NaN or infinity)")
                continue
            packed.append(len(out) - 1)
        if not packed:
            return out
        matrix = np.frombuffer(b"".join(out[i] for i in packed), dtype=np.float32)
        wide = matrix.reshape(len(packed), self.dim).astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
        for row in np.flatnonzero(~(np.abs(norms - 1.0) < 1e-6)):
            i, norm = packed[row], norms[row]
            if not np.isfinite(norm):
                out[i] = "vector is not finite (NaN or infinity)"
            elif norm == 0.0:
                out[i] = "vector is all zeros"
            else:
                out[i] = (wide[row] / norm).astype(np.float32).tobytes()
        return out

    def _write(self, rows, results: dict[str, bytes | str], reused_shas: set[str]):
        """Write one batch; the caller holds the transaction.

        A handful of statements whose answers come back in one row each, never a statement or
        a row per chunk: each call into SQLite gives up the GIL and must win it back from the
        worker threads, which hold it for whole JSON decodes."""
        ids = json.dumps([cid for cid, _sha, _text in rows])
        # Only chunks still pending with the same text: an ingest or forget may have changed
        # them while we waited for the server. A pending chunk that has a vector comes only
        # from a brain the seed script wrote.
        live_json, stale_json = self.conn.execute(
            "SELECT (SELECT json_group_object(id, sha) FROM chunks "
            "        WHERE embedded = 0 AND id IN (SELECT value FROM json_each(?1))), "
            "(SELECT json_group_array(rowid) FROM vec_chunks_rowids "
            "        WHERE rowid IN (SELECT value FROM json_each(?1)))",
            (ids,),
        ).fetchone()
        live = {int(cid): sha for cid, sha in json.loads(live_json).items()}
        ok, bad = [], []
        for cid, sha, _text in rows:
            if live.get(cid) != sha:
                continue
            res = results[sha]
            if isinstance(res, bytes):
                ok.append((cid, res, sha in reused_shas))
            else:
                bad.append((res, cid))
        if ok:
            done = json.dumps([cid for cid, _b, _r in ok])
            for cid in set(json.loads(stale_json)) & set(live):
                self.conn.execute("DELETE FROM vec_chunks WHERE rowid = ?", (cid,))
            self.conn.execute(
                "INSERT INTO vec_chunks(rowid, embedding) "
                "SELECT value, substr(?2, key * ?3 + 1, ?3) FROM json_each(?1)",
                (done, b"".join(blob for _cid, blob, _r in ok), len(ok[0][1])),
            )
        if ok or bad:
            marks = [[cid, 1, None] for cid, _b, _r in ok] + [[cid, -1, why] for why, cid in bad]
            self.conn.execute(
                "UPDATE chunks SET embedded = json_extract(j.value, '$[1]'), "
                "embed_error = json_extract(j.value, '$[2]') "
                "FROM json_each(?) AS j WHERE chunks.id = json_extract(j.value, '$[0]')",
                (json.dumps(marks),),
            )
        return ok, bad, live

    def _count(self, ok, bad, live) -> None:
        # Within one batch, the first chunk of a text counts as embedded, its twins as reused.
        first = Counter()
        for cid, _blob, was_reused in ok:
            sha = live[cid]
            if was_reused or first[sha]:
                self.report.reused += 1
            else:
                self.report.embedded += 1
            first[sha] += 1
        self.report.failed += len(bad)


class _Job:
    """One batch: its rows, the reusable vectors, and the answer the worker fills in."""

    def __init__(self, rows):
        self.rows = rows
        self.results: dict[str, bytes | str] = {}
        self.reused: set[str] = set()
        self.deferred: set[str] = set()
        self.todo_shas: set[str] = set()
        self._finished: threading.Event | None = None
        self._out: dict | None = None
        self._error: BaseException | None = None

    def run(self, fn: Callable[[], dict]) -> None:
        """Called in the worker thread."""
        try:
            self._out = fn()
        except BaseException as e:  # handed to the main thread by wait()
            self._error = e
        finally:
            self._finished.set()

    def done(self) -> bool:
        return self._finished is None or self._finished.is_set()

    def wait(self) -> dict[str, bytes | str]:
        if self._finished is not None:
            self._finished.wait()
            if self._error is not None:
                raise self._error
            self.results.update(self._out or {})
        return self.results


class _Worker:
    """Daemon threads that run the batches' server calls (daemons, so Ctrl-C never waits for
    a slow server). `threads` follows the embedder's `concurrency`."""

    def __init__(self, threads: int = 1):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._loop, name="secondbrain-embed", daemon=True)
            for _ in range(max(1, threads))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, job: _Job, fn: Callable[[], dict]) -> None:
        job._finished = threading.Event()
        self._queue.put((job, fn))

    def stop(self) -> None:
        for _ in self._threads:
            self._queue.put(None)

    def _loop(self) -> None:
        while (item := self._queue.get()) is not None:
            job, fn = item
            job.run(fn)


class _WriteGroup:
    """Consecutive batches in one transaction. A batch that fails to write takes the whole
    group back with it (those chunks stay pending); an interruption between batches keeps
    the batches already written."""

    def __init__(self, brain: Brain):
        self.conn = brain.conn
        self.started: float | None = None
        self.clean = True  # no batch is half-written in the open transaction

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        if self.started is not None and time.monotonic() - self.started > GROUP_SECONDS:
            self.commit()
        if self.started is None:
            self.conn.execute("BEGIN IMMEDIATE")
            self.started = time.monotonic()
        self.clean = False
        yield
        self.clean = True

    def commit(self) -> None:
        if self.started is not None:
            self.started = None
            self.conn.execute("COMMIT")

    def close_after_error(self) -> None:
        """Keep the whole batches written so far; roll back instead when a batch may be
        half-written or the commit fails."""
        if self.started is None:
            return
        self.started = None
        if self.clean:
            with contextlib.suppress(*DB_ERRORS):
                self.conn.execute("COMMIT")
                return
        with contextlib.suppress(*DB_ERRORS):
            self.conn.execute("ROLLBACK")


def _safe_reason(reason: str, text: str) -> str:
    """A failure reason is kept in the brain: make sure it never carries the chunk's text."""
    probe = text.strip()[:24]
    if len(probe) >= 8 and probe in reason:
        return "rejected by the server"
    return reason[:200]
