"""The ingest pipeline, and its only driver: sources yield documents -> readers turn them into
sections -> the gate scrubs everything a document brings in one scope -> segment -> stage.

Each file is staged together with its ledger entry, in a transaction that holds a batch of
files (`store.Batch`), so an interrupted ingest leaves whole files or nothing, and the next run
resumes by skipping what is done. A file that cannot be read, or that the scrubber cannot finish, is skipped with a reason, and the
rest of the run goes on. Documents are read within the limits of `readers.Limits` (text,
inflated bytes, depth), the container formats in a worker process that also bounds their time
and memory (`worker.py`); a document cut at its text limit is named in the report.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, TextIO

from ..config import Settings
from ..scrub import Remembered
from ..store import SCRUBBED_NAME, Batch, Brain, BrainError
from ..wording import plural
from . import roots as roots_mod
from . import sources
from .gate import Gate, allow_patterns
from .readers import CUT, Section
from .worker import ReadCost, ReadWorker

__all__ = ["Gate", "IngestInterrupted", "IngestReport", "allow_patterns", "ingest", "ingest_document", "read_file"]


@dataclass
class IngestReport:
    files_seen: int = 0
    ingested: int = 0
    unchanged: int = 0
    skipped: Counter = field(default_factory=Counter)
    skipped_files: list = field(default_factory=list)  # [{"path": stored or scrubbed name, "reason"}]
    cut_files: list = field(default_factory=list)  # stored names of documents cut at their text limit
    chunks_added: int = 0
    chunks_kept: int = 0
    chunks_removed: int = 0
    files_removed: int = 0
    redacted: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)  # left out inside read files (readers.Sections)
    reread: int = 0  # files read again because the scrub rules changed
    rescrubbed_in_place: int = 0  # chunks under older rules whose source cannot be re-read
    embedding: dict | None = None  # what embedding did afterwards, or why it is pending
    reading: dict | None = None  # what the worker process that read documents cost (worker.ReadCost)
    on_skip: Callable[[str, str], None] | None = field(default=None, repr=False, compare=False)

    def skip(self, name: str, reason: str) -> None:
        """Count a file left out, by its shown name (never its real one when that differs)."""
        self.skipped[reason] += 1
        self.skipped_files.append({"path": name, "reason": reason})
        if self.on_skip is not None:
            self.on_skip(name, reason)

    def add(self, other: "IngestReport") -> None:
        """Fold another run's figures into this one (a root of an update, a re-read file)."""
        for name in ("files_seen", "ingested", "unchanged", "chunks_added", "chunks_kept",
                     "chunks_removed", "files_removed", "reread", "rescrubbed_in_place"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("skipped", "redacted", "notes"):
            getattr(self, name).update(getattr(other, name))
        self.skipped_files.extend(other.skipped_files)
        self.cut_files.extend(other.cut_files)
        if other.reading:
            self.reading = ReadCost.merged(self.reading, other.reading)

    def as_dict(self) -> dict:
        out = {
            "files_seen": self.files_seen,
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "skipped": sum(self.skipped.values()),
            "skipped_by_reason": dict(self.skipped),
            "skipped_files": list(self.skipped_files),
            "cut_files": list(self.cut_files),
            "chunks_added": self.chunks_added,
            "chunks_kept": self.chunks_kept,
            "chunks_removed": self.chunks_removed,
            "files_removed": self.files_removed,
            "redacted": sum(self.redacted.values()),
            "redacted_by_kind": dict(self.redacted),
            "left_out": dict(self.notes),
            "reread": self.reread,
            "rescrubbed_in_place": self.rescrubbed_in_place,
        }
        if self.embedding is not None:
            out["embedding"] = self.embedding
        if self.reading is not None:
            out["reading"] = self.reading
        return out

    def summary(self) -> str:
        parts = [
            f"{plural(self.files_seen, 'file')} seen",
            f"{self.ingested} ingested",
            f"{self.unchanged} unchanged",
        ]
        skipped = sum(self.skipped.values())
        if skipped:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
            parts.append(f"{skipped} skipped ({reasons})")
        else:
            parts.append("0 skipped")
        parts.append(
            f"chunks: {self.chunks_added} added, {self.chunks_kept} kept, {self.chunks_removed} removed"
        )
        parts.extend(f"{n} {what}" for what, n in sorted(self.notes.items()))
        if self.files_removed:
            parts.append(f"{plural(self.files_removed, 'vanished file')} removed")
        if self.redacted:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.redacted.items()))
            parts.append(f"secrets redacted: {kinds}")
        else:
            parts.append("no secrets redacted")
        if self.reread:
            parts.append(f"{self.reread} file{'s' if self.reread != 1 else ''} re-read under new scrub rules")
        if self.rescrubbed_in_place:
            n = self.rescrubbed_in_place
            parts.append(f"{n} chunk{'s' if n != 1 else ''} re-scrubbed in place: "
                         f"{'their' if n != 1 else 'its'} source cannot be re-read")
        return "; ".join(parts)


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C during an ingest, carrying what was stored until then: every file finished
    before the interruption is whole in the brain (the batch it waited in is written on the
    way out); the one in hand is not there at all, nor counted."""

    def __init__(self, report: IngestReport):
        super().__init__("interrupted")
        self.report = report


def check_options(gate: Gate, targets: Iterable[str], *, include: Iterable[str] = (),
                  exclude: Iterable[str] = (), logs_db: str | os.PathLike | None = None) -> None:
    """Refuse, before anything is written, what would be stored verbatim yet holds what looks
    like a secret (a root's path, a glob, --logs-db), and a path that cannot be ingested."""
    for target in targets:
        if target != "-":
            gate.refuse_secret(sources.resolve(target), "the path")
            sources.check_target(target)
    for glob in (*include, *exclude):
        gate.refuse_secret(glob, "the glob")
    if logs_db:
        gate.refuse_secret(sources.resolve(str(logs_db)), "--logs-db")


def ingest(
    brain: Brain,
    targets: list[str],
    settings: Settings,
    *,
    project: str | None = None,
    source: str | None = None,
    name: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_bytes: int = sources.DEFAULT_MAX_BYTES,
    stdin: TextIO | None = None,
    on_file: Callable[[str], None] | None = None,
    on_skip: Callable[[str, str], None] | None = None,
    llm_logs: bool = False,
    logs_db: str | os.PathLike | None = None,
    include_brain_turns: bool = False,
    since: str | None = None,
    lift_exclusions: bool = True,
) -> IngestReport:
    """Ingest files, folders (recursively) and '-' (standard input) into `brain`, and with
    `llm_logs` the conversations `llm` logged (`logs_db`, `include_brain_turns` and `since`
    are its options). `project` and `source` are labels the gate scrubs; an explicit path that
    was forgotten inside a root is taken back into it (`lift_exclusions`; an update's replay
    does not). `on_skip(name, reason)` hears of each file left out.

    Raises sources.SourceError (or ValueError) before anything is written when a named path or
    an option is unusable.
    """
    gate = Gate(settings)
    check_options(gate, targets, include=include, exclude=exclude, logs_db=logs_db)
    logs = None
    if llm_logs:
        from .llm_logs import LogSource

        logs = LogSource(logs_db=logs_db, include_brain_turns=include_brain_turns, since=since,
                         project=gate.label(project))
    report = IngestReport(on_skip=on_skip)
    worker = ReadWorker(settings.read_seconds)
    try:
        upgrade(brain, gate, report, max_bytes, worker)
        known = roots_mod.all_roots(brain)
        if lift_exclusions:
            roots_mod.lift(brain, known, {brain.name_key(sources.resolve(t)) for t in targets if t != "-"})
        with Batch(brain) as batch:
            _ingest_targets(brain, gate, report, targets, project=gate.label(project),
                            source=gate.label(source), include=include, exclude=exclude, max_bytes=max_bytes,
                            on_file=on_file, excluded=roots_mod.excluded_by(brain, known), worker=worker,
                            batch=batch)
            if "-" in targets:
                report.files_seen += 1
                ingest_document(brain, gate, report, sources.stdin_document(
                    stdin, name=name, project=gate.label(project), source=gate.label(source),
                    max_bytes=max_bytes), batch)
            if logs is not None:
                _ingest_logs(brain, gate, report, logs, batch)
    except KeyboardInterrupt:
        raise IngestInterrupted(report) from None
    finally:
        worker.close()
        report.reading = worker.cost.as_dict() if worker.cost.files or worker.cost.in_process else None
    return report


def _ingest_targets(brain: Brain, gate: Gate, report: IngestReport, targets: list[str], *,
                    project, source, include, exclude, max_bytes, on_file, excluded, worker,
                    batch: Batch) -> None:
    brain_files = {str(brain.path), f"{brain.path}-wal", f"{brain.path}-shm", f"{brain.path}-journal"}
    walk_info = sources.Walk()
    seen: set[str] = set()
    for item in sources.walk(
        targets, project=project, include=include, exclude=exclude,
        skip_paths={sources.resolve(p) for p in brain_files}, walk_info=walk_info, excluded=excluded,
    ):
        report.files_seen += 1
        seen.add(brain.name_key(item.path))
        if isinstance(item, sources.Skipped):
            report.skip(gate.shown(item.path), item.reason)
            continue
        if on_file:
            on_file(item.path)
        ingest_document(brain, gate, report, sources.file_document(item, source or "files", max_bytes,
                                                                   project is not None, worker), batch)
    batch.flush()
    for root in walk_info.roots:
        unseen = [(key, name) for key, name in brain.files_under(gate.shown(root))
                  if key not in seen and not os.path.lexists(name)]
        # (a name as it is on disk is gone; a scrubbed one is looked for on disk by its key)
        hidden = [key for key, name in unseen if SCRUBBED_NAME in name]
        vanished = [key for key, name in unseen if SCRUBBED_NAME not in name] + (
            _not_on_disk(brain, root, hidden) if hidden else [])
        if vanished:
            report.chunks_removed += brain.remove_keys(vanished)
            report.files_removed += len(vanished)


def _not_on_disk(brain: Brain, root: str, keys: list[str]) -> list[str]:
    """Of `keys` (files stored under `root` by a scrubbed name that this walk did not see), those
    no file under `root` has. A file the globs left out, or one in a folder no walk enters, is
    kept while it is there; its stored name cannot tell where a secret in it was redacted
    (`ghp_….md` is stored as `[REDACTED:github_token].md`), so each file on disk is found by its
    key. (A name the scrubber left alone needs no walk: `os.path.lexists` has answered for it.)"""
    wanted = set(keys)
    for dirpath, _, filenames in os.walk(root):
        wanted.difference_update(brain.name_key(os.path.join(dirpath, f)) for f in filenames)
        if not wanted:
            break
    return [key for key in keys if key in wanted]


def _ingest_logs(brain: Brain, gate: Gate, report: IngestReport, logs, batch: Batch) -> None:
    """llm's changed conversations, then the cursor that says how far this run read (written
    after the conversations it covers are committed, never before)."""
    state = json.loads(brain.get_meta(logs.cursor_key) or "{}")
    for item in logs.documents(state):
        report.files_seen += 1
        if isinstance(item, sources.Skipped):
            report.skipped[item.reason] += 1  # a conversation that only used the brain: no file to name
            continue
        ingest_document(brain, gate, report, item, batch)
    batch.flush()
    if logs.cursor != state:
        with brain.write():
            brain.set_meta(logs.cursor_key, json.dumps(logs.cursor, sort_keys=True))


def upgrade(brain: Brain, gate: Gate, report: IngestReport,
            max_bytes: int = sources.DEFAULT_MAX_BYTES, worker: ReadWorker | None = None) -> None:
    """After the scrub rules changed (their identity differs from the one a file was stored
    under), read every stored file that still exists again and ingest it under the new rules,
    with the project and source it was stored under. Re-scrubbing the stored text is not
    enough: there the label that identified a secret (`password: X`) is already gone, so a copy
    of X further on would stay. Whatever cannot be re-read (standard input, facts,
    conversations, vanished or unreadable files, files stored under a scrubbed name) is scrubbed
    again in place, one document in one scope, names and labels included."""
    if brain.get_meta("scrub_rules") == gate.rules:
        return  # every file, chunk and label was stored under these rules
    again = IngestReport()  # files the user did not name this time: not "seen" or "skipped"
    try:
        with Batch(brain) as batch:
            for key, path, project, source in brain.outdated_files(gate.rules):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and brain.name_key(path) == key:
                    entry = sources.FileEntry(path, None, st.st_size, st.st_mtime_ns, project)
                    ingest_document(brain, gate, again,
                                    sources.file_document(entry, source, max_bytes, True, worker), batch)
    finally:  # what was re-read and committed, Ctrl-C or not
        again.reread, again.ingested, again.unchanged = again.ingested, 0, 0
        report.add(again)
    from .. import facts

    facts.restage(brain, gate)
    done: set = set()
    while names := brain.outdated_documents(gate.rules):
        if done.issuperset(names):  # never expected: stop rather than loop, and keep the old rules' mark
            raise BrainError("could not scrub some stored chunks again; nothing else was changed")
        done.update(names)
        for name in names:
            chunks = brain.document_chunks(name)
            new_name, clean, counts = gate.stored(name or "", chunks)
            report.rescrubbed_in_place += len(chunks)
            report.redacted.update(counts)
            brain.rewrite_document(name, new_name if name is not None else None, clean, gate.rules)
    _upgrade_labels(brain, gate)


def _upgrade_labels(brain: Brain, gate: Gate) -> None:
    """Projects, sources, roots and the names of files without chunks, stored under other
    rules: scrubbed again; then the brain is marked as wholly under today's rules."""
    with brain.write():
        for column in ("project", "source"):
            for (value,) in brain.conn.execute(
                    f"SELECT DISTINCT {column} FROM files WHERE {column} IS NOT NULL").fetchall():
                clean = gate.label(value)
                if clean != value:
                    brain.conn.execute(f"UPDATE files SET {column} = ? WHERE {column} = ?", (clean, value))
                    brain.conn.execute(f"UPDATE chunks SET {column} = ? WHERE {column} = ?", (clean, value))
        for key, path in brain.conn.execute("SELECT key, path FROM files WHERE scrub_version IS NOT ?",
                                            (gate.rules,)).fetchall():
            brain.restamp_file(key, gate.shown(path), gate.rules)
        for root in roots_mod.all_roots(brain):
            if root.path != roots_mod.LLM_LOGS and gate.shown(root.path) != root.path:
                brain.conn.execute("DELETE FROM roots WHERE path = ?", (root.path,))
                continue
            options = {k: _scrubbed(gate, v) for k, v in root.options.items() if k != roots_mod.FORGOTTEN}
            if root.forgotten:
                options[roots_mod.FORGOTTEN] = [{"key": f["key"], "name": gate.shown(f["name"])}
                                                for f in root.forgotten]
            brain.conn.execute("UPDATE roots SET options = ? WHERE path = ?",
                               (json.dumps(options, sort_keys=True), root.path))
        brain.set_meta("scrub_rules", gate.rules)


def _scrubbed(gate: Gate, value):
    if isinstance(value, str):
        return gate.shown(value)
    if isinstance(value, list):
        return [_scrubbed(gate, v) for v in value]
    return value


# The loggers of the libraries that read documents (and of theirs): their lines quote documents.
_LIBRARIES = ("pypdf", "docx", "lxml", "PIL", "fontTools", "charset_normalizer")


class _Swallow(logging.Handler):
    """Takes a library's log records for the length of one read, and keeps nothing of them."""

    def emit(self, record: logging.LogRecord) -> None:
        pass


REMEMBER_AT_MOST = 2000  # values remembered per document: this version's first, then the newest before


def _remembered(record: dict | None) -> dict[str, str]:
    """What the stored versions of a document redacted (digest -> kind), from its ledger row."""
    stored = record.get("redacted") if record else None
    return json.loads(stored) if stored else {}


def _to_remember(remembered: Remembered) -> str | None:
    """The ledger's `redacted` for the version being stored: every value it redacts, and the
    ones before it (a value edited out may come back in the next version, without its label)."""
    both = {**remembered.found, **remembered.kinds}  # (this version's first: a dict keeps first places)
    return json.dumps(dict(list(both.items())[:REMEMBER_AT_MOST])) if both else None


def _read(doc: sources.Document):
    """A document's sections and raw bytes, or Skip: what a reader raises that is not a Skip
    (a library's surprise) is "unreadable (its type)". A document library's log lines are
    kept from stderr and from the host's logs (`_quietly`); a document our own code reads
    (text, markdown, a conversation) needs none of it, and skips its cost."""
    try:
        return _quietly(doc.read) if doc.library else doc.read()
    except sources.Skip:
        raise
    except Exception as e:  # noqa: BLE001 - RecursionError and MemoryError too
        raise sources.Skip(f"unreadable ({type(e).__name__})") from None


def _quietly(read: Callable[[], tuple]) -> tuple:
    """`read()` with the log lines of the libraries that read documents kept from stderr and
    from the host's logs: for the length of the read only, each library's logger gets a
    handler of ours and stops passing records up (both undone after, whatever happens). The
    host's own logging configuration is never touched."""
    swallow = _Swallow()
    saved = []
    for name in _LIBRARIES:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.addHandler(swallow)
        logger.propagate = False
    try:
        return read()
    finally:
        for logger, propagate in saved:
            logger.removeHandler(swallow)
            logger.propagate = propagate


def read_file(path: str, settings: Settings, max_bytes: int = sources.DEFAULT_MAX_BYTES
              ) -> tuple[sources.Document, list[Section], bytes]:
    """One file (not a folder) read as ingest reads it, so that `llm brain scrub` shows what
    ingest would store of it: the same reader, within the same limits, a document library's
    in the worker process (which bounds its time and keeps what it prints). Returns the
    document, its sections and its bytes, not yet scrubbed. Raises Skip with the reason ingest
    would give for leaving the file out (a missing extra names its install command),
    SourceError for a path that cannot be read at all."""
    sources.check_target(path)
    item = next(sources.walk([path]))
    if isinstance(item, sources.Skipped):  # (a FIFO or a device is never opened)
        raise sources.Skip(item.reason)
    with ReadWorker(settings.read_seconds) as worker:
        doc = sources.file_document(item, "files", max_bytes, False, worker)
        sections, raw = _read(doc)
    return doc, sections, raw


def ingest_document(brain: Brain, gate: Gate, report: IngestReport, doc: sources.Document,
                    batch: Batch) -> None:
    """Bring the brain up to date with one document: skip it when unchanged (by stat, then by
    content hash), else read it, pass it through the gate, and stage it with its ledger entry,
    in `batch`. A document keeps the project it was stored under unless this ingest names one.
    A document that cannot be read or scrubbed is skipped, by its shown name. What staging
    adds to `report` is counted once it is committed."""
    key = brain.name_key(doc.path)
    if batch.holds(key):
        batch.flush()  # the same file twice in one run: its record must be the stored one
    record = brain.file_record(key)
    project = gate.label(doc.project) or "default"
    if not doc.explicit_project and record is not None:
        project = record["project"]
    current = (
        record is not None
        and record.get("scrub_version") == gate.rules
        and record.get("project") == project
        and record.get("source") == doc.source
    )
    if (current and doc.size is not None and record["size"] == doc.size
            and record["mtime_ns"] == doc.mtime_ns):
        report.unchanged += 1
        return
    shown = record["path"] if record is not None else None
    try:
        sections, raw = _read(doc)
    except sources.Skip as skip:
        report.skip(shown or gate.shown(doc.path), skip.reason)
        return
    report.notes.update(getattr(sections, "notes", {}))
    content_sha = brain.content_digest(raw)
    if doc.replace and current and record["content_sha"] == content_sha:
        if doc.size is not None:
            batch.add(key, functools.partial(brain.touch_file, key, size=doc.size, mtime_ns=doc.mtime_ns,
                                             ts=doc.ts))
        report.unchanged += 1
        return
    empty = not any(section.text.strip() for section in sections)
    if empty and (doc.size is None or not doc.replace):  # empty standard input erases nothing
        report.skipped["empty"] += 1
        return
    # (a file that was emptied is staged all the same, so it loses its old chunks)
    remembered = Remembered(brain.value_digest, _remembered(record))
    try:
        admitted = gate.document(doc.path, sections, remembered)
    except sources.Skip as skip:
        report.skip(shown or gate.shown(doc.path), skip.reason)
        return
    cut = CUT in getattr(sections, "notes", {})
    write = functools.partial(
        brain.stage, path=admitted.name, key=key, chunks=admitted.rows, project=project, source=doc.source,
        ts=doc.ts, replace=doc.replace, title=admitted.title, rules=gate.rules,
        ledger={"size": doc.size, "mtime_ns": doc.mtime_ns, "content_sha": content_sha,
                "format": doc.format, "redacted": _to_remember(remembered)},
    )

    def done(result) -> None:  # what this file adds to the report, once it is in the brain
        if empty:
            report.skipped["empty"] += 1
        else:
            report.ingested += 1
        if admitted.redacted:
            report.redacted.update(admitted.redacted)
        if cut:
            report.cut_files.append(admitted.name)
        report.chunks_added += result.added
        report.chunks_kept += result.kept
        report.chunks_removed += result.removed

    batch.add(key, write, done)
