#!/usr/bin/env python3
"""List every redaction the scrubber makes on a folder of real notes, for a person to review.

    python3 bench/scrub_notes.py                         # ../shared/data/jbranchaud-til/notes.tar.gz
    python3 bench/scrub_notes.py path/to/notes.tar.gz
    python3 bench/scrub_notes.py /usr/share/doc            # any folder, read as ingest reads it

Real notes with no real secret in them are where a scrubber's false positives show: every
redaction there either hides a live-looking credential or corrupts the note (and hides that token
from recall for good). The archive is read in memory (tarfile); each member is scrubbed once with
``scrub_report`` and every redaction is printed on one line: kind, file, and an excerpt around it
with the redacted value masked (its first two characters and its length, never more), so the list
can be reviewed and shared without repeating what was redacted. The last line gives the count and
the rate per 500 notes. A folder is walked and each file read with the brain's own readers (HTML
and other documents become the text ingest would store); files a reader cannot read are skipped.
Exits 2 when the archive or folder is absent.
"""
from __future__ import annotations

import os
import re
import sys
import tarfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "jbranchaud-til", "notes.tar.gz"))
_MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")
_CONTEXT = 36


def _notes(path: str):
    """(name, text) for every regular file in the archive, read in memory."""
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if member.isfile():
                raw = tar.extractfile(member).read()
                yield member.name, raw.decode("utf-8", "replace")


def _folder(path: str):
    """(name, text) for every file under the folder, read as `llm brain ingest` reads it."""
    from llm_secondbrain.ingest.readers import format_for  # noqa: E402

    for root, dirs, files in os.walk(path):
        dirs.sort()
        for file_name in sorted(files):
            full = os.path.join(root, file_name)
            try:
                with open(full, "rb") as f:
                    raw = f.read()
                sections = format_for(full).read(raw, full)
            except Exception:  # noqa: BLE001 - a file no reader can read is not a note
                continue
            yield os.path.relpath(full, path), "\n\n".join(section.text for section in sections)


def _spans(before: str, after: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) in ``before`` of each value that became a marker in ``after``.

    ``after`` is ``before`` with values replaced by markers, so the literal pieces of ``after``
    occur in ``before`` in order; a pattern of those pieces with a lazy group per marker
    recovers where each value was.
    """
    kinds = [m.group(1) for m in _MARKER.finditer(after)]
    pieces = _MARKER.split(after)[::2]
    rx = re.compile("(.+?)".join(re.escape(p) for p in pieces), re.S)
    m = rx.fullmatch(before)
    if m is None:
        return []
    return [(m.start(i + 1), m.end(i + 1), k) for i, k in enumerate(kinds)]


def _mask(value: str) -> str:
    return f"«{value[:2]}…{len(value)}»"


def _excerpt(text: str, spans: list[tuple[int, int, str]], s: int, e: int) -> str:
    """The text around [s, e) with every redacted value in the window masked."""
    a, b = max(0, s - _CONTEXT), min(len(text), e + _CONTEXT)
    parts, pos = [], a
    for ss, ee, _ in spans:
        if ee <= a or ss >= b:
            continue
        parts.append(text[pos:max(pos, ss)])
        parts.append(_mask(text[ss:ee]))
        pos = max(pos, ee)
    parts.append(text[pos:b])
    return "".join(parts).replace("\n", "⏎").replace("\t", " ")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = argv[0] if argv else DEFAULT
    if not os.path.exists(path):
        print(f"scrub_notes: notes archive or folder not found at {path}", file=sys.stderr)
        return 2
    sys.path.insert(0, REPO)
    from llm_secondbrain.scrub import scrub_report  # noqa: E402

    notes = redactions = 0
    for name, text in (_folder(path) if os.path.isdir(path) else _notes(path)):
        notes += 1
        out, counts = scrub_report(text)
        if not counts:
            continue
        spans = _spans(text, out)
        for s, e, kind in spans:
            redactions += 1
            print(f"{kind:<22} {name:<60} {_excerpt(text, spans, s, e)}")
    per500 = redactions * 500 / max(1, notes)
    print(f"\n{redactions} redactions in {notes} notes ({per500:.2f} per 500 notes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
