"""Hostile input (issue 7): queries, text and files meant to break things; sources that must
never change; and secrets that must never leave the scrubber. (Scrub's own properties, never
raising, idempotence and linear time, live in tests/test_scrub.py.)"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from conftest import dump_brain, llm_cmd, unprivileged
from faultkit import check_invariants, content, tree_snapshot
from ollama_stub import OllamaStub

from llm_secondbrain.options import RecallOptions
from llm_secondbrain.recall import fts_query, recall
from llm_secondbrain.segment import segment
from llm_secondbrain.store import ChunkRow, open_brain

# =================================================================================================
# The query sanitiser: whatever the user types, MATCH never raises.

FTS_SYNTAX = ['"', '""', "'", "*", "^", "(", ")", "NEAR", "NEAR(", "NEAR/2", "AND", "OR", "NOT",
              "+", "-", ":", "text:", "fts_chunks:", "rank", "{text}", "\x00", "🙂", "C++", "a-b",
              "what's", "INV/2026/00037", "_", "__", "ß", "İ", "\u200b", "\ufeff", "e\u0301",
              "١٢٣", "x" * 300, "\\", "%", "[", "]", "$", ";", "--", "/*"]


@pytest.fixture(scope="module")
def fts_brain(tmp_path_factory):
    path = tmp_path_factory.mktemp("fts") / "brain.db"
    texts = ["C++ templates and what's next for a-b tests", "INV/2026/00037 paid 2026-03-01",
             "Straße in İstanbul, café au lait", "NEAR and OR and NOT are plain words here",
             "١٢٣ arabic digits 🙂 emoji"]
    with open_brain(path) as brain:
        brain.stage(path="/h/a.md", chunks=[ChunkRow(t, i + 1, i + 1) for i, t in enumerate(texts)],
                    project="h", source="files", ts=None)
    brain = open_brain(path, create=False)
    yield brain
    brain.close()


def _match_never_raises(brain, query: str) -> None:
    q = fts_query(query)
    if q is not None:
        assert "\x00" not in q
        brain.conn.execute(
            "SELECT rowid, bm25(fts_chunks) FROM fts_chunks WHERE fts_chunks MATCH ? LIMIT 5", (q,)
        ).fetchall()
    # and the whole lexical path the CLI runs (the literal-identifier lane included)
    recall(brain.conn, query, RecallOptions(mode="lexical", k=3))


_queries = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
    st.lists(st.sampled_from(FTS_SYNTAX), max_size=30).map(" ".join),
    st.lists(st.sampled_from(FTS_SYNTAX), max_size=30).map("".join),
    st.lists(st.one_of(st.sampled_from(FTS_SYNTAX), st.text(max_size=5)), max_size=40).map("".join),
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(query=_queries)
@example(query='"')
@example(query='NEAR("a" "b", 2)')
@example(query="text: * ^ AND OR NOT ( ) \x00")
def test_fts_query_never_makes_match_raise(fts_brain, query):
    _match_never_raises(fts_brain, query)


_HUNDRED_KB = """\
import sys
from llm_secondbrain.options import RecallOptions
from llm_secondbrain.recall import fts_query, recall
from llm_secondbrain.store import open_brain
units = ["word ", '"', "NEAR( ", "a-b ", "\\x00", "INV/2026/00037 ", "\\U0001f642", "x",
         "AND OR NOT ", "THE QUICK BROWN FOX ", "\\u00df_\\u0130 ", "ab12 "]
