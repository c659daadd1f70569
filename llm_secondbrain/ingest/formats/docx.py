"""Word (.docx): paragraphs and tables in body order, one section per heading.

A section starts at a heading and keeps it in `meta` ({"heading": ...}), so every chunk knows
the heading it sits under, not only the first; the document's title (its core properties, else
its first Title or heading paragraph) is the title the lexical lane indexes. Table rows become
`cell | cell` lines, which is also how a password in a table cell meets the scrubber: on the
same line as its label. python-docx (MIT) is the `docx` extra; the zip is checked for a bomb
before python-docx inflates anything.
"""
from __future__ import annotations

import io

from ..readers import MissingExtra, Section
from ..sources import Skip
from .archive import open_zip

OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # an encrypted .docx is an OLE container, not a zip


def read(raw: bytes, path: str) -> list[Section]:
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError:
        raise MissingExtra("DOCX", "docx") from None
    if raw.startswith(OLE_MAGIC):
        raise Skip("encrypted")
    open_zip(raw)
    try:
        document = docx.Document(io.BytesIO(raw))
        blocks = list(_blocks(document))
        title = (document.core_properties.title or "").strip() or None
    except (PackageNotFoundError, KeyError, ValueError, AttributeError, TypeError, SyntaxError):
        raise Skip("corrupt") from None  # lxml's XMLSyntaxError is a SyntaxError
    sections: list[Section] = []
    lines: list[str] = []
    heading = None
    for text, is_heading in blocks:
        if is_heading:
            if lines:
                sections.append(Section("\n\n".join(lines), meta={"heading": heading} if heading else None))
            lines, heading = [], text
            title = title or text
        lines.append(text)
    if lines:
        sections.append(Section("\n\n".join(lines), meta={"heading": heading} if heading else None))
    if sections:
        sections[0].title = title
    return sections


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
