"""The gate: the one place where text becomes storable.

Everything the brain keeps or shows passes through here first: a document's sections, its
title, every metadata value and the name it is stored under, scrubbed together in one scope
(`scrub_document`: a value found anywhere in the document is redacted in every part and field
of it, and a label ending one page finds its value at the top of the next); the labels a user
gives (`--project`, `--source`, a fact's tags); and the names shown in messages about files that
were never read. What would be stored verbatim and used again as it is (a root's path, a glob,
`--logs-db`) cannot be scrubbed without breaking it, so a secret there is refused instead.

When the scrubber itself fails on a document, the document is skipped: nothing is stored that
the rules did not finish reading.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, replace

from ..config import Settings
from ..scrub import Remembered, load_allow_patterns, rules_identity, scrub, scrub_document
from ..scrub.catalogue import FILE_TYPES, PATH_ENDINGS
from ..segment import segment
from ..store import ChunkRow
from .readers import Section
from .sources import Skip, SourceError

_ALLOW_CACHE: dict[tuple, list[re.Pattern]] = {}


def allow_patterns(settings: Settings) -> list[re.Pattern]:
    """The user's allow patterns (SECONDBRAIN_SCRUB_ALLOW), compiled once per version of the
    file. Raises ValueError naming file:line for a bad pattern, and for a file that cannot be
    read, so an ingest stops before it writes anything rather than scrub without them."""
    if not settings.scrub_allow:
        return []
    path = settings.scrub_allow
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in _ALLOW_CACHE:
            _ALLOW_CACHE.clear()
            _ALLOW_CACHE[key] = load_allow_patterns(path)
    except OSError as e:
        raise ValueError(f"SECONDBRAIN_SCRUB_ALLOW: cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"SECONDBRAIN_SCRUB_ALLOW: {path} is not UTF-8 text") from None
    return _ALLOW_CACHE[key]


@dataclass
class Admitted:
    """A document as the brain may keep it: its chunks, title and stored name, scrubbed."""

    rows: list[ChunkRow]
    title: str | None
    name: str
    redacted: Counter


class Gate:
    """Scrubbing for storage and for output, with the user's settings (e-mail stripping, allow
    patterns) and the identity of the rules it scrubs under (`rules`, stored with every file)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.allow = allow_patterns(settings)
        self.rules = rules_identity()

    # -- documents -----------------------------------------------------------------------------

    def document(self, name: str, sections: list[Section], remembered: Remembered | None = None) -> Admitted:
        """The document as the brain keeps it: `sections` scrubbed (see `sections`), then each
        cut into chunks (a chunk never straddles two sections). Raises Skip when the scrubber
        fails: the document is then not stored."""
        shown, clean, counts = self.sections(name, sections, remembered)
        rows: list[ChunkRow] = []
        for section in clean:
            rows.extend(
                ChunkRow(s.text, s.line_start if section.cite_lines else None,
                         s.line_end if section.cite_lines else None,
                         meta=section.meta, ts=section.ts, ref=section.ref, role=section.role)
                for s in segment(section.text, self.settings.max_chars, self.settings.min_chars))
        title = next((s.title for s in clean if s.title), None)
        return Admitted(rows, title, shown, counts)

    def sections(self, name: str, sections: list[Section], remembered: Remembered | None = None
                 ) -> tuple[str, list[Section], Counter]:
        """Everything `sections` bring (texts, titles, metadata) and the document's `name` (step
        by step, see `shown`) scrubbed in one scope: (the name to show, the sections, what was
        redacted). What `document` stores and what `llm brain scrub` shows of a document, so
        the preview cannot differ from what ingest keeps. `remembered`: what the document's
        stored versions redacted (see scrub.Remembered). Raises Skip when the scrubber fails."""
        try:
            shown, texts, labels, counts = self._scope(name, [(s.title, s.meta) for s in sections],
                                                       [s.text for s in sections], remembered)
        except Exception:  # noqa: BLE001 - a rule that breaks must not let the document in
            raise Skip("could not be scrubbed") from None
        return shown, [replace(s, text=text, title=title, meta=meta)
                       for s, text, (title, meta) in zip(sections, texts, labels)], counts

    def stored(self, name: str, chunks: list[tuple[int, str, str | None, str | None]]
               ) -> tuple[str, list[tuple[int, str, str | None, str | None]], Counter]:
        """A stored document scrubbed again in place (its source cannot be read again): its
        name and its chunks' text, title and metadata values in one scope, as `document` does.
        Should the scrubber fail, the text goes rather than stay unjudged."""
        items = [(title, json.loads(meta) if meta else None) for _, _, title, meta in chunks]
        try:
            shown, texts, labels, counts = self._scope(name, items, [text for _, text, _, _ in chunks])
        except Exception:  # noqa: BLE001
            shown = gone = "[REDACTED:unreadable]"
            fields, places = _gather(items)
            texts, labels = [gone] * len(chunks), _scatter(items, places, [gone] * len(fields))
            counts = Counter(unreadable=len(chunks))
        out = [(cid, text, title, json.dumps(meta, sort_keys=True) if meta else None)
               for (cid, _, _, _), text, (title, meta) in zip(chunks, texts, labels)]
        return shown, out, counts

    def _scope(self, name: str, items: "Labels", texts: list[str], remembered: Remembered | None = None
               ) -> tuple[str, list[str], "Labels", Counter]:
        """One document's name (each step of it), titles and metadata values and texts scrubbed in
        one scope: (the name to show, the texts, the labels put back, what was redacted). The
        scrubber's own errors reach the caller, which decides what failing closed means there."""
        fields, places = _gather(items)
        steps = name.split("/")
        clean, texts, counts = scrub_document([*steps, *fields], texts, hints=_stems(steps), remembered=remembered,
                                              strip_emails=self.settings.strip_emails, allow=self.allow)
        shown = self._scrub("/".join(clean[:len(steps)]))
        return _with_extensions(steps, shown), texts, _scatter(items, places, clean[len(steps):]), counts

    def fact(self, text: str, tags: list[str], labels: list[str | None]
             ) -> tuple[str, list[str], list[str | None]]:
        """A fact to remember: its text, its tags and its labels (project, origin, turn) in one
        scope, so a value a tag names is redacted in the text too."""
        fields = [*tags, *(label or "" for label in labels)]
        try:
            clean, (body,), _ = scrub_document(fields, [text], strip_emails=self.settings.strip_emails,
                                               allow=self.allow)
        except Exception:  # noqa: BLE001 - fail closed
            raise ValueError("the fact could not be scrubbed, so it was not stored") from None
        return body, clean[:len(tags)], [c if label is not None else None
                                         for c, label in zip(clean[len(tags):], labels)]

    # -- what a user types ---------------------------------------------------------------------

    def label(self, value: str | None) -> str | None:
        """A label a user or a model gives (project, source, tag, origin): scrubbed, spaces
        folded; None when nothing is left."""
        if value is None:
            return None
        value = " ".join(self._scrub(str(value)).split())
        return value or None

    def shown(self, name: str) -> str:
        """A name or text as messages may print it (a file skipped before it was read, a
        query). A path is scrubbed step by step: the scrubber reads `/` as part of a token, so
        a key that is a folder's name would hide inside the path around it."""
        whole = self._scrub(name)  # a URL with a password in it is read whole
        steps = whole.split("/")
        clean, _, _ = scrub_document(steps, [], hints=_stems(steps), strip_emails=self.settings.strip_emails,
                                     allow=self.allow)
        return _with_extensions(name.split("/"), "/".join(clean))

    def _scrub(self, text: str) -> str:
        return scrub(text, strip_emails=self.settings.strip_emails, allow=self.allow)

    def refuse_secret(self, value: str, what: str) -> None:
        """Values kept verbatim because they are used as they are again (a root's path, a glob,
        --logs-db): one holding what the scrubber redacts is refused in one line, not stored."""
        shown = self.shown(value)
        if shown != value:
            raise SourceError(f"{what} {shown} holds what looks like a secret: refusing to store it "
                              f"(rename it, or leave it out)")


