"""Walk what the user named and yield documents to ingest, strictly read-only.

A source yields `Document`s: where a text comes from (a path or a name, its project, source,
date, role, ref) and how to read it, which is deferred so that files are stat-ed first and
read only when the ingest asks (unchanged files are skipped without reading them). Files and
folders are one source (`walk`), standard input another (`stdin_document`); the bytes of a
file become sections through the reader of its format (`readers.py`). Nothing here ever writes, renames or locks a source; symlinks are not
followed out of the folder being ingested, nor into loops; FIFOs and devices are never opened.
"""
from __future__ import annotations

import codecs
import errno
import fnmatch
import functools
import os
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterator, TextIO

# Folders that are tooling, not notes.
NOISE_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", ".idea", ".ipynb_checkpoints",
    "site-packages", ".eggs", ".gradle", ".terraform", ".next", ".hypothesis",
}
NOISE_FILES = {".DS_Store", "Thumbs.db"}
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
SNIFF_BYTES = 8192


class SourceError(Exception):
    """A path the user named cannot be used (missing, unreadable)."""


class Skip(Exception):
    """A file is left out, for a reason that the summary counts."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class FileEntry:
    """A regular file found under a target, not yet read."""

    path: str  # absolute, resolved
    root: str | None  # the folder target it was found under, for removal of vanished files
    size: int
    mtime_ns: int
    project: str

    @property
    def ts(self) -> str:
        return iso_from_ns(self.mtime_ns)


@dataclass
class Skipped:
    path: str
    reason: str


@dataclass
class Walk:
    """What a walk found: entries and skips as they come, then the folders it covered."""

    roots: list[str] = field(default_factory=list)


def iso_from_ns(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).isoformat(timespec="seconds")


def resolve(path: str) -> str:
    """The one spelling of a path the brain stores: absolute, symlinks resolved."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def _matches(rel: str, patterns: tuple[str, ...]) -> bool:
    name = os.path.basename(rel)
    return any(fnmatch.fnmatch(rel, f) or fnmatch.fnmatch(name, f) for p in patterns for f in _forms(p))


@functools.lru_cache(maxsize=256)
def _forms(pattern: str) -> tuple[str, ...]:
    """`pattern` and, for each `**/` opening it or one of its steps, the same without it:
    `**/` stands for zero or more folders, as in .gitignore, where fnmatch alone wants at
    least one ('**/*.md' would miss a top-level note, 'docs/**/*.md' docs/a.md)."""
    at = next((i for i in range(len(pattern)) if pattern.startswith("**/", i)
               and (i == 0 or pattern[i - 1] == "/")), None)
    if at is None:
        return (pattern,)
    head = pattern[:at]
    return tuple(head + step + rest for rest in _forms(pattern[at + 3:]) for step in ("**/", ""))


