"""Roots: the folders and files a user gave to `ingest`, remembered with that call's options,
so the brain can be brought up to date without the user recalling what they ingested, how.

`update` replays every root through the façade's own `ingest` (unchanged files cost a stat),
`reconcile` brings single paths in line with the disk (what `watch` and `recall --fresh` do),
and both keep one rule: a root that is gone entirely (an unmounted disk, a moved folder) is
reported and its chunks are kept, because a missing mount must not erase a brain.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from .. import config
from . import sources
from . import IngestReport, ingest_document
from ..store import Brain, now_iso

if TYPE_CHECKING:
    from ..api import SecondBrain

# Keywords of an ingest call that describe one run, not the root.
NOT_REPLAYED = {"stdin", "name", "on_file"}
# llm's conversations are a root like a folder, under this name, with their own options.
LLM_LOGS = "llm:logs"
LOGS_OPTIONS = ("llm_logs", "logs_db", "include_brain_turns", "since", "project")


@dataclass
class Root:
    path: str
    options: dict
    ingested: str
    updated: str | None

    @property
    def exists(self) -> bool:
        return self.path == LLM_LOGS or os.path.exists(self.path)

    @property
    def is_folder(self) -> bool:
        return os.path.isdir(self.path)

    def covers(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path.rstrip(os.sep) + os.sep)

    def project_for(self, path: str) -> str:
        """The project ingest would give a file under this root (see sources.walk)."""
        if self.options.get("project") is not None:
            return self.options["project"]
        folder = self.path if self.path != path else os.path.dirname(path)
        return os.path.basename(folder) or "default"

    def as_dict(self) -> dict:
        return {"path": self.path, "options": self.options, "ingested": self.ingested,
                "updated": self.updated, "exists": self.exists}


def record(brain: Brain, targets: Iterable[str], options: dict[str, Any], *,
           strip_emails: bool = False) -> None:
    """Remember each file or folder of an explicit ingest with that call's options; the last
    explicit ingest of a path replaces what was remembered for it."""
    kept = {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()
            if k not in NOT_REPLAYED and v is not None and v is not False and v != () and v != []}
    if strip_emails:
        kept["strip_emails"] = True
    logs = {k: v for k, v in kept.items() if k in LOGS_OPTIONS}
    kept = {k: v for k, v in kept.items() if k not in LOGS_OPTIONS or k == "project"}
    now = now_iso()
    rows = [{"path": sources.resolve(t), "options": json.dumps(kept, sort_keys=True),
             "ingested": now, "updated": now} for t in targets if t != "-"]
    if logs.get("llm_logs"):
        if logs.get("logs_db"):
            logs["logs_db"] = sources.resolve(str(logs["logs_db"]))
        rows.append({"path": LLM_LOGS, "options": json.dumps(logs, sort_keys=True),
                     "ingested": now, "updated": now})
    if rows:
        with brain.write():
            brain.db["roots"].upsert_all(rows, pk="path")


def all_roots(brain: Brain) -> list[Root]:
    """Every root, oldest explicit ingest first: replayed in this order, the last explicit
    ingest of overlapping roots decides their shared files' project."""
    rows = brain.conn.execute(
        "SELECT path, options, ingested, updated FROM roots ORDER BY ingested, path").fetchall()
    return [Root(path, json.loads(options or "{}"), ingested, updated)
            for path, options, ingested, updated in rows]


def remove(brain: Brain, path: str) -> bool:
    """Stop tracking a root (its chunks stay until `forget`); False when it was not a root."""
    with brain.write():
        return brain.conn.execute("DELETE FROM roots WHERE path = ?", (path,)).rowcount > 0


def mark_updated(brain: Brain, paths: Iterable[str]) -> None:
    now = now_iso()
    with brain.write():
        brain.conn.executemany("UPDATE roots SET updated = ? WHERE path = ?",
                               [(now, p) for p in paths])


def root_for(roots: list[Root], path: str) -> Root | None:
    """The root whose options govern `path`: of those covering it, the last explicitly
    ingested."""
    covering = [r for r in roots if r.covers(path)]
    return max(covering, key=lambda r: r.ingested) if covering else None


def select(roots: list[Root], paths: Iterable[str]) -> list[Root]:
    """The roots named by `paths` (each resolved); a path that is no root is a one-line error."""
    by_path = {r.path: r for r in roots}
    chosen = []
    for p in paths:
        real = p if p == LLM_LOGS else sources.resolve(p)
        if real not in by_path:
            raise ValueError(f"not a root: {p} (ingest it first: llm brain ingest {p})")
        chosen.append(by_path[real])
    return chosen


def combine(reports: Iterable[IngestReport]) -> IngestReport:
    total = IngestReport()
    for report in reports:
        for f in dataclasses.fields(IngestReport):
            if f.name != "embedding":
                setattr(total, f.name, getattr(total, f.name) + getattr(report, f.name))
    return total


@dataclass
class RootResult:
    root: Root
    status: str  # "updated", "missing" (chunks kept) or "failed"
    report: IngestReport | None = None
    error: str | None = None

    def line(self) -> str:
        if self.status == "updated":
            return f"{self.root.path}: {self.report.summary()}"
        if self.status == "missing":
            return (f"{self.root.path}: missing, its chunks are kept (to drop them: "
                    f"llm brain roots --remove {self.root.path} and llm brain forget {self.root.path})")
        return f"{self.root.path}: {self.error}"

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"path": self.root.path, "status": self.status}
        if self.report is not None:
            out["report"] = self.report.as_dict()
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class UpdateReport:
    roots: list[RootResult] = field(default_factory=list)
    total: IngestReport = field(default_factory=IngestReport)

    def lines(self) -> list[str]:
        return [r.line() for r in self.roots] + [f"total: {self.total.summary()}"]

    def as_dict(self) -> dict:
        return {"roots": [r.as_dict() for r in self.roots], "total": self.total.as_dict()}