with open_brain(sys.argv[1], create=False) as brain:
    for unit in units:
        unit = unit.encode().decode("unicode_escape")
        query = unit * (100_000 // len(unit))
        q = fts_query(query)
        if q is not None:
            brain.conn.execute("SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ?", (q,)).fetchall()
        recall(brain.conn, query, RecallOptions(mode="lexical", k=3))
        print(repr(unit), flush=True)
"""


def test_hundred_kilobyte_queries(fts_brain, tmp_path):
    """Pasted 100 KB queries answer in bounded time and never raise (in a subprocess, so a
    query that runs away can be stopped)."""
    script = tmp_path / "hundred_kb.py"
    script.write_text(_HUNDRED_KB)
    try:
        res = subprocess.run([sys.executable, str(script), str(fts_brain.path)], capture_output=True,
                             text=True, timeout=60)  # milliseconds each when the work is linear
    except subprocess.TimeoutExpired as e:
        done = (e.stdout or b"").decode().split()
        raise AssertionError(f"a 100 KB query ran for minutes; finished only: {done}") from None
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 12


def test_query_with_bytes_that_are_not_utf8_through_the_cli(run, tmp_path):
    """argv holds undecodable bytes as lone surrogates; recall must still answer."""
    notes = tmp_path / "n"
    notes.mkdir()
    (notes / "a.md").write_text("The garden sensor battery needs replacing.\n")
    run("brain", "ingest", notes, "--no-embed")
    res = subprocess.run(llm_cmd("brain", "recall", os.fsdecode(b"garden \xff\xfe"), "--json"),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "garden" in json.loads(res.stdout.splitlines()[0])["text"]


# =================================================================================================
# The segmenter on any Unicode (tests/test_segment.py covers a small alphabet with no noise).

_SEG_ALPHABET = list("ab .!?\n\t\x0b\x0c\x1c\x85\u2028\u3000\xa0é。…") + ["\n\n", " \n \n", "abcdefgh"]
_seg_texts = st.one_of(st.text(max_size=2000),
                       st.lists(st.sampled_from(_SEG_ALPHABET), max_size=1500).map("".join))


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_seg_texts, st.integers(min_value=2, max_value=300), st.integers(min_value=1, max_value=40))
@example("aaaaaaaaaaaaa\n\nabcdefghabcdefghaaa\n\na", 18, 17)
def test_segment_is_exact_slices_and_drops_only_noise(text, max_chars, min_chars):
    assume(min_chars < max_chars)
    segs = segment(text, max_chars=max_chars, min_chars=min_chars)
    if text.strip():
        assert segs, "a non-blank text must keep at least one chunk"
    pos, gaps = 0, []
    for s in segs:
        assert 0 < len(s.text) <= max_chars and s.text == s.text.strip()
        at = text.find(s.text, pos)
        assert at >= 0, "chunks are slices of the text, in order, never overlapping"
        assert s.line_start == text.count("\n", 0, at) + 1
        assert s.line_end == text.count("\n", 0, at + len(s.text) - 1) + 1
        gaps.append(text[pos:at])
        pos = at + len(s.text)
    gaps.append(text[pos:])
    if min_chars == 1:  # nothing is noise: every non-space character survives exactly once
        joined = "".join(s.text for s in segs)
        assert [c for c in joined if not c.isspace()] == [c for c in text if not c.isspace()]
    if segs:  # what was left out is separators and fragments shorter than min_chars
        for gap in gaps:
            assert all(len(part.strip()) < min_chars for part in re.split(r"\n[ \t]*\n", gap)), gap


# =================================================================================================
# Hostile files: each skipped with a counted reason or ingested correctly; none crashes the run.

BIG = 200 * 1024 * 1024

# Runs a command and records its peak RSS (KB) beside this script: the wrapper's only child.
_RSS_WRAPPER = """\
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stderr.write(r.stderr)
with open(sys.argv[0] + ".rss", "w") as fh:
    fh.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(r.returncode)
"""


def _hostile_tree(root: Path) -> dict[str, int]:
    """Build the folder; returns the skip reasons the summary must count."""
    root.mkdir()
    w = lambda name, data: (root / name).write_bytes(data)  # noqa: E731
    w("invalid-utf8.txt", b"valid start, then \xff\xfe\xfd not UTF-8 at all\n")
    w("latin1.txt", "caf\xe9 au lait, tr\xe8s bien, d\xe9j\xe0 vu".encode("latin-1"))
    w("utf16-le.txt", "\ufeffNotat om UTF-16 fakturaer og betaling.\r\n".encode("utf-16-le"))
    w("utf16-be.txt", "\ufeffBig-endian UTF-16 note about ferries.\n".encode("utf-16-be"))
    w("utf8-bom.md", "\ufeffA UTF-8 note with a byte order mark.\n".encode("utf-8"))
    w("nul-early.txt", b"text with a NUL\x00 byte right here\n")
    w("nul-late.txt", b"plain words " * 1000 + b"\x00 and a NUL after the sniffed part\n")
    w("crlf.txt", b"Windows line one about the harbour.\r\n\r\nWindows paragraph two, ferries.\r\n")
    w("old-mac.txt", b"Classic Mac line one about kayaks.\r\rParagraph two about paddles.\r")
    w("empty.md", b"")
    w("blank.md", b"  \n\n\t \r\n")
    w("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(300))
    with open(root / "big-one-line.txt", "wb") as fh:  # 200 MB, no newline at all
        block = b"abcdefghij" * 104_857 + b"abcdefghi "  # 1 MiB
        for _ in range(BIG // len(block)):
            fh.write(block)
    w("new\nline.md", b"A note whose file name has a newline in it, about tides.\n")
    w("tab\tand spaces  .md", b"A note with a tab and trailing spaces in its name.\n")
    (root / os.fsdecode(b"caf\xe9-latin1-name.md")).write_bytes(b"A note named in Latin-1 bytes.\n")
    odd_dir = root / os.fsdecode(b"dir-\xff")
    odd_dir.mkdir()
    (odd_dir / "inside.md").write_bytes(b"A note inside a folder with an undecodable name.\n")
    w("locked.md", b"A note nobody may read: it is chmod 000.\n")
    os.chmod(root / "locked.md", 0)
    (root / "locked-dir").mkdir()
    (root / "locked-dir" / "hidden.md").write_bytes(b"A note inside a folder nobody may list.\n")
    os.chmod(root / "locked-dir", 0)
    (root / "zz-locked-last").mkdir()  # a folder os.walk fails on after its last answer
    os.chmod(root / "zz-locked-last", 0)
    (root / "sub").mkdir()
    (root / "sub" / "fine.md").write_bytes(b"A perfectly fine note in a subfolder, about kayaks.\n")
    os.symlink(".", root / "sub" / "loop-to-parent")  # a folder loop
    os.symlink("..", root / "sub" / "loop-up")
    os.symlink("self-loop", root / "self-loop")  # a link to itself
    os.symlink("ping", root / "pong")
    os.symlink("pong", root / "ping")
    os.symlink("nowhere.md", root / "dangling.md")
    os.symlink("/etc/hostname", root / "outside.md")
    os.symlink("sub/fine.md", root / "inside-link.md")  # the same file twice: counted once
    os.mkfifo(root / "fifo.md")
    return {"not UTF-8": 2, "binary": 3, "empty": 2, "too large": 1, "name not UTF-8": 2,
            "unreadable": 1, "unreadable folder": 2, "symlinked folder": 2, "symlink loop": 3,
            "broken symlink": 1, "symlink out of folder": 1, "not a regular file": 1}


@pytest.mark.slow
def test_hostile_files_are_skipped_with_reasons_or_ingested(tmp_path, brain_path):
    root = tmp_path / "hostile"
    reasons = _hostile_tree(root)
    wrapper = tmp_path / "rss.py"
    wrapper.write_text(_RSS_WRAPPER)
    try:
        res = unprivileged([sys.executable, str(wrapper), *llm_cmd("brain", "ingest", root, "--json")])
        assert res.returncode == 0, res.stderr
        assert "Traceback" not in res.stderr
        summary = json.loads(res.stdout)
        assert summary["skipped_by_reason"] == reasons
        ingested = ["utf16-le.txt", "utf16-be.txt", "utf8-bom.md", "crlf.txt", "old-mac.txt",
                    "new\nline.md", "tab\tand spaces  .md", "sub/fine.md"]
        assert summary["ingested"] == len(ingested)
        assert summary["files_seen"] == len(ingested) + sum(reasons.values())
        # Bounded memory: the 200 MB one-line file was never read.
        peak_mb = int(Path(f"{wrapper}.rss").read_text()) / 1024
        assert peak_mb < 150, f"peak RSS {peak_mb:.0f} MB"
    finally:
        os.chmod(root / "locked-dir", 0o700)
        os.chmod(root / "zz-locked-last", 0o700)
    check_invariants(brain_path)
    conn = sqlite3.connect(brain_path)
    rows = dict(conn.execute("SELECT path, group_concat(text, '|') FROM chunks GROUP BY path"))
    assert sorted(os.path.relpath(p, root) for p in rows) == sorted(ingested)
    assert rows[str(root / "utf16-le.txt")] == "Notat om UTF-16 fakturaer og betaling."
    assert rows[str(root / "utf16-be.txt")] == "Big-endian UTF-16 note about ferries."
    assert rows[str(root / "utf8-bom.md")] == "A UTF-8 note with a byte order mark."
    assert not any("\r" in t or "\ufeff" in t or "\x00" in t for t in rows.values())
    assert conn.execute("SELECT line_start, line_end FROM chunks WHERE path = ?",
                        (str(root / "crlf.txt"),)).fetchall() == [(1, 3)]
    assert conn.execute("SELECT line_start, line_end FROM chunks WHERE path = ?",
                        (str(root / "old-mac.txt"),)).fetchall() == [(1, 3)]
    # A name with a newline is stored as it is and can be forgotten by it.
    res = subprocess.run(llm_cmd("brain", "forget", root / "new\nline.md", "--json"),
                         capture_output=True, text=True, timeout=120)
    gone = json.loads(res.stdout)
    assert (gone["chunks_removed"], gone["sources_removed"]) == (1, 1)
    assert gone["kept_out_of_roots"] == [str(root / "new\nline.md")]  # forgotten inside a root: kept out
    os.unlink(root / "big-one-line.txt")


def test_fifo_named_directly_never_hangs(tmp_path):
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    res = subprocess.run(llm_cmd("brain", "ingest", fifo, "--json"), capture_output=True, text=True,
                         timeout=120)  # a blocking open() would hang here until the timeout
    assert "Traceback" not in res.stderr
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["skipped_by_reason"] == {"not a regular file": 1}


def test_a_read_only_brain_is_searched_and_a_write_says_so_in_one_line(tmp_path, brain_path, run):
    run("brain", "remember", "The boiler is serviced every May.")
    env = {**os.environ, "SECONDBRAIN_DB": str(brain_path), "LLM_USER_PATH": str(tmp_path / "llm")}
    os.chmod(brain_path, 0o444)
    os.chmod(brain_path.parent, 0o555)
    try:
        found = unprivileged(llm_cmd("brain", "recall", "boiler", "--mode", "lexical"), env=env)
        assert found.returncode == 0 and "serviced every May" in found.stdout, found.stderr
        for write in (("remember", "Tiles go on the bathroom wall."), ("ingest", str(tmp_path))):
            res = unprivileged(llm_cmd("brain", *write), env=env)
            assert res.returncode == 1 and "Traceback" not in res.stderr
            assert res.stderr.strip().splitlines() == [
                "Error: the brain is read-only here: it can be searched, not changed (check the "
                "permissions of the file and its folder, or name another brain with --db)"]
    finally:
        os.chmod(brain_path.parent, 0o700)
        os.chmod(brain_path, 0o600)


def test_file_swapped_for_a_fifo_after_the_walk_is_not_opened_blocking(tmp_path, brain_path):
    """read_bytes opens O_NONBLOCK and checks again: a FIFO that replaced a file never hangs."""
    from llm_secondbrain.ingest import sources

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("A note that becomes a pipe.\n")
    entry = next(e for e in sources.walk([str(notes)]) if isinstance(e, sources.FileEntry))
    os.unlink(notes / "a.md")
    os.mkfifo(notes / "a.md")
    done = {}
    t = threading.Thread(target=lambda: done.setdefault("r", _skip_reason(sources, entry)), daemon=True)
    t.start()
    t.join(30)
    assert done.get("r") == "not a regular file"


def _skip_reason(sources, entry):
    try:
        sources.read_bytes(entry)
    except sources.Skip as skip:
        return skip.reason
    return None


@pytest.mark.slow
def test_folder_changing_while_it_is_ingested(tmp_path, brain_path):
    """Files are added, rewritten, deleted and renamed while `llm brain ingest` walks the
    folder: the run finishes, the brain is consistent, and the next run (once the folder is
    still) holds exactly what a fresh brain would."""
    import random

    rng = random.Random(11)
    root = tmp_path / "moving"
    for d in range(4):
        (root / f"d{d}").mkdir(parents=True)
    for i in range(400):
        (root / f"d{i % 4}" / f"n{i:03d}.md").write_text(f"Note {i}: " + "steady words " * rng.randint(3, 40))
    env = {**os.environ, "SECONDBRAIN_MAX_CHARS": "200"}
    proc = subprocess.Popen(llm_cmd("brain", "ingest", root, "--json", "--no-embed"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    changes = 0
    deadline = time.monotonic() + 120
    while not brain_path.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    while proc.poll() is None and time.monotonic() < deadline:
        i = rng.randrange(600)
        p = root / f"d{i % 4}" / f"n{i:03d}.md"
        action = rng.random()
        try:
            if action < 0.35:
                p.write_text(f"Note {i} rewritten {changes}: " + "moving words " * rng.randint(3, 40))
            elif action < 0.6:
                p.unlink(missing_ok=True)
            elif action < 0.8:
                p.rename(root / f"d{(i + 1) % 4}" / f"r{changes}.md")
            elif action < 0.9:
                with open(p, "a") as fh:  # a half-written file
                    fh.write("appended " * rng.randint(1, 50))
            else:
                d = root / f"d{rng.randrange(4)}"
                sub = d / f"new{changes}"
                sub.mkdir()
                (sub / "x.md").write_text(f"A new folder's note {changes}.")
        except OSError:
            pass
        changes += 1
        time.sleep(0.001)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert changes > 20, "the folder did not change during the ingest"
    check_invariants(brain_path)
    env["SECONDBRAIN_DB"] = str(brain_path)
    subprocess.run(llm_cmd("brain", "ingest", root, "--no-embed"), env=env, check=True,
                   capture_output=True, timeout=300)
    fresh = tmp_path / "fresh" / "brain.db"
    subprocess.run(llm_cmd("brain", "ingest", root, "--no-embed"), env={**env, "SECONDBRAIN_DB": str(fresh)},
                   check=True, capture_output=True, timeout=300)
    check_invariants(brain_path)
    strip = lambda rows: {(sha, path, text, ls, le) for sha, path, text, _e, ls, le, _p, _s in rows}  # noqa: E731
    assert strip(content(brain_path)) == strip(content(fresh))


# =================================================================================================
# Sources are never modified: read-only tree, bytes, modes, mtimes and ctimes compared.


def test_sources_are_never_modified(tmp_path, brain_path):
    root = tmp_path / "src"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.md").write_text("First note about invoices and the garden.\n")
    (root / "sub" / "b.txt").write_text("Second note.\n\nWith two paragraphs about ferries.\n")
    (root / "sub" / "deeper" / "c.md").write_bytes("Ünïcödé note with CRLF.\r\n".encode())
    (root / ".hidden.md").write_text("A hidden note that is still a note.\n")
    (root / "link.md").symlink_to("a.md")
    for dirpath, dirnames, filenames in os.walk(root):
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, 0o444)
        os.chmod(dirpath, 0o555)
    before = tree_snapshot(root)
    try:
        for cmd in (["ingest", root], ["forget", root / "sub"], ["ingest", root, root / "a.md"]):
            res = unprivileged(llm_cmd("brain", *cmd))
            assert res.returncode == 0, (cmd, res.stderr)
        # root, with every file capability, must not write either (unchanged, then changed files)
        subprocess.run(llm_cmd("brain", "ingest", root), check=True, capture_output=True, timeout=120)
        subprocess.run(llm_cmd("brain", "forget", root / "a.md"), check=True, capture_output=True,
                       timeout=120)
        subprocess.run(llm_cmd("brain", "ingest", root), check=True, capture_output=True, timeout=120)
        after = tree_snapshot(root)
    finally:
        for dirpath, _dirnames, _filenames in os.walk(root):
            os.chmod(dirpath, 0o755)
    assert after == before
    # sub/ and a.md (with link.md, which is a.md) were forgotten inside the root: they stay out
    assert check_invariants(brain_path)["files"] == 1


# =================================================================================================
# Privacy: owner-only files, and no secret anywhere but the source.

SECRETS = {
    "aws": "AKIAQYLPMN5HFIQR7XYZ",
    "github": "ghp_R3aLlyL0ngT0kenValue0123456789abcdEF",
    "pem": "MIIEowIBAAKCAQEAx4Pq9s8uS0bodyOfAPrivateKeyThatMustNotSurvive",
    "wifi": "Sommer2026!",
    "pg_pass": "pg-s3cr3t-Pa55",
}

SECRET_NOTE = f"""# Server notes

The wifi password is {SECRETS['wifi']}
Deploy with AWS_ACCESS_KEY_ID={SECRETS['aws']} from the ops laptop.
The CI token is {SECRETS['github']} (rotate it monthly).

-----BEGIN RSA PRIVATE KEY-----
{SECRETS['pem']}
Zm9vYmFyYmF6cXV4cXV1eHF1dXpxdXV4cXV1eHF1dXpxdXV4cXV1eHF1dXo=
-----END RSA PRIVATE KEY-----

Database: postgres://app:{SECRETS['pg_pass']}@db.internal:5432/app
"""


def _no_secret(text: str, where: str) -> None:
    for kind, secret in SECRETS.items():
        assert secret not in text, f"the {kind} secret leaked into {where}"
        assert secret[:12] not in text, f"part of the {kind} secret leaked into {where}"


def test_brain_file_and_folder_are_owner_only_even_with_umask_0(tmp_path, stub):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("A note to make a brain with.\n")
    brain = tmp_path / "private" / "nested" / "brain.db"
    stub.delay = 0.3  # slow embedding: the -wal and -shm files exist for a while
    stub.keep_requests = False
    env = {**os.environ, "SECONDBRAIN_DB": str(brain), "OLLAMA_URL": stub.url}
    proc = subprocess.Popen(llm_cmd("brain", "ingest", notes, "--no-progress"), env=env,
                            preexec_fn=lambda: os.umask(0), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    modes = {}
    while proc.poll() is None:
        for p in brain.parent.glob("brain.db*"):
            try:
                modes[p.name] = stat.S_IMODE(p.stat().st_mode)
            except FileNotFoundError:
                pass
        time.sleep(0.005)
    _out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert stat.S_IMODE(brain.parent.stat().st_mode) == 0o700
    # folders made on the way are not writable by others either (no swapping the brain's folder)
    assert stat.S_IMODE(brain.parent.parent.stat().st_mode) & 0o022 == 0
    assert stat.S_IMODE(brain.stat().st_mode) == 0o600
    assert modes.get("brain.db-wal") == 0o600 and modes.get("brain.db-shm") == 0o600, modes
    assert all(m == 0o600 for m in modes.values()), modes


@pytest.mark.slow
def test_no_secret_in_brain_output_errors_embedding_requests_or_llm_logs(run, tmp_path, brain_path,
                                                                         monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "servers.md").write_text(SECRET_NOTE)
    (notes / "other.md").write_text("The ferry to Bergen leaves at nine; bring the passport.\n")
    said: list[str] = []
    with OllamaStub() as stub:
        monkeypatch.setenv("OLLAMA_URL", stub.url)
        stub.reject_marker = "postgres"  # the server refuses one chunk: its error is stored
        res = run("brain", "ingest", notes, "--no-progress", "--json")
        said.append(res.output)
        assert json.loads(res.stdout)["redacted"] >= 5
        sent = json.dumps(stub.requests)
        _no_secret(sent, "the embedding server's requests")
        assert "REDACTED" in sent
        stub.reject_marker = None
        for query in ("wifi password", "AWS access key deploy", "CI token", "private key",
                      "postgres database", SECRETS["aws"], "INV/2026/00037 AKIA"):
            for mode in ("hybrid", "lexical"):
                res = run("brain", "recall", query, "--json", "--mode", mode, "-k", "20")
                said.append(res.output)
        assert "[REDACTED" in "".join(said)
        said.append(run("brain", "recall", "wifi password", "--explain").output)
        said.append(run("brain", "sources", "--json").output)
        said.append(run("brain", "stats", "--json").output)
        said.append(run("brain", "embed", "--retry-failed").output)
        # errors: a missing path, a quarantined chunk's reason, Ollama down mid-recall
        said.append(run("brain", "ingest", notes / "missing.md", ok=False).output)
        said.append(run("brain", "scrub", notes / "servers.md").output)
        # the fragment and the tool through llm (which logs prompts and responses)
        res = run("-m", "echo", "-f", "brain:wifi password", "what is the wifi password?")
        said.append(res.output)
        assert "servers.md" in res.output
        call = json.dumps({"tool_calls": [{"name": "brain_recall",
                                           "arguments": {"query": "AWS key and CI token", "k": 5}}]})
        res = run("-m", "echo", "-T", "brain_recall", call)
        said.append(res.output)
        assert "servers.md" in res.output
        monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
        said.append(run("brain", "recall", "wifi password").output)
    for i, text in enumerate(said):
        _no_secret(text, f"command output #{i}")
    _no_secret(dump_brain(brain_path), "the brain file")
    logs = Path(os.environ["LLM_USER_PATH"]) / "logs.db"
    assert logs.exists()
    _no_secret(dump_brain(logs), "llm's logs.db")
    assert "servers.md" in dump_brain(logs)  # the passages were logged, scrubbed
