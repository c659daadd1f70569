"""Keeping the brain in line with the disk and with what its owner forgot.

`update` replays every root through `ingest` with its remembered options (unchanged files cost
a stat), `reconcile` brings single paths in line with the disk (what `watch` and `recall
--fresh` do), and `forget` removes what a person names, and keeps it out of the roots it lay
in. Two rules hold throughout: a root that is gone entirely (an unmounted disk, a moved folder)
is reported and its chunks are kept, because a missing mount must not erase a brain; and a
path that was forgotten inside a root stays out of it until it is ingested explicitly again.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from .. import config
from ..store import Batch, Brain
from . import IngestReport, ingest, ingest_document, sources
from . import roots as roots_mod
from .gate import Gate
from .roots import LLM_LOGS, Root
from .worker import ReadWorker


@dataclass
class RootResult:
    root: Root
    status: str  # "updated", "missing" or "replaced" (chunks kept), or "failed"
    report: IngestReport | None = None
    error: str | None = None

    def line(self) -> str:
        if self.status == "updated":
            return f"{self.root.path}: {self.report.summary()}"
        if self.status in ("missing", "replaced"):
            what = "missing" if self.status == "missing" else "no longer a folder (a file is there now)"
            return (f"{self.root.path}: {what}, its chunks are kept (to drop them: "
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


def update(brain: Brain, settings: config.Settings, paths: Iterable[str] | None = None, *,
           on_skip=None) -> UpdateReport:
    """Replay every root (or those named) through `ingest` with its remembered options. A
    missing root is not ingested at all (ingest would remove its files as vanished), nor is a
    folder a file has replaced; a root that fails is reported and the rest go on. Embedding is
    the caller's."""
    known = roots_mod.all_roots(brain)
    chosen = roots_mod.select(known, paths) if paths else known
    out = UpdateReport()
    for root in chosen:
        if not root.exists:
            out.roots.append(RootResult(root, "missing"))
            continue
        if root.path != LLM_LOGS and not root.is_folder and brain.files_under(root.path):
            out.roots.append(RootResult(root, "replaced"))  # (its files are not the file there now)
            continue
        options = root.replayed()
        run_settings = settings
        if options.pop("strip_emails", False):
            run_settings = config.replace(settings, strip_emails=True)
        try:
            targets = [] if root.path == LLM_LOGS else [root.path]
            report = ingest(brain, targets, run_settings, on_skip=on_skip, lift_exclusions=False, **options)
        except (sources.SourceError, ValueError) as e:
            out.roots.append(RootResult(root, "failed", error=str(e)))
            continue
        roots_mod.mark_updated(brain, [root.path])
        out.roots.append(RootResult(root, "updated", report))
    for result in out.roots:
        if result.report is not None:
            out.total.add(result.report)
    return out


def reconcile(brain: Brain, settings: config.Settings, paths: Iterable[str],
              roots: list[Root] | None = None) -> tuple[IngestReport, set[str]]:
    """Bring each path in line with the disk, whatever happened to it: a file that exists is
    ingested with its root's options (an unchanged hash is a no-op), a folder that exists has
    its files ingested, a path that is gone loses its chunks (a folder: everything under it).
    Event order, atomic saves and renames therefore do not matter. A path under a root that
    is missing entirely, or that was forgotten, is left alone. Returns the report and the
    roots touched."""
    roots = roots_mod.all_roots(brain) if roots is None else roots
    gate = Gate(settings)
    excluded = roots_mod.excluded_by(brain, roots)
    report = IngestReport()
    touched: set[str] = set()
    brain_files = {sources.resolve(f"{brain.path}{s}") for s in ("", "-wal", "-shm", "-journal")}
    with ReadWorker(settings.read_seconds) as worker, Batch(brain) as batch:
        _reconcile(brain, gate, report, touched, paths, roots, excluded, brain_files, worker, batch)
    if worker.cost.files or worker.cost.in_process:
        report.reading = worker.cost.as_dict()
    return report, touched