def _name_ok(path: str) -> bool:
    """False for a name holding bytes that are not UTF-8 (Python gives them as lone surrogates):
    the brain stores paths as text and cites them, so such a file is skipped, not stored."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _dangling(path: str) -> str:
    """Why a symlink that does not lead to a file cannot be followed."""
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "symlink loop"
    return "broken symlink"


def check_target(target: str) -> None:
    """Fail early, in one line, on a path the user named that cannot be ingested."""
    if target == "-":
        return
    if not os.path.lexists(target):
        raise SourceError(f"no such file or folder: {target}")
    if not os.path.exists(target):
        raise SourceError(f"broken symlink: {target}")
    mode = os.R_OK | (os.X_OK if os.path.isdir(target) else 0)
    if not os.access(target, mode):
        raise SourceError(f"permission denied: {target}")


def walk(
    targets: list[str],
    *,
    project: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    skip_paths: set[str] = frozenset(),
    walk_info: Walk | None = None,
    excluded: Callable[[str], bool] | None = None,
) -> Iterator[FileEntry | Skipped]:
    """Yield a FileEntry for every candidate file under `targets` (stdin excluded), and a
    Skipped for everything left out on the way. Files and folders for which `excluded` is
    true (what was forgotten inside a root) are passed by without a word."""
    seen: set[str] = set()
    for target in targets:
        if target == "-":
            continue
        real = resolve(target)
        if not _name_ok(real):
            yield Skipped(real, "name not UTF-8")
            continue
        if os.path.isdir(real):
            if walk_info is not None:
                walk_info.roots.append(real)
            yield from _walk_dir(real, project or os.path.basename(real) or "default",
                                 include, exclude, skip_paths, seen, excluded)
        else:
            if real in seen:
                continue
            seen.add(real)
            yield _entry(real, None, project or os.path.basename(os.path.dirname(real)) or "default")


def _entry(path: str, root: str | None, project: str) -> FileEntry | Skipped:
    try:
        st = os.stat(path)
    except OSError as e:
        return Skipped(path, "unreadable" if isinstance(e, PermissionError) else "vanished")
    if not stat.S_ISREG(st.st_mode):
        return Skipped(path, "not a regular file")
    return FileEntry(path, root, st.st_size, st.st_mtime_ns, project)


def _walk_dir(root, project, include, exclude, skip_paths, seen, excluded) -> Iterator[FileEntry | Skipped]:
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append, followlinks=False):
        while errors:
            err = errors.pop()
            yield Skipped(err.filename or dirpath, "unreadable folder")
        rel_dir = os.path.relpath(dirpath, root)
        kept_dirs = []
        for d in sorted(dirnames):
            rel = os.path.normpath(os.path.join(rel_dir, d))
            full = os.path.join(dirpath, d)
            if not _name_ok(d):
                yield Skipped(full, "name not UTF-8")
                continue
            if d in NOISE_DIRS or os.path.exists(os.path.join(full, "pyvenv.cfg")):
                continue
            if exclude and _matches(rel, exclude):
                continue
            if os.path.islink(full):
                yield Skipped(full, "symlinked folder")
                continue
            if excluded is not None and excluded(full):
                continue
            kept_dirs.append(d)
        dirnames[:] = kept_dirs
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            rel = os.path.normpath(os.path.join(rel_dir, f))
            if f in NOISE_FILES or full in skip_paths:
                continue
            if exclude and _matches(rel, exclude):
                continue
            if include and not _matches(rel, include):
                continue
            if not _name_ok(f):
                yield Skipped(full, "name not UTF-8")
                continue
            real = full
            if os.path.islink(full):
                if not os.path.exists(full):
                    yield Skipped(full, _dangling(full))
                    continue
                real = os.path.realpath(full)
                if not real.startswith(root + os.sep):
                    yield Skipped(full, "symlink out of folder")
                    continue
                if real in skip_paths:
                    continue
            if real in seen or (excluded is not None and excluded(real)):
                continue
            seen.add(real)
            yield _entry(real, root, project)
        if errors:
            for err in errors:
                yield Skipped(err.filename or dirpath, "unreadable folder")
            errors.clear()
    for err in errors:  # (a folder os.walk could not list after it gave its last one)
        yield Skipped(err.filename or root, "unreadable folder")


@dataclass
class Document:
    """One thing to ingest: its identity in the brain and how to read it.

    `read()` returns (sections, raw bytes) or raises Skip; the raw bytes' hash tells an
    unchanged document from a changed one. `size`/`mtime_ns` (files only) let an unchanged
    file be skipped before it is read. `replace`: the document's chunks replace what the
    brain held under its path (False adds to it, as unnamed standard input does)."""

    path: str
    project: str
    source: str
    read: Callable[[], tuple[list, bytes]]
    explicit_project: bool = False
    ts: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    replace: bool = True
    format: str = "text"  # the reader's name (pdf, docx, mail, ...), kept in the files ledger
    library: bool = False  # read by a document library (whose log lines may quote it)


def file_document(entry: FileEntry, source: str, max_bytes: int, explicit_project: bool,
                  worker=None) -> Document:
    """A file to ingest, read within the limits --max-size sets (`readers.Limits`): the formats
    whose libraries parse what a stranger wrote are read in `worker` (a `worker.ReadWorker`)
    when there is one, so that their time and memory are bounded too."""
    from .readers import Limits, format_for, read_bounded

    fmt = format_for(entry.path)

    def read() -> tuple[list, bytes]:
        raw = read_bytes(entry, max_bytes)
        limits = Limits.for_size(max_bytes)
        if worker is not None and fmt.module is not None:
            return worker.read(fmt, raw, entry.path, limits), raw
        return read_bounded(fmt, raw, entry.path, limits), raw

    return Document(entry.path, entry.project, source, read, explicit_project=explicit_project,
                    ts=entry.ts, size=entry.size, mtime_ns=entry.mtime_ns, format=fmt.name,
                    library=fmt.module is not None)


def stdin_document(stream: TextIO | None, *, name: str | None, project: str | None,
                   source: str | None, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """Standard input: stored under its --name (which a later ingest of the name replaces),
    or added to the document `-`. Read up to --max-size characters, cut at a paragraph."""
    from .readers import Limits, Section, bounded

    def read() -> tuple[list, bytes]:
        text = (stream.read(max_bytes + 1) if stream is not None else "").replace("\r\n", "\n")
        return bounded([Section(text)], Limits.for_size(max_bytes)), text.encode("utf-8", "surrogatepass")

    return Document(name or "-", project or "default", source or "stdin", read,
                    explicit_project=project is not None, replace=name is not None)


def read_bytes(entry: FileEntry, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Read a file's bytes, or raise Skip.

    Opened O_NONBLOCK and checked again after open, so a file swapped for a FIFO between the
    walk and the read cannot hang the ingest.
    """
    if entry.size > max_bytes:
        raise Skip("too large")
    try:
        fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except PermissionError:
        raise Skip("unreadable") from None
    except FileNotFoundError:
        raise Skip("vanished") from None
    except OSError:
        raise Skip("unreadable") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Skip("not a regular file")
        if st.st_size > max_bytes:
            raise Skip("too large")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # its size and one byte more (a file that grew since is read on, up to the cap):
            # reading max_bytes + 1 at once allocates that much for every small file
            raw = fh.read(st.st_size + 1)
            if len(raw) > st.st_size:
                raw += fh.read(max_bytes + 1 - len(raw))
    except OSError:
        raise Skip("unreadable") from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise Skip("too large")
    return raw


def decode(raw: bytes) -> str:
    """Bytes -> text, or Skip('binary') / Skip('not UTF-8'). Newlines become \\n."""
    if raw.startswith(codecs.BOM_UTF8):
        text = raw[3:].decode("utf-8", errors="strict") if _utf8_ok(raw[3:]) else None
    elif raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = raw.decode("utf-16")
        except UnicodeDecodeError:
            text = None
    else:
        if b"\x00" in raw[:SNIFF_BYTES]:
            raise Skip("binary")
        text = raw.decode("utf-8") if _utf8_ok(raw) else None
    if text is None:
        raise Skip("not UTF-8")
    if "\x00" in text:
        raise Skip("binary")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _utf8_ok(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
