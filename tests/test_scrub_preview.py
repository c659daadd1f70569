"""`llm brain scrub FILE` on documents (PDF, DOCX, HTML): it shows what ingest would store,
read by the same reader and scrubbed by the same gate, never the file's bytes; a file ingest
would skip is one line and exit 1. The planted passwords are made per run."""
from __future__ import annotations

import secrets

import docfixtures as fx
from test_documents import chunk_rows, hide_modules


def _password() -> str:
    """A password no rule could know beforehand, mixed case and digits, new every run."""
    return "Zr" + secrets.token_hex(6) + "Kq!"


def _stored_texts(run, path, brain_path) -> list[str]:
    run("brain", "ingest", "--no-embed", path)
    return [row["text"] for row in chunk_rows(brain_path)]


def test_pdf_shows_its_pages_scrubbed_never_its_source(run, tmp_path, brain_path):
    pw = _password()
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(fx.pdf_bytes([["Lighthouse keeper logbook for March.", f"admin password: {pw}"],
                                  ["The keeper rows out at dawn.", f"spare copy {pw}"]], title="Keeper manual"))
    result = run("brain", "scrub", "--report", pdf)
    out = result.stdout
    assert pw not in result.output
    assert "%PDF" not in out and " Tj" not in out and "endobj" not in out
    assert out.startswith("title: Keeper manual\n--- page: 1\nLighthouse keeper logbook for March.\n")
    assert "--- page: 2\nThe keeper rows out at dawn.\nspare copy [REDACTED:" in out
    assert result.stderr == "redacted 2: password: 2\n"
    assert all(text in out for text in _stored_texts(run, pdf, brain_path))  # what ingest stores, as shown


def test_docx_shows_title_headings_and_paragraphs_scrubbed(run, tmp_path, brain_path):
    pw = _password()
    doc = fx.docx_file(tmp_path / "plan.docx", title=f"Migration plan {pw}",
                       paragraphs=[("We move the racks in the first week of June.", None),
                                   ("Accounts", "Heading 1"),
                                   (f"vault password: {pw}", None)])
    result = run("brain", "scrub", doc)
    out = result.output
    assert pw not in out and "[Content_Types]" not in out
    assert "title: Migration plan [REDACTED:password]\n" in out  # found in the body, redacted in the title
    assert "We move the racks in the first week of June." in out
    assert "--- heading: Accounts\n" in out and "vault password: [REDACTED:password]" in out
    assert all(text in out for text in _stored_texts(run, doc, brain_path))


def test_html_shows_title_and_visible_text_scrubbed(run, tmp_path):
    pw = _password()
    page = tmp_path / "page.html"
    page.write_text(f"<html><head><title>Router admin {pw}</title><style>p {{ color: red }}</style></head>"
                    f"<body><p>Welcome to the heron watch page.</p><p>router password: {pw}</p></body></html>")
    out = run("brain", "scrub", page).output
    assert pw not in out and "<" not in out and "color" not in out
    assert out == ("title: Router admin [REDACTED:password]\n---\n"
                   "Welcome to the heron watch page.\n\nrouter password: [REDACTED:password]\n")


def test_explain_reads_the_document_as_scrub_shows_it(run, tmp_path):
    """Positions point into the lines the preview prints: never into the zip's bytes."""
    pw = _password()
    doc = fx.docx_file(tmp_path / "plan.docx", title="Migration plan",
                       paragraphs=[("We move the racks in June.", None), (f"vault password: {pw}", None)])
    shown = run("brain", "scrub", doc).output.splitlines()
    out = run("brain", "scrub", "--explain", doc).output
    assert pw not in out
    redactions = [line for line in out.splitlines() if " redacted " in line]
    assert len(redactions) == 1 and out.endswith("1 redacted, 0 let go\n")
    line, column = map(int, redactions[0].split()[0].split(":"))
    assert shown[line - 1][column - 1:].startswith("[REDACTED:password]")


def test_a_file_ingest_would_skip_is_one_line_never_its_bytes(run, tmp_path):
    pw = _password()
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n1 0 obj\n(password: " + pw.encode() + b") Tj\n" + bytes(range(256)))
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01password: " + pw.encode() + b"\x00" * 64)
    for path, reason in ((broken, "corrupt"), (blob, "binary")):
        for option in ((), ("--explain",), ("--report",)):
            result = run("brain", "scrub", *option, path, ok=False)
            assert result.exit_code == 1, result.output
            assert result.output == f"Error: ingest would skip {path}: {reason}\n"


def test_a_missing_extra_is_one_line_naming_the_fix(run, tmp_path, monkeypatch):
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(fx.pdf_bytes([[f"admin password: {_password()}"]]))
    hide_modules(monkeypatch, tmp_path, "pypdf")  # as if `pip install llm-secondbrain` only
    result = run("brain", "scrub", pdf, ok=False)
    assert result.exit_code == 1
    assert result.output == (f"Error: ingest would skip {pdf}: "
                             f"PDF files skipped: pip install 'llm-secondbrain[pdf]'\n")
