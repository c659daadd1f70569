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


_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_KEY_LINE = re.compile(r"^([^\s:#\-][^:]*?):(?:[ \t]+(.*?))?[ \t]*$")
_ITEM_LINE = re.compile(r"^[ \t]*-[ \t]+(.*?)[ \t]*$")
# The keys that date a note, most specific first: `date` is what Jekyll, Hugo and Obsidian's
# daily notes use, `created` what most other tools write.
DATE_KEYS = ("date", "created", "created_at", "creation_date", "published", "updated",
             "modified", "last_modified", "lastmod")
# Keys a format's own meta uses for citations (present.Hit.citation): front matter that happens
# to use one is kept under another name, so `chapter: 3` in a note never cites `#chapter-3`.
_RESERVED = frozenset({"page", "chapter", "message_id"})
MARKDOWN = (".md", ".markdown")


@dataclass(frozen=True)
class FrontMatter:
    """A Markdown note's YAML front matter, read: its title, its date, every other key as text
    (metadata, not words of the note), and how many lines the block takes."""

    title: str | None
    ts: str | None
    meta: dict[str, str]
    lines: int
    end: int  # offset of the body in the text


def front_matter(text: str) -> FrontMatter | None:
    """The note's front matter, or None when the text opens with none (or with a `---` rule
    that closes nothing). YAML that PyYAML cannot read (`title: Rust: lifetimes`, which people
    write all the time) is read line by line as `key: value` and `- item`."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return None
    fields = _yaml_mapping(match.group(1) or "")
    if fields is None:
        return None
    values = {str(k).strip(): _as_text(v) for k, v in fields.items() if str(k).strip()}
    keys = {k.lower(): k for k in values}
    title = values.get(keys.get("title", ""), "") or None
    ts = next((stamp for key in DATE_KEYS if key in keys
               for stamp in [dates.normalise_stored(values[keys[key]].replace(" ", "T", 1))] if stamp), None)
    meta = {(f"front_matter_{k}" if k.lower() in _RESERVED else k): v
            for k, v in values.items() if k.lower() != "title" and v}
    return FrontMatter(title, ts, meta, text.count("\n", 0, match.end()), match.end())


def _yaml_mapping(block: str) -> dict | None:
    """The block as a mapping: PyYAML's safe loader, else the lenient line reading; None when
    neither finds keys (a rule, then prose, then a rule)."""
    import yaml

    try:
        loaded = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError:
        loaded = None
    if isinstance(loaded, dict):
        return loaded
    fields: dict[str, object] = {}
    key = None
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM_LINE.match(line)
        pair = _KEY_LINE.match(line) if not line[0].isspace() else None
        if pair:
            key = pair.group(1).strip()
            fields[key] = _unquote(pair.group(2) or "")
        elif item and key is not None:
            previous = fields[key]
            fields[key] = (previous if isinstance(previous, list) else [previous] if previous else [])
            fields[key].append(_unquote(item.group(1)))
        elif key is not None and line[0].isspace() and isinstance(fields[key], str):
            fields[key] = (fields[key] + " " + line.strip()).strip()
        else:
            return None
    return fields or None


def _unquote(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value


def _as_text(value: object) -> str:
    """A front-matter value as one line of text: lists joined by commas, dates in ISO form,
    nested mappings as `key: value` pairs (so every value is a string the scrub gate reads)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, set)):
        return ", ".join(t for t in (_as_text(v) for v in value) if t)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_as_text(v)}" for k, v in value.items())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value).strip()


def read_text(raw: bytes, path: str) -> list[Section]:
    """A text file is one section. A Markdown note's front matter is read as what it is: its
    `title:` the title, its dates the note's date (a clone of a notes repository gives every
    file the same mtime; the note's own date is what a person means by `--since`), every other
    key metadata. The block itself is left out of the text that is chunked and embedded (an
    `id:` line is not what the note says), its lines kept blank so every line cites as before."""
    text = decode(raw)
    found = front_matter(text) if path.lower().endswith(MARKDOWN) else None
    if found is None:
        return [Section(text)]
    body = "\n" * found.lines + text[found.end:]
    return [Section(body, meta=found.meta or None, ts=found.ts, title=found.title)]


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
