"""Redact secrets before anything is stored or printed (see `engine` for how).

The package's public face: `scrub` and `scrub_report` for one text, `load_allow_patterns` for
the user's allow file, and `RULES_VERSION`, which brains remember per file."""
from __future__ import annotations

from .engine import RULES_VERSION, load_allow_patterns, scrub, scrub_report

__all__ = ["RULES_VERSION", "load_allow_patterns", "scrub", "scrub_report"]
