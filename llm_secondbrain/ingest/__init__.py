"""The ingest pipeline: sources (documents) -> readers (sections) -> scrub -> segment ->
stage, with a summary.

Each file is staged in one transaction together with its ledger entry, so an interrupted
ingest leaves whole files or nothing, and the next run resumes by skipping what is done.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, TextIO

from . import sources
from ..config import Settings
from .readers import Section
from ..scrub import RULES_VERSION, load_allow_patterns, scrub_report
from ..segment import segment
from ..store import Brain, ChunkRow
from ..wording import plural


@dataclass
class IngestReport:
    files_seen: int = 0
    ingested: int = 0
    unchanged: int = 0
    skipped: Counter = field(default_factory=Counter)
    chunks_added: int = 0
    chunks_kept: int = 0
    chunks_removed: int = 0
    files_removed: int = 0
    redacted: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)  # left out inside read files (readers.Sections)
    reread: int = 0  # files read again because the scrub rules changed
    rescrubbed_in_place: int = 0  # chunks under older rules whose source cannot be re-read
    embedding: dict | None = None  # what embedding did afterwards, or why it is pending

    def as_dict(self) -> dict:
        out = {
            "files_seen": self.files_seen,
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "skipped": sum(self.skipped.values()),
            "skipped_by_reason": dict(self.skipped),
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
    """Ctrl-C during an ingest, carrying what was stored until then (every file before the
    interruption is whole in the brain; the one being staged is not there at all)."""

    def __init__(self, report: IngestReport):
        super().__init__("interrupted")
        self.report = report


_ALLOW_CACHE: dict[tuple, list[re.Pattern]] = {}


def allow_patterns(settings: Settings) -> list[re.Pattern]:
    """The user's allow patterns (SECONDBRAIN_SCRUB_ALLOW), compiled once per version of the
    file. Raises ValueError naming file:line for a bad pattern, and for a file that cannot be
    read, so an ingest stops before it writes anything rather than scrub without them."""
    if not settings.scrub_allow:
        return []
    path = settings.scrub_allow
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in _ALLOW_CACHE:
            _ALLOW_CACHE.clear()
            _ALLOW_CACHE[key] = load_allow_patterns(path)
    except OSError as e:
        raise ValueError(f"SECONDBRAIN_SCRUB_ALLOW: cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"SECONDBRAIN_SCRUB_ALLOW: {path} is not UTF-8 text") from None
    return _ALLOW_CACHE[key]


def _chunks(sections: list[Section], settings: Settings, report: IngestReport) -> tuple[list[ChunkRow], str | None]:
    """Scrub and segment each section on its own (a chunk never straddles two pages); returns
    the chunks and the document's title when its format knows one."""
    rows: list[ChunkRow] = []
    head = None
    allow = allow_patterns(settings)
    for section in sections:
        clean, counts = scrub_report(section.text, strip_emails=settings.strip_emails, allow=allow)
        report.redacted.update(counts)
        if section.title and head is None:
            head = scrub_report(section.title, strip_emails=settings.strip_emails, allow=allow)[0]
        meta = _scrub_meta(section.meta, settings, report)
        rows.extend(
            ChunkRow(s.text, s.line_start if section.cite_lines else None,
                     s.line_end if section.cite_lines else None,
                     meta=meta, ts=section.ts, ref=section.ref, role=section.role)
            for s in segment(clean, settings.max_chars, settings.min_chars)
        )
    return rows, head


def _scrub_meta(meta: dict | None, settings: Settings, report: IngestReport) -> dict | None:
    """A section's metadata is stored too (a message's From and Subject), so it is scrubbed
    like its text."""
    if not meta:
        return meta
    clean = {}
    for key, value in meta.items():
        if isinstance(value, str):
            # with its key, which may be the label that makes it a secret (`api_key: ...`)
            labelled, counts = scrub_report(f"{key}: {value}", strip_emails=settings.strip_emails)
            value = labelled[len(key) + 2:] if labelled.startswith(f"{key}: ") else labelled
            report.redacted.update(counts)
        clean[key] = value
    return clean


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
    llm_logs: bool = False,
    logs_db: str | os.PathLike | None = None,
    include_brain_turns: bool = False,
    since: str | None = None,
) -> IngestReport:
    """Ingest files, folders (recursively) and '-' (standard input) into `brain`, and with
    `llm_logs` the conversations `llm` logged (llm_logs.ingest_logs: `logs_db`,
    `include_brain_turns` and `since` are its options).

    Raises sources.SourceError before anything is written when a named path is unusable.
    """
    for target in targets:
        sources.check_target(target)
    if llm_logs:
        from .llm_logs import check_since, logs_path

        logs_path(logs_db)
        check_since(since)
    allow_patterns(settings)  # a bad allow file stops the ingest before anything is written
    report = IngestReport()
    try:
        refresh_outdated(brain, settings, report, max_bytes)
        _ingest_targets(brain, report, targets, settings, project=project, source=source,
                        name=name, include=include, exclude=exclude, max_bytes=max_bytes,
                        stdin=stdin, on_file=on_file)
        if llm_logs:
            from .llm_logs import ingest_logs

            ingest_logs(brain, report, settings, logs_db=logs_db, include_brain_turns=include_brain_turns,
                        since=since, project=project)
    except KeyboardInterrupt:
        raise IngestInterrupted(report) from None
    return report


