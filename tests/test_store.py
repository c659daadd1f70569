import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest
import sqlite_utils

from llm_secondbrain import store
from llm_secondbrain.store import ChunkRow, open_brain


def test_new_brain_is_owner_only_and_wal(brain_path):
    brain = open_brain(brain_path)
    assert brain.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    brain.close()
    assert stat.S_IMODE(os.stat(brain_path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(brain_path).st_mode) == 0o600


def test_close_checkpoints_into_one_file(brain_path):
    brain = open_brain(brain_path)
    brain.stage(path="/n.md", chunks=[ChunkRow("hello there world", 1, 1)], project="p",
                source="files", ts=None)
    brain.close()
    wal = Path(f"{brain_path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    # a copy of the main file alone holds the chunk
    copy = brain_path.parent / "copy.db"
    copy.write_bytes(brain_path.read_bytes())
    assert sqlite3.connect(copy).execute("SELECT text FROM chunks").fetchall() == [("hello there world",)]


def test_fts_index_is_external_content_and_follows_changes(brain_path):
    brain = open_brain(brain_path)
    brain.stage(path="/a", chunks=[ChunkRow("alpha bravo", 1, 1)], project="p", source="s", ts=None)
    brain.stage(path="/a", chunks=[ChunkRow("charlie delta", 1, 1)], project="p", source="s", ts=None)

    def match(q):
        return brain.conn.execute("SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ?", (q,)).fetchall()

    assert match("alpha") == []
    assert len(match("charlie")) == 1
    brain.conn.execute("INSERT INTO fts_chunks(fts_chunks, rank) VALUES ('integrity-check', 1)")
    # sqlite-utils (and so Datasette's _search=) recognise the index as the chunks' own
    chunks = sqlite_utils.Database(brain.conn)["chunks"]
    assert chunks.detect_fts() == "fts_chunks"
    assert [r["text"] for r in chunks.search("charlie")] == ["charlie delta"]
    brain.close()


def test_same_paragraph_in_two_files_is_two_chunks(brain_path):
    brain = open_brain(brain_path)
    for p in ("/one.md", "/two.md"):
        brain.stage(path=p, chunks=[ChunkRow("shared paragraph text", 3, 4)], project="p",
                    source="s", ts=None)
    assert brain.stats()["chunks"] == 2
    brain.forget(paths=["/one.md"])
    rows = brain.conn.execute("SELECT path, line_start FROM chunks").fetchall()
    assert rows == [("/two.md", 3)]
    brain.close()


def test_opens_with_sqlean_fallback(brain_path):
    brain = open_brain(brain_path, driver="sqlean")
    assert brain.driver == "sqlean"
    assert brain.conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    brain.close()


@pytest.mark.skipif(not store.stdlib_can_load_extensions(),
                    reason="this Python's sqlite3 cannot load extensions (CI runs this on Debian's)")
def test_opens_with_stdlib_sqlite3(brain_path):
    brain = open_brain(brain_path)
    assert brain.driver == "sqlite3"
    assert brain.conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    brain.close()


def test_default_driver_matches_what_this_python_can_do(brain_path):
    brain = open_brain(brain_path)
    assert brain.driver == ("sqlite3" if store.stdlib_can_load_extensions() else "sqlean")
    brain.close()


SEED_SCHEMA = """
CREATE TABLE chunks (id INTEGER PRIMARY KEY, sha TEXT NOT NULL, source TEXT, project TEXT,
  path TEXT, ref TEXT, ts TEXT, role TEXT, text TEXT NOT NULL, embedded INTEGER NOT NULL DEFAULT 0,
  created TEXT);
CREATE UNIQUE INDEX chunks_sha ON chunks(sha);
CREATE VIRTUAL TABLE fts_chunks USING fts5(text, content='chunks', content_rowid='id');
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
  INSERT INTO fts_chunks(rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO fts_chunks(fts_chunks, rowid, text) VALUES ('delete', old.id, old.text); END;
CREATE TABLE facts (id INTEGER PRIMARY KEY, text TEXT, source TEXT, created TEXT);
"""


def test_brain_from_the_seed_script_upgrades_in_place(brain_path, tmp_path, run):
    """A brain.db made by the original single-file brain.py opens, upgrades, and gets re-scrubbed
    by the next ingest (its source is gone: in place)."""
    brain_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(brain_path)
    conn.executescript(SEED_SCHEMA)
    conn.executemany(
        "INSERT INTO chunks(sha, source, project, path, text, embedded, created) "
        "VALUES (?, 'notes', 'home', '/old.md', ?, 0, '2025-01-01')",
        [("x", "old note: password=Oldpass2024xyz"), ("y", "the garden sensor needs a battery")],
    )
    conn.commit()
    conn.close()
    brain = open_brain(brain_path)
    assert brain.conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    assert brain.sources()[0]["path"] == "/old.md"
    # The second chunk is indexed with its file's title (the first chunk's first line).
    assert brain.conn.execute(
        "SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH 'old AND garden'").fetchall() == [(2,)]
    brain.close()
    (tmp_path / "empty").mkdir()
    result = run("brain", "ingest", tmp_path / "empty", "--db", brain_path)
    assert "2 chunks re-scrubbed in place" in result.output
    brain = open_brain(brain_path)
    rows = brain.conn.execute("SELECT text, coalesce(title, '') FROM chunks").fetchall()
    assert not any("Oldpass2024xyz" in text or "Oldpass2024xyz" in head for text, head in rows)
    assert "[REDACTED:" in rows[0][0] and "[REDACTED:" in rows[1][1]
    assert brain.conn.execute("INSERT INTO fts_chunks(fts_chunks, rank) VALUES ('integrity-check', 1)")
    brain.close()


def test_newer_schema_is_refused_clearly(brain_path):
    open_brain(brain_path).close()
    conn = sqlite3.connect(brain_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(store.BrainError, match="newer llm-secondbrain"):
        open_brain(brain_path)


def test_a_brain_from_before_front_matter_and_cjk_upgrades(run, tmp_path, brain_path):
    """Schema 7: front matter stored as text, CJK runs one token. Opening migrates (CJK found at
    once); the next ingest reads the Markdown note again and drops the block from its text."""
    notes = tmp_path / "n"
    notes.mkdir()
    (notes / "a.md").write_text("---\nid: 42\ntitle: Kettle\n---\nDescale the kettle monthly.\n")
    (notes / "b.txt").write_text("防止进入休眠状态\n")
    run("brain", "ingest", notes, "--no-embed")
    conn = sqlite_utils.Database(brain_path)
    store._create_fts(conn, ("text", "title"))
    conn.execute("ALTER TABLE chunks DROP COLUMN cjk")
    old = "---\nid: 42\ntitle: Kettle\n---\nDescale the kettle monthly."
    conn.execute("UPDATE chunks SET text = ?, sha = ? WHERE path LIKE '%a.md'", [old, store.text_sha(old)])
    conn.execute("PRAGMA user_version = 7")
    conn.conn.commit()
    conn.close()
    brain = open_brain(brain_path)
    assert brain.conn.execute("SELECT count(*) FROM fts_chunks WHERE fts_chunks MATCH '\"休\"'").fetchone()[0] == 1
    brain.close()
    run("brain", "ingest", notes, "--no-embed")
    texts = [r[0] for r in sqlite3.connect(brain_path).execute("SELECT text FROM chunks ORDER BY path")]
    assert texts == ["Descale the kettle monthly.", "防止进入休眠状态"]


@pytest.mark.parametrize("version", [9, store.SCHEMA_VERSION])
def test_a_brain_numbered_before_keyed_names_and_sign_bits_upgrades(run, tmp_path, brain_path, version):
    """For a while main numbered front matter 8 and CJK 9: a brain made then says 9 (or the
    latest, once a later build upgraded it) without keyed names or sign bits, and its first
    ingest stopped on 'no such column: key'. It runs those migrations again."""
    notes = tmp_path / "n"
    notes.mkdir()
    (notes / "a.md").write_text("Descale the kettle monthly.\n")
    run("brain", "ingest", notes, "--no-embed")
    conn = sqlite_utils.Database(brain_path)
    conn.execute("DROP INDEX files_key")
    conn.execute("ALTER TABLE files DROP COLUMN key")
    conn.execute(f"DROP TABLE {store.BITS_TABLE}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.conn.commit()
    conn.close()
    (notes / "b.md").write_text("Bleed the radiators in October.\n")
    report = json.loads(run("brain", "ingest", notes, "--no-embed", "--json").output)
    assert (report["ingested"], report["unchanged"]) == (1, 1)
    assert "kettle" in run("brain", "recall", "descale kettle", "--mode", "lexical").output


def test_the_ledger_keeps_no_plain_hash_of_a_file(run, tmp_path, brain_path):
    """A plain SHA-256 of a short note gave away what the scrubber took out of it: 'garage door
    PIN: 7391' is stored redacted, and 10,000 guesses found the PIN from the file's hash. The
    ledger's hash is keyed with the brain's salt; a brain that stored plain ones drops them."""
    import hashlib

    notes = tmp_path / "n"
    notes.mkdir()
    note = notes / "garage.md"
    note.write_text("garage door PIN: 7391\n")
    run("brain", "ingest", notes, "--no-embed")
    plain = hashlib.sha256(note.read_bytes()).hexdigest()
    assert plain not in brain_path.read_bytes().decode("latin-1")
    (stored,) = sqlite3.connect(brain_path).execute("SELECT content_sha FROM files").fetchone()
    assert stored
    # an mtime that moves alone still reads as unchanged
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 10**9))
    assert json.loads(run("brain", "ingest", notes, "--no-embed", "--json").output)["unchanged"] == 1
    # a brain from before: its plain hash is gone once it is opened
    conn = sqlite3.connect(brain_path)
    conn.execute("UPDATE files SET content_sha = ?", (plain,))
    conn.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION - 1}")
    conn.commit()
    conn.close()
    open_brain(brain_path).close()
    assert plain not in brain_path.read_bytes().decode("latin-1")