def _reconcile(brain: Brain, gate: Gate, report: IngestReport, touched: set[str], paths: Iterable[str],
               roots: list[Root], excluded, brain_files: set[str], worker: ReadWorker, batch: Batch) -> None:
    for path in sorted(set(paths)):
        root = roots_mod.root_for(roots, path)
        if root is not None and not root.exists:
            continue
        if root is not None:
            touched.add(root.path)
        if os.path.isdir(path) and not os.path.islink(path):
            if root is not None and not roots_mod.wanted(root, path, excluded, folder=True):
                continue
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if root is None or
                                     roots_mod.wanted(root, os.path.join(dirpath, d), excluded, folder=True))
                for name in sorted(filenames):
                    _one_file(brain, gate, report, os.path.join(dirpath, name), root, brain_files, excluded,
                              worker, batch)
        elif os.path.lexists(path):
            _one_file(brain, gate, report, path, root, brain_files, excluded, worker, batch)
        else:
            batch.flush()  # removals follow the files staged before them
            key = brain.name_key(path)
            gone = ([key] if brain.file_record(key) else []) + [k for k, _ in brain.files_under(gate.shown(path))]
            if gone:
                report.chunks_removed += brain.remove_keys(gone)
                report.files_removed += len(gone)


def _one_file(brain: Brain, gate: Gate, report: IngestReport, path: str, root: Root | None,
              brain_files: set[str], excluded, worker: ReadWorker, batch: Batch) -> None:
    if path in brain_files or (root is not None and not roots_mod.wanted(root, path, excluded)):
        return
    real = sources.resolve(path)
    if root is not None and real != path and not root.covers(real):
        return  # a symlink out of the root, as the walk skips it
    options = root.options if root is not None else {}
    record = brain.file_record(brain.name_key(real))
    if root is not None:
        project = root.project_for(real)
    else:
        project = record["project"] if record else os.path.basename(os.path.dirname(real)) or "default"
    entry = sources._entry(real, root.path if root else None, project)
    report.files_seen += 1
    if isinstance(entry, sources.Skipped):
        report.skip(record["path"] if record else gate.shown(real), entry.reason)
        return
    source = options.get("source") or (record["source"] if record and root is None else "files")
    if options.get("strip_emails") and not gate.settings.strip_emails:
        gate = Gate(config.replace(gate.settings, strip_emails=True))
    doc = sources.file_document(entry, source, options.get("max_bytes", sources.DEFAULT_MAX_BYTES),
                                options.get("project") is not None, worker)
    ingest_document(brain, gate, report, doc, batch)


@dataclass
class Forgotten:
    chunks: int = 0
    files: int = 0
    excluded: list[str] = field(default_factory=list)  # shown names now kept out of a root
    roots_removed: list[str] = field(default_factory=list)


def forget(brain: Brain, settings: config.Settings, *, paths: Iterable[str] = (),
           project: str | None = None, source: str | None = None) -> Forgotten:
    """Remove what `paths` (files or folders, as typed: resolved like ingest stores them; or a
    stdin --name, or a conversation's citation), `project` or `source` name, everywhere. A
    file or folder inside an ingested root is also kept out of that root from now on; a whole
    root stops being one, and so does every root inside a forgotten folder. Raises ValueError,
    before removing anything, for a path, project or source the brain does not hold: a typo
    must not look like success."""
    gate = Gate(settings)
    known = roots_mod.all_roots(brain)
    plan = []
    for typed in paths:
        real = sources.resolve(typed) if _looks_like_path(typed) else typed
        key = brain.name_key(real)
        keys, prefixes, shown = _stored_under(brain, gate, real, key, known)
        covering = [r for r in known if r.path != LLM_LOGS and r.covers(real)]
        if not keys and not prefixes and not (covering and os.path.lexists(real)):
            raise ValueError(f"the brain holds nothing under {gate.shown(typed)} (see: llm brain sources)")
        plan.append((real, shown, key, keys, prefixes, covering))
    label_project, label_source = gate.label(project), gate.label(source)
    if not paths:
        probe = brain.forget_count(project=label_project, source=label_source)
        if not probe:
            what = " and ".join(f"{k} {v!r}" for k, v in (("project", label_project), ("source", label_source)) if v)
            raise ValueError(f"the brain holds nothing with {what} (see: llm brain stats)")
    out = Forgotten()
    if project is not None or source is not None:
        out.chunks, out.files = brain.forget(paths=[p for step in plan for p in step[4]],
                                             keys=[k for step in plan for k in step[3]],
                                             project=label_project, source=label_source)
        return out
    for real, shown, key, keys, prefixes, covering in plan:
        chunks, files = brain.forget(paths=prefixes, keys=keys) if keys or prefixes else (0, 0)
        out.chunks += chunks
        out.files += files
        for root in covering:
            if root.path == real:
                roots_mod.remove(brain, root.path)
                out.roots_removed.append(root.path)
            else:
                roots_mod.exclude(brain, root, key, shown)
                out.excluded.append(shown)
        # roots under the forgotten folder stop being roots too: `update` would bring them back
        for root in known:
            if root.path != LLM_LOGS and root.path != real and root.path.startswith(real.rstrip(os.sep) + os.sep):
                roots_mod.remove(brain, root.path)
                out.roots_removed.append(root.path)
    return out


