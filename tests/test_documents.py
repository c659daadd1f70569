"""Documents (issue 17): PDF, DOCX, HTML, EPUB, e-mail and notebooks ingested through the real
CLI, recalled and cited the way a person follows them; each format's hostile case; the path
where a reader's optional library is missing (the module hidden, never a skipped test)."""
from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import docfixtures as fx
from conftest import dump_brain, llm_cmd

KEY = "AKIAQYLPMN5HFIQR7XYZ"
TOKEN = "ghp_R3aLlyL0ngT0kenValue0123456789abcdEF"
PASSWORD = "Vinter2026!"
WHEN = datetime(2024, 5, 3, 9, 30, tzinfo=timezone(timedelta(hours=2)))


def hits(run, *query_and_options) -> list[dict]:
    result = run("brain", "recall", "--json", "--mode", "lexical", *query_and_options)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def ingest(run, *targets, ok=True):
    return run("brain", "ingest", "--no-embed", *targets, ok=ok)


def report_of(run, *targets) -> dict:
    return json.loads(run("brain", "ingest", "--no-embed", "--json", *targets).stdout)


def hide_modules(monkeypatch, folder: Path, *names: str) -> None:
    """As if the modules were not installed: here, and in the worker process that reads
    documents (it imports them itself, under a sitecustomize on PYTHONPATH)."""
    shim = folder / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text("import sys\n" + "".join(f"sys.modules[{n!r}] = None\n" for n in names))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]))
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def chunk_rows(brain_path: Path) -> list[dict]:
    conn = sqlite3.connect(brain_path)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM chunks ORDER BY path, id")]
    conn.close()
    return rows


# -- PDF ---------------------------------------------------------------------------------------


def test_pdf_page_citations_scans_counted_and_secrets_scrubbed(run, tmp_path, brain_path):
    pdf = tmp_path / "docs" / "report.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(fx.pdf_bytes([
        ["Quarterly report", "Revenue grew in the northern region."],
        ["Appendix", "The shipment identifier is ZX-4471-Q for the audit.", f"deploy key {KEY}"],
        [],  # a scanned page: no text layer
    ], title="Quarterly Report 2024"))
    result = ingest(run, pdf.parent)
    assert "1 pages without text: OCR is out of scope" in result.stdout
    assert "1 ingested" in result.stdout

    found = hits(run, "ZX-4471-Q")
    assert found[0]["citation"] == f"{pdf}#page=2:2"  # the line of the page that matched
    assert found[0]["meta"] == {"page": 2}
    assert hits(run, "northern region")[0]["citation"].startswith(f"{pdf}#page=1:")
    assert KEY not in dump_brain(brain_path)

    rows = run("brain", "sources", "--json").stdout.splitlines()
    assert json.loads(rows[0])["format"] == "pdf"
    assert json.loads(run("brain", "stats", "--json").stdout)["formats"] == {"pdf": 2}


def test_changed_pdf_replaces_only_the_changed_page(run, tmp_path):
    pdf = tmp_path / "report.pdf"
    first = ["Chapter one talks about the harbour crane maintenance schedule."]
    pdf.write_bytes(fx.pdf_bytes([first, ["Page two holds the old budget figure of 4000."]]))
    ingest(run, pdf)
    pdf.write_bytes(fx.pdf_bytes([first, ["Page two holds the new budget figure of 5200."]]))
    report = report_of(run, pdf)
    assert (report["chunks_added"], report["chunks_kept"], report["chunks_removed"]) == (1, 1, 1)
    assert report_of(run, pdf)["unchanged"] == 1
    assert hits(run, "5200")[0]["citation"] == f"{pdf}#page=2:1"
    assert not hits(run, "4000")
    assert "forgot 2 chunks from 1 source" in run("brain", "forget", pdf).stdout


def test_encrypted_and_corrupt_pdfs_are_skipped_and_the_rest_ingested(run, tmp_path, brain_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "locked.pdf").write_bytes(fx.encrypted_pdf_bytes([["Locked salary table for the board"]]))
    (docs / "torn.pdf").write_bytes(fx.pdf_bytes([["whole text"]])[:120])
    (docs / "note.md").write_text("The garden sensor battery was replaced in May.\n")
    report = report_of(run, docs)
    assert report["skipped_by_reason"] == {"encrypted": 1, "corrupt": 1}
    assert report["ingested"] == 1
    assert "salary" not in dump_brain(brain_path)
    assert not hits(run, "salary")