_EXTENSION = re.compile(r"(?<=[^./])\.[A-Za-z0-9]{1,8}$")


def _stems(steps: list[str]) -> list[str]:
    """The steps of a name that end in an extension, without it: "password=S3cret!.txt" reads
    as a file name to the scrubber, and a file name is not a secret; its stem is read as text."""
    return [step[:m.start()] for step in steps if (m := _EXTENSION.search(step))]


_FILE_KINDS = FILE_TYPES | {ending[1:] for ending in PATH_ENDINGS}
_REDACTED_END = re.compile(r"\[REDACTED:[a-z0-9_]+\]$")


def _with_extensions(steps: list[str], shown: str) -> str:
    """`shown` (a name, scrubbed) with the extension a redaction took from the end of one of
    its `steps` put back: a token runs on through '.' (`ghp_….md` is redacted whole), yet a
    file's kind is no secret, and a name without it no longer says what it is. Only the kinds
    the scrubber itself takes for file types: `password=hunter.2024` ends in its password."""
    clean = shown.split("/")
    if len(clean) != len(steps):
        return shown  # (the whole name was read across a '/': no step to match to its own)
    for i, (step, kept) in enumerate(zip(steps, clean)):
        m = _EXTENSION.search(step)
        if m and _REDACTED_END.search(kept) and m.group()[1:].lower() in _FILE_KINDS:
            clean[i] = kept + m.group()
    return "/".join(clean)


