"""The embedding backlog: a plain loop that picks `embedded = 0`, batches, normalises,
validates, writes vectors, and quarantines what cannot be embedded.

One request is in flight while the answer before it is written (the model's time dominates:
more machinery buys a few per cent at most). Invariants, kept by writing each batch in one
short transaction (kill the process at any moment and the next run continues where it stopped):

- a chunk has `embedded = 1` exactly when `vec_chunks` holds one vector for it;
- no vector exists without its chunk (`store._delete_ids` removes both together);
- `vec_bits` holds the sign bits of the vectors in `vec_chunks` (store.put_vectors and
  drop_vectors write both in the caller's transaction);
- a chunk that cannot be embedded (refused by the server, wrong dimension, not finite) has
  `embedded = -1` and a short `embed_error` (never its text), and later runs skip it.

The brain remembers the model fingerprint (meta `embed_model`, `embed_dim`, `doc_prefix`,
`query_prefix`) the first time it embeds; another model is refused until `reembed`.
The vector table is created when the model's first answer tells us its dimension.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Callable

from .config import Settings
from .ollama import (
    Embedder,
    EmbedError,
    InputRejected,
    ServerError,
    get_embedder,
    serialize,
)
from .progress import Ticker
from .store import Brain, vectors_table_sql
from .wording import plural

DEFAULT_BATCH_SIZE = 32
PROBE_TEXT = "secondbrain: what dimension are your vectors?"
META_KEYS = ("embed_model", "embed_dim", "doc_prefix", "query_prefix")
REEMBED_KEY = "reembed_target"


class FingerprintMismatch(EmbedError):
    """The brain's vectors come from another model (or prefix, or dimension)."""


