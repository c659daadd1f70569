"""Roots: the folders and files a user gave to `ingest`, remembered with that call's options,
so the brain can be brought up to date (`update`, `watch`) without the user recalling what
they ingested, how; and what was forgotten inside them, so it stays forgotten.

A forgotten file or folder under a root is kept in the root's options as an exclusion: its key
(the brain's keyed hash of its real path, so no name is kept in clear) and its stored name,
for `roots` to show. A walk of the root passes it by; ingesting it explicitly again lifts it.
This module only reads and writes the `roots` table: ingest (`upkeep`) does the driving.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..store import Brain, now_iso
from . import sources

# Keywords of an ingest call that describe one run, not the root.
NOT_REPLAYED = {"stdin", "name", "on_file", "on_skip"}
# llm's conversations are a root like a folder, under this name, with their own options.
LLM_LOGS = "llm:logs"
LOGS_OPTIONS = ("llm_logs", "logs_db", "include_brain_turns", "since", "project")
FORGOTTEN = "forgotten"  # the options key of a root's exclusions: [{"key": ..., "name": ...}]


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

    @property
    def forgotten(self) -> list[dict]:
        return list(self.options.get(FORGOTTEN, []))

    def covers(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path.rstrip(os.sep) + os.sep)

    def project_for(self, path: str) -> str:
        """The project ingest would give a file under this root (see sources.walk)."""
        if self.options.get("project") is not None:
            return self.options["project"]
        folder = self.path if self.path != path else os.path.dirname(path)
        return os.path.basename(folder) or "default"

    def replayed(self) -> dict:
        """The options an ingest of this root is replayed with."""
        options = {k: v for k, v in self.options.items() if k != FORGOTTEN}
        for key in ("include", "exclude"):
            if key in options:
                options[key] = tuple(options[key])
        return options

    def as_dict(self) -> dict:
        options = {k: v for k, v in self.options.items() if k != FORGOTTEN}
        return {"path": self.path, "options": options, "forgotten": [f["name"] for f in self.forgotten],
                "ingested": self.ingested, "updated": self.updated, "exists": self.exists}


def record(brain: Brain, targets: Iterable[str], options: dict[str, Any], *,
           strip_emails: bool = False) -> None:
    """Remember each file or folder of an explicit ingest with that call's options (scrubbed
    by the caller); the last explicit ingest of a path replaces what was remembered for it,
    but not what was forgotten inside it."""
    kept = {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()
            if k not in NOT_REPLAYED and v is not None and v is not False and v != () and v != []}
    if strip_emails:
        kept["strip_emails"] = True
    logs = {k: v for k, v in kept.items() if k in LOGS_OPTIONS}
    kept = {k: v for k, v in kept.items() if k not in LOGS_OPTIONS or k == "project"}
    now = now_iso()
    known = {r.path: r for r in all_roots(brain)}
    rows = []
    for target in targets:
        if target == "-":
            continue
        path = sources.resolve(target)
        mine = dict(kept)
        if path in known and known[path].forgotten:
            mine[FORGOTTEN] = known[path].forgotten
        rows.append({"path": path, "options": json.dumps(mine, sort_keys=True), "ingested": now, "updated": now})
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


def _save_options(brain: Brain, root: Root) -> None:
    with brain.write():
        brain.conn.execute("UPDATE roots SET options = ? WHERE path = ?",
                           (json.dumps(root.options, sort_keys=True), root.path))


def exclude(brain: Brain, root: Root, key: str, name: str) -> None:
    """Keep `key` (a file or folder under `root`) out of the root's walks from now on."""
    if any(f["key"] == key for f in root.forgotten):
        return
    root.options[FORGOTTEN] = [*root.forgotten, {"key": key, "name": name}]
    _save_options(brain, root)


def lift(brain: Brain, roots: list[Root], keys: set[str]) -> None:
    """Ingested explicitly again: these keys are no longer excluded from any root."""
    for root in roots:
        kept = [f for f in root.forgotten if f["key"] not in keys]
        if len(kept) != len(root.forgotten):
            root.options[FORGOTTEN] = kept
            if not kept:
                del root.options[FORGOTTEN]
            _save_options(brain, root)


def excluded_by(brain: Brain, roots: list[Root]) -> Callable[[str], bool] | None:
    """A test of a real path against every root's exclusions (None when there are none)."""
    keys = {f["key"] for root in roots for f in root.forgotten}
    if not keys:
        return None
    return lambda path: brain.name_key(path) in keys


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


def wanted(root: Root, path: str, excluded: Callable[[str], bool] | None = None, *,
           folder: bool = False) -> bool:
    """Would an ingest of `root` with its options take `path`? The walk's rules (noise folders
    and files, virtualenvs, --include / --exclude globs relative to the root, what was
    forgotten), per path."""
    if path == root.path:
        return True
    rel = os.path.relpath(path, root.path)
    parts = rel.split(os.sep)
    exclude_globs = tuple(root.options.get("exclude", ()))
    include = tuple(root.options.get("include", ()))
    dirs = parts if folder else parts[:-1]
    for i, name in enumerate(dirs):
        sub = os.path.join(*parts[: i + 1])
        if (name in sources.NOISE_DIRS or (exclude_globs and sources._matches(sub, exclude_globs))
                or os.path.exists(os.path.join(root.path, sub, "pyvenv.cfg"))
                or (excluded is not None and excluded(os.path.join(root.path, sub)))):
            return False
    if folder:
        return True
    if (parts[-1] in sources.NOISE_FILES or (exclude_globs and sources._matches(rel, exclude_globs))
            or (excluded is not None and excluded(path))):
        return False
    return not include or sources._matches(rel, include)
