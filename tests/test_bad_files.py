"""One bad file never stops the brain (issue 34): each of the files that once aborted a whole
ingest is skipped by name while the rest is stored, `update` completes and `watch` keeps
watching; a document's text is bounded by --max-size and cut between paragraphs, before the
scrubber; the worker process that reads documents is replaced when it overruns; and every
error a user can cause on the command line is one line."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import zipfile

import docfixtures as fx
from conftest import dump_brain, llm_cmd
from test_freshness import Watcher
from test_llm_logs import log_with_llm

from llm_secondbrain.ingest.formats import html

REASONS = {"number.ipynb": "corrupt", "charset.html": None, "header.docx": "corrupt",
           "filter.pdf": "unsupported", "deflate.epub": "corrupt", "deep.eml": "nested too deep"}


def _folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, raw in fx.bad_files(tmp_path).items():
        (docs / name).write_bytes(raw)
    (docs / "zz-after.md").write_text("The ferry to the island leaves at nine.\n")
    (docs / "zz-after.pdf").write_bytes(fx.pdf_bytes([["The lighthouse lamp is lit at dusk."]]))
    return docs


def test_each_bad_file_is_named_and_skipped_and_the_rest_is_stored(tmp_path):
    docs = _folder(tmp_path)
    env = {**os.environ, "SECONDBRAIN_DB": str(tmp_path / "brain.db")}
    done = subprocess.run(llm_cmd("brain", "ingest", "--no-embed", "--json", docs), capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    skipped = {os.path.basename(f["path"]): f["reason"] for f in report["skipped_files"]}
    assert skipped == {name: reason for name, reason in REASONS.items() if reason}
    # one line each on stderr, naming the file; nothing a library printed
    assert sorted(done.stderr.splitlines()) == sorted(f"skipped {docs / n}: {r}" for n, r in skipped.items())
    assert report["ingested"] == 3  # the page with an unusable charset is read as UTF-8
    assert report["reading"]["files"] == 7 and report["reading"]["crashes"] == 0
    # update replays the root: it completes, naming the same files again
    again = subprocess.run(llm_cmd("brain", "update", "--no-embed"), capture_output=True, text=True,
                           env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert sorted(again.stderr.splitlines()) == sorted(done.stderr.splitlines())
    rows = sqlite3.connect(tmp_path / "brain.db").execute("SELECT text FROM chunks").fetchall()
    assert any("lighthouse lamp" in text for (text,) in rows)


def test_watch_names_a_bad_file_and_keeps_watching(tmp_path, run):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe first note.\n")
    os.environ["SECONDBRAIN_DB"] = str(tmp_path / "brain.db")  # isolated_env restores it
    run("brain", "ingest", notes, "--no-embed")
    watcher = Watcher("--no-embed")
    try:
        watcher.wait_for("watching 1 roots")
        (notes / "number.ipynb").write_bytes(fx.bad_files(tmp_path)["number.ipynb"])
        watcher.wait_for(f"skipped {notes / 'number.ipynb'}: corrupt")
        watcher.settle(1.5)
        (notes / "b.md").write_text("# B\n\nWritten after the bad notebook.\n")
        line = watcher.wait_for("1 ingested")
    finally:
        code = watcher.stop()
    assert code == 0 and "Traceback" not in "\n".join(watcher.seen)
    assert " changed: " in line


def test_text_past_max_size_is_cut_between_paragraphs_before_scrubbing(run, tmp_path, brain_path):
    """A 6 KB book that inflates to 60 KB of text, read with --max-size of 20 KB: the chapters
    that fit are stored, the one that crosses the limit is kept up to its last whole
    paragraph, a token across the limit is never stored in part, and the cut is named."""
    token = "ghp_R3aLlyL0ngT0kenValue0123456789abcdEF"
    paragraph = "The keeper logs the weather at dawn and at dusk, every day of the year."
    chapters = [(f"Chapter {i}", "</p><p>".join(f"{paragraph} Entry {i}-{j}." for j in range(40)))
                for i in range(20)]
    raw = fx.epub_bytes("Log", chapters)
    assert len(raw) < 20_000 < 60_000 < sum(len(body) for _, body in chapters)
    book = tmp_path / "log.epub"
    book.write_bytes(raw)
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", "--max-size", "0.02", book).stdout)
    assert report["cut_files"] == [str(book)] and report["ingested"] == 1
    assert report["left_out"] == {"documents cut at --max-size of text (the rest left out)": 1}
    texts = [r[0] for r in sqlite3.connect(brain_path).execute("SELECT text FROM chunks ORDER BY id")]
    stored = "\n\n".join(texts)
    assert 15_000 < len(stored) <= 0.02 * 1024 * 1024
    whole = {f"Chapter {i}" for i in range(20)} | {f"{paragraph} Entry {i}-{j}." for i in range(20) for j in range(40)}
    assert set(stored.split("\n\n")) <= whole  # whole paragraphs only

    # standard input too: the text past the limit is dropped with its partial paragraph, so the
    # token that straddles the limit is not stored, nor half of it
    pasted = "Notes from the call.\n\n" * 500
    pasted = pasted[:10_480 - 20] + f"deploy token {token} for the ferry\n\nMore after it.\n"
    result = run("brain", "ingest", "-", "--name", "call", "--max-size", "0.01", "--no-embed", "--json",
                 input=pasted)
    assert json.loads(result.stdout)["cut_files"] == ["call"]
    dump = dump_brain(brain_path)
    assert token[:12] not in dump and token[-12:] not in dump and "deploy token" not in dump


def test_deep_markup_is_flattened_past_browser_depth_and_depth_is_not_fooled():
    deep = ("<html><body>" + '<div class="x">' * 20_000 + "<p>At the very bottom.</p>" + "</div>" * 20_000
            + "<p>After it.</p></body></html>")
    assert html.nesting(deep) == 20_000
    assert html.nesting(html.flattened(deep, 512)) == 512
    assert html.visible_text(deep)[1] == "At the very bottom.\n\nAfter it."
    stray = "</div>" * 5000 + "<DIV >" * 600 + "<section>"
    assert html.nesting(stray) == 601  # stray end tags first do not hide the starts after them
    assert html.nesting("<div><div></div></div>" * 1000 + "<div>") == 2


def test_a_reader_past_its_time_is_stopped_and_the_next_file_gets_a_fresh_one(run, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"report-{i}.pdf").write_bytes(fx.pdf_bytes([[f"Report number {i} on the harbour crane."]]))
    (docs / "note.md").write_text("Plain text is read here, not in the worker.\n")
    monkeypatch.setenv("SECONDBRAIN_READ_SECONDS", "0.001")  # no PDF reads that fast
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", docs).stdout)
    assert report["skipped_by_reason"] == {"too slow to read (over 0.001 s)": 3}
    assert report["ingested"] == 1
    assert report["reading"]["overruns"] == 3 and report["reading"]["starts"] == 3
    monkeypatch.delenv("SECONDBRAIN_READ_SECONDS")
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", docs).stdout)
    assert report["ingested"] == 3 and report["reading"] == {**report["reading"], "starts": 1, "overruns": 0}


def test_a_zip_that_inflates_past_its_share_is_refused_before_the_library_sees_it(run, tmp_path):
    big = tmp_path / "big.docx"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", "<w:document>" + "<w:p/>" * 400_000 + "</w:document>")
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", "--max-size", "0.25", big).stdout)
    assert report["skipped_by_reason"] == {"too large to read": 1}


def test_text_holding_a_lone_surrogate_is_stored_with_a_replacement_and_stops_nothing(run, tmp_path, brain_path):
    # JSON and YAML both spell a lone UTF-16 surrogate ("\ud800"), and UTF-8 cannot hold one: once,
    # the batch holding such a note was refused and the ingest stopped there, every time.
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(40):
        (docs / f"n{i:02}.md").write_text(f"Note {i} about the numbat.\n")
    (docs / "lone.ipynb").write_text('{"cells": [{"cell_type": "markdown", "source": "a lone \\ud800 surrogate"}]}')
    (docs / "odd-title.md").write_text('---\ntitle: "the \\udc00 title"\n---\nA note under an odd title.\n')
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", docs).stdout)
    assert report["ingested"] == 42 and report["skipped"] == 0
    assert "a lone \N{REPLACEMENT CHARACTER} surrogate" in run("brain", "recall", "surrogate", "--mode", "lexical").output
    assert "odd-title.md" in run("brain", "recall", "odd title", "--mode", "lexical").output
    assert "the \N{REPLACEMENT CHARACTER} title" in dump_brain(brain_path)


def test_front_matter_is_bounded_and_a_typo_in_it_loses_nothing(run, tmp_path, brain_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    lines, previous = ['---', 'title: Laughing note', 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'], "a"
    for name in "bcdef":  # aliases of aliases: 400 bytes that read as 8**6 strings
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 8) + "]")
        previous = name
    (docs / "laughs.md").write_text("\n".join(lines) + "\n---\n\nThe laughing kookaburra nests in gum trees.\n")
    summary = " ".join(f"word{i}" for i in range(3000))
    (docs / "long.md").write_text(f"---\ntitle: Long summary\ndate: 2024-03-01\nsummary: {summary}\n---\n\n"
                                  + "\n\n".join(f"Paragraph {i} about the quokka's day." for i in range(60)) + "\n")
    (docs / "typo.md").write_text("---\ntitle: A typo in the date\ncreated: 2024-02-30\n---\n\nThe chital is a deer.\n")
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", docs).stdout)
    assert report["ingested"] == 3 and report["skipped"] == 0
    for query, note in (("kookaburra", "laughs.md"), ("quokka", "long.md"), ("chital deer", "typo.md"),
                        ("word2999", "long.md")):
        assert note in run("brain", "recall", query, "--mode", "lexical").output, query
    conn = sqlite3.connect(brain_path)
    titles = {path.rsplit("/", 1)[-1]: title for path, title in conn.execute("SELECT path, title FROM chunks")}
    assert titles == {"laughs.md": "Laughing note", "long.md": "Long summary", "typo.md": "A typo in the date"}
    assert conn.execute("SELECT max(length(meta)) FROM chunks").fetchone()[0] <= 4096 + 64


# -- one line, whatever the user typed -------------------------------------------------------------


def test_every_cli_error_is_one_line(run, tmp_path):
    (tmp_path / "n.md").write_text("A note.\n")
    run("brain", "ingest", tmp_path / "n.md", "--no-embed")
    for args, says in ((("recall", "note", "--since", "99999999d"), "date out of range: '99999999d'"),
                       (("recall", "note", "--until", "9999-12-31"), "date out of range: '9999-12-31'"),
                       (("ingest", "--llm-logs", "--since", "99999999d", "--no-embed"), "--since must be")):
        result = run("brain", *args, ok=False)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
        assert result.output.startswith(f"Error: {says}") and len(result.output.splitlines()) == 1


def test_recall_options_within_their_ranges_answer_and_past_them_are_one_line(run, tmp_path, ollama):
    (tmp_path / "n.md").write_text("The invoice run is on the fifth.\n")
    run("brain", "ingest", tmp_path / "n.md")
    for args in (("-k", "1000", "--per-note", "5"), ("--pool", "4096"), ("-k", "1000", "--per-note", "100")):
        assert "n.md" in run("brain", "recall", "invoice run", *args).output, args  # (5,000 neighbours: sqlite-vec stops at 4,096)
    for args, says in ((("--pool", "5000"), "pool must be at most 4096"),
                       (("--per-note", "1" + "0" * 22), "per-note must be at most 100"),
                       (("--lexical-weight", "nan"), "lexical_weight must be a number, at least 0")):
        result = run("brain", "recall", "invoice", *args, ok=False)
        assert result.exit_code == 1 and result.output == f"Error: {says}\n", (args, result.output)


def test_a_number_that_is_no_number_is_one_line(run, tmp_path, monkeypatch):
    (tmp_path / "n.md").write_text("A note.\n")
    for value in ("nan", "inf", "1e400", "5000"):
        result = run("brain", "ingest", tmp_path / "n.md", "--no-embed", "--max-size", value, ok=False)
        assert result.exit_code == 2 and "Error: Invalid value for '--max-size'" in result.output  # click's usage error
        assert isinstance(result.exception, SystemExit), result.exception
    run("brain", "ingest", tmp_path / "n.md", "--no-embed")
    for value in ("inf", "nan", "-1"):
        monkeypatch.setenv("SECONDBRAIN_OLLAMA_TIMEOUT", value)
        result = run("brain", "recall", "note", ok=False)
        assert result.output.startswith("Error: SECONDBRAIN_OLLAMA_TIMEOUT must be") and result.exit_code == 1, value


def test_a_logs_db_holding_blobs_and_numbers_is_read(run, tmp_path):
    logs = tmp_path / "logs.db"
    log_with_llm(logs, "Where is the spare key for the boathouse?")
    conn = sqlite3.connect(logs)
    conn.execute("UPDATE turn_search SET prompt = CAST(prompt AS BLOB)")
    conn.execute("UPDATE turns SET model = 42")
    conn.commit()
    conn.close()
    result = run("brain", "ingest", "--llm-logs", "--logs-db", logs, "--no-embed", "--json")
    assert json.loads(result.stdout)["ingested"] == 1
    hits = run("brain", "recall", "spare key boathouse", "--mode", "lexical", "--json").stdout
    assert "boathouse" in json.loads(hits.splitlines()[0])["text"]


def test_a_damaged_logs_db_is_named_as_llms_not_the_brains(run, tmp_path, brain_path):
    (tmp_path / "n.md").write_text("The boathouse key hangs by the door.\n")
    run("brain", "ingest", tmp_path / "n.md", "--no-embed")
    logs = tmp_path / "logs.db"
    log_with_llm(logs, "Where is the spare key for the boathouse?")
    conn = sqlite3.connect(logs)
    pages = [root for name, root in conn.execute("SELECT name, rootpage FROM sqlite_master") if name in ("turns", "turn_search")]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    raw = bytearray(logs.read_bytes())
    for root in pages:  # the tables' root pages overwritten: SQLite calls the file malformed
        raw[(root - 1) * size:root * size] = b"\x0d" + b"\xff" * (size - 1)
    logs.write_bytes(bytes(raw))
    result = run("brain", "ingest", "--llm-logs", "--logs-db", logs, "--no-embed", ok=False)
    assert result.exit_code == 1 and result.output.startswith("Error: cannot read llm's logs:")
    assert "brain database" not in result.output and len(result.output.splitlines()) == 1
    assert "n.md" in run("brain", "recall", "boathouse key", "--mode", "lexical").output


def test_db_through_a_symlink_to_a_file_not_there_yet_creates_it(run, tmp_path):
    link = tmp_path / "brain.db"
    target = tmp_path / "elsewhere" / "real.db"
    link.symlink_to(target)
    (tmp_path / "n.md").write_text("A note kept through a link.\n")
    run("brain", "ingest", tmp_path / "n.md", "--no-embed", "--db", link)
    assert target.is_file() and link.is_symlink() and oct(target.stat().st_mode & 0o777) == "0o600"
    assert "kept through a link" in run("brain", "recall", "kept link", "--mode", "lexical", "--db", link).stdout
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    looped = run("brain", "ingest", tmp_path / "n.md", "--no-embed", "--db", tmp_path / "loop", ok=False)
    assert looped.exit_code == 1 and "Too many levels of symbolic links" in looped.output
    assert len(looped.output.strip().splitlines()) == 1


def test_inside_an_application_that_embeds_python_documents_are_read_in_process(run, tmp_path, monkeypatch):
    """sys.executable is then the application's own program, never to be started as Python."""
    (tmp_path / "a.pdf").write_bytes(fx.pdf_bytes([["Read in this very process."]]))
    monkeypatch.setattr("sys.executable", "/usr/sbin/some-server")
    report = json.loads(run("brain", "ingest", "--no-embed", "--json", tmp_path / "a.pdf").stdout)
    assert report["ingested"] == 1 and report["reading"]["in_process"]
    assert report["reading"]["files"] == 1 and report["reading"]["starts"] == 0
