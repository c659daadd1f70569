"""A short note that points to another stands for it.

A vault is full of notes that are little more than a link: a stub ("Someone mentioned
[[numpy-masked-arrays]]. TODO."), a line in a journal ("Retention rule agreed ([[2023-10-03
Retention]])"). Such a note says what its target is about in a few words, so it can match a
question as well as the target does, or better, and rank above it; but the answer is in the note
it links to. When a pointer ranks above a note it links to, that note is moved to just above the
pointer: the person gets the substance first and the pointer right after it. Measured on the
two bench vaults (bench_kinds.py): the answer of 8 of 148 questions rose, 5 of them to the top,
none fell (hybrid nDCG@10: vault report 0.817 -> 0.840, tune 0.807; vault2 report 0.720 ->
0.733, tune 0.705 -> 0.749); jbranchaud-til and the Chinese and Japanese sets have no links.

A link is Obsidian's `[[name]]`, `[[folder/name|shown text]]` or `[[name#heading]]`, or Markdown's
`[shown text](folder/name.md)`; it names a note by its file name, as Obsidian resolves it, or by
its title. Only a note of one passage of at most POINTER_CHARS characters is a pointer, and it
gives way to one note: the best-ranked of those it links to.
"""
from __future__ import annotations

import os
import re
from urllib.parse import unquote

from ..store import id_batches

POINTER_CHARS = 400  # a note of one passage this short that links to another is a pointer to it
# [[name]], [[folder/name|shown]], [[name#heading]]; a Markdown link to a note: [shown](folder/name.md)
# (a web address is no note: "[site](https://example.org/a.md)")
_LINK = re.compile(r"\[\[([^\[\]|#\n]+)[^\[\]\n]*\]\]|\]\((?!\w+:)(?:<([^<>\n]+?)\.md(?:#[^<>\n]*)?>"
                   r"|([^()<>\s]+?)\.md(?:#[^()\s]*)?)\)")


def _stem(key: tuple) -> str | None:
    """The file name without its extension, lower-cased, of a document key (path, ref)."""
    path = key[0]
    return os.path.splitext(os.path.basename(path))[0].lower() if path else None


def _pointers(conn, ids: list[int]) -> dict[int, set[str]]:
    """{chunk id: the names it links to} for those of `ids` that are pointers."""
    out: dict[int, set[str]] = {}
    for part, marks in id_batches(ids):
        for cid, text, alone in conn.execute(
                f"SELECT c.id, c.text, NOT EXISTS (SELECT 1 FROM chunks d WHERE d.path = c.path "
                f"AND d.ref IS c.ref AND d.id != c.id) FROM chunks c WHERE c.id IN ({marks}) "
                f"AND c.path IS NOT NULL AND length(c.text) <= ? AND (instr(c.text, '[[') OR instr(c.text, '.md'))",
                [*part, POINTER_CHARS]):
            if alone:
                names = {unquote(m.group(1) or m.group(2) or m.group(3)).strip().rsplit("/", 1)[-1].lower()
                         for m in _LINK.finditer(text)}
                if names:
                    out[cid] = names
    return out


def _titles(conn, ids: list[int]) -> dict[int, str]:
    """{chunk id: its note's title, lower-cased} (a link may name a note by its title)."""
    out: dict[int, str] = {}
    for part, marks in id_batches(ids):
        for cid, title in conn.execute(f"SELECT id, title FROM chunks WHERE id IN ({marks}) AND title IS NOT NULL",
                                       part):
            out[cid] = title.strip().lower()
    return out


def followed(conn, scored: list[tuple[int, dict]], groups: dict[int, tuple], holders: dict,
             depth: int) -> list[tuple[int, dict]]:
    """`scored` (best first) with the note each pointer among the first `depth` links to moved to
    just above it, when that note ranks below it. A link names a note by its file name or its
    title. A pointer that holds the query's rare token gives way only to a note that holds it
    too. (Each pointer looks its targets up by name, not down the list: a journal of short
    linked days asked for a thousand hits stays fast.)"""
    pointers = _pointers(conn, [cid for cid, _ in scored[:depth]])
    if not pointers:
        return scored
    titles = _titles(conn, [cid for cid, _ in scored])
    order = {cid: n for n, (cid, _) in enumerate(scored)}
    named: dict[str, list[int]] = {}  # a note's file name and title -> its chunks, best first
    for cid, _ in scored:
        for name in {_stem(groups.get(cid, (None, cid))), titles.get(cid)} - {None}:
            named.setdefault(name, []).append(cid)
    out = list(scored)
    above: set[int] = set()  # chunks at or above the one being looked at
    i = 0
    while i < min(depth, len(out)):
        cid, entry = out[i]
        above.add(cid)
        names = pointers.get(cid)
        if names:
            own = groups.get(cid, (None, cid))
            found = [t for name in names for t in named.get(name, ())
                     if t not in above and groups.get(t, (None, t)) != own and (cid not in holders or t in holders)]
            if found:
                target = min(found, key=order.__getitem__)
                info = out.pop(next(j for j in range(i + 1, len(out)) if out[j][0] == target))[1]
                out.insert(i, (target, {**info, "score": entry["score"], "via": cid}))
                above.add(target)
                i += 1  # (the pointer is now one further down)
        i += 1
    return out


def lent(scores: dict[int, float], cid: int, via: dict[int, int]) -> float | None:
    """A lane's score of hit `cid`, or of the pointer it was moved above when that one is higher:
    the passages handed to a model stop where the scores fall far below the top (floor.tail),
    and a note moved up for its pointer is as strong as the pointer."""
    own, pointer = scores.get(cid), scores.get(via[cid]) if cid in via else None
    return own if pointer is None else pointer if own is None else max(own, pointer)
