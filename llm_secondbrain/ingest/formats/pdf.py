"""PDF: one section per page (meta {"page": N}), so a hit is cited `report.pdf#page=12:3`
and a changed PDF re-embeds only the pages whose text changed.

pypdf (BSD, pure Python) is the `pdf` extra. Pages without a text layer (scans) are counted
and reported, never stored as silent blanks: OCR is out of scope. A PDF that needs a password
is skipped as "encrypted"; one that only restricts printing or copying (an owner password,
empty user password) opens with the empty password and is read.
"""
from __future__ import annotations

import io

from ..readers import MissingExtra, Section, Sections
from ..sources import Skip

NO_TEXT = "pages without text: OCR is out of scope"


def read(raw: bytes, path: str) -> list[Section]:
    try:
        import pypdf
        from pypdf.errors import PyPdfError
    except ImportError:
        raise MissingExtra("PDF", "pdf") from None
    return _pages(pypdf, PyPdfError, raw)


def _pages(pypdf, PyPdfError: type[Exception], raw: bytes) -> list[Section]:
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not _opens_without_password(reader, PyPdfError):
            raise Skip("encrypted")
        pages = Sections()
        for number, page in enumerate(reader.pages, start=1):
            text = (page.extract_text() or "").replace("\r\n", "\n").replace("\r", "\n")
            if text.strip():
                pages.append(Section(text, meta={"page": number},
                                     title=None if pages else _title(reader, PyPdfError)))
            else:
                pages.notes[NO_TEXT] += 1
    except Skip:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError, OSError, ZeroDivisionError):
        raise Skip("corrupt") from None
    return pages


def _opens_without_password(reader, errors: type[Exception]) -> bool:
    try:
        return bool(reader.decrypt(""))
    except (errors, NotImplementedError):  # a wrong key, AES without `cryptography`
        return False


def _title(reader, errors: type[Exception]) -> str | None:
    """The document's own title (its Info dictionary), when it has a real one."""
    try:
        title = (reader.metadata or {}).get("/Title")
    except (errors, ValueError, KeyError, TypeError):  # a damaged Info only loses the title
        return None
    title = str(title).strip() if title else ""
    return title or None
