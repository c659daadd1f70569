"""Readers: one file format each, looked up by suffix, turning a file's bytes into sections.

A section is a piece of a document with what its format knows about it: a PDF page, an EPUB
chapter, one message of a mailbox, or (for plain text) the whole file. Ingest scrubs and
segments each section on its own, so a chunk never straddles two pages and every chunk keeps
its section's `meta` (page, chapter, From, ...) for citations and filters. A new format is one
function registered here; a reader whose library is an optional extra raises `MissingExtra`,
which ingest counts and reports with the install command.

Every reader is bounded by `Limits`: the text a document yields (`--max-size`, the same number
that bounds its bytes on disk: a 1 MB EPUB must not become 250 MB of text), the bytes a
container may inflate, and how deep its structure may nest. A reader stops adding sections
when the text is spent (`Sections.add`), cut at a section or paragraph boundary, never inside
a paragraph; the cut is counted. Time and memory are bounded by reading the container formats
in a worker process (`worker.py`).
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, replace

from .. import dates
from .sources import DEFAULT_MAX_BYTES, Skip, decode

# What a container may inflate, per byte of text it may yield: markup is several times its
# text, and images ride along uncompressed.
INFLATE_PER_TEXT = 8
# The deepest nesting a reader builds a tree for: what browsers build (Blink stops at 512).
MAX_DEPTH = 512
# The address space a reader may use for one document (in the worker process): Python and the
# libraries, plus room for a parse tree many times the size of the text.
MEMORY_BASE = 1024 * 1024 * 1024
MEMORY_PER_TEXT = 48
CUT = "documents cut at --max-size of text (the rest left out)"


@dataclass(frozen=True)
class Limits:
    """What one document may cost a reader: `text` characters yielded (--max-size), `inflated`
    bytes decompressed out of a container, structure nested `depth` deep, and (where it is
    read in the worker process) `memory` bytes of address space."""

    text: int = DEFAULT_MAX_BYTES
    inflated: int = INFLATE_PER_TEXT * DEFAULT_MAX_BYTES
    depth: int = MAX_DEPTH
    memory: int = MEMORY_BASE + MEMORY_PER_TEXT * DEFAULT_MAX_BYTES

    @classmethod
    def for_size(cls, max_bytes: int) -> "Limits":
        """The limits that go with --max-size: as much text as bytes on disk."""
        return cls(text=max_bytes, inflated=INFLATE_PER_TEXT * max_bytes,
                   memory=MEMORY_BASE + MEMORY_PER_TEXT * max_bytes)


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
    messages, text past the limit), counted in the ingest summary: a partial read is said,
    never silent. With a `limit` (characters), `add` keeps the text within it."""

    def __init__(self, items=(), notes: Counter | None = None, limit: int | None = None):
        super().__init__(items)
        self.notes: Counter = notes if notes is not None else Counter()
        self.limit = limit
        self.used = sum(len(s.text) for s in self)

    @property
    def full(self) -> bool:
        return self.limit is not None and self.used >= self.limit

    def add(self, section: Section) -> bool:
        """Append `section` within the limit; False once the text is spent (the reader stops
        reading). A section that does not fit is cut after its last whole paragraph that
        does; the paragraph it ends in is dropped, never cut through."""
        if self.full:
            self.notes[CUT] = 1
            return False
        room = None if self.limit is None else self.limit - self.used
        if room is None or len(section.text) <= room:
            self.append(section)
            self.used += len(section.text)
            return True
        head = _whole_paragraphs(section.text, room)
        if head.strip():
            self.append(replace(section, text=head))
        self.used = self.limit
        self.notes[CUT] = 1
        return False


def _whole_paragraphs(text: str, room: int) -> str:
    """The longest run of whole paragraphs (ending before a blank line) within `room`
    characters, or nothing."""
    end = text.rfind("\n\n", 0, room + 1)
    return text[:end] if end > 0 else ""


def bounded(sections: list[Section], limits: Limits) -> Sections:
    """`sections` within the text limit: what every reader's output passes through, so no
    reader can yield more than --max-size of text, whatever it does itself."""
    out = Sections(notes=Counter(getattr(sections, "notes", ())), limit=limits.text)
    for section in sections:
        if not out.add(section):
            break
    return out


