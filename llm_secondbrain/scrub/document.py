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
from collections.abc import Sequence

from . import engine

FIELD_GLUE = "\n\n"


def scrub_document(fields: Sequence[str], sections: Sequence[str], *, strip_emails: bool = False,
                   allow: Sequence[re.Pattern] | None = None, hints: Sequence[str] = ()
                   ) -> tuple[list[str], list[str], Counter]:
    """Scrub a document's `fields` (name, title, metadata values) and `sections` in one scope;
    returns them scrubbed, in the same order, and the kinds redacted (each secret counted once,
    however many parts it touched). `hints` join the scope last and are neither returned nor
    counted: another reading of a field (a file name without its extension), so that a value
    found there is redacted in the field as written."""
    pieces: list[str] = []
    bounds: list[tuple[int, int]] = []
    pos = 0
    for i, part in enumerate([*fields, *sections, *hints]):
        if i:
            after_field = i <= len(fields)
            glue = FIELD_GLUE if after_field else ("" if pieces[-1].endswith("\n") else "\n")
            pieces.append(glue)
            pos += len(glue)
        pieces.append(part)
        bounds.append((pos, pos + len(part)))
        pos += len(part)
    text = engine.storable("".join(pieces))
    counts: Counter = Counter()
    found = engine.spans(text, strip_emails=strip_emails, allow=allow, counts=counts)
    told = bounds[-len(hints) - 1][1] if hints else len(text)  # (the end of what is returned)
    for s, _, kind in found:
        if s < told:
            counts[kind] += 1
    out: list[str] = []
    first = 0
    for a, b in bounds[:len(bounds) - len(hints)]:
        while first < len(found) and found[first][1] <= a:
            first += 1
        cut = []
        for s, e, kind in found[first:]:
            if s >= b:
                break
            cut.append((max(s, a) - a, min(e, b) - a, kind))
        out.append(engine.apply(text[a:b], cut) if cut else text[a:b])
    return out[:len(fields)], out[len(fields):], counts
