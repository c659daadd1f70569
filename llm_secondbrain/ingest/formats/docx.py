"""Word (.docx): paragraphs and tables in body order, one section per heading.

A section starts at a heading and keeps it in `meta` ({"heading": ...}), so every chunk knows
the heading it sits under, not only the first; the document's title (its core properties, else
its first Title or heading paragraph) is the title the lexical lane indexes. Table rows become
`cell | cell` lines, which is also how a password in a table cell meets the scrubber: on the
same line as its label. python-docx (MIT) is the `docx` extra; the zip is checked for a bomb,
and for what it would inflate in all (`Limits.inflated`: python-docx loads every part), before
python-docx inflates anything. Whatever python-docx, zipfile or lxml raise on a damaged file
(about one in eight mutated DOCX files once escaped a list of expected errors) is "corrupt";
lxml refuses XML nested past 256 levels itself. Reading stops at a block once the text limit
is reached.
"""
from __future__ import annotations

import io

from ..readers import Limits, MissingExtra, Section, Sections
from ..sources import Skip
from .archive import open_zip

OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # an encrypted .docx is an OLE container, not a zip


def read(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    try:
        import docx
    except ImportError:
        raise MissingExtra("DOCX", "docx") from None
    if raw.startswith(OLE_MAGIC):
        raise Skip("encrypted")
    open_zip(raw, limits.inflated)
    blocks: list[tuple[str, bool]] = []
    size = 0
    try:
        document = docx.Document(io.BytesIO(raw))
        title = (document.core_properties.title or "").strip() or None
        for text, is_heading in _blocks(document):
            blocks.append((text, is_heading))
            size += len(text) + 2
            if size > limits.text:
                break
    except (RecursionError, MemoryError):
        raise
    except Exception:  # noqa: BLE001 - a damaged file makes these libraries raise anything
        raise Skip("corrupt") from None
    sections = Sections(limit=limits.text)
    lines: list[str] = []
    heading = None
    for text, is_heading in blocks:
        if is_heading:
            if lines and not sections.add(_section(lines, heading)):
                lines = []
                break
            lines, heading = [], text
            title = title or text
        lines.append(text)
    if lines:
        sections.add(_section(lines, heading))
    if sections:
        sections[0].title = title
    return sections


def _section(lines: list[str], heading: str | None) -> Section:
    return Section("\n\n".join(lines), meta={"heading": heading} if heading else None)


def _blocks(document):
    """(text, is heading) for each non-empty paragraph and table, in body order."""
    from docx.table import Table

    for block in document.iter_inner_content():
        if isinstance(block, Table):
            text = _table_text(block)
            if text:
                yield text, False
            continue
        text = block.text.strip()
        if text:
            style = (block.style.name if block.style is not None else "") or ""
            yield text, style == "Title" or style.startswith("Heading")


def _table_text(table) -> str:
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell is listed once per grid column it spans
                continue
            previous = cell._tc
            text = " ".join(cell.text.split())
            if text:
                cells.append(text)
        if cells:
            rows.append(" | ".join(cells))
    return "\n".join(rows)
