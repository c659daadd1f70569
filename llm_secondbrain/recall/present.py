"""Presentation: hits as every face shows them (citation, snippet) and the result around them."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Sequence

from ..cjk import RUN
from .query import _WORD, content_words, literal_terms

STEM_CHARS = 5  # snippet: words match on their first letters (rebase, rebasing)
SNIPPET_CHARS = 200
SCALES = {
    "hybrid": "weighted sum of each lane's z-score over its pool (0 = the pool's last); "
              "a literal hit adds a bonus above every other score",
    "rrf": "weighted reciprocal rank fusion: sum of w / (rrf_k + rank)",
    "dense": "cosine similarity to the query (-1..1)",
    "lexical": "BM25, negated (higher is better)",
}


@dataclass
class Hit:
    id: int
    text: str
    path: str | None
    line: int | None
    line_end: int | None
    project: str | None
    source: str | None
    ts: str | None
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)
    meta: dict | None = None  # what the format knows: page, chapter, message id, heading
    snippet: str = ""  # the part of the chunk that matched: the literal token's line, or the best line
    match_line: int | None = None  # the line of the file that snippet is on
    superseded_by: str | None = None  # a remembered fact a newer one replaced: its citation (history)
    superseded: str | None = None  # ... and when
    kind: str | None = None  # recall.kind: note, document, email, webpage, conversation, fact
    flags: list[str] = field(default_factory=list)  # recall.inject: why it reads as instructions to a model

    @property
    def citation(self) -> str:
        """The one form every face cites a hit by: `path:line` of the matching line, inside
        its page (`path#page=N:line`), its chapter (`path#chapter-N`) or its message
        (`path#<message id>`) where the format has them."""
        meta = self.meta or {}
        line = self.match_line or self.line
        at = f":{line}" if line else ""
        if "page" in meta:
            return f"{self.path}#page={meta['page']}{at}"
        if "chapter" in meta:
            return f"{self.path}#chapter-{meta['chapter']}"
        if "message_id" in meta:
            return f"{self.path}#{meta['message_id']}"
        return f"{self.path}{at}" if at else str(self.path)

    def as_dict(self) -> dict:
        return {
            "id": self.id, "path": self.path, "line": self.line, "line_end": self.line_end,
            "match_line": self.match_line, "citation": self.citation, "project": self.project,
            "source": self.source, "ts": self.ts, "score": self.score, "ranks": self.ranks,
            "contributions": self.contributions, "meta": self.meta, "snippet": self.snippet,
            "text": self.text, "kind": self.kind, "flags": self.flags, **({"superseded_by": self.superseded_by, "superseded": self.superseded}
                                  if self.superseded_by else {}),
        }


@dataclass
class RecallResult:
    hits: list[Hit]
    mode: str  # the mode actually used, after any degradation
    notes: list[str] = field(default_factory=list)  # one-line reasons for degrading
    weights: dict[str, float] = field(default_factory=dict)  # hybrid: the lane weights used
    fusion: str | None = None  # hybrid: "zscore" or "rrf"
    why: str | None = None  # hybrid: why these weights (the fusion rule that applied)
    relevant: bool = True  # False: no hit clears the relevance floor ("nothing matches")
    strong: int = 0  # the leading hits near the top one (floor.tail): what a model is given
    scale: str = ""  # what the scores are: SCALES[...]
    stale: set[int] = field(default_factory=set)  # hits whose file changed since it was ingested
    dense: str | None = None  # how the dense lane searched, and why that way (vindex.Dense.how)
    when: object | None = None  # recall.when.When: the time phrase read from the query, if any

    def for_a_model(self) -> list[Hit]:
        """The hits a model is given (fragment, tool, MCP): none below the floor ("nothing
        matches"), and above it none far below the top one (`strong`): a prompt padded with
        unrelated passages invites the model to use them."""
        return self.hits[:self.strong] if self.relevant else []



def snippet(text: str, patterns: Sequence[re.Pattern[str]], words: Sequence[str]) -> tuple[str, int]:
    """(the part of a chunk that matched, the index of its line in the chunk): the line of the
    first literal term found, else the line sharing most content words with the query (a
    word matches on its first STEM_CHARS letters, so `rebasing` finds `rebase`), else the
    first line that holds a word. A long line is cut to SNIPPET_CHARS around the match."""
    lines = text.split("\n")
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            index = text.count("\n", 0, m.start())
            return _window(lines[index], m.start() - (text.rfind("\n", 0, m.start()) + 1)), index
    stems = {w.lower()[:STEM_CHARS] for w in words if len(w) > 1}
    chars = {w for w in words if len(w) == 1 and RUN.match(w)}  # CJK: one character a word
    best, index, at = 0, None, 0
    for i, line in enumerate(lines):
        found = [(m.start(), m.group().lower()[:STEM_CHARS]) for m in _WORD.finditer(line)
                 if m.group().lower()[:STEM_CHARS] in stems]
        found += [(line.find(ch), ch) for ch in chars if ch in line]
        shared = len({key for _, key in found})
        if shared > best:
            best, index, at = shared, i, min(found)[0]
    if index is None:
        index = next((i for i, line in enumerate(lines) if _WORD.search(line)), 0)
    return _window(lines[index], at), index


def _window(line: str, at: int) -> str:
    """`line` trimmed, or SNIPPET_CHARS of it around position `at`, marked where cut."""
    if len(line) <= SNIPPET_CHARS:
        return line.strip()
    start = max(0, min(at - SNIPPET_CHARS // 3, len(line) - SNIPPET_CHARS))
    part = line[start:start + SNIPPET_CHARS].strip()
    return ("…" if start else "") + part + ("…" if start + SNIPPET_CHARS < len(line) else "")


def _hits(conn, scored: list[tuple[int, dict]], query: str) -> list[Hit]:
    if not scored:
        return []
    ids = [cid for cid, _ in scored]
    rows = {
        r[0]: r
        for r in conn.execute(
            "SELECT id, text, path, line_start, line_end, project, source, coalesce(ts, created), meta "
            f"FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids,
        )
    }
    patterns = [pattern for _, pattern, _ in literal_terms(query)]
    words = content_words(query).split()
    hits = []
    for cid, info in scored:
        r = rows.get(cid)
        if r is None:
            continue
        part, index = snippet(r[1], patterns, words)
        hits.append(Hit(
            id=r[0], text=r[1], path=r[2], line=r[3], line_end=r[4], project=r[5], source=r[6],
            ts=r[7], score=round(info["score"], 6), ranks=info.get("ranks", {}),
            contributions={k: round(v, 6) for k, v in info.get("contributions", {}).items()},
            meta=json.loads(r[8]) if r[8] else None,
            snippet=part, match_line=(r[3] + index) if r[3] else None,
        ))
    return hits
