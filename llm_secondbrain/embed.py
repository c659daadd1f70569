"""The embedding backlog: pick `embedded = 0`, batch, normalise, validate, write vectors,
quarantine what cannot be embedded.

Invariants, kept by writing each batch in one short transaction (kill the process at any
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

import json
import re
import sys
import threading
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from .config import Settings
from .ollama import (
    Embedder,
    EmbedError,
    InputRejected,
    ServerError,
    get_embedder,
    normalise,
)
from .store import Brain

DEFAULT_BATCH_SIZE = 32
PROBE_TEXT = "secondbrain: what dimension are your vectors?"
META_KEYS = ("embed_model", "embed_dim", "doc_prefix", "query_prefix")
REEMBED_KEY = "reembed_target"
PIPELINE = True  # embed batch k+1 in a worker thread while batch k is written


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
        self._previous: dict[str, bytes | str] = {}  # the last batch's answers, by sha

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
        """Two stages: while batch k is written (SQLite, in this thread), the server already
        embeds batch k+1 (in a worker thread). The connection is only used from this thread.
        Each batch is written in its own short transaction."""
        last_id = 0
        current: _Job | None = None
        while True:
            rows = self.conn.execute(
                "SELECT id, sha, text FROM chunks WHERE embedded = 0 AND id > ? ORDER BY id LIMIT ?",
                (last_id, self.batch_size),
            ).fetchall()
            upcoming = None
            if rows:
                last_id = rows[-1][0]
                upcoming = self._prepare(rows, current)
            if current is not None:
                self._finish(current)
                if bar is not None:
                    bar.update(len(current.rows))
                if self.on_batch is not None:
                    self.on_batch(len(current.rows))
            if upcoming is None:
                break
            current = upcoming

    # -- one batch -----------------------------------------------------------------------------

    def _prepare(self, rows: list[tuple[int, str, str]], previous: "_Job | None") -> "_Job":
        """Find what can be reused, start embedding the rest in the background."""
        texts: dict[str, str] = {}
        for _cid, sha, text in rows:
            texts.setdefault(sha, text)
        job = _Job(rows)
        job.results = self._reusable(list(texts))
        job.reused = set(job.results)
        in_flight = previous.todo_shas if previous is not None else set()
        # A text the previous batch is embedding right now: take its answer, do not ask twice.
        job.deferred = {sha for sha in texts if sha not in job.results and sha in in_flight}
        todo = [(sha, t) for sha, t in texts.items() if sha not in job.results and sha not in job.deferred]
        job.todo_shas = {sha for sha, _t in todo}
        if todo:
            if PIPELINE:
                job.start(lambda: self._embed_isolating(todo))
            else:
                job.results.update(self._embed_isolating(todo))
        return job

    def _finish(self, job: "_Job") -> None:
        results = job.wait()  # re-raises what the worker raised
        for sha in job.deferred:
            res = self._previous.get(sha, "its twin in the previous batch was not embedded")
            results[sha] = res
            if isinstance(res, bytes):
                job.reused.add(sha)
        with self.brain.write():
            ok, bad, live = self._write(job.rows, results, job.reused)
        self._count(ok, bad, live)
        self._previous = results

    def _reusable(self, shas: list[str]) -> dict[str, bytes]:
        """Vectors of chunks with the same text that are already embedded (same model)."""
        marks = ",".join("?" * len(shas))
        twins = dict(self.conn.execute(
            # `+embedded`: look up by sha; the planner would otherwise walk every embedded row.
            f"SELECT sha, min(id) FROM chunks WHERE sha IN ({marks}) AND +embedded = 1 GROUP BY sha",
            shas,
        ).fetchall())
        if not twins:
            return {}
        by_id = {cid: sha for sha, cid in twins.items()}
        marks = ",".join("?" * len(by_id))
        found = {}
        for rowid, blob in self.conn.execute(
            f"SELECT rowid, embedding FROM vec_chunks WHERE rowid IN ({marks})", list(by_id)
        ):
            found[by_id[rowid]] = bytes(blob)
        return found

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
        return {sha: self._validate(vec) for (sha, _text), vec in zip(items, vectors)}

    def _validate(self, vector) -> bytes | str:
        try:
            unit = normalise(vector)
        except ValueError as e:
            return str(e)
        if len(unit) != self.dim:
            # One odd vector is that chunk's problem; the model changing size is not.
            if self._probe() != self.dim:
                raise _mismatch_dim(self.embedder, self.probed_dim, self.dim)
            return f"wrong dimension: got {len(unit)}, expected {self.dim}"
        try:
            return array("f", unit).tobytes()
        except (TypeError, OverflowError):
            return "vector holds something that is not a number"

    def _write(self, rows, results: dict[str, bytes | str], reused_shas: set[str]):
        """Write one batch; the caller holds the transaction."""
        ids = [cid for cid, _sha, _text in rows]
        marks = ",".join("?" * len(ids))
        # Only chunks still pending with the same text: an ingest or forget may have
        # changed them while we waited for the server.
        live = {
            cid: sha
            for cid, sha in self.conn.execute(
                f"SELECT id, sha FROM chunks WHERE embedded = 0 AND id IN ({marks})", ids
            )
        }
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
            self.conn.executemany(
                "DELETE FROM vec_chunks WHERE rowid = ?", [(cid,) for cid, _b, _r in ok]
            )
            self.conn.executemany(
                "INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                [(cid, blob) for cid, blob, _r in ok],
            )
            self.conn.executemany(
                "UPDATE chunks SET embedded = 1, embed_error = NULL WHERE id = ?",
                [(cid,) for cid, _b, _r in ok],
            )
        if bad:
            self.conn.executemany(
                "UPDATE chunks SET embedded = -1, embed_error = ? WHERE id = ?", bad
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
    """One batch: its rows, the reusable vectors, and the embedding running in a daemon
    thread (a daemon, so Ctrl-C never waits for a slow server)."""

    def __init__(self, rows):
        self.rows = rows
        self.results: dict[str, bytes | str] = {}
        self.reused: set[str] = set()
        self.deferred: set[str] = set()
        self.todo_shas: set[str] = set()
        self._thread: threading.Thread | None = None
        self._out: dict | None = None
        self._error: BaseException | None = None

    def start(self, fn) -> None:
        def run():
            try:
                self._out = fn()
            except BaseException as e:  # handed to the main thread by wait()
                self._error = e

        self._thread = threading.Thread(target=run, name="secondbrain-embed", daemon=True)
        self._thread.start()

    def wait(self) -> dict[str, bytes | str]:
        if self._thread is not None:
            self._thread.join()
            if self._error is not None:
                raise self._error
            self.results.update(self._out or {})
        return self.results


def _safe_reason(reason: str, text: str) -> str:
    """A failure reason is kept in the brain: make sure it never carries the chunk's text."""
    probe = text.strip()[:24]
    if len(probe) >= 8 and probe in reason:
        return "rejected by the server"
    return reason[:200]
