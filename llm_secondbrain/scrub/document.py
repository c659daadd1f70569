"""One scope per document: everything a document brings is scrubbed together.

A file's text arrives in parts (PDF pages, DOCX sections, EPUB chapters, mail messages, the
turns of a conversation) and with fields (its name, a title, a Subject or From, front matter).
Scrubbed one by one, a value found in one part would stay in clear in the next, and a label
ending one page would never meet its value at the top of the next. So the parts are joined into
one text, the rules run over it once (a value found anywhere is then redacted everywhere), and
the redactions are cut back into the parts. A redaction that crosses a part's edge is redacted
on both sides: nothing of a secret is kept because it straddled two pages.

Fields are set apart by a blank line, so a name or a Subject never becomes the label of the body
that follows it; consecutive sections by a line break, the way the pages read.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from . import engine
from .patterns import lazy

FIELD_GLUE = "\n\n"


@dataclass
class Remembered:
    """What a document's earlier versions had redacted, as keyed digests (`digest`, the brain's
    salt: a copied brain cannot be tested against guesses), and what this version redacts. A
    value found by its label once ("router password: …") and repeated bare in the note is
    redacted everywhere in that version; when the label is edited out, the bare repeat is
    still the same secret, and only the document's past knows it."""

    digest: Callable[[str], str]
    kinds: dict[str, str]  # digest -> kind, from the versions stored before
    found: dict[str, str] = field(default_factory=dict)  # digest -> kind, this version's


# a word as it may stand around a value: opening and closing punctuation, a label glued by = or :
_WORD = lazy(r"\S{6,}")
_LEAD = "([{<\"'`*"
_TRAIL = ")]}>\"'`*.,;:!?"
_KEEP = range(6, 257)  # the lengths of value remembered (a word is at least six characters)


def _candidates(word: str) -> list[tuple[int, int]]:
    """(start, end) of the readings of `word` that could be a remembered value: as it stands,
    without up to three opening and four closing marks, and after its last = or :."""
    out = []
    lead = next((i for i, c in enumerate(word[:3]) if c not in _LEAD), min(3, len(word)))
    for a in range(lead + 1):
        for b in range(len(word), max(a, len(word) - 4) - 1, -1):
            if b - a in _KEEP:
                out.append((a, b))
            if b <= a or word[b - 1] not in _TRAIL:
                break
    sign = max(word.rfind("="), word.rfind(":"))
    if sign >= 0 and len(word) - sign - 1 in _KEEP:
        out.append((sign + 1, len(word)))
    return out


def _recalled(text: str, found: list[tuple[int, int, str]], memory: Remembered) -> list[tuple[int, int, str]]:
    """Spans of `text`, outside those `found`, holding a value the document's past redacted."""
    taken = [(s, e) for s, e, _ in found]
    out = []
    for m in _WORD.finditer(text):
        ws, we = m.span()
        if any(s < we and ws < e for s, e in taken):
            continue
        word = m.group()
        for a, b in _candidates(word):
            kind = memory.kinds.get(memory.digest(word[a:b]))
            if kind is not None:
                out.append((ws + a, ws + b, kind))
                break
    return out


def scrub_document(fields: Sequence[str], sections: Sequence[str], *, strip_emails: bool = False,
                   allow: Sequence[re.Pattern] | None = None, hints: Sequence[str] = (),
                   remembered: Remembered | None = None) -> tuple[list[str], list[str], Counter]:
    """Scrub a document's `fields` (name, title, metadata values) and `sections` in one scope;
    returns them scrubbed, in the same order, and the kinds redacted (each secret counted once,
    however many parts it touched). `hints` join the scope first, set apart as fields are, and
    are neither returned nor counted: another reading of a field (a file name without its
    extension), so that a value found there is redacted in the field as written. With
    `remembered`, a value the document's earlier versions redacted is redacted here too, and
    what this version redacts is noted."""
    pieces: list[str] = []
    bounds: list[tuple[int, int]] = []
    pos = 0
    heads = len(hints) + len(fields)  # (a blank line after each: no label reads across it)
    for i, part in enumerate([*hints, *fields, *sections]):
        if i:
            glue = FIELD_GLUE if i <= heads else ("" if pieces[-1].endswith("\n") else "\n")
            pieces.append(glue)
            pos += len(glue)
        pieces.append(part)
        bounds.append((pos, pos + len(part)))
        pos += len(part)
    text = engine.storable("".join(pieces))
    counts: Counter = Counter()
    found = engine.spans(text, strip_emails=strip_emails, allow=allow, counts=counts)
    if remembered is not None:
        if remembered.kinds:
            found = sorted(found + _recalled(text, found, remembered))
        for s, e, kind in found:
            if e - s in _KEEP and not any(c.isspace() for c in text[s:e]):
                remembered.found[remembered.digest(text[s:e])] = kind
    told = bounds[len(hints) - 1][1] if hints else 0  # (what is returned starts after the hints)
    for s, _, kind in found:
        if s >= told:
            counts[kind] += 1
    out: list[str] = []
    first = 0
    for a, b in bounds[len(hints):]:
        while first < len(found) and found[first][1] <= a:
            first += 1
        cut = []
        for s, e, kind in found[first:]:
            if s >= b:
                break
            cut.append((max(s, a) - a, min(e, b) - a, kind))
        out.append(engine.apply(text[a:b], cut) if cut else text[a:b])
    return out[:len(fields)], out[len(fields):], counts
