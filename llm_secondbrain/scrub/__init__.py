"""Redact secrets before anything is stored or printed (see `engine` for how).

The package's public face: `scrub` and `scrub_report` for one text, `scrub_document` for
everything one document brings (one scope, one memory), `explain` for why (which rule redacted
each value, which filter let a labelled value go), `load_allow_patterns` for the user's allow
file, and `rules_identity()`, which brains remember with every file they store.
"""
from __future__ import annotations

import functools
import hashlib
import os
import unicodedata

from .document import Remembered, scrub_document
from .engine import explain, load_allow_patterns, scrub, scrub_report

__all__ = ["Remembered", "explain", "load_allow_patterns", "rules_identity", "scrub", "scrub_document",
           "scrub_report"]


@functools.lru_cache(maxsize=1)
def rules_identity() -> str:
    """What decides scrub's output, as one short string: a hash of every file of this package
    (the rules and their catalogue, the filters, the engine), of the ingest gate and of the
    Unicode database that `str.lower()`, `\\w` and `isalnum()` read. A brain stores it with
    every file; any difference means the file was scrubbed by other rules and is read again.
    Computed, never typed: a hand-kept version number is forgotten exactly when it matters."""
    digest = hashlib.sha256(f"unicode {unicodedata.unidata_version}\n".encode())
    root = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(folder, name) for folder, _, files in sorted(os.walk(root))
             for name in sorted(files) if not name.endswith((".pyc", ".pyo"))]
    # ... and the gate, which decides what a document's scope holds (its name read step by step)
    paths.append(os.path.join(os.path.dirname(root), "ingest", "gate.py"))
    for path in paths:
        with open(path, "rb") as f:
            digest.update(os.path.relpath(path, root).encode() + b"\0" + f.read() + b"\0")
    return "rules-" + digest.hexdigest()[:16]