class EmbedInterrupted(KeyboardInterrupt):
    """Ctrl-C during embedding, carrying what was done until then: every batch written is
    whole, the rest is still pending for the next run."""

    def __init__(self, report: "EmbedReport"):
        super().__init__("interrupted")
        self.report = report


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
        parts = [f"{verb} {plural(self.embedded + self.reused, 'chunk')} ({self.reused} reused)"]
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
    return brain.vectors_dim()


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

    `embedder` defaults to `get_embedder(settings)`. `progress=True` shows progress on stderr
    (in place on a terminal, a line every few seconds elsewhere); `on_batch(n)` is called after each batch of n chunks is
    written. Raises ollama.OllamaUnreachable, ModelMissing, ServerError, FingerprintMismatch
    (all EmbedError, one-line messages) when the server cannot embed at all; chunks not yet
    written stay pending, so a later run continues. A text the server fails on while it
    answers others is quarantined instead (see `_embed_isolating`).
    """
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    own = embedder is None
    if embedder is None:
        if settings is None:
            raise ValueError("embed_pending needs settings or an embedder")
        embedder = get_embedder(settings)
    every = settings.progress_seconds if settings is not None else 5.0
    backlog = _Backlog(brain, embedder, batch_size, progress and every, on_batch)
    try:
        return backlog.run(retry_failed, reembed)
    except KeyboardInterrupt:
        raise EmbedInterrupted(backlog.counted()) from None
    finally:
        if own:
            embedder.close()


Row = tuple[int, str, str]  # chunk id, text sha, text
Answer = bytes | str  # a vector ready to store, or why there is none


class _Backlog:
    def __init__(self, brain: Brain, embedder: Embedder, batch_size: int, progress: float,
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
        self._build_bits()
        total = pending_count(self.brain)
        if total:
            self._prepare_table()
            self._drain(total)
        self.brain.keep_scale()  # what recall's floor reads its verdict on (store.kept_scale)
        self.counted()
        if report.remaining == 0 and self.brain.get_meta(REEMBED_KEY) is not None:
            with self.brain.write():
                self.brain.set_meta(REEMBED_KEY, None)
        return report

    def counted(self) -> EmbedReport:
        """The report with what the brain holds now: what is still pending, and quarantined."""
        report = self.report
        report.dim = self.dim or vec_table_dim(self.brain)
        report.remaining = pending_count(self.brain)
        report.quarantined = self.conn.execute(
            "SELECT count(*) FROM chunks WHERE embedded = -1"
        ).fetchone()[0]
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
            self.brain.clear_vectors()
            self.conn.execute(
                "UPDATE chunks SET embedded = 0, embed_error = NULL WHERE embedded != 0 OR embed_error IS NOT NULL"
            )
            for key in META_KEYS:
                self.brain.set_meta(key, None)
            self.brain.set_meta(REEMBED_KEY, target)

    def _build_bits(self) -> None:
        """Give vectors stored before the sign-bit index (migration 9) their bits, so recall's
        fast path serves them; a no-op once they are in step (store.Brain.build_bits)."""
        ticker = Ticker("indexing vector bits", every=self.progress) if self.progress else None
        try:
            self.brain.build_bits(
                (lambda done, total: ticker.show(f"{done:,} of {total:,} chunk ids")) if ticker else None)
        finally:
            if ticker is not None:
                ticker.close()

    def _probe(self) -> int:
        """Ask the model for one vector to learn its dimension (once per run)."""
        if self.probed_dim is None:
            vectors = self.embedder.embed_documents([PROBE_TEXT])
            try:
                self.probed_dim = len(serialize(vectors[0])) // 4
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
                self.conn.execute(vectors_table_sql(dim))
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
        """The loop: while batch N's answer is written, batch N+1's request is in flight
        (never more than one), so the server is never idle waiting for SQLite."""
        ticker = Ticker("embedding", every=self.progress) if self.progress else None
        done = 0
        # vec0 keeps vectors in blobs of 1,024 (3 MB at 768 dimensions): a page cache that
        # holds one keeps every batch's insert from reading its blob again (about 3x faster
        # writes). Only this connection's cache, and only for the run.
        cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        if -65536 < cache < 0 or 0 < cache < 16384:
            self.conn.execute("PRAGMA cache_size = -65536")
        try:
            batches = self._batches()
            previous: dict[str, Answer] = {}
            current = self._send(next(batches, None), previous)
            while current is not None:
                rows, known, flight = current
                answers = {**known, **flight.result()}
                previous = answers
                current = self._send(next(batches, None), previous)
                written = self._write(rows, answers, reused=set(known))
                done += written
                if ticker is not None:
                    ticker.show(f"{done:,} of {total:,} chunks")
                if self.on_batch is not None:
                    self.on_batch(written)
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(cache)}")
            if ticker is not None:
                ticker.close()

    def _batches(self) -> Iterator[list[Row]]:
        """Pending chunks in id order, a batch at a time."""
        last_id = 0
        while True:
            rows = self.conn.execute(
                "SELECT id, sha, text FROM chunks WHERE embedded = 0 AND id > ? ORDER BY id LIMIT ?",
                (last_id, self.batch_size),
            ).fetchall()
            if not rows:
                return
            last_id = rows[-1][0]
            yield rows

    def _send(self, rows: list[Row] | None, previous: dict[str, Answer]):
        """Start embedding a batch: what an embedded chunk of the same text (or the batch
        just answered) already has is reused; the rest goes to the server on a thread."""
        if rows is None:
            return None
        texts = dict((sha, text) for _cid, sha, text in rows)
        known = {sha: previous[sha] for sha in texts if isinstance(previous.get(sha), bytes)}
        known.update(self._twins([sha for sha in texts if sha not in known]))
        todo = [(sha, text) for sha, text in texts.items() if sha not in known]
        return rows, known, _InFlight(lambda: self._embed_isolating(todo))

    def _twins(self, shas: list[str]) -> dict[str, bytes]:
        """Vectors of embedded chunks with the same text, by sha."""
        if not shas:
            return {}
        marks = ",".join("?" * len(shas))
        owners = dict(self.conn.execute(
            f"SELECT min(id), sha FROM chunks WHERE sha IN ({marks}) AND embedded = 1 GROUP BY sha",
            shas).fetchall())
        if not owners:
            return {}
        return {owners[rowid]: bytes(blob) for rowid, blob in self.conn.execute(
            "SELECT v.rowid, v.embedding FROM json_each(?) j CROSS JOIN vec_chunks v ON v.rowid = j.value",
            (json.dumps(list(owners)),))}

    # -- one batch -----------------------------------------------------------------------------

    def _embed_isolating(self, items: list[tuple[str, str]]) -> dict[str, Answer]:
        """Embed `items` (sha, text). A request the server refuses, or keeps failing on while
        it answers others, is split in halves until the text it fails on stands alone; that
        text is quarantined with the server's reason, so one bad chunk never blocks the
        backlog. Only a server that fails every request stops the run."""
        if not items:
            return {}
        try:
            vectors = self.embedder.embed_documents([text for _sha, text in items])
        except InputRejected as e:
            reason = f"rejected by the server: {e.reason}"
        except ServerError as e:
            if not self._server_answers():
                raise  # down or broken for every input: stop, the chunks stay pending
            reason = f"the server failed on this text: {e.message}"
        else:
            return dict(zip((sha for sha, _text in items), self._validate(vectors)))
        if len(items) == 1:
            return {items[0][0]: _safe_reason(reason, items[0][1])}
        mid = len(items) // 2
        return {**self._embed_isolating(items[:mid]), **self._embed_isolating(items[mid:])}

    def _server_answers(self) -> bool:
        """Whether the server embeds a harmless text right now."""
        try:
            self.embedder.embed_documents([PROBE_TEXT])
        except EmbedError:
            return False
        return True

    def _validate(self, vectors: list) -> list[Answer]:
        """Each vector as stored bytes, or the reason it is unusable."""
        out: list[Answer] = []
        for vector in vectors:
            if isinstance(vector, (list, tuple)) and len(vector) != self.dim and self._probe() != self.dim:
                # One odd vector is that chunk's problem; the model changing size is not.
                raise _mismatch_dim(self.embedder, self.probed_dim, self.dim)
            try:
                out.append(serialize(vector, self.dim))
            except ValueError as e:
                out.append(str(e))
        return out

    def _write(self, rows: list[Row], answers: dict[str, Answer], reused: set[str]) -> int:
        """Write one batch in one transaction. Only a chunk still pending with the same text
        is written: an ingest or forget may have changed it while the server worked. A
        pending chunk that has an old vector (brains from the seed script) loses it. `reused`:
        the texts whose vector was taken from a twin rather than embedded in this batch."""
        ids = [cid for cid, _sha, _text in rows]
        marks = ",".join("?" * len(ids))
        done: set[str] = set()
        with self.brain.write():
            live = dict(self.conn.execute(
                f"SELECT id, sha FROM chunks WHERE id IN ({marks}) AND embedded = 0", ids).fetchall())
            # vec0 looks up `rowid = ?` by index, but `rowid IN (...)` scans every row
            stale = [r[0] for r in self.conn.execute(
                "SELECT v.rowid FROM json_each(?) j CROSS JOIN vec_chunks v ON v.rowid = j.value",
                (json.dumps(list(live)),))] if live else []
            self.brain.drop_vectors(stale)
            vectors, states = [], []
            for cid, sha, _text in rows:
                if live.get(cid) != sha:
                    continue
                answer = answers[sha]
                if isinstance(answer, bytes):
                    vectors.append((cid, answer))
                    states.append((1, None, cid))
                    copied = sha in reused or sha in done
                    done.add(sha)
                    if copied:
                        self.report.reused += 1
                    else:
                        self.report.embedded += 1
                else:
                    states.append((-1, answer, cid))
                    self.report.failed += 1
            self.brain.put_vectors(vectors)
            self.conn.executemany("UPDATE chunks SET embedded = ?, embed_error = ? WHERE id = ?", states)
        return len(states)


class _InFlight:
    """One request on a daemon thread: a daemon, so Ctrl-C never waits for a slow server."""

    def __init__(self, fn: Callable[[], dict[str, Answer]]):
        self._done = threading.Event()
        self._value: dict[str, Answer] | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(fn,), name="secondbrain-embed", daemon=True).start()

    def _run(self, fn: Callable[[], dict[str, Answer]]) -> None:
        try:
            self._value = fn()
        except BaseException as e:  # handed to the caller by result()
            self._error = e
        finally:
            self._done.set()

    def result(self) -> dict[str, Answer]:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value or {}


def _safe_reason(reason: str, text: str) -> str:
    """A failure reason is kept in the brain: make sure it never carries the chunk's text."""
    probe = text.strip()[:24]
    if len(probe) >= 8 and probe in reason:
        return "rejected by the server"
    return reason[:200]
