"""Readers: one file format each, looked up by suffix, turning a file's bytes into sections.

A section is a piece of a document with what its format knows about it: a PDF page, an EPUB
chapter, one message of a mailbox, or (for plain text) the whole file. Ingest scrubs and
segments each section on its own, so a chunk never straddles two pages and every chunk keeps
its section's `meta` (page, chapter, From, ...) for citations and filters. A new format is one
function registered here; a reader whose library is an optional extra raises `MissingExtra`,
which ingest counts and reports with the install command.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from .. import dates
from .sources import Skip, decode


@dataclass
class Section:
    text: str
    meta: dict | None = None  # kept on every chunk of the section (JSON in chunks.meta)
    ts: str | None = None  # the section's own date (a message's Date), else the file's
    title: str | None = None  # what the lexical lane indexes as the document's title
    role: str | None = None  # who wrote it, in a conversation (user / assistant)
    ref: str | None = None  # the message or turn it is, in a conversation
    cite_lines: bool = True  # False: cited as the document alone (a conversation turn has no lines)


class MissingExtra(Skip):
    """The reader needs an optional extra that is not installed: a counted skip naming the fix."""

    def __init__(self, fmt: str, extra: str):
        super().__init__(f"{fmt} files skipped: pip install 'llm-secondbrain[{extra}]'")
        self.extra = extra


class Sections(list):
    """A reader's sections plus what it left out inside the file (pages without text, broken
    messages), counted in the ingest summary: a partial read is said, never silent."""

    def __init__(self, items=(), notes: Counter | None = None):
        super().__init__(items)
        self.notes: Counter = notes if notes is not None else Counter()


Reader = Callable[[bytes, str], list[Section]]


@dataclass(frozen=True)
class Format:
    name: str  # what `sources` and `stats` show
    read: Reader


_FORMATS: dict[str, Format] = {}
_NAMES: dict[str, Format] = {}


def register(suffixes: tuple[str, ...], name: str, read: Reader, *, names: tuple[str, ...] = ()) -> None:
    """Read files ending in `suffixes` (or named exactly one of `names`: a mailbox is often
    just `mbox`) with `read`."""
    for suffix in suffixes:
        _FORMATS[suffix.lower()] = Format(name, read)
    for file_name in names:
        _NAMES[file_name.lower()] = Format(name, read)


def format_for(path: str) -> Format:
    """The format of a file by its suffix (or name); anything unknown is read as text (and
    skipped as binary by the text reader when it is not)."""
    suffix = os.path.splitext(path)[1].lower()
    return _FORMATS.get(suffix) or _NAMES.get(os.path.basename(path).lower(), TEXT)


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.S)
_DATE_LINE = re.compile(r"^date:[ \t]*['\"]?(\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)['\"]?[ \t]*$",
                        re.M | re.I)


def front_matter_date(text: str) -> str | None:
    """A Markdown note's own date (`date:` in its front matter): a clone of a notes repository
    gives every file the same mtime, the note's date is what a person means."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return None
    date = _DATE_LINE.search(match.group(1))
    return dates.normalise_stored(date.group(1).replace(" ", "T")) if date else None


def read_text(raw: bytes, path: str) -> list[Section]:
    text = decode(raw)
    return [Section(text, ts=front_matter_date(text) if path.lower().endswith((".md", ".markdown")) else None)]


TEXT = Format("text", read_text)



def _lazy(module: str, function: str = "read") -> Reader:
    """The reader `function` of `formats.<module>`, imported when a file of the format is
    first read: start-up never pays for a document library."""
    def read(raw: bytes, path: str) -> list[Section]:
        from importlib import import_module

        return getattr(import_module(f".formats.{module}", __package__), function)(raw, path)

    return read


register((".pdf",), "pdf", _lazy("pdf"))
register((".docx",), "docx", _lazy("docx"))
register((".html", ".htm", ".xhtml"), "html", _lazy("html"))
register((".epub",), "epub", _lazy("epub"))
register((".eml",), "mail", _lazy("mail", "read_eml"))
register((".mbox",), "mail", _lazy("mail", "read_mbox"), names=("mbox",))
register((".ipynb",), "notebook", _lazy("notebook"))
