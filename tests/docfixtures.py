"""Documents built at run time for the format tests and the bench: a PDF written by hand (the
smallest valid file pypdf reads text from), DOCX with python-docx, EPUB 3 with zipfile, mail
with the stdlib email package, notebooks with json."""
from __future__ import annotations

import io
import json
import zipfile
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path


def _pdf_escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]], title: str | None = None) -> bytes:
    """A PDF with one page per list of lines (Helvetica, one text object per page); a page
    with no lines has no text layer, like a scan."""
    objects: list[bytes] = []
    n = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    font = 3 + 2 * n
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    for i, lines in enumerate(pages):
        content = "BT /F1 11 Tf 14 TL 72 760 Td " + " ".join(f"({_pdf_escape(l)}) Tj T*" for l in lines) + " ET"
        stream = content.encode("latin-1") if lines else b""
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    info = None
    if title:
        objects.append(f"<< /Title ({_pdf_escape(title)}) >>".encode())
        info = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "") + " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def encrypted_pdf_bytes(pages: list[list[str]], password: str = "open-sesame") -> bytes:
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def docx_file(path: Path, *, title: str, paragraphs: list[tuple[str, str | None]],
              table: list[list[str]] | None = None, table_after: int = 0) -> Path:
    """A DOCX: (text, style) paragraphs, with `table` placed after the first `table_after`."""
    import docx

    document = docx.Document()
    document.core_properties.title = title
    for i, (text, style) in enumerate(paragraphs):
        if table is not None and i == table_after:
            _table(document, table)
        document.add_paragraph(text, style=style)
    if table is not None and table_after >= len(paragraphs):
        _table(document, table)
    document.save(path)
    return path


def _table(document, rows: list[list[str]]) -> None:
    grid = document.add_table(rows=len(rows), cols=len(rows[0]))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value


def epub_bytes(title: str, chapters: list[tuple[str, str]]) -> bytes:
    """A minimal EPUB 3: mimetype first and stored, container, OPF with a spine, a nav
    document, one XHTML file per (heading, paragraph) chapter."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", (
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>"))
        items = ['<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>']
        refs = []
        for i, (heading, body) in enumerate(chapters, start=1):
            items.append(f'<item id="c{i}" href="text/ch{i}.xhtml" media-type="application/xhtml+xml"/>')
            refs.append(f'<itemref idref="c{i}"/>')
            z.writestr(f"OEBPS/text/ch{i}.xhtml", (
                '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title>{heading}</title></head><body><h1>{heading}</h1><p>{body}</p></body></html>"))
        z.writestr("OEBPS/nav.xhtml", (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
            'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title></head><body>'
            '<nav epub:type="toc"><ol><li>Contents</li></ol></nav></body></html>'))
        z.writestr("OEBPS/content.opf", (
            '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
            'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<dc:identifier id="id">urn:uuid:0</dc:identifier><dc:title>{title}</dc:title>'
            "<dc:language>en</dc:language></metadata>"
            f"<manifest>{''.join(items)}</manifest><spine>{''.join(refs)}</spine></package>"))
    return buffer.getvalue()


def message(subject: str, sender: str, when, body: str, *, html: str | None = None,
            message_id: str | None = None, attachments: tuple[tuple[str, bytes], ...] = ()) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = subject  # non-ASCII is written RFC 2047-encoded
    msg["From"] = sender
    msg["To"] = "me@example.org"
    msg["Date"] = format_datetime(when)
    if message_id:
        msg["Message-ID"] = f"<{message_id}>"
    msg.set_content(body)
    if html is not None:
        msg.add_alternative(html, subtype="html")
    for name, data in attachments:
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return msg


def mbox_bytes(messages: list, *, broken_at: int | None = None) -> bytes:
    """An mbox of `messages`; `broken_at` inserts, before that index, a message that lost its
    headers (what is left of it is text with no From, Subject, Message-ID or Date)."""
    parts = []
    for i, msg in enumerate(messages):
        if broken_at == i:
            parts.append(b"From broken@example.org Mon Jan  1 00:00:00 2024\n"
                         b"the rest of this message was lost when the disk filled up\n\n")
        raw = msg.as_bytes().replace(b"\r\n", b"\n")
        raw = b"\n".join(b">" + line if line.startswith(b"From ") else line for line in raw.split(b"\n"))
        parts.append(b"From sender@example.org Mon Jan  1 00:00:00 2024\n" + raw.rstrip(b"\n") + b"\n\n")
    return b"".join(parts)


def notebook_bytes(cells: list[tuple[str, str]], outputs: str = "") -> bytes:
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
             **({"outputs": [{"output_type": "stream", "name": "stdout", "text": [outputs]}],
                 "execution_count": 1} if kind == "code" else {})}
            for kind, text in cells
        ],
    }).encode()


# -- one bad file of each kind (issue 34) --------------------------------------------------------


def nested_mail(depth: int) -> bytes:
    """One message whose multiparts nest `depth` deep, each with a boundary of its own."""
    opening = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (d, d) for d in range(depth))
    closing = b"".join(b"--b%d--\n" % d for d in reversed(range(depth)))
    return (b"From: deep@example.org\nSubject: deep\nMessage-ID: <deep@example.org>\n" + opening
            + b"Content-Type: text/plain\n\nThe innermost part.\n" + closing)


def _damage_member(archive: bytes, name: str, flip: slice) -> bytes:
    """`archive` with the bytes in `flip` of member `name`'s stored data inverted."""
    info = zipfile.ZipFile(io.BytesIO(archive)).getinfo(name)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw = bytearray(archive)
    for i in range(start + flip.start, start + flip.stop):
        raw[i] ^= 0x5A
    return bytes(raw)


def bad_files(tmp: Path) -> dict[str, bytes]:
    """The six files that each once stopped a whole ingest: a notebook holding a 5,000-digit
    number, a page declaring charset "undefined", a DOCX with one damaged zip header, a PDF
    with a filter nobody knows, an EPUB whose deflate stream is broken, a message nested
    5,000 deep."""
    docx_file(tmp / "ok.docx", title="Fine", paragraphs=[("A perfectly ordinary paragraph.", None)])
    docx = bytearray((tmp / "ok.docx").read_bytes())
    (tmp / "ok.docx").unlink()
    second = docx.find(b"PK\x03\x04", 4)
    docx[second + 26] ^= 0xFF  # the file-name length of the second local header
    book = epub_bytes("Broken", [("One", "A chapter whose compressed bytes were damaged. " * 40)])
    return {
        "number.ipynb": b'{"cells": [], "metadata": {"n": ' + b"9" * 5000 + b"}, \"nbformat\": 4}",
        "charset.html": b'<html><head><meta charset="undefined"></head><body><p>Undefined.</p></body></html>',
        "header.docx": bytes(docx),
        "filter.pdf": pdf_bytes([["A page behind an unknown filter"]]).replace(
            b"<< /Length", b"<< /Filter /NoSuchDecode /Length", 1),
        "deflate.epub": _damage_member(book, "OEBPS/text/ch1.xhtml", slice(5, 25)),
        "deep.eml": nested_mail(5000),
    }
