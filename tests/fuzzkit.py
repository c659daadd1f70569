"""Seeded mutations of one small valid file of every format the readers know, for the fuzz test
(tests/test_fuzz.py) and bench/bench_hostile.py: byte flips, truncation, spliced tokens (the
shapes that broke readers before: long numbers, deep nesting, unknown charsets and filters,
stray zip signatures) and corrupted zip members (damaged deflate data, lying headers, a member
replaced by a mutant of itself). The same seed gives the same files."""
from __future__ import annotations

import io
import random
import struct
import time
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import docfixtures as fx

from llm_secondbrain.ingest.readers import Limits, format_for, read_bounded
from llm_secondbrain.ingest.sources import Skip

# Tokens spliced into any file, and those each format's parser treats as structure.
_ANY = [b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"9" * 5000, b"PK\x03\x04", b"\r", b"\n\n", b"%", b"<",
        b"&#x110000;", b"\\u", "\U0001f642".encode()]
_TOKENS = {
    "pdf": [b"<<", b">>", b"[" * 3000, b"/Filter /NoSuchDecode", b"/Filter /FlateDecode", b"stream\n",
            b"endstream", b"endobj", b"0 R", b"/Length 999999999", b"/Encrypt 1 0 R", b"xref", b"trailer",
            b"/Type /Pages /Kids [1 0 R]", b"(" * 2000, b"%%EOF", b"-0.0e999999"],
    "html": [b"<div>" * 3000, b'<meta charset="undefined">', b'<meta charset="utf-7">', b"<!--", b"<script>",
             b"<![CDATA[", b"<table>" * 500, b"</div>" * 500, b"&amp;" * 100, b"<title>", b"<svg>"],
    "notebook": [b'{"a":' * 3000, b"[" * 3000, b'"\\ud800"', b'"cells": 5', b'"source": {}', b"null",
                 b'"cell_type": []', b"1e999999", b"-" * 10],
    "mail": [b'Content-Type: multipart/mixed; boundary="x"\n', b"\n--x\n", b"\n--x--\n",
             b"=?utf-8?q?=FF=FE?=", b"=?x-unknown?b?AAAA?=", b"Content-Transfer-Encoding: base64\n",
             b"charset=undefined", b"Content-Type: message/rfc822\n\n", b"From \n", b"Date: Mon, 99 Foo 99999\n"],
    "docx": [], "epub": [],
}
_TOKENS["mbox"] = _TOKENS["mail"]
_ZIP_FORMATS = ("docx", "epub")


def fixtures(tmp: Path) -> dict[str, tuple[str, bytes]]:
    """{format: (file name, bytes)}: one small, valid, typical file each."""
    when = datetime(2024, 5, 3, 9, 30, tzinfo=timezone.utc)
    fx.docx_file(tmp / "f.docx", title="Plan", paragraphs=[("Plan", "Heading 1"), ("Move the servers.", None)],
                 table=[["host", "password"], ["db1", "hunter2"]], table_after=1)
    mail = fx.message("Budget", "Ann <ann@example.org>", when, "The budget is approved.\n",
                      html="<p>The <b>budget</b></p>", message_id="b-1@example.org",
                      attachments=(("q.pdf", b"%PDF-1.4"),))
    return {
        "pdf": ("f.pdf", fx.pdf_bytes([["Quarterly report", "Revenue grew."], ["Appendix"]], title="Report")),
        "docx": ("f.docx", (tmp / "f.docx").read_bytes()),
        "html": ("f.html", b"<!doctype html><html><head><title>Herons</title><style>x{}</style></head><body>"
                           b"<nav>Home</nav><main><h1>Herons</h1><p>The grey heron nests by the fjord.</p>"
                           b"<ul><li>one<li>two</ul><table><tr><td>a<td>b</table></main></body></html>"),
        "epub": ("f.epub", fx.epub_bytes("Keeper", [("Arrival", "The keeper arrives."), ("Lamp", "He polishes it.")])),
        "mail": ("f.eml", mail.as_bytes()),
        "mbox": ("f.mbox", fx.mbox_bytes([mail, mail])),
        "notebook": ("f.ipynb", fx.notebook_bytes([("markdown", "# Tides\n\nGauge data."), ("code", "x = 1")])),
    }