def update(sb: "SecondBrain", paths: Iterable[str] | None = None, *, embed: bool = True,
           progress: bool = False) -> UpdateReport:
    """Replay every root (or those named) through `SecondBrain.ingest` with its remembered
    options, then embed what is pending once. A missing root is not ingested at all (ingest
    would remove its files as vanished); a root that fails is reported and the rest go on."""
    from ..api import SecondBrain

    known = all_roots(sb.brain)
    chosen = select(known, paths) if paths else known
    out = UpdateReport()
    for root in chosen:
        if not root.exists:
            out.roots.append(RootResult(root, "missing"))
            continue
        options = dict(root.options)
        face = sb
        if options.pop("strip_emails", False):
            face = SecondBrain(sb.brain, config.replace(sb.settings, strip_emails=True))
        for key in ("include", "exclude"):
            if key in options:
                options[key] = tuple(options[key])
        try:
            targets = [] if root.path == LLM_LOGS else [root.path]
            report = face.ingest(targets, embed=False, remember=False, **options)
        except sources.SourceError as e:
            out.roots.append(RootResult(root, "failed", error=str(e)))
            continue
        mark_updated(sb.brain, [root.path])
        out.roots.append(RootResult(root, "updated", report))
    out.total = combine(r.report for r in out.roots if r.report is not None)
    if embed:
        out.total.embedding = sb.embed_pending_quietly(progress=progress)
    return out


def reconcile(brain: Brain, settings: config.Settings, paths: Iterable[str],
              roots: list[Root] | None = None) -> tuple[IngestReport, set[str]]:
    """Bring each path in line with the disk, whatever happened to it: a file that exists is
    ingested with its root's options (an unchanged hash is a no-op), a folder that exists has
    its files ingested, a path that is gone loses its chunks (a folder: everything under it).
    Event order, atomic saves and renames therefore do not matter. A path under a root that
    is missing entirely is left alone. Returns the report and the roots touched."""
    roots = all_roots(brain) if roots is None else roots
    report = IngestReport()
    touched: set[str] = set()
    brain_files = {sources.resolve(f"{brain.path}{s}") for s in ("", "-wal", "-shm", "-journal")}
    for path in sorted(set(paths)):
        root = root_for(roots, path)
        if root is not None and not root.exists:
            continue
        if root is not None:
            touched.add(root.path)
        if os.path.isdir(path) and not os.path.islink(path):
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if root is None or
                                     _wanted(root, os.path.join(dirpath, d), folder=True))
                for name in sorted(filenames):
                    _one_file(brain, settings, report, os.path.join(dirpath, name), root, brain_files)
        elif os.path.lexists(path):
            _one_file(brain, settings, report, path, root, brain_files)
        else:
            gone = ([path] if brain.file_record(path) else []) + brain.paths_under(path)
            if gone:
                report.chunks_removed += brain.remove_paths(gone)
                report.files_removed += len(gone)
    return report, touched


def _one_file(brain: Brain, settings: config.Settings, report: IngestReport, path: str,
              root: Root | None, brain_files: set[str]) -> None:
    if path in brain_files or (root is not None and not _wanted(root, path)):
        return
    real = sources.resolve(path)
    if root is not None and real != path and not root.covers(real):
        return  # a symlink out of the root, as the walk skips it
    options = root.options if root is not None else {}
    record = brain.file_record(real)
    if root is not None:
        project = root.project_for(real)
    else:
        project = record["project"] if record else os.path.basename(os.path.dirname(real)) or "default"
    entry = sources._entry(real, root.path if root else None, project)
    report.files_seen += 1
    if isinstance(entry, sources.Skipped):
        report.skipped[entry.reason] += 1
        return
    source = options.get("source") or (record["source"] if record and root is None else "files")
    if options.get("strip_emails") and not settings.strip_emails:
        settings = config.replace(settings, strip_emails=True)
    doc = sources.file_document(entry, source, options.get("max_bytes", sources.DEFAULT_MAX_BYTES),
                                options.get("project") is not None)
    ingest_document(brain, report, doc, settings)


def _wanted(root: Root, path: str, *, folder: bool = False) -> bool:
    """Would an ingest of `root` with its options take `path`? The walk's rules (noise folders
    and files, virtualenvs, --include / --exclude globs relative to the root), per path."""
    if path == root.path:
        return True
    rel = os.path.relpath(path, root.path)
    parts = rel.split(os.sep)
    exclude = tuple(root.options.get("exclude", ()))
    include = tuple(root.options.get("include", ()))
    dirs = parts if folder else parts[:-1]
    for i, name in enumerate(dirs):
        sub = os.path.join(*parts[: i + 1])
        if (name in sources.NOISE_DIRS or (exclude and sources._matches(sub, exclude))
                or os.path.exists(os.path.join(root.path, sub, "pyvenv.cfg"))):
            return False
    if folder:
        return True
    if parts[-1] in sources.NOISE_FILES or (exclude and sources._matches(rel, exclude)):
        return False
    return not include or sources._matches(rel, include)