Labels = list[tuple[str | None, dict | None]]
Place = tuple[int, str | None, int | None]  # (item, metadata key or None for the title, list index)


def _gather(items: Labels) -> tuple[list[str], list[Place]]:
    """The text fields of (title, metadata) pairs, and where each came from. A metadata value
    is scrubbed as `key: value` (a list's items as YAML writes them under their key), since its
    key may be the only label saying it is a secret (`api_key: …` in a note's front matter); a
    key is scrubbed too (the place with index -1), front matter's keys being whatever a person
    wrote."""
    fields: list[str] = []
    places: list[Place] = []
    for i, (title, meta) in enumerate(items):
        if title:
            fields.append(title)
            places.append((i, None, None))
        for key, value in (meta or {}).items():
            if isinstance(value, (str, list)):
                fields.append(key)
                places.append((i, key, -1))
            if isinstance(value, str):
                fields.append(f"{key}: {value}")
                places.append((i, key, None))
            elif isinstance(value, list):
                for j, item in enumerate(value):
                    if isinstance(item, str):
                        fields.append(f"{key}:\n  - {item}")
                        places.append((i, key, j))
    return fields, places


def _scatter(items: Labels, places: list[Place], values: list[str]) -> Labels:
    """`items` with each gathered field replaced by its scrubbed value (copies: a metadata
    dict may be shared by several sections), each key by its scrubbed key. A labelled value
    whose label the scrubber changed is kept whole: scrubbed, if no longer parted."""
    titles = [title for title, _ in items]
    metas = [{k: list(v) if isinstance(v, list) else v for k, v in meta.items()} if meta else None
             for _, meta in items]
    keys: dict[tuple[int, str], str] = {}
    for (i, key, j), value in zip(places, values):
        if key is None:
            titles[i] = value
            continue
        if j == -1:
            keys[i, key] = value
            continue
        glue = ": " if j is None else ":\n  - "
        for label in (keys[i, key] + glue, key + glue):
            if value.startswith(label):
                value = value[len(label):]
                break
        if j is None:
            metas[i][key] = value
        else:
            metas[i][key][j] = value
    for (i, key), clean in keys.items():
        if clean != key:
            metas[i] = {clean if k == key else k: v for k, v in metas[i].items()}
    return list(zip(titles, metas))