def _stored_under(brain: Brain, gate: Gate, real: str, key: str, known: list[Root]
                  ) -> tuple[list[str], list[str], str]:
    """What the brain holds of `real` (a file, or everything under a folder): keys, stored names
    to match as prefixes, and the name to show and keep it under. A file's is the name the
    brain stored it under (scrubbed with its content: gate.shown alone misses a value only its
    text labels). A stored name is a safe prefix only where the scrubber left the folder's name
    as it is; otherwise two folders it made alike would be one, so the files under the folder
    on disk are found by their keys."""
    record = brain.file_record(key)
    if record is not None:
        return [key], [], record["path"]
    held = _held_under(brain, real)
    shown = _kept_name(known, key) or (_folder_name(gate, real, held) if held else gate.shown(real))
    if os.path.isdir(real) and shown != real:
        return [k for k, _, _ in held], [], shown
    return [], ([shown] if brain.files_under(shown) else []), shown


def _held_under(brain: Brain, folder: str) -> list[tuple[str, str, str]]:
    """(key, real path, stored name) of every file on disk under `folder` that the brain holds."""
    held = []
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            record = brain.file_record(brain.name_key(path))
            if record is not None:
                held.append((record["key"], path, record["path"]))
    return held


def _kept_name(known: list[Root], key: str) -> str | None:
    """The name a root keeps for `key`, forgotten before: its file is no longer in the ledger."""
    return next((f["name"] for root in known for f in root.forgotten if f["key"] == key), None)


_HIDDEN = "[REDACTED:secret]"  # a step the stored names redacted in more than one way


def _folder_name(gate: Gate, real: str, held: list[tuple[str, str, str]]) -> str:
    """`real` (a folder) as the brain shows it. Each file under it was stored with the folder's
    name scrubbed in that file's own scope, so a value one file labels is redacted in its name
    and not in its neighbours': a step is shown as any stored name (or gate.shown, with no
    document in scope) redacted it, and as none of it when they redacted it differently. A
    stored name whose steps do not line up with its path's (a secret read across a `/`) counts
    every step it does not hold as it is as redacted."""
    steps = real.split("/")
    readings = [(gate.shown(real).split("/"), len(steps))]
    readings += [(name.split("/"), len(path.split("/"))) for _, path, name in held]
    out = []
    for i, step in enumerate(steps):
        forms = {_step_as_read(reading, depth, i, step) for reading, depth in readings} - {step}
        if len(forms) > 1:
            out.append(_HIDDEN)
        else:
            out.append(forms.pop() if forms else step)
    return "/".join(out)


def _step_as_read(reading: list[str], depth: int, i: int, step: str) -> str:
    """Step `i` (`step` on disk) as `reading` (a name of `depth` steps on disk) has it."""
    if len(reading) == depth:
        return reading[i]
    return step if step in reading else _HIDDEN


def _looks_like_path(name: str) -> bool:
    """stdin sources are stored under their --name, llm conversations and facts under their
    citation; anything else is a filesystem path."""
    from .llm_logs import PATH_PREFIX

    if name.startswith((PATH_PREFIX, "fact:")) or name == "-":
        return False
    return os.path.isabs(name) or os.path.exists(name) or "/" in name or name.startswith(".")
