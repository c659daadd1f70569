"""EPUB: chapters in spine (reading) order, one section each (meta {"chapter": N}), cited
`book.epub#chapter-N`, N counting the spine's documents that hold text.

An EPUB is a zip of XHTML files listed by an OPF package file; the standard library reads it
(zipfile, xml.etree), so EPUB needs no extra. The zip is checked for a bomb first, and every
chapter's text comes through the same visible-text extraction as saved web pages. Reading stops
at a chapter boundary once the book has yielded its text limit or inflated its byte limit
(`Limits`): a 1.35 MB book of small chapters once inflated to 247 MB of text.
"""
from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET

from ..readers import CUT, Limits, Section, Sections
from ..sources import Skip
from .archive import Members, open_zip
from .html import decode_markup, visible_text

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_TEXT_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}


def read(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    members = Members(open_zip(raw), limits.inflated)
    names = set(members.archive.namelist())
    encrypted = (_encrypted(members.read("META-INF/encryption.xml"))
                 if "META-INF/encryption.xml" in names else set())
    container = _xml(members.read("META-INF/container.xml"))
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise Skip("corrupt")
    opf_path = rootfile.get("full-path")
    package = _xml(members.read(opf_path))
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id"): (posixpath.normpath(posixpath.join(base, item.get("href", ""))), item.get("media-type"))
        for item in package.iter(f"{_OPF}item")
    }
    book_title = package.findtext(f".//{_DC}title")
    chapters = Sections(limit=limits.text)
    for itemref in package.iter(f"{_OPF}itemref"):
        href, media_type = manifest.get(itemref.get("idref"), (None, None))
        if href is None or media_type not in _TEXT_TYPES or href not in names:
            continue
        if href in encrypted:
            raise Skip("encrypted")
        if not members.fits(href):
            chapters.notes[CUT] = 1
            break
        _, text = visible_text(decode_markup(members.read(href)), limits.depth)
        if text.strip() and not chapters.add(Section(text, meta={"chapter": len(chapters) + 1})):
            break
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