def test_owner_password_only_pdf_is_read(run, tmp_path):
    """A PDF that only restricts printing (empty user password) is readable by anyone."""
    pdf = tmp_path / "restricted.pdf"
    pdf.write_bytes(fx.encrypted_pdf_bytes([["The lighthouse keeper logbook for March."]], password=""))
    ingest(run, pdf)
    assert hits(run, "lighthouse")[0]["citation"] == f"{pdf}#page=1:1"


def test_missing_pdf_extra_is_a_counted_skip_naming_the_fix(run, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    with monkeypatch.context() as patched:
        hide_modules(patched, tmp_path, "pypdf")  # as if `pip install llm-secondbrain` only
        for name in ("a.pdf", "b.pdf"):
            (docs / name).write_bytes(fx.pdf_bytes([["some text"]]))
        (docs / "c.txt").write_text("Plain text is still ingested without any extra.\n")
        result = ingest(run, docs)
        assert "2 PDF files skipped: pip install 'llm-secondbrain[pdf]'" in result.stdout
        assert "1 ingested" in result.stdout
    assert "2 ingested" in ingest(run, docs).stdout  # installing the extra is the fix


def test_missing_extra_in_a_fresh_process(tmp_path):
    """The same through a real `llm` process whose Python cannot import python-docx."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['docx'] = None\n")
    fx.docx_file(tmp_path / "plan.docx", title="Plan", paragraphs=[("Hello there, world.", None)])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(llm_cmd("brain", "ingest", "--no-embed", tmp_path / "plan.docx"),
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1 DOCX files skipped: pip install 'llm-secondbrain[docx]'" in done.stdout


# -- DOCX --------------------------------------------------------------------------------------


def test_docx_body_order_table_heading_title_and_a_password_in_a_cell(run, tmp_path, brain_path):
    doc = fx.docx_file(
        tmp_path / "plan.docx", title="Datacenter Migration Plan",
        paragraphs=[("We move the racks in the first week of June.", None),
                    ("Accounts", "Heading 1"),
                    ("These accounts keep the old cluster running.", None),
                    ("Rollback", "Heading 1"),
                    ("If the switch fails, power the old cluster back on.", None)],
        table=[["system", "login"], ["vault", f"password: {PASSWORD}"]], table_after=3)
    ingest(run, doc)
    assert PASSWORD not in dump_brain(brain_path)
    rows = chunk_rows(brain_path)
    accounts = next(r for r in rows if "vault" in r["text"])
    # paragraphs and the table in body order, under the heading they sit under
    assert accounts["text"].index("keep the old cluster") < accounts["text"].index("vault | password:")
    assert json.loads(accounts["meta"]) == {"heading": "Accounts"}
    assert accounts["title"] == "Datacenter Migration Plan"
    assert json.loads(next(r for r in rows if "power the old" in r["text"])["meta"]) == {"heading": "Rollback"}
    top = hits(run, "vault", "--format", "docx")
    assert top[0]["path"] == str(doc) and top[0]["citation"].startswith(f"{doc}:")
    assert not hits(run, "vault", "--format", "pdf")
    assert hits(run, "vault", "--format", "DOCX")  # as the README's table writes it
    for args, says in ((("--format", "word"), "no format 'word': formats are text, pdf, docx"),
                       (("--source", "file"), "no source named 'file' in this brain; sources: files")):
        result = run("brain", "recall", "vault", *args, ok=False)
        assert result.exit_code == 1 and result.output.startswith(f"Error: {says}"), result.output


def test_every_format_ingest_records_is_one_recall_can_filter_by():
    from llm_secondbrain.ingest import readers
    from llm_secondbrain.options import FORMATS

    assert {fmt.name for fmt in readers._FORMATS.values()} | {readers.TEXT.name} == set(FORMATS)


def test_encrypted_docx_is_skipped(run, tmp_path):
    (tmp_path / "secret.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600))
    assert report_of(run, tmp_path / "secret.docx")["skipped_by_reason"] == {"encrypted": 1}


def _bomb(path: Path, inner: str, extra: dict[str, bytes]) -> Path:
    """A zip holding `extra` and one member that inflates to 300 MB of zeros (about 300 KB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in extra.items():
            z.writestr(name, data)
        info = zipfile.ZipInfo(inner)
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(300):
                member.write(block)
    return path


def test_zip_bombs_disguised_as_docx_and_epub_are_refused_quickly(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    _bomb(docs / "bomb.docx", "word/document.xml", {"[Content_Types].xml": b"<Types/>"})
    _bomb(docs / "bomb.epub", "OEBPS/ch1.xhtml", {"mimetype": b"application/epub+zip"})
    (docs / "ok.md").write_text("The ferry leaves at nine every weekday morning.\n")
    started = time.monotonic()
    done = subprocess.run(llm_cmd("brain", "ingest", "--no-embed", "--json", docs),
                          capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped_by_reason"] == {"zip bomb": 2} and report["ingested"] == 1
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < 250, peak_mb  # nowhere near the 300 MB each bomb inflates to
    assert elapsed < 30


# -- HTML --------------------------------------------------------------------------------------

PAGE = """<!doctype html><html><head><title>Heron  Watch | Birds of the Fjord</title>
<style>.menu { color: red }</style><script>var tracker = "UA-TRACKER-CODE";</script></head>
<body><header><nav><a href="/">Home</a> <a href="/shop">Shop the catalogue</a></nav></header>
<main><h1>Herons</h1><p>The grey heron nests by the fjord in <b>early April</b>, and the colony
counted 41 nests this year.</p><p>Contact the warden with token TOKEN.</p></main>
<aside>Sponsored: buy binoculars</aside><footer>Copyright 2024 cookie policy</footer></body></html>"""


@pytest.mark.parametrize("parser", ["selectolax", "stdlib"])
def test_html_visible_text_title_and_no_boilerplate(run, tmp_path, brain_path, monkeypatch, parser):
    if parser == "stdlib":  # the no-extra path: html.parser
        hide_modules(monkeypatch, tmp_path, "selectolax", "selectolax.lexbor")
    page = tmp_path / "heron.html"
    page.write_text(PAGE.replace("TOKEN", TOKEN))
    ingest(run, page)
    stored = " ".join(r["text"] + " " + str(r["title"]) for r in chunk_rows(brain_path))
    for boilerplate in ("UA-TRACKER-CODE", "color: red", "Shop the catalogue", "binoculars", "cookie policy"):
        assert boilerplate not in stored
    assert TOKEN not in dump_brain(brain_path)
    top = hits(run, "heron nests")
    assert top[0]["citation"] == f"{page}:{top[0]['match_line']}" and "heron nests" in top[0]["snippet"]
    assert "The grey heron nests by the fjord in early April, and the colony counted 41 nests" in top[0]["text"]
    assert hits(run, "fjord", "--format", "html")


def test_a_page_whose_meta_claims_utf16_is_read_as_browsers_read_it(run, tmp_path):
    page = tmp_path / "kiosk.html"  # ASCII bytes: a <meta> that can be read says it is not UTF-16
    page.write_bytes('<html><head><meta charset="utf-16"></head><body><p>The café kiosk opens at seven.</p>'
                     '</body></html>'.encode())
    ingest(run, page)
    assert "The café kiosk opens at seven." in hits(run, "kiosk")[0]["text"]


def test_html_over_the_size_limit_is_skipped_and_a_big_one_within_it_is_bounded(run, tmp_path, brain_path):
    paragraph = "<div class='row'><p>Row {i} of the shipping ledger lists crate {i} for Bergen.</p></div>\n"
    big = tmp_path / "big" / "ledger.html"
    big.parent.mkdir()
    with big.open("w") as fh:
        fh.write("<html><head><title>Ledger</title></head><body>")
        i = 0
        while fh.tell() < 4 * 1024 * 1024:
            fh.write(paragraph.format(i=i))
            i += 1
        fh.write("</body></html>")
    huge = tmp_path / "huge" / "dump.html"
    huge.parent.mkdir()
    with huge.open("wb") as fh:  # 50 MB: past the default --max-size of 20 MB
        fh.write(b"<html><body>" + b"<p>filler text</p>" * (50 * 1024 * 1024 // 18) + b"</body></html>")
    assert report_of(run, huge.parent)["skipped_by_reason"] == {"too large": 1}
    started = time.monotonic()
    report = report_of(run, big.parent)
    assert report["ingested"] == 1 and report["chunks_added"] > 100
    assert time.monotonic() - started < 120
    assert hits(run, "crate 12345")


# -- EPUB --------------------------------------------------------------------------------------


def test_epub_chapters_in_spine_order_cited_by_chapter(run, tmp_path, brain_path):
    book = tmp_path / "book.epub"
    book.write_bytes(fx.epub_bytes("The Keeper", [
        ("Arrival", "The keeper arrives at the island in a storm."),
        ("The Lamp", "He polishes the great brass lamp every evening at dusk."),
        ("Departure", "In spring the supply boat takes him back to the mainland."),
    ]))
    ingest(run, book)
    assert hits(run, "brass lamp")[0]["citation"] == f"{book}#chapter-2"
    assert hits(run, "supply boat")[0]["citation"] == f"{book}#chapter-3"
    rows = chunk_rows(brain_path)
    assert [json.loads(r["meta"])["chapter"] for r in rows] == [1, 2, 3]
    assert {r["title"] for r in rows[1:]} == {"The Keeper"}
    assert not any("Contents" in r["text"] for r in rows)  # the nav document is not in the spine


def test_corrupt_epub_is_skipped(run, tmp_path):
    (tmp_path / "bad.epub").write_bytes(b"PK\x03\x04 definitely not a zip")
    with zipfile.ZipFile(tmp_path / "nocontainer.epub", "w") as z:
        z.writestr("mimetype", "application/epub+zip")
    assert report_of(run, tmp_path)["skipped_by_reason"] == {"corrupt": 2}


# -- e-mail ------------------------------------------------------------------------------------


def _mailbox(tmp_path: Path) -> Path:
    first = fx.message(
        "Budget for the boathouse", "Ann Berg <ann@example.org>", WHEN,
        "Plain text: the boathouse budget is approved.\n\nOn Mon, Bob wrote:\n> should we repaint the hull?\n"
        f"\n-- \nAnn\nAPI token {TOKEN}\n",
        html="<p>HTML-ONLY-ALTERNATIVE boathouse budget</p>", message_id="budget-1@example.org",
        attachments=(("quote.pdf", b"%PDF-1.4 not read"), ("hull.png", b"\x89PNG")))
    second = fx.message(
        "Møte på fredag ✓", "Bob <bob@example.org>", WHEN + timedelta(days=30),
        "From now on we meet on fridays at the marina office.\n", message_id="moete-2@example.org")
    mbox = tmp_path / "mail" / "inbox.mbox"
    mbox.parent.mkdir()
    mbox.write_bytes(fx.mbox_bytes([first, second], broken_at=1))
    return mbox


def test_mbox_messages_cited_by_id_dated_plain_preferred_quotes_and_broken_message(run, tmp_path, brain_path):
    mbox = _mailbox(tmp_path)
    assert b"=?utf-8?" in mbox.read_bytes()  # the subject is RFC 2047-encoded on disk
    result = ingest(run, mbox.parent)
    assert "1 broken mail messages skipped" in result.stdout and "1 ingested" in result.stdout

    budget = hits(run, "boathouse budget")[0]
    assert budget["citation"] == f"{mbox}#budget-1@example.org"
    assert budget["ts"] == "2024-05-03T07:30:00+00:00"  # the message's Date, in UTC
    assert budget["meta"]["from"] == "Ann Berg <ann@example.org>"
    assert "Attachments: quote.pdf, hull.png" in budget["text"]
    stored = dump_brain(brain_path)
    for absent in ("HTML-ONLY-ALTERNATIVE", "repaint the hull", "not read", TOKEN):
        assert absent not in stored

    friday = hits(run, "marina office")[0]
    assert friday["meta"]["subject"] == "Møte på fredag ✓"
    assert friday["citation"] == f"{mbox}#moete-2@example.org"
    assert friday["text"].splitlines()[-1].startswith("From now on")  # mbox escaping undone
    assert [h["meta"]["message_id"] for h in hits(run, "boathouse marina", "--since", "2024-05-20")] == [
        "moete-2@example.org"]
    assert hits(run, "marina", "--format", "mail") and not hits(run, "marina", "--format", "pdf")


def test_a_file_named_mbox_and_an_eml(run, tmp_path):
    msg = fx.message("Key handover", "Cato <cato@example.org>", WHEN,
                     "The spare key to the shed is under the blue pot.\n", message_id="key@example.org")
    (tmp_path / "mbox").write_bytes(fx.mbox_bytes([msg]))
    (tmp_path / "handover.eml").write_bytes(msg.as_bytes())
    ingest(run, tmp_path)
    citations = sorted(h["citation"] for h in hits(run, "spare key shed"))
    assert citations == [f"{tmp_path}/handover.eml#key@example.org", f"{tmp_path}/mbox#key@example.org"]
    formats = {json.loads(line)["format"] for line in run("brain", "sources", "--json").stdout.splitlines()}
    assert formats == {"mail"}


def test_html_only_mail_is_read_as_text(run, tmp_path):
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["Message-ID"] = "Newsletter", "news@example.org", "<n1@example.org>"
    msg.set_content("<html><body><p>The <b>autumn regatta</b> is on 12 October.</p>"
                    "<script>track()</script></body></html>", subtype="html")
    (tmp_path / "news.eml").write_bytes(msg.as_bytes())
    ingest(run, tmp_path / "news.eml")
    top = hits(run, "autumn regatta")[0]
    assert "The autumn regatta is on 12 October." in top["text"] and "track()" not in top["text"]


def _raw_mail(subject: str, body: bytes, *, charset: str = "utf-8", date: str = "Fri, 03 May 2024 09:30:00 +0200",
              extra: bytes = b"") -> bytes:
    return (f"From: Ann Berg <ann@example.org>\nSubject: {subject}\nDate: {date}\n"
            f"Content-Type: text/plain; charset={charset}\n").encode() + extra + b"\n" + body


def test_mail_in_a_charset_no_codec_knows_is_read(run, tmp_path):
    """`charset=unknown-8bit` (RFC 1428) or a name no codec has: the body is read as UTF-8
    when it is UTF-8, else as Windows-1252, and the message is stored, in an .eml and in a
    mailbox alike."""
    mail = tmp_path / "mail"
    mail.mkdir()
    (mail / "kafe.eml").write_bytes(_raw_mail(
        "Lunch", "We meet at the kafé by the pier at noon.\n".encode("cp1252"), charset="unknown-8bit"))
    (mail / "kiosk.eml").write_bytes(_raw_mail(
        "Smørbrød", "The harbour kiosk sells smørbrød until four.\n".encode(), charset="x-no-such-charset"))
    (mail / "inbox.mbox").write_bytes(
        b"From ann@example.org Mon Jan  1 00:00:00 2024\n" + _raw_mail("Boat", b"The dinghy is moored at the slipway.\n")
        + b"\nFrom ann@example.org Mon Jan  1 00:00:00 2024\n"
        + _raw_mail("Oars", "The oars hang in the shed beside the café sign.\n".encode("latin-1"),
                    charset="unknown-8bit"))
    result = ingest(run, mail)
    assert "3 ingested" in result.stdout and "skipped" not in result.stderr and "broken" not in result.stdout
    assert "We meet at the kafé by the pier at noon." in hits(run, "kafé pier")[0]["text"]
    assert "The harbour kiosk sells smørbrød until four." in hits(run, "harbour kiosk")[0]["text"]
    texts = "\n".join(h["text"] for h in hits(run, "dinghy oars café"))
    assert "dinghy is moored" in texts and "beside the café sign" in texts


def test_a_header_that_cannot_be_read_costs_its_field_not_the_message(run, tmp_path, brain_path):
    """A Date past year 9999 in UTC, a Date whose year overflows, a From or Message-ID the
    header parser raises on, an attachment name in a codec that cannot decode it: each
    message is stored, undated when its Date names no instant, a header kept as written."""
    mail = tmp_path / "mail"
    mail.mkdir()
    (mail / "future.eml").write_bytes(_raw_mail("Impala", b"The impala herd crossed the river.\n",
                                                date="Fri, 31 Dec 9999 23:59:59 -1200"))
    (mail / "huge.eml").write_bytes(_raw_mail("Kudu", b"A kudu bull drank at the waterhole.\n",
                                              date="1 Jan 99999999999999999999 00:00:00 +0000"))
    (mail / "sender.eml").write_bytes(
        b"From: <\nSubject: Eland\nMessage-ID: <eland@\n\nThe eland calved in the north paddock.\n")
    (mail / "attached.eml").write_bytes(
        b"From: ann@example.org\nSubject: Gnu\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=XX\n\n"
        b"--XX\nContent-Type: text/plain\n\nThe gnu census is attached.\n--XX\n"
        b"Content-Type: application/octet-stream\nContent-Disposition: attachment; filename*=undefined''census\n\n"
        b"QUJD\n--XX\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=map.pdf\n\nQUJD\n--XX--\n")
    result = ingest(run, mail)
    assert "4 ingested" in result.stdout and "skipped" not in result.stderr
    for query in ("impala herd", "kudu waterhole"):
        found = hits(run, query)[0]
        assert "Date:" not in found["text"] and not found["ts"].startswith("9999")
    eland = hits(run, "eland calved")[0]
    assert eland["meta"]["from"] == "<" and eland["citation"] == f"{mail / 'sender.eml'}#eland@"
    assert "Attachments: map.pdf" in hits(run, "gnu census")[0]["text"]
    # the undated messages are not found as if sent in 9999
    assert not hits(run, "impala kudu", "--since", "2100-01-01")


# -- notebooks ---------------------------------------------------------------------------------


def test_notebook_cells_in_order_outputs_left_out(run, tmp_path, brain_path):
    nb = tmp_path / "analysis.ipynb"
    nb.write_bytes(fx.notebook_bytes([
        ("markdown", "# Tide analysis\nWe fit the tide gauge readings from Bodø."),
        ("code", "import pandas as pd\nreadings = pd.read_csv('tides.csv')"),
        ("markdown", "The residuals show a storm surge in November."),
    ], outputs="OUTPUT-TRACEBACK-NOT-INDEXED"))
    ingest(run, nb)
    text = "\n".join(r["text"] for r in chunk_rows(brain_path))
    assert "OUTPUT-TRACEBACK-NOT-INDEXED" not in dump_brain(brain_path)
    assert text.index("tide gauge") < text.index("pd.read_csv") < text.index("storm surge")
    assert hits(run, "storm surge", "--format", "notebook")[0]["citation"].startswith(f"{nb}:")


def test_corrupt_notebook_is_skipped(run, tmp_path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    assert report_of(run, tmp_path / "broken.ipynb")["skipped_by_reason"] == {"corrupt": 1}


# -- faces and schema --------------------------------------------------------------------------


def test_the_tool_cites_the_page(run, tmp_path, ollama):
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(fx.pdf_bytes([["Safety first."], ["Torque the M12 bolts to 85 Nm before launch."]]))
    run("brain", "ingest", pdf)
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": "M12 bolt torque"}}]})
    result = run("-m", "echo", "-T", "brain_recall", call)
    assert f"{pdf}#page=2:1" in result.stdout


def test_older_brains_get_a_format_per_source(run, tmp_path, brain_path):
    (tmp_path / "a.md").write_text("An older note about the cabin roof repairs.\n")
    (tmp_path / "b.html").write_text("<p>An older saved page about the cabin.</p>")
    ingest(run, tmp_path)
    conn = sqlite3.connect(brain_path)
    conn.execute("UPDATE files SET format = NULL")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    assert {r["path"].rsplit(".", 1)[1]: r["format"] for r in map(
        json.loads, run("brain", "sources", "--json").stdout.splitlines())} == {"md": "text", "html": "html"}
    assert "cabin" in hits(run, "cabin", "--format", "html")[0]["text"]