@dataclass(frozen=True)
class Format:
    """A format's name (what `sources` and `stats` show) and its reader: `read_text` for text,
    else the function `function` of `formats.<module>`, imported when a file of the format is
    first read (start-up never pays for a document library). The formats with a module are the
    ones read in the worker process: their libraries parse what a stranger wrote."""

    name: str
    module: str | None = None
    function: str = "read"

    def read(self, raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
        if self.module is None:
            return read_text(raw, path)
        from importlib import import_module

        return getattr(import_module(f".formats.{self.module}", __package__), self.function)(raw, path, limits)


def read_bounded(fmt: Format, raw: bytes, path: str, limits: Limits) -> Sections:
    """A file's sections within `limits`: a structure nested past what the interpreter's
    stack holds is skipped as "nested too deep", one needing more memory than there is as
    "too large to read"; anything else a reader raises is the caller's to name."""
    try:
        return bounded(fmt.read(raw, path, limits), limits)
    except RecursionError:
        raise Skip("nested too deep") from None
    except MemoryError:
        raise Skip("too large to read") from None


_FORMATS: dict[str, Format] = {}
_NAMES: dict[str, Format] = {}


def register(suffixes: tuple[str, ...], fmt: Format, *, names: tuple[str, ...] = ()) -> None:
    """Read files ending in `suffixes` (or named exactly one of `names`: a mailbox is often
    just `mbox`) as `fmt`."""
    for suffix in suffixes:
        _FORMATS[suffix.lower()] = fmt
    for file_name in names:
        _NAMES[file_name.lower()] = fmt


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
    meta: dict[str, str | list[str]]
    lines: int
    end: int  # offset of the body in the text


# Front matter is metadata, kept with every chunk of its note: past this many characters (read
# as text, an alias counted each time it is used) its block stays in the note's text instead,
# chunked and bounded like the rest (a YAML "billion laughs" of 400 bytes reads as gigabytes).
FRONT_MATTER_CHARS = 4096


class _TooLarge(Exception):
    pass


def front_matter(text: str) -> FrontMatter | None:
    """The note's front matter, or None when the text opens with none (or with a `---` rule
    that closes nothing). YAML that PyYAML cannot read (`title: Rust: lifetimes`, which people
    write all the time) is read line by line as `key: value` and `- item`. Front matter past
    FRONT_MATTER_CHARS keeps its title and date, and its block stays in the text; a block past
    16 times that is not parsed at all."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return None
    block = match.group(1) or ""
    fields = _yaml_mapping(block) if len(block) <= 16 * FRONT_MATTER_CHARS else None  # (no YAML parse of megabytes)
    if fields is None:
        return None
    keys = {str(k).strip().lower(): k for k in fields if str(k).strip()}
    try:
        values = _values(fields, [FRONT_MATTER_CHARS])
    except _TooLarge:
        values = None  # the block stays in the text; its title and date are still read
    title = _scalar(fields, keys.get("title")) or None
    ts = next((stamp for key in DATE_KEYS if key in keys
               for stamp in [dates.normalise_stored(_scalar(fields, keys[key]).replace(" ", "T", 1))] if stamp),
              None)
    if values is None:
        return FrontMatter(title, ts, {}, 0, 0)
    meta = {(f"front_matter_{k}" if k.lower() in _RESERVED else k): v
            for k, v in values.items() if k.lower() != "title" and v}
    return FrontMatter(title, ts, meta, text.count("\n", 0, match.end()), match.end())


def _values(fields: dict, budget: list[int]) -> dict[str, str | list[str]]:
    return {str(k).strip(): _as_value(v, budget) for k, v in fields.items() if str(k).strip()}


def _scalar(fields: dict, key: object) -> str:
    """One key's value as one line, or "" (absent, or past FRONT_MATTER_CHARS)."""
    if key is None:
        return ""
    try:
        value = _as_value(fields[key], [FRONT_MATTER_CHARS])
    except _TooLarge:
        return ""
    return value if isinstance(value, str) else ", ".join(value)


def _yaml_mapping(block: str) -> dict | None:
    """The block as a mapping: PyYAML's safe loader, else the lenient line reading; None when
    neither finds keys (a rule, then prose, then a rule)."""
    import yaml

    try:
        loaded = yaml.safe_load(block) if block.strip() else {}
    except (yaml.YAMLError, ValueError, OverflowError):  # (an impossible date: `created: 2024-02-30`)
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


def _as_value(value: object, budget: list[int]) -> str | list[str]:
    """A front-matter value as text the scrub gate reads: a list as a list of strings (the
    gate reads each item under its key, as YAML writes it), anything else as `_as_text`."""
    if isinstance(value, (list, tuple, set)):
        return [t for t in (_as_text(v, budget) for v in value) if t]
    return _as_text(value, budget)


def _as_text(value: object, budget: list[int]) -> str:
    """A front-matter value as one line of text: lists joined by commas, dates in ISO form,
    nested mappings as `key: value` pairs. Each piece is taken from `budget` (characters left,
    in a list the recursion shares); _TooLarge when it runs out."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, set)):
        return ", ".join(t for t in (_as_text(v, budget) for v in value) if t)
    if isinstance(value, dict):
        return "; ".join(f"{_as_text(k, budget)}: {_as_text(v, budget)}" for k, v in value.items())
    text = value.isoformat() if hasattr(value, "isoformat") else str(value).strip()
    budget[0] -= len(text) + 2
    if budget[0] < 0:
        raise _TooLarge
    return text


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


TEXT = Format("text")

register((".pdf",), Format("pdf", "pdf"))
register((".docx",), Format("docx", "docx"))
register((".html", ".htm", ".xhtml"), Format("html", "html"))
register((".epub",), Format("epub", "epub"))
register((".eml",), Format("mail", "mail", "read_eml"))
register((".mbox",), Format("mail", "mail", "read_mbox"), names=("mbox",))
register((".ipynb",), Format("notebook", "notebook"))
