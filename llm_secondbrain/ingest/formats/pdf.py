"""PDF: one section per page (meta {"page": N}), so a hit is cited `report.pdf#page=12:3`
and a changed PDF re-embeds only the pages whose text changed.

pypdf (BSD, pure Python) is the `pdf` extra. Pages without a text layer (scans) are counted
and reported, never stored as silent blanks: OCR is out of scope. A PDF that needs a password
is skipped as "encrypted"; one that only restricts printing or copying (an owner password,
empty user password) opens with the empty password and is read. pypdf bounds what one stream
may inflate (75 MB in pypdf 7); reading stops at a page once the text limit is reached, and
whatever pypdf raises on a damaged file is "corrupt" (an unknown filter, a feature pypdf does
not implement: "unsupported").
"""
from __future__ import annotations

import io

from ..readers import Limits, MissingExtra, Section, Sections
from ..sources import Skip

NO_TEXT = "pages without text: OCR is out of scope"


def read(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    try:
        import pypdf
        from pypdf.errors import PyPdfError
    except ImportError:
        raise MissingExtra("PDF", "pdf") from None
    try:
        return _pages(pypdf, PyPdfError, raw, limits)
    except (Skip, RecursionError, MemoryError):
        raise
    except NotImplementedError:
        raise Skip("unsupported") from None
    except Exception:  # noqa: BLE001 - a damaged file makes pypdf raise anything
        raise Skip("corrupt") from None


def _pages(pypdf, PyPdfError: type[Exception], raw: bytes, limits: Limits) -> Sections:
    reader = pypdf.PdfReader(io.BytesIO(raw))
    if reader.is_encrypted and not _opens_without_password(reader, PyPdfError):
        raise Skip("encrypted")
    pages = Sections(limit=limits.text)
    for number, page in enumerate(reader.pages, start=1):
        text = (page.extract_text() or "").replace("\r\n", "\n").replace("\r", "\n")
        if not text.strip():
            pages.notes[NO_TEXT] += 1
        elif not pages.add(Section(text, meta={"page": number},
                                   title=None if pages else _title(reader))):
            break
    return pages


def _opens_without_password(reader, errors: type[Exception]) -> bool:
    try:
        return bool(reader.decrypt(""))
    except (errors, NotImplementedError):  # a wrong key, AES without `cryptography`
        return False


def _title(reader) -> str | None:
    """The document's own title (its Info dictionary), when it has a real one."""
    try:
        title = (reader.metadata or {}).get("/Title")
    except Exception:  # noqa: BLE001 - a damaged Info only loses the title
        return None
    title = str(title).strip() if title else ""
    return title or None
