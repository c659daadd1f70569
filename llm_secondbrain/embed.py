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
import itertools
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

from . import cpus
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
READ_AHEAD = 16  # batches of pending rows read per SELECT
IN_FLIGHT = 32  # batches handed to the workers and not yet written, at most
BLOCK = 16  # finished batches the writer waits for before it writes, at most (see _pipeline)
GROUP_SECONDS = 0.25  # longest a group of batches holds the write lock
HOLD_SECONDS = 0.01  # an answer this close is waited for with the transaction open
CHECKPOINT_BYTES = 32 << 20  # WAL written between checkpoints while embedding, at least


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
        self._tally: Counter[str] = Counter()  # rows sent to the writer, by kind
        # a caller's own embedder may not say; one request at a time is always safe
        self.threads = max(1, int(getattr(embedder, "concurrency", 1)))
        # Answers of the latest batches, settled but perhaps not written yet: twins the SQL
        # lookup of a page of pending rows cannot see. One dict for lookups; the deque says
        # which batch each came from, to forget the oldest (they are in the brain by then).
        self._answers: dict[str, bytes | str] = {}
        self._recent: deque[dict[str, bytes | str]] = deque()

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
        # Checkpointing every 32 MB rather than every 1,000 pages saves fsyncs on small pages;
        # the WAL is folded back when the brain closes. The statement journal of each write
        # (which copies every page the write touches) and the writer's temporary tables
        # stay in memory instead of in temporary files.
        cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        temp_store = self.conn.execute("PRAGMA temp_store").fetchone()[0]
        self.conn.execute("PRAGMA temp_store = MEMORY")
        autocheckpoint = self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        if -65536 < cache < 0 or 0 < cache < 16384:
            self.conn.execute("PRAGMA cache_size = -65536")
        pages = CHECKPOINT_BYTES // self.conn.execute("PRAGMA page_size").fetchone()[0]
        if 0 < autocheckpoint < pages:
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {pages}")
        try:
            self._pipeline(bar, total)
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(cache)}")
            self.conn.execute(f"PRAGMA temp_store = {int(temp_store)}")
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {int(autocheckpoint)}")
            if bar is not None:
                bar.__exit__(None, None, None)

    def _pipeline(self, bar, total: int) -> None:
        """Overlap the server and SQLite: worker threads embed the next batches while this
        thread (the only one that touches the connection) writes finished ones, in order.

        Every batch that is back when this thread comes to write is written by one statement
        (see `_write`): each call into SQLite gives up the GIL and must win it back from a
        worker that holds it for a whole JSON decode, so the further this thread falls behind,
        the fewer calls per batch it makes. Consecutive writes share one transaction for at
        most GROUP_SECONDS; it commits before this thread waits on the server longer than
        HOLD_SECONDS, so a kill loses at most one short group and another writer never waits
        long for the lock.

        Waking this thread costs the workers the GIL, so on a long backlog it sleeps until a
        block of batches is back (BLOCK, and at most a sixteenth of the backlog, so progress
        still moves in small steps). The workers and this thread run on separate CPUs
        (see `cpus`)."""
        self._pack = struct.Struct(f"{self.dim}f").pack
        block = max(1, min(BLOCK, total // (self.batch_size * 16)))
        placement = cpus.split()
        worker = _Worker(self.threads, placement[0] if placement else None)
        group = _WriteGroup(self.brain)
        in_flight: deque[_Job] = deque()
        batches = self._pending_batches()

        def fill() -> None:
            while len(in_flight) < IN_FLIGHT and (rows := next(batches, None)) is not None:
                in_flight.append(self._prepare(rows, in_flight, worker))

        try:
            self._create_writer()
            fill()
            with cpus.pinned(placement[1] if placement else None):
                while in_flight:
                    for job in itertools.islice(in_flight, block):
                        if not job.done(min(HOLD_SECONDS, group.time_left())):
                            group.commit()  # do not hold the write lock while the server works
                            job.wait_done()
                    ready, failure = self._take_ready(in_flight)
                    if ready:
                        fill()  # the workers go on with the next batches while these are written
                        with group.batch():
                            self._write(ready)
                        chunks = sum(len(job.rows) for job in ready)
                        if bar is not None:
                            bar.update(chunks)
                        if self.on_batch is not None:
                            self.on_batch(chunks)
                    if failure is not None:
                        raise failure
            group.commit()
        except BaseException:
            group.close_after_error()
            raise
        finally:
            worker.stop()
        self._read_tally()

    def _take_ready(self, in_flight: "deque[_Job]") -> "tuple[list[_Job], Exception | None]":
        """Settle the oldest batch (waiting for it) and every finished one after it, in order.
        A batch whose server call failed ends the list and comes back as the error, so the
        answers before it are still written."""
        ready: list[_Job] = []
        while in_flight and (not ready or in_flight[0].done()):
            try:
                self._settle(in_flight[0])
            except Exception as e:  # what the worker raised: an EmbedError, usually
                return ready, e
            ready.append(in_flight.popleft())
        return ready, None

    def _pending_batches(self) -> Iterator[list[tuple[int, str, str, int | None, int]]]:
        """Pending chunks in id order, batch by batch, read a few batches at a time (as one
        JSON row: see `_write`), each with the id of an embedded chunk of the same text and
        whether it has a vector already (only brains from the seed script have such)."""
        last_id = 0
        while True:
            (page,) = self.conn.execute(
                "SELECT json_group_array(json_array(id, sha, text, "
                # `+embedded`: look up by sha; the planner would otherwise walk every embedded row.
                "  (SELECT min(t.id) FROM chunks t WHERE t.sha = p.sha AND +t.embedded = 1), "
                "  EXISTS (SELECT 1 FROM vec_chunks_rowids r WHERE r.rowid = p.id))) "
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

    def _prepare(self, rows: list[tuple[int, str, str, int | None, int]], in_flight: "deque[_Job]",
                 worker: "_Worker") -> "_Job":
        """Find what can be reused, queue the rest for the server. `rows` carry the id of an
        embedded twin (same text) when the page was read."""
        texts: dict[str, str] = {}
        twins: dict[int, str] = {}
        for _cid, sha, text, twin, _stale in rows:
            texts.setdefault(sha, text)
            if twin is not None:
                twins.setdefault(twin, sha)
        job = _Job([(cid, sha, text) for cid, sha, text, _twin, _stale in rows])
        job.stale = [cid for cid, _sha, _text, _twin, stale in rows if stale]
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

    def _settle(self, job: "_Job") -> None:
        """Complete a finished batch's answers: texts deferred to an earlier batch take its
        answer. Later batches may then take this one's."""
        results = job.wait()  # re-raises what the worker raised
        for sha in job.deferred:
            res = self._answered(sha)
            results[sha] = res if res is not None else "its twin in an earlier batch was not embedded"
            if isinstance(res, bytes):
                job.reused.add(sha)
        self._answers.update(results)
        self._recent.append(results)
        if len(self._recent) > IN_FLIGHT + 2 * READ_AHEAD:
            for sha, res in self._recent.popleft().items():
                if self._answers.get(sha) is res:  # not answered again by a later batch
                    del self._answers[sha]

    def _answered(self, sha: str) -> bytes | str | None:
        return self._answers.get(sha)

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
        pack = self._pack
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
                out.append(pack(*vector))
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

    def _create_writer(self) -> None:
        """The batch writer: a temporary view whose INSTEAD OF trigger writes one chunk's
        answer, so a single INSERT writes every chunk of several batches (see `_write`).

        Only a chunk still pending with the same text is written: an ingest or forget may
        have changed it while we waited for the server. A second trigger notes the chunks
        skipped that way, in the same transaction, so the report counts what was written.
        Temporary objects live in this connection only, never in the brain file."""
        live = "(SELECT sha FROM chunks WHERE id = NEW.id AND embedded = 0) IS NEW.sha"
        self.conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS secondbrain_embed_skipped(kind TEXT)"
        )
        self.conn.execute("DELETE FROM temp.secondbrain_embed_skipped")
        self.conn.execute(
            "CREATE TEMP VIEW IF NOT EXISTS secondbrain_embed_in(id, sha, vector, error, kind) "
            "AS SELECT NULL, NULL, NULL, NULL, NULL"
        )
        self.conn.execute(
            "CREATE TEMP TRIGGER IF NOT EXISTS secondbrain_embed_write "
            f"INSTEAD OF INSERT ON secondbrain_embed_in WHEN {live} "
            "BEGIN "
            "  INSERT INTO vec_chunks(rowid, embedding) SELECT NEW.id, NEW.vector WHERE NEW.vector IS NOT NULL; "
            "  UPDATE chunks SET embedded = iif(NEW.vector IS NULL, -1, 1), embed_error = NEW.error "
            "    WHERE id = NEW.id; "
            "END"
        )
        self.conn.execute(
            "CREATE TEMP TRIGGER IF NOT EXISTS secondbrain_embed_skip "
            f"INSTEAD OF INSERT ON secondbrain_embed_in WHEN NOT {live} "
            "BEGIN INSERT INTO secondbrain_embed_skipped(kind) VALUES (NEW.kind); END"
        )

    def _write(self, jobs: "list[_Job]") -> None:
        """Write the answers of `jobs` with one statement; the caller holds the transaction.
        Rows travel as one JSON array and the vectors as one blob, sliced in SQL."""
        rows, blobs, stale = [], [], []
        for job in jobs:
            results, reused = job.results, job.reused
            stale += job.stale
            first: set[str] = set()
            for cid, sha, _text in job.rows:
                res = results[sha]
                if isinstance(res, bytes):
                    # the first chunk of a text the model embedded in this batch counts as
                    # embedded, the others as reused
                    kind = "reused" if sha in reused or sha in first else "embedded"
                    first.add(sha)
                    rows.append((cid, sha, len(blobs), None, kind))
                    blobs.append(res)
                else:
                    kind = "failed"
                    rows.append((cid, sha, None, res, kind))
                self._tally[kind] += 1
        if stale:
            # A pending chunk's old vector goes, whatever the answer.
            self.conn.execute(
                "DELETE FROM vec_chunks WHERE rowid IN (SELECT id FROM chunks "
                "WHERE id IN (SELECT value FROM json_each(?)) AND embedded = 0)",
                (json.dumps(stale),),
            )
        size = len(blobs[0]) if blobs else 0
        self.conn.execute(
            "INSERT INTO secondbrain_embed_in(id, sha, vector, error, kind) "
            "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), "
            "  iif(json_extract(value, '$[2]') IS NULL, NULL, "
            "      substr(?2, json_extract(value, '$[2]') * ?3 + 1, ?3)), "
            "  json_extract(value, '$[3]'), json_extract(value, '$[4]') "
            "FROM json_each(?1)",
            (json.dumps(rows), b"".join(blobs), size),
        )

    def _read_tally(self) -> None:
        """What was written: what `_write` sent, less what the writer skipped."""
        skipped = dict(self.conn.execute(
            "SELECT kind, count(*) FROM temp.secondbrain_embed_skipped GROUP BY kind"
        ))
        self.report.embedded += self._tally["embedded"] - skipped.get("embedded", 0)
        self.report.reused += self._tally["reused"] - skipped.get("reused", 0)
        self.report.failed += self._tally["failed"] - skipped.get("failed", 0)


class _Job:
    """One batch: its rows, the reusable vectors, and the answer the worker fills in."""

    def __init__(self, rows):
        self.rows = rows
        self.results: dict[str, bytes | str] = {}
        self.reused: set[str] = set()
        self.deferred: set[str] = set()
        self.todo_shas: set[str] = set()
        self.stale: list[int] = []  # chunk ids that have an old vector
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

    def done(self, timeout: float = 0.0) -> bool:
        """Whether the answer is in, waiting up to `timeout` seconds for it."""
        if self._finished is None or self._finished.is_set():
            return True
        return timeout > 0 and self._finished.wait(timeout)

    def wait_done(self) -> None:
        """Wait for the answer without taking it (`wait` re-raises the worker's error)."""
        if self._finished is not None:
            self._finished.wait()

    def wait(self) -> dict[str, bytes | str]:
        if self._finished is not None:
            self._finished.wait()
            if self._error is not None:
                raise self._error
            self.results.update(self._out or {})
        return self.results


class _Worker:
    """Daemon threads that run the batches' server calls (daemons, so Ctrl-C never waits for
    a slow server). `threads` follows the embedder's `concurrency`; `on` is the CPUs they
    keep to (None: wherever the scheduler puts them)."""

    def __init__(self, threads: int = 1, on: cpus.CpuSet | None = None):
        self._cpus = on
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
        cpus.pin(self._cpus)
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
        if self.started is not None and self.time_left() == 0:
            self.commit()
        if self.started is None:
            self.conn.execute("BEGIN IMMEDIATE")
            self.started = time.monotonic()
        self.clean = False
        yield
        self.clean = True

    def time_left(self) -> float:
        """Seconds the open transaction may still stay open (0 when none is open)."""
        if self.started is None:
            return 0.0
        return max(0.0, GROUP_SECONDS - (time.monotonic() - self.started))

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
