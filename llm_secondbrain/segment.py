"""Text -> paragraph chunks of at most MAX_CHARS, each with the lines it spans.

Paragraphs are the unit people write and look up, so chunks follow them: short paragraphs
are packed together, long ones are split on sentence, then line, then word boundaries (and
as a last resort mid-word). Chunk texts are exact slices of the input, so nothing is
rewritten and every chunk can be cited as path:line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .config import DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS

MAX_CHARS = DEFAULT_MAX_CHARS
MIN_CHARS = DEFAULT_MIN_CHARS

# Boundaries from coarse to fine: blank lines, sentence ends, line breaks, spaces.
_LEVELS = [
    re.compile(r"\n[ \t]*\n\s*"),
    re.compile(r"(?<=[.!?…。])\s+"),
    re.compile(r"\n"),
    re.compile(r"[ \t]+"),
]


@dataclass(frozen=True)
class Segment:
    text: str
    line_start: int  # 1-based, inclusive
    line_end: int


def _pieces(text: str, start: int, end: int, level: int) -> list[tuple[int, int]]:
    """Spans of text[start:end] cut at the boundaries of `level` (separators dropped)."""
    spans, pos = [], start
    for m in _LEVELS[level].finditer(text, start, end):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        spans.append((pos, end))
    return spans


def _split(text: str, start: int, end: int, level: int, max_chars: int) -> list[tuple[int, int]]:
    """Pack the pieces of one level greedily into spans <= max_chars, recursing into any
    piece that is too long on its own."""
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in _pieces(text, start, end, level):
        if e - s > max_chars:
            if cur:  # split the open span together with the long piece, so it can share a chunk
                s, cur = cur[0], None
            if level + 1 < len(_LEVELS):
                out.extend(_split(text, s, e, level + 1, max_chars))
            else:
                out.extend((i, min(i + max_chars, e)) for i in range(s, e, max_chars))
            continue
        if cur and e - cur[0] <= max_chars:
            cur = (cur[0], e)
        else:
            if cur:
                out.append(cur)
            cur = (s, e)
    if cur:
        out.append(cur)
    return out


def _absorb_short(
    spans: list[tuple[int, int]], text: str, max_chars: int, min_chars: int
) -> list[tuple[int, int]]:
    """Join a too-short span to a neighbour when the two still fit, so a heading or a short
    line before a long paragraph is kept with it rather than dropped as noise."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        s, e = spans[i]
        short = len(text[s:e].strip()) < min_chars
        if short and out and e - out[-1][0] <= max_chars:
            out[-1] = (out[-1][0], e)
        elif short and i + 1 < len(spans) and spans[i + 1][1] - s <= max_chars:
            spans[i + 1] = (s, spans[i + 1][1])
        else:
            out.append((s, e))
        i += 1
    return out


def segment(text: str, max_chars: int = MAX_CHARS, min_chars: int = MIN_CHARS) -> list[Segment]:
    """Split `text` into chunks; fragments shorter than `min_chars` are dropped as noise,
    but a short document is never dropped outright (a one-line note must stay findable)."""
    stripped = text.strip()
    if not stripped:
        return []
    spans = _absorb_short(_split(text, 0, len(text), 0, max_chars), text, max_chars, min_chars)
    segments = []
    line, at = 1, 0  # the line of offset `at`: spans come in order, so lines are counted once
    for s, e in spans:
        piece = text[s:e]
        lead = len(piece) - len(piece.lstrip())
        piece = piece.strip()
        if not piece:
            continue
        s += lead
        line += text.count("\n", at, s)
        at = s
        segments.append(Segment(piece, line, line + piece.count("\n")))
    kept = [seg for seg in segments if len(seg.text) >= min_chars]
    if not kept and segments:
        kept = [max(segments, key=lambda seg: len(seg.text))]
    return kept


TITLE_MAX_CHARS = 160
_TITLE_MARKS = re.compile(r"^[\s#>*\-=+|`~]+")


def title(text: str) -> str | None:
    """A document's title: its first line that holds a word, without Markdown marks, cut to
    TITLE_MAX_CHARS at a word boundary. The chunks after the first are indexed with it, so a
    paragraph deep in a note still matches what the note is about."""
    for line in text.splitlines():
        line = _TITLE_MARKS.sub("", line).strip()
        if not any(ch.isalnum() for ch in line):
            continue
        if len(line) > TITLE_MAX_CHARS:
            cut = line.rfind(" ", 0, TITLE_MAX_CHARS + 1)
            line = line[:cut if cut > TITLE_MAX_CHARS // 2 else TITLE_MAX_CHARS].rstrip()
        return line
    return None