def mutants(fmt: str, raw: bytes, seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """`count` seeded mutants of `raw`, each with how it was made."""
    rng = random.Random(f"{fmt}:{seed}")
    kinds = ["flip", "truncate", "splice"] + (["member"] * 2 if fmt in _ZIP_FORMATS else [])
    for n in range(count):
        kind = rng.choice(kinds)
        if kind == "flip":
            out = bytearray(raw)
            for _ in range(rng.randint(1, 8)):
                out[rng.randrange(len(out))] ^= rng.randint(1, 255)
            yield f"{fmt}#{n} flip", bytes(out)
        elif kind == "truncate":
            at = rng.randrange(len(raw))
            yield f"{fmt}#{n} truncate@{at}", raw[:at]
        elif kind == "splice":
            token = rng.choice(_TOKENS[fmt] + _ANY)
            at = rng.randrange(len(raw) + 1)
            yield f"{fmt}#{n} splice {token[:12]!r}@{at}", raw[:at] + token + raw[at:]
        else:
            how, out = _damage_zip(raw, rng, fmt)
            yield f"{fmt}#{n} member {how}", out


def _damage_zip(raw: bytes, rng: random.Random, fmt: str) -> tuple[str, bytes]:
    """A zip with one member damaged: its deflate data, a field of its header, or its content
    replaced by a mutant of itself (re-zipped, so the damage reaches the parser)."""
    archive = zipfile.ZipFile(io.BytesIO(raw))
    info = rng.choice(archive.infolist())
    way = rng.choice(["data", "header", "content"])
    if way == "content":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
            for item in archive.infolist():
                data = archive.read(item)
                if item.filename == info.filename:
                    data = rng.choice([_splice, _flip, _truncate])(rng, data or b" ")
                out.writestr(item, data)
        return f"content {info.filename}", buffer.getvalue()
    out = bytearray(raw)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    if way == "data" and info.compress_size:
        for _ in range(rng.randint(1, 4)):
            out[start + rng.randrange(info.compress_size)] ^= rng.randint(1, 255)
        return f"data {info.filename}", bytes(out)
    field, fmt_code = rng.choice([(8, "<H"), (14, "<I"), (18, "<I"), (22, "<I"), (26, "<H")])  # method, crc, sizes, name
    value = rng.choice([0, 1, 0xFFFF, 0xFFFFFFFF, 99, rng.randrange(1 << 16)])
    size = struct.calcsize(fmt_code)
    out[info.header_offset + field:info.header_offset + field + size] = struct.pack(fmt_code, value % (1 << (8 * size)))
    return f"header+{field}={value} {info.filename}", bytes(out)


def _splice(rng: random.Random, data: bytes) -> bytes:
    """A token an XML or XHTML member's parser treats as structure, put anywhere."""
    token = rng.choice(_TOKENS["html"] + _ANY + [b"<w:p>" * 2000, b"<!DOCTYPE x [<!ENTITY a 'b'>]>",
                                                  b"<a>" * 3000, b"]]>", b"<?xml version='9'?>"])
    at = rng.randrange(len(data) + 1)
    return data[:at] + token + data[at:]


def _flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out)


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data))]


def read(name: str, raw: bytes, limits: Limits = Limits()) -> tuple[str, float]:
    """What the reader made of a file, in this process: "ok", "skip: REASON", or
    "ESCAPE: ExceptionType" (what must never happen); and the seconds it took."""
    started = time.perf_counter()
    try:
        sections = read_bounded(format_for(name), raw, name, limits)
        assert all(isinstance(s.text, str) for s in sections)
        assert sum(len(s.text) for s in sections) <= limits.text
        outcome = "ok"
    except Skip as skip:
        outcome = f"skip: {skip.reason}"
    except Exception as e:  # noqa: BLE001 - the point: name what escaped
        outcome = f"ESCAPE: {type(e).__name__}: {str(e)[:120]}"
    return outcome, time.perf_counter() - started
