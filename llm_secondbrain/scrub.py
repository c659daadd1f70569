"""Redact secrets before anything is stored or printed.

Seed-level rule families (PEM private keys, JWTs, vendor key shapes, labelled values, URL
credentials, `Company2026!`-style passwords, optional e-mails). Every replacement reads
`[REDACTED:<kind>]` so a chunk still makes sense, and the report names kinds and counts only,
never values, so it can be printed and logged safely.
"""
from __future__ import annotations

import re
from collections import Counter

# Bump when the rules change: brains remember the version they were filled with, and
# chunks stored under older rules are scrubbed again.
RULES_VERSION = 1

_RULES: list[tuple[str, re.Pattern[str], int]] = [
    # (kind, pattern, group to redact; 0 = whole match)
    ("private_key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        re.S), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0),
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), 0),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b"), 0),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("openai_api_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"), 0),
    ("stripe_key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("url_credentials", re.compile(r"(?<=://)[^\s:/@]+:([^\s@/]+)(?=@)"), 1),
    ("bearer_token", re.compile(r"(?i)\b(?:Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    ("labelled_secret", re.compile(
        r"(?i)\b(?:password|passwd|pwd|pass|token|secret|api[_-]?key|apikey|client[_-]?secret|private[_-]?key)"
        r"\b[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{6,})"), 1),
    ("password", re.compile(
        r"(?i)\b(?:password|passord|passwort|mot de passe)\b[^\n]{0,20}?\b(?:is|er|ist|est)\s+"
        r"([A-Z][A-Za-z]{2,}\d{2,4}[!?#$%&*@]+)"), 1),
]
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_PLACEHOLDER = re.compile(r"^\[REDACTED:[a-z_]+\]$|^\$\{|^\{\{|^<|^x{4,}$", re.I)


def scrub_report(text: str, *, strip_emails: bool = False) -> tuple[str, Counter]:
    """Return the scrubbed text and a Counter of redacted kinds (never the values)."""
    counts: Counter = Counter()
    for kind, pattern, group in _RULES:
        def _sub(m: re.Match, kind=kind, group=group) -> str:
            value = m.group(group)
            if _PLACEHOLDER.search(value) or value.startswith("[REDACTED"):
                return m.group(0)
            counts[kind] += 1
            start, end = m.span(group)
            whole = m.group(0)
            s, e = start - m.start(), end - m.start()
            return whole[:s] + f"[REDACTED:{kind}]" + whole[e:]
        text = pattern.sub(_sub, text)
    if strip_emails:
        def _mail(m: re.Match) -> str:
            counts["email"] += 1
            return "[REDACTED:email]"
        text = _EMAIL.sub(_mail, text)
    return text, counts


def scrub(text: str, *, strip_emails: bool = False) -> str:
    """Redact every secret the rules know; idempotent, never raises on any str."""
    return scrub_report(text, strip_emails=strip_emails)[0]