def _ingest_targets(brain: Brain, report: IngestReport, targets: list[str], settings: Settings, *,
                    project, source, name, include, exclude, max_bytes, stdin, on_file) -> None:
    brain_files = {str(brain.path), f"{brain.path}-wal", f"{brain.path}-shm", f"{brain.path}-journal"}
    walk_info = sources.Walk()
    seen: set[str] = set()
    for item in sources.walk(
        targets, project=project, include=include, exclude=exclude,
        skip_paths={sources.resolve(p) for p in brain_files}, walk_info=walk_info,
    ):
        report.files_seen += 1
        seen.add(item.path)
        if isinstance(item, sources.Skipped):
            report.skipped[item.reason] += 1
            continue
        if on_file:
            on_file(item.path)
        ingest_document(brain, report, sources.file_document(item, source or "files", max_bytes,
                                                             project is not None), settings)

    for root in walk_info.roots:
        vanished = [p for p in brain.paths_under(root) if p not in seen and not os.path.lexists(p)]
        if vanished:
            report.chunks_removed += brain.remove_paths(vanished)
            report.files_removed += len(vanished)

    if "-" in targets:
        report.files_seen += 1
        ingest_document(brain, report, sources.stdin_document(stdin, name=name, project=project,
                                                              source=source), settings)


def refresh_outdated(brain: Brain, settings: Settings, report: IngestReport,
                     max_bytes: int = sources.DEFAULT_MAX_BYTES) -> None:
    """After the scrub rules changed (RULES_VERSION), read every stored file that still exists
    again and ingest it under the new rules, with the project and source it was stored under.
    Re-scrubbing the stored text is not enough: there the label that identified a secret
    (`password: X`) is already gone, so a copy of X further on would stay. Whatever cannot be
    re-read (standard input, facts, vanished or unreadable files) is re-scrubbed in place and
    counted in the summary."""
    if not brain.scrub_outdated():
        return
    for path, project, source in brain.outdated_files():
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            entry = sources.FileEntry(path, None, st.st_size, st.st_mtime_ns, project)
            again = IngestReport()  # a file the user did not name this time: not "seen" or "skipped"
            ingest_document(brain, again, sources.file_document(entry, source, max_bytes, True),
                            settings)
            report.reread += again.ingested
            report.chunks_added += again.chunks_added
            report.chunks_kept += again.chunks_kept
            report.chunks_removed += again.chunks_removed
            report.redacted.update(again.redacted)
    report.rescrubbed_in_place = brain.rescrub_outdated(strip_emails=settings.strip_emails,
                                                        allow=allow_patterns(settings))


def ingest_document(brain: Brain, report: IngestReport, doc: sources.Document, settings: Settings) -> None:
    """Bring the brain up to date with one document: skip it when unchanged (by stat, then by
    content hash), else scrub, segment and stage it in one transaction with its ledger entry.
    A document keeps the project it was stored under unless this ingest names one."""
    record = brain.file_record(doc.path)
    project = doc.project if doc.explicit_project or record is None else record["project"]
    current = (
        record is not None
        and record.get("scrub_version") == RULES_VERSION
        and record.get("project") == project
        and record.get("source") == doc.source
    )
    if (current and doc.size is not None and record["size"] == doc.size
            and record["mtime_ns"] == doc.mtime_ns):
        report.unchanged += 1
        return
    try:
        sections, raw = doc.read()
    except sources.Skip as skip:
        report.skipped[skip.reason] += 1
        return
    report.notes.update(getattr(sections, "notes", {}))
    content_sha = hashlib.sha256(raw).hexdigest()
    if doc.replace and current and record["content_sha"] == content_sha:
        if doc.size is not None:
            brain.touch_file(doc.path, size=doc.size, mtime_ns=doc.mtime_ns, ts=doc.ts)
        report.unchanged += 1
        return
    if not any(section.text.strip() for section in sections):
        report.skipped["empty"] += 1
        if doc.size is None or not doc.replace:  # empty standard input erases nothing
            return
        # a file that was emptied is staged all the same, so it loses its old chunks
    else:
        report.ingested += 1
    rows, head = _chunks(sections, settings, report)
    result = brain.stage(
        path=doc.path, chunks=rows, project=project, source=doc.source, ts=doc.ts,
        replace=doc.replace, title=head,
        ledger={"size": doc.size, "mtime_ns": doc.mtime_ns, "content_sha": content_sha,
                "format": doc.format},
    )
    report.chunks_added += result.added
    report.chunks_kept += result.kept
    report.chunks_removed += result.removed
