"""Redact secrets before anything is stored or printed (see `engine` for how).

The package's public face: `scrub` and `scrub_report` for one text, `scrub_document` for
everything one document brings (one scope, one memory), `load_allow_patterns` for the user's
allow file, and `rules_identity()`, which brains remember with every file they store.
"""
from __future__ import annotations

import functools
import hashlib
import os
import unicodedata

from .document import scrub_document
from .engine import RULES_VERSION, load_allow_patterns, scrub, scrub_report

__all__ = ["load_allow_patterns", "rules_identity", "scrub", "scrub_document", "scrub_report"]


@functools.lru_cache(maxsize=1)
def rules_identity() -> str:
    """What decides scrub's output, as one short string: a hash of this package's code (the
    rules, the filters, the engine) and of the Unicode database that `str.lower()`, `\\w` and
    `isalnum()` read. A brain stores it with every file; any difference means the file was
    scrubbed by other rules and is read again. Computed, never typed: a hand-kept version
    number is forgotten exactly when it matters."""
    digest = hashlib.sha256(f"unicode {unicodedata.unidata_version}\n".encode())
    folder = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read() + b"\0")
    return "rules-" + digest.hexdigest()[:16]
