"""EPUB: chapters in spine (reading) order, one section each (meta {"chapter": N}), cited
`book.epub#chapter-N`, N counting the spine's documents that hold text.

An EPUB is a zip of XHTML files listed by an OPF package file; the standard library reads it
(zipfile, xml.etree), so EPUB needs no extra. The zip is checked for a bomb first, and every
chapter's text comes through the same visible-text extraction as saved web pages.
"""
from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET

from ..readers import Section
from ..sources import Skip
from .archive import open_zip, read_member
from .html import decode_markup, visible_text

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_TEXT_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}


def read(raw: bytes, path: str) -> list[Section]:
    archive = open_zip(raw)
    names = set(archive.namelist())
    encrypted = (_encrypted(read_member(archive, "META-INF/encryption.xml"))
                 if "META-INF/encryption.xml" in names else set())
    container = _xml(read_member(archive, "META-INF/container.xml"))
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise Skip("corrupt")
    opf_path = rootfile.get("full-path")
    package = _xml(read_member(archive, opf_path))
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id"): (posixpath.normpath(posixpath.join(base, item.get("href", ""))), item.get("media-type"))
        for item in package.iter(f"{_OPF}item")
    }
    book_title = package.findtext(f".//{_DC}title")
    chapters: list[Section] = []
    for itemref in package.iter(f"{_OPF}itemref"):
        href, media_type = manifest.get(itemref.get("idref"), (None, None))
        if href is None or media_type not in _TEXT_TYPES or href not in names:
            continue
        if href in encrypted:
            raise Skip("encrypted")
        _, text = visible_text(decode_markup(read_member(archive, href)))
        if text.strip():
            chapters.append(Section(text, meta={"chapter": len(chapters) + 1}))
    if chapters:
        chapters[0].title = (book_title or "").strip() or None
    return chapters


def _xml(raw: bytes) -> ET.Element:
    try:
        return ET.fromstring(raw)
    except ET.ParseError:
        raise Skip("corrupt") from None


def _encrypted(raw: bytes) -> set[str]:
    """The files encryption.xml lists (DRM'd chapters; obfuscated fonts are listed too, and
    only a listed chapter stops the book from being read)."""
    return {ref.get("URI", "") for ref in _xml(raw).iter("{http://www.w3.org/2001/04/xmlenc#}CipherReference")}
