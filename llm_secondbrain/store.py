"""The brain file: opening it, its schema and migrations, staging chunks, deleting.

One SQLite file holds everything (chunks, the FTS5 index, vectors, facts), so a brain moves
between machines by copying it. sqlite-vec must load into the connection; many Pythons
(pyenv's, this machine's) build `sqlite3` without loadable extensions, so when the stdlib
cannot load it we fall back to the `sqlean` wheel, which can. We never use `pysqlite3`:
sqlite-utils would silently switch `llm`'s own databases to it, and loading it beside sqlean
in one process crashes.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import sqlite_utils

from . import cjk
from .segment import title as segment_title

BUSY_TIMEOUT_S = 60.0
CHECKPOINT_WAIT_S = 2.0


class BrainError(Exception):
    """A problem with the brain file, phrased for the user in one line."""


def _db_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [sqlite3.Error]
    with contextlib.suppress(ImportError):
        import sqlean

        errors.append(sqlean.Error)
    return tuple(errors)


DB_ERRORS = _db_errors()
CLOSED = "this brain is closed: open it again with SecondBrain.open"


class _Closed:
    """Stands in for a closed brain's connection: any use says so in one line, where the
    closed sqlite3 connection said "Cannot operate on a closed database"."""

    def __getattr__(self, name: str) -> Any:
        raise BrainError(CLOSED)


def reading(read: Callable[[], Any], attempts: int = 5) -> Any:
    """`read()` (reads only), tried again when FTS5 failed to construct its table. FTS5 reads
    its config when a connection first uses the index; if another process is resetting the WAL
    at that moment (every command's closing checkpoint does), that read fails with "vtable
    constructor failed" instead of waiting. Seen under load with two ingesters and four
    recallers, once as a brain was opened and once in a recall after it."""
    for attempt in range(attempts):
        try:
            return read()
        except DB_ERRORS as e:
            if "vtable constructor failed" not in str(e) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def stdlib_can_load_extensions() -> bool:
    return hasattr(sqlite3.Connection, "enable_load_extension")


def _raw_connect(path: str, driver: str | None, *, immutable: bool = False):
    """Open a DB-API connection that has sqlite-vec loaded; returns (conn, driver name).

    `immutable` opens the file strictly read-only without its -shm/-wal side files: the only
    way SQLite can read a WAL-mode brain in a folder it may not write to."""
    from urllib.parse import quote

    import sqlite_vec

    if driver is None:
        driver = os.environ.get("SECONDBRAIN_SQLITE") or (
            "sqlite3" if stdlib_can_load_extensions() else "sqlean"
        )
    if driver == "sqlite3":
        module = sqlite3
    elif driver == "sqlean":
        import sqlean as module  # type: ignore[no-redef]
    else:
        raise BrainError(f"SECONDBRAIN_SQLITE must be 'sqlite3' or 'sqlean', not {driver!r}")
    target = f"file:{quote(path)}?immutable=1" if immutable else path
    conn = module.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                          check_same_thread=False, uri=immutable)
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except AttributeError:
        conn.close()
        raise BrainError(
            "this Python's sqlite3 cannot load extensions; unset SECONDBRAIN_SQLITE to use sqlean"
        ) from None
    return conn, driver


# ---------------------------------------------------------------------------------------------
# Schema. Migration 1 is the schema of the original single-file brain.py, so brains it made
# open and upgrade in place; later migrations add to it. Each runs in one transaction.


# Vectors are most of a brain, 3 KB each at 768 dimensions: 16 KB pages make writing them about
# a third cheaper than SQLite's default 4 KB.
PAGE_SIZE = 16384
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_COLUMNS = ("text", "title", "cjk")  # what the lexical lane searches (cjk: see cjk.py)
# vec0 keeps vectors in blobs of `chunk_size` (default 1,024: 3 MB at 768 dimensions). Reading
# one vector by rowid walks that blob's overflow pages up to it, so recall's exact rescoring of
# its candidates cost ~200 us a vector at a million chunks; in blobs of 16 it costs ~15 us,
# while a full KNN scan takes the same time and a small brain holds 48 KB, not 3 MB.
VEC_CHUNK_SIZE = 16


def vectors_table_sql(dim: int) -> str:
    """The statement that creates `vec_chunks` for `dim`-dimension vectors."""
    return f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{int(dim)}], chunk_size={VEC_CHUNK_SIZE})"


def _m1_seed_schema(db: sqlite_utils.Database) -> None:
    db.execute(
        """CREATE TABLE IF NOT EXISTS chunks (
            id INTEGER PRIMARY KEY,
            sha TEXT NOT NULL,
            source TEXT, project TEXT, path TEXT, ref TEXT, ts TEXT, role TEXT,
            text TEXT NOT NULL,
            embedded INTEGER NOT NULL DEFAULT 0,
            created TEXT
        )"""
    )
    db.execute("CREATE UNIQUE INDEX IF NOT EXISTS chunks_sha ON chunks(sha)")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_embedded ON chunks(embedded)")
    if not db["fts_chunks"].exists():
        _create_fts(db, ("text",))
    if not db["facts"].exists():
        db["facts"].create(
            {"id": int, "text": str, "source": str, "chunk_id": int, "created": str}, pk="id"
        )
    if not db["meta"].exists():
        db["meta"].create({"key": str, "value": str}, pk="key")


def _m2_per_file_identity(db: sqlite_utils.Database) -> None:
    """Identity per file, line spans for citations, scrub version, and the files ledger."""
    chunks = db["chunks"]
    columns = chunks.columns_dict
    for name, kind in (("line_start", int), ("line_end", int), ("scrub_version", int), ("embed_error", str)):
        if name not in columns:
            chunks.add_column(name, kind)
    db.execute("UPDATE chunks SET scrub_version = 0 WHERE scrub_version IS NULL")
    db.execute("DROP INDEX IF EXISTS chunks_sha")
    db.execute("CREATE UNIQUE INDEX IF NOT EXISTS chunks_path_sha ON chunks(path, sha)")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_sha ON chunks(sha)")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_project ON chunks(project)")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source)")
    if not db["files"].exists():
        db["files"].create(
            {
                "path": str, "project": str, "source": str, "size": int, "mtime_ns": int,
                "content_sha": str, "ts": str, "ingested": str, "scrub_version": int,
            },
            pk="path",
        )
    # Brains from the seed script have chunks but no ledger: enter their paths so `sources`
    # and `forget` see them.
    db.execute(
        """INSERT OR IGNORE INTO files(path, project, source, ingested, scrub_version)
           SELECT path, max(project), max(source), max(created), 0
           FROM chunks WHERE path IS NOT NULL GROUP BY path"""
    )
    facts = db["facts"]
    if "path" not in facts.columns_dict:
        facts.add_column("path", str)


def _m3_chunk_titles(db: sqlite_utils.Database) -> None:
    """Index each chunk with its document's title (`segment.title` of the document's first
    chunk; NULL on the first chunk, which holds the title itself): BM25 sees a paragraph deep
    in a note with the note's subject. (SciFact, lexical nDCG@10: train 0.696 -> 0.700,
    test 0.680 -> 0.686.) The FTS index gains a column, so it is rebuilt once here."""
    if "title" not in db["chunks"].columns_dict:
        db["chunks"].add_column("title", str)
    current, head = None, None
    updates = []
    for cid, path, ref, text in db.execute(
        "SELECT id, path, ref, text FROM chunks WHERE path IS NOT NULL OR ref IS NOT NULL "
        "ORDER BY path, ref, line_start, id"
    ):
        if (path, ref) != current:
            current, head = (path, ref), segment_title(text)
            continue
        if head:
            updates.append((head, cid))
    db.conn.executemany("UPDATE chunks SET title = ? WHERE id = ?", updates)
    _create_fts(db, ("text", "title"))


def _m4_chunk_meta_and_a_detectable_index(db: sqlite_utils.Database) -> None:
    """`chunks.meta` (JSON) holds what a source knows about a chunk (a PDF page, a chapter, a
    message's From, a conversation's model), one column for every format. The FTS index is
    declared with `content="chunks"`, the spelling sqlite-utils and Datasette look for, so
    `sqlite-utils search` and Datasette's `_search=` use it."""
    if "meta" not in db["chunks"].columns_dict:
        db["chunks"].add_column("meta", str)
    _create_fts(db, ("text", "title"))


def _create_fts(db: sqlite_utils.Database, columns: tuple[str, ...]) -> None:
    """(Re)create the external-content FTS5 index over `columns` of chunks, its three
    triggers (the shapes sqlite-utils' enable_fts writes; the update trigger only fires when
    an indexed column really changes, since re-ingesting a file rewrites its kept chunks'
    line spans), and fill it."""
    for name in ("chunks_ai", "chunks_ad", "chunks_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    db.execute("DROP TABLE IF EXISTS fts_chunks")
    cols = ", ".join(columns)
    old = ", ".join(f"old.{c}" for c in columns)
    new = ", ".join(f"new.{c}" for c in columns)
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in columns)
    db.execute(f"CREATE VIRTUAL TABLE fts_chunks USING fts5({cols}, content=\"chunks\", "
               f"content_rowid='id', tokenize='{FTS_TOKENIZER}')")
    db.execute(f"CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN "
               f"INSERT INTO fts_chunks(rowid, {cols}) VALUES (new.id, {new}); END")
    db.execute(f"CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN "
               f"INSERT INTO fts_chunks(fts_chunks, rowid, {cols}) VALUES ('delete', old.id, {old}); END")
    db.execute(f"CREATE TRIGGER chunks_au AFTER UPDATE OF {cols} ON chunks WHEN {changed} BEGIN "
               f"INSERT INTO fts_chunks(fts_chunks, rowid, {cols}) VALUES ('delete', old.id, {old}); "
               f"INSERT INTO fts_chunks(rowid, {cols}) VALUES (new.id, {new}); END")
    db.execute("INSERT INTO fts_chunks(fts_chunks) VALUES ('rebuild')")


def _m5_file_format(db: sqlite_utils.Database) -> None:
    """`files.format`: the reader a source was read with (text, pdf, docx, html, epub, mail,
    notebook), for `sources`, `stats` and recall's `--format`. Sources ingested before are
    named by their suffix, as the next ingest would name them."""
    from .ingest.readers import format_for

    if "format" not in db["files"].columns_dict:
        db["files"].add_column("format", str)
    db.conn.executemany("UPDATE files SET format = ? WHERE path = ?", [
        (format_for(path).name, path) for (path,) in db.execute("SELECT path FROM files").fetchall()])
    db.execute("CREATE INDEX IF NOT EXISTS files_format ON files(format)")


def _m6_remembered_facts(db: sqlite_utils.Database) -> None:
    """Facts a person or a model asked the brain to remember (facts.py): their tags (JSON),
    who stored them (`origin`) and in which turn when known, their project, and `sha`, the
    key of their normalised text, so the same fact is stored once."""
    columns = db["facts"].columns_dict
    for name in ("tags", "origin", "turn", "project", "sha"):
        if name not in columns:
            db["facts"].add_column(name, str)
    db.execute("CREATE UNIQUE INDEX IF NOT EXISTS facts_sha ON facts(sha)")


def _m7_roots(db: sqlite_utils.Database) -> None:
    """`roots`: each folder or file given to an explicit ingest, with that call's options
    (JSON), so `llm brain update` and `watch` can replay it without the user remembering how.
    `ingested` is the last explicit ingest (the later one decides when roots overlap),
    `updated` when the root was last brought up to date."""
    if not db["roots"].exists():
        db["roots"].create({"path": str, "options": str, "ingested": str, "updated": str}, pk="path")


SALT_KEY = "name_salt"


def _new_salt(brain_or_db) -> str:
    """A brain's own salt for its name keys, made once (a brain opened read-only before its
    first write gets one in memory only, which is fine: it then stores no key)."""
    salt = os.urandom(16).hex()
    conn = brain_or_db.conn
    with contextlib.suppress(*DB_ERRORS):
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (SALT_KEY, salt))
        salt = conn.execute("SELECT value FROM meta WHERE key = ?", (SALT_KEY,)).fetchone()[0]
    return salt


def _m8_keyed_names(db: sqlite_utils.Database) -> None:
    """`files.key`: each document is found by a keyed hash of its real identity (its real
    path, a stdin --name, a conversation's citation), so its stored name (`path`) can be the
    scrubbed one. Brains made before store real names: their keys are made from them here,
    and the next ingest re-reads every file under today's scrub rules, names included."""
    if "key" not in db["files"].columns_dict:
        db["files"].add_column("key", str)
    salt = bytes.fromhex(_new_salt(db))
    db.conn.executemany("UPDATE files SET key = ? WHERE path = ?", [
        (hmac.new(salt, path.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32], path)
        for (path,) in db.execute("SELECT path FROM files WHERE key IS NULL").fetchall()])
    db.execute("CREATE UNIQUE INDEX IF NOT EXISTS files_key ON files(key)")


# The sign bits of every stored vector (`vec_bits`): recall ranks them by Hamming distance in
# SQL to pick a few hundred candidates, then reads only those vectors exactly. At a million
# 768-dim vectors that is about 0.13 s of CPU where vec0's exact scan takes 1.0-1.3 s; the
# bits cost dim/8 bytes a chunk (+3 % of the file). `bits_version` equals `vectors_version`
# while the table mirrors vec_chunks exactly; recall trusts it only then.
BITS_TABLE = "vec_bits"
VECTORS_VERSION, BITS_VERSION, BITS_BUILT = "vectors_version", "bits_version", "bits_built"
BITS_STEP = 131_072  # chunk ids per transaction of build_bits (a vec0 range scan costs 0.3 us a row)


# The brain's own cosine scale (recall.floor reads its relevance floor on it): the mean and
# standard deviation of the cosine between SCALE_SAMPLE passages picked evenly over the brain.
# Measuring it reads 256 vectors and 32,000 pairs (~70 ms), once per process that recalls; the
# embedder keeps it in `meta` with the vectors_version it was measured at, so a one-shot
# recall reads two numbers instead.
SCALE, SCALE_SAMPLE = "cosine_scale", 256


def measure_scale(conn: sqlite3.Connection) -> tuple[float, float] | None:
    """(mean, standard deviation) of the cosine between two passages of this brain, or None
    with fewer than three vectors. The sample is the same for a given brain (ids spread evenly
    by a fixed stride), so a query's verdict does not change from one run to the next."""
    row = conn.execute("SELECT min(id), max(id) FROM chunks WHERE embedded = 1").fetchone()
    if not row or row[0] is None:
        return None
    low, high = row
    step = max(1, (high - low + 1) // SCALE_SAMPLE)
    blobs = []
    for rowid in list(range(low, high + 1, step))[:SCALE_SAMPLE]:  # vec0 reads by rowid one at a time
        got = conn.execute("SELECT embedding FROM vec_chunks WHERE rowid = ?", (rowid,)).fetchone()
        if got:
            blobs.append(got[0])
    blobs = [b for b in blobs if len(b) == len(blobs[0])]
    if len(blobs) < 3:  # no spread to read yet
        return None
    # every pair's cosine in sqlite-vec's C, not Python (no NumPy in a one-shot process)
    sample = "VALUES " + ",".join("(?, ?)" for _ in blobs)
    mean, square = conn.execute(
        f"WITH s(i, v) AS ({sample}) SELECT avg(c), avg(c * c) FROM (SELECT 1 - "
        "vec_distance_cosine(a.v, b.v) AS c FROM s a JOIN s b ON a.i < b.i)",
        [x for i, blob in enumerate(blobs) for x in (i, blob)]).fetchone()
    return float(mean), math.sqrt(max(square - mean * mean, 0.0)) or 1.0


def kept_scale(conn: sqlite3.Connection) -> tuple[float, float] | None:
    """The scale `Brain.keep_scale` stored, when it was measured on the vectors there are now."""
    found = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (SCALE, VECTORS_VERSION)))
    try:
        kept = json.loads(found.get(SCALE) or "null")
    except ValueError:
        return None
    if not isinstance(kept, dict) or kept.get("version") != found.get(VECTORS_VERSION, "0"):
        return None
    return float(kept["mean"]), float(kept["sd"])


def _m9_vector_sign_bits(db: sqlite_utils.Database) -> None:
    """`vec_bits` (chunk id, sign bits of its vector), kept in the same transaction as
    vec_chunks by every write (Brain.put_vectors, drop_vectors, clear_vectors). A brain that
    already has vectors gets its bits from `Brain.build_bits` (the next embed, ingest or
    vacuum), in resumable steps: at a million vectors that reads 3 GB, too much for a
    migration that any command may run. Until then recall scans vec0 exactly."""
    db.execute(f"CREATE TABLE IF NOT EXISTS {BITS_TABLE}(id INTEGER PRIMARY KEY, bits BLOB NOT NULL)")
    has_vectors = db["vec_chunks"].exists() and db.execute("SELECT 1 FROM vec_chunks LIMIT 1").fetchone()
    if not has_vectors:
        version = db.execute("SELECT value FROM meta WHERE key = ?", (VECTORS_VERSION,)).fetchone()
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                   (BITS_VERSION, version[0] if version else "0"))


def _m10_superseded_facts(db: sqlite_utils.Database) -> None:
    """`facts.superseded_by`: the newer fact that replaced this one (`remember --supersedes`),
    and `facts.superseded`, when; recall hides a superseded fact unless asked for history."""
    columns = db["facts"].columns_dict
    if "superseded_by" not in columns:
        db["facts"].add_column("superseded_by", int)
    if "superseded" not in columns:
        db["facts"].add_column("superseded", str)


def _m11_front_matter_read_again(db: sqlite_utils.Database) -> None:
    """Markdown notes stored with their YAML front matter as text (before the reader took the
    block apart: ingest/readers.front_matter) are read again by the next ingest or update:
    their ledger entry forgets its mtime and hash (not its size: a row without one is standard
    input), so the unchanged-file shortcuts do not apply. Chunks whose text comes out the same
    keep their vectors; the others (the first chunk of each such note, and later ones where the
    packing shifts) are embedded again."""
    db.execute(
        "UPDATE files SET mtime_ns = NULL, content_sha = NULL "
        "WHERE (lower(path) LIKE '%.md' OR lower(path) LIKE '%.markdown') "
        "AND path IN (SELECT path FROM chunks WHERE text LIKE '---%')"
    )


def _m12_cjk_characters(db: sqlite_utils.Database) -> None:
    """`chunks.cjk`: the Chinese, Japanese and Korean characters of a chunk and its title as
    tokens of their own (cjk.index_form), indexed beside the text, so CJK words and phrases
    are found wherever they stand. NULL for other text. The index gains a column: rebuilt."""
    if "cjk" not in db["chunks"].columns_dict:
        db["chunks"].add_column("cjk", str)
    updates = [(form, cid) for cid, text, head in db.execute("SELECT id, text, title FROM chunks")
               if (form := cjk.index_form(text, head))]
    db.conn.executemany("UPDATE chunks SET cjk = ? WHERE id = ?", updates)
    _create_fts(db, FTS_COLUMNS)


def _m13_opening_passages(db: sqlite_utils.Database) -> None:
    """An index by note and position, so recall finds a dense hit's opening passage (the
    note's context, recall.lanes.in_context) in one step: through (path, sha) it read and
    sorted every chunk of the note, ~15 ms a query at a million chunks of long notes."""
    db.execute("CREATE INDEX IF NOT EXISTS chunks_opening ON chunks(path, ref, line_start, id)")


def _m14_remembered_redactions(db: sqlite_utils.Database) -> None:
    """`files.redacted`: keyed digests of the values a file's versions had redacted, with their
    kinds (scrub.Remembered), so a value whose label is edited out of a note stays redacted."""
    if "redacted" not in db["files"].columns_dict:
        db["files"].add_column("redacted", str)


# what a stored name holds where the scrubber changed it: no file on disk has that name
SCRUBBED_NAME = "[REDACTED:"
ID_BATCH = 500  # chunk ids one statement's IN list holds (the oldest SQLite builds take 999 parameters)


def id_batches(ids: list[int]) -> Iterator[tuple[list[int], str]]:
    """`ids` in parts of at most ID_BATCH, each with the "?,?,…" of its IN list."""
    for start in range(0, len(ids), ID_BATCH):
        part = ids[start:start + ID_BATCH]
        yield part, ",".join("?" * len(part))


def _m15_keyed_content_digests(db: sqlite_utils.Database) -> None:
    """`files.content_sha` becomes a keyed hash of the file's bytes (Brain.content_digest):
    the plain SHA-256 brains stored before gave away a short secret the scrubber had taken out
    of a note to anyone who could guess it. They are dropped (zeroed: secure_delete); until the
    next ingest reads a file again, only its size and mtime say that it is unchanged."""
    db.execute("UPDATE files SET content_sha = NULL WHERE content_sha IS NOT NULL")


MIGRATIONS = [_m1_seed_schema, _m2_per_file_identity, _m3_chunk_titles,
              _m4_chunk_meta_and_a_detectable_index, _m5_file_format, _m6_remembered_facts,
              _m7_roots, _m8_keyed_names, _m9_vector_sign_bits, _m10_superseded_facts,
              _m11_front_matter_read_again, _m12_cjk_characters, _m13_opening_passages,
              _m14_remembered_redactions, _m15_keyed_content_digests]
SCHEMA_VERSION = len(MIGRATIONS)


# For a while main numbered front matter 8 and CJK 9; keyed names and sign bits then took 8 and
# 9, and the first two moved to 11 and 12. A brain made in between says 9 (or more, once a later
# build upgraded it) but has no keyed names or sign bits, and stops at its first ingest. Every
# migration from RENUMBERED on finds what it makes before making it, so such a brain runs them
# all again.
RENUMBERED = 8


def _renumbered_ran(db: sqlite_utils.Database) -> bool:
    """Whether the migrations numbered 8 and 9 today (keyed names, sign bits) have run."""
    return "key" in db["files"].columns_dict and db[BITS_TABLE].exists()


def _migrate(db: sqlite_utils.Database) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise BrainError(
            f"this brain was made by a newer llm-secondbrain (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade with: llm install -U llm-secondbrain"
        )
    if version >= RENUMBERED and not _renumbered_ran(db):
        version = RENUMBERED - 1
    for number in range(version + 1, SCHEMA_VERSION + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            # A seed brain already has tables but no user_version: migration 1 is IF NOT EXISTS.
            MIGRATIONS[number - 1](db)
            db.execute(f"PRAGMA user_version = {number}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


BRAIN_COLUMNS = {"sha", "text", "embedded"}  # what every brain's chunks table has, the seed's too


def _refuse_a_stranger(conn, path: Path) -> None:
    """Open an existing database only if it is a brain (ours, or one the seed script made):
    `--db ~/.../logs.db` must not gain our tables, switch to WAL or get a user_version."""
    names = sorted(r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
    if not names:
        return  # an empty file: a new brain
    columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")} if "chunks" in names else set()
    if BRAIN_COLUMNS <= columns:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise BrainError(
                f"this brain was made by a newer llm-secondbrain (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade with: llm install -U llm-secondbrain")
        return
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    raise BrainError(f"{path} is not a brain (it holds {shown}); name another file with --db")


def _create_private(path: Path) -> None:
    """Create the brain's folder (0700) and file (0600) before SQLite does, owner-only.
    Folders made on the way are owner-only too (`mkdir -p` would make them per the umask,
    world-writable under umask 0, and then anyone could swap the brain's folder). A `--db`
    that is a symlink to a file not there yet names that file: it is created."""
    if path.is_symlink():
        try:
            os.path.realpath(path, strict=True)  # a loop raises here, in its own words
        except FileNotFoundError:
            path = Path(os.path.realpath(path))
    missing = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
    os.close(fd)


# Files staged per transaction. FTS5 writes the terms it has gathered out as a new index
# segment at every commit (and savepoint, see Brain._insert_chunks), then merges segments as
# they pile up: a transaction per file cost about half of a large ingest's time. A batch
# starts at one file and doubles up to BATCH_FILES, and is written once its oldest file has
# waited BATCH_SECONDS: the first file is in the brain at once, a slow run of big files still
# commits every file or two, and a crash loses at most about BATCH_SECONDS of work plus the
# file in hand.
BATCH_FILES = 256
BATCH_SECONDS = 0.5


class Batch:
    """Writes of several files made in one transaction, so that every file is whole or absent
    and the FTS5 index gets few segments per batch (the new chunks are inserted together at
    its end: see Brain._insert_chunks). The write lock is held only while the batch
    is written, never while the next files are read and scrubbed. When a write fails (a
    database error, Ctrl-C) the transaction is rolled back, and the writes before it are made
    again in a fresh one and committed; then its error is raised, and the writes after it are
    dropped (a database error is the brain's, not the file's). Not a savepoint per file: FTS5
    writes its pending terms out as a new segment at every savepoint, which is the cost a
    batch is there to save. `done(result)` is called for each write once it is committed, so
    what a report counts is what the brain holds. Leaving the `with` block writes what is
    pending, whatever ends it."""

    def __init__(self, brain: "Brain", *, files: int = BATCH_FILES, seconds: float = BATCH_SECONDS):
        self.brain = brain
        self.limit = max(1, files)
        self.seconds = seconds
        self.size = 1
        self._pending: list[tuple[Callable[[], Any], Callable[[Any], None] | None]] = []
        self._keys: set[str] = set()
        self._since: float | None = None

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, *exc) -> None:
        self.flush()

    def holds(self, key: str) -> bool:
        """Whether a write for the document `key` is waiting (flush before reading its record)."""
        return key in self._keys

    def add(self, key: str, write: Callable[[], Any], done: Callable[[Any], None] | None = None) -> None:
        """Queue `write` (it runs inside the batch's transaction) for the document `key`."""
        self._pending.append((write, done))
        self._keys.add(key)
        if self._since is None:
            self._since = time.monotonic()
        if len(self._pending) >= self.size or time.monotonic() - self._since >= self.seconds:
            self.flush()
            self.size = min(2 * self.size, self.limit)

    def flush(self) -> None:
        """Write and commit what is pending, then tell each write's `done`."""
        pending, self._pending = self._pending, []
        self._keys.clear()
        self._since = None
        if not pending:
            return
        try:
            self._commit(pending)
        except _Failed as failed:
            kept = pending[:failed.done]  # the writes before the failed one, again, alone
            try:
                if kept:
                    self._commit(kept)
            except _Failed as again:
                raise again.error from None
            raise failed.error from None

    def _commit(self, writes: list) -> None:
        """Make `writes` in one transaction, then tell each its result. Anything that stops
        them before the commit rolls it back and raises _Failed with how many were done."""
        conn = self.brain.conn
        if conn.in_transaction:  # inside a caller's write: theirs to commit
            with self.brain._gathering():
                results = [write() for write, _done in writes]
            self._tell(writes, results)
            return
        results: list = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            with self.brain._gathering():
                for write, _done in writes:
                    results.append(write())
            conn.execute("COMMIT")
        except BaseException as e:
            if conn.in_transaction:
                with contextlib.suppress(*DB_ERRORS):
                    conn.execute("ROLLBACK")
            elif isinstance(e, KeyboardInterrupt) and len(results) == len(writes):
                self._tell(writes, results)  # Ctrl-C arrived as COMMIT returned: it is in
                raise
            raise _Failed(len(results), e) from None
        self._tell(writes, results)

    @staticmethod
    def _tell(writes: list, results: list) -> None:
        for (_write, done), result in zip(writes, results):
            if done is not None:
                done(result)


class _Failed(Exception):
    """A batch stopped by `error` after `done` of its writes (its transaction rolled back)."""

    def __init__(self, done: int, error: BaseException):
        super().__init__(done)
        self.done, self.error = done, error


_LABELS = "line_start, line_end, project, source, ts, title, cjk, meta, scrub_version"
_INSERT_WIDTH = 15  # sha, path, ref, role, text, created and the labels


@dataclass
class StageResult:
    added: int = 0
    kept: int = 0
    removed: int = 0


@dataclass
class ChunkRow:
    text: str
    line_start: int | None
    line_end: int | None
    meta: dict | None = None  # what the format knows (page, chapter, From): chunks.meta
    ts: str | None = None  # the chunk's own date when its section has one
    ref: str | None = None  # the chunk's own ref and role (a conversation turn's), else stage's
    role: str | None = None


class Brain:
    """An open brain. Writes happen in short IMMEDIATE transactions so readers never wait long."""

    def __init__(self, path: Path, *, driver: str | None = None, create: bool = True):
        self.path = Path(path)
        try:
            if not self.path.exists():
                if not create:
                    raise BrainError(f"no brain at {self.path} (run: llm brain ingest PATH)")
                _create_private(self.path)
            conn, self.driver = _raw_connect(str(self.path), driver)
        except OSError as e:
            raise BrainError(f"cannot open brain {self.path}: {e.strerror or e}") from None
        except DB_ERRORS as e:
            raise BrainError(f"cannot open brain {self.path}: {e}") from None
        self.read_only = False
        try:
            self._setup(conn)
        except BrainError:
            conn.close()
            raise
        except DB_ERRORS as e:
            conn.close()
            if not self._can_read_immutable(e):
                raise BrainError(f"cannot open brain {self.path}: {e}") from None
            # A brain in a folder we may not write to (read-only mount, folder permissions):
            # SQLite cannot create the WAL index beside it, but the file itself is readable.
            try:
                conn, self.driver = _raw_connect(str(self.path), driver, immutable=True)
                self._setup(conn)
            except DB_ERRORS as e2:
                with contextlib.suppress(*DB_ERRORS):
                    conn.close()
                raise BrainError(f"cannot open brain {self.path}: {e2}") from None
            self.read_only = True

    def _setup(self, conn) -> None:
        self.db = sqlite_utils.Database(conn)
        self.conn = conn
        _refuse_a_stranger(conn, self.path)  # before anything could change the file
        self._configure()
        _migrate(self.db)
        self._connect_search_index()
        if not self.read_only and os.path.getsize(self.path) and Path(f"{self.path}-wal").exists():
            with contextlib.suppress(*DB_ERRORS):
                self.checkpoint()  # one another process kept from finishing (see close) ends now
            self.notes.clear()  # (and if it cannot yet, closing says so)

    def _connect_search_index(self) -> None:
        """Construct the FTS5 table's connection now, where a transient failure can be retried
        (`reading`)."""
        reading(lambda: self.conn.execute("SELECT rowid FROM fts_chunks LIMIT 0").fetchall())

    def _can_read_immutable(self, error: BaseException) -> bool:
        """Only for 'read-only' failures of an existing brain whose WAL holds nothing unsaved
        (reading the file alone would then miss committed changes)."""
        message = str(error).lower()
        read_only = "readonly" in message or "read-only" in message
        # On a read-only file system SQLite may only say it cannot open the file (it cannot
        # create the WAL index): the same case when the file is there but its folder is not
        # writable.
        cannot_open = "unable to open" in message and not os.access(self.path.parent, os.W_OK)
        if not (read_only or cannot_open):
            return False
        wal = Path(f"{self.path}-wal")
        return self.path.is_file() and (not wal.exists() or wal.stat().st_size == 0)

    def _configure(self) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self.conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # takes effect on a new file only
        mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":  # a read-only file or folder cannot switch; still readable
            self.read_only = True
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA recursive_triggers = ON")
        # Gone means gone: deleted or rewritten rows (chunks, FTS5 and vec0 shadow tables
        # alike) are overwritten with zeros, so no clear text lingers in free pages or the WAL.
        # (FTS5 keeps a deleted row's terms in its segments until they are merged: see purge.)
        self.conn.execute("PRAGMA secure_delete = ON")
        self._purge = False
        self._gathered: list | None = None  # new chunk rows a batch inserts at its end
        self._salt: bytes | None = None
        self.notes: list[str] = []  # what closing could not do, for the face to say

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Purge what was deleted from the search index, then fold the WAL back into the
        main file so copying brain.db copies everything (and no old page stays in the WAL).
        When another process holds the brain open (a running watch or MCP server), the WAL
        cannot be emptied: that is said in `notes`, and the next open finishes it. Closing
        twice is harmless; any other use after it is a BrainError."""
        if self.closed:
            return
        with contextlib.suppress(*DB_ERRORS):
            if not self.read_only:
                self.purge_search_index()
                self.checkpoint()
        with contextlib.suppress(*DB_ERRORS):
            self.conn.close()
        self.conn = self.db = _Closed()

    @property
    def closed(self) -> bool:
        return isinstance(self.conn, _Closed)

    def checkpoint(self, *, say: bool = True) -> bool:
        """Fold the WAL into the file and empty it; False (with a note, unless not `say`) when a
        reader in another process kept it from being emptied."""
        # a reader elsewhere may hold the WAL for as long as it likes: wait a little, not a minute
        self.conn.execute(f"PRAGMA busy_timeout = {int(CHECKPOINT_WAIT_S * 1000)}")
        busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        wal = Path(f"{self.path}-wal")
        if busy or (wal.exists() and wal.stat().st_size):
            if say:
                self.notes.append("another process has the brain open (a watch or MCP server?): what was "
                                  "removed may linger in its -wal file until the next command finishes the job")
            return False
        return True

    def __enter__(self) -> "Brain":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """One atomic write. IMMEDIATE takes the write lock up front, so two writers queue on
        the busy timeout instead of failing with 'database is locked' on lock upgrade. Inside
        another write it joins that transaction, so a caller can make several steps one."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(*DB_ERRORS):
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- meta ----------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- vectors -------------------------------------------------------------------------------
    # Every write to vec_chunks goes through these, inside the caller's transaction: vec_bits
    # changes with it, and `vectors_version` is bumped. A process holding an in-memory copy
    # (vindex) compares that version per query, so it never ranks by a vector the brain no
    # longer holds; recall uses vec_bits only while `bits_version` equals it.

    def put_vectors(self, rows: Sequence[tuple[int, bytes]]) -> None:
        """Store (chunk id, float32 vector) pairs the chunks do not have yet, and their sign bits."""
        if not rows:
            return
        self.conn.executemany("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)", rows)
        self.conn.executemany(  # bits come in bytes: a dimension not a multiple of 8 has none
            f"INSERT OR REPLACE INTO {BITS_TABLE}(id, bits) VALUES (?, vec_quantize_binary(?))",
            [row for row in rows if len(row[1]) % 32 == 0])
        self._vectors_changed()

    def drop_vectors(self, ids: Iterable[int]) -> None:
        """Remove these chunks' vectors (ids without one are ignored). One statement per id:
        vec0 answers `rowid = ?` from its index but scans every row for `rowid IN (...)`,
        0.2 s a statement at a million chunks."""
        ids = [(i,) for i in ids]
        if not ids or not self.has_vectors_table():
            return
        self.conn.executemany("DELETE FROM vec_chunks WHERE rowid = ?", ids)
        self.conn.executemany(f"DELETE FROM {BITS_TABLE} WHERE id = ?", ids)
        self._vectors_changed()

    def clear_vectors(self) -> None:
        """Drop every vector and the table itself (reembed: the next model may have another
        dimension). Both tables are then empty, so the bits are in step."""
        self.conn.execute("DROP TABLE IF EXISTS vec_chunks")
        self.conn.execute(f"DELETE FROM {BITS_TABLE}")
        self.set_meta(BITS_BUILT, None)
        self._vectors_changed(in_step=True)

    def vector_versions(self) -> tuple[str, str | None]:
        """(vectors_version, bits_version) as stored; the bits mirror vec_chunks when equal."""
        found = dict(self.conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)",
                                       (VECTORS_VERSION, BITS_VERSION)).fetchall())
        return found.get(VECTORS_VERSION, "0"), found.get(BITS_VERSION)

    def bits_in_step(self) -> bool:
        vectors, bits = self.vector_versions()
        return vectors == bits

    def _vectors_changed(self, in_step: bool | None = None) -> None:
        """Bump vectors_version; bits_version follows when the bits were in step (the writer
        changed both tables) or `in_step` says so."""
        if in_step is None:
            in_step = self.bits_in_step()
        self.conn.execute(
            f"INSERT INTO meta(key, value) VALUES ('{VECTORS_VERSION}', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")
        if in_step:
            self.set_meta(BITS_VERSION, self.vector_versions()[0])

    def keep_scale(self) -> None:
        """Measure the brain's cosine scale and keep it with the vectors_version it belongs to
        (the embedder calls this after writing vectors); a no-op when it is already kept. A
        writer that changed the vectors meanwhile makes the kept one stale, never wrong."""
        if self.read_only or not self.has_vectors_table() or kept_scale(self.conn) is not None:
            return
        version = self.vector_versions()[0]
        found = measure_scale(self.conn)
        with self.write():
            if self.vector_versions()[0] == version:
                self.set_meta(SCALE, json.dumps({"version": version, "mean": found[0], "sd": found[1]})
                              if found else None)

    def has_vectors_table(self) -> bool:
        return self.db["vec_chunks"].exists()

    def vectors_dim(self) -> int | None:
        """The dimension `vec_chunks` was created with, or None when there is no table."""
        row = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'vec_chunks' AND type = 'table'").fetchone()
        match = re.search(r"float\[(\d+)\]", row[0] or "") if row else None
        return int(match.group(1)) if match else None

    def build_bits(self, progress: Callable[[int, int], None] | None = None, step: int = BITS_STEP) -> bool:
        """Fill vec_bits from vec_chunks when they are not in step (a brain whose vectors came
        before migration 9), `step` chunk ids per transaction: a kill loses one step
        (`bits_built` says how far it got), and writers meanwhile keep the rows they touch.
        `progress(done, total)` is told after each step. Returns whether it built."""
        if self.read_only or self.bits_in_step() or not self.has_vectors_table():
            return False
        if (self.vectors_dim() or 0) % 8:  # no bits in a dimension that is not whole bytes
            with self.write():
                self.conn.execute(f"DELETE FROM {BITS_TABLE}")
                self.set_meta(BITS_VERSION, self.vector_versions()[0])
            return False
        with self._large_cache():
            while True:
                with self.write():
                    if self.bits_in_step():
                        return True
                    done = int(self.get_meta(BITS_BUILT) or 0)
                    if not done:
                        self.conn.execute(f"DELETE FROM {BITS_TABLE}")  # start clean: no orphans
                    top = self.conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
                    upto = done + step
                    # a range scan reads the vectors in storage order, ~7 us each with a cache
                    # that holds a blob; `rowid = ?` one by one would cost up to 200 us each
                    self.conn.execute(
                        f"INSERT OR REPLACE INTO {BITS_TABLE}(id, bits) SELECT rowid, "
                        "vec_quantize_binary(embedding) FROM vec_chunks WHERE rowid > ? AND rowid <= ?",
                        (done, upto))
                    if upto >= top:
                        self.set_meta(BITS_BUILT, None)
                        self.set_meta(BITS_VERSION, self.vector_versions()[0])
                    else:
                        self.set_meta(BITS_BUILT, str(upto))
                if progress is not None:
                    progress(min(upto, top), top)
                if upto >= top:
                    return True

    @contextlib.contextmanager
    def _large_cache(self) -> Iterator[None]:
        """A page cache that holds one of vec0's vector blobs while this connection reads every
        vector (build_bits, vacuum): reading one vector walks its blob's pages up to it, from
        the file each time when they are not cached (100 us a vector instead of 7)."""
        cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        if -65536 < cache < 0 or 0 < cache < 16384:
            self.conn.execute("PRAGMA cache_size = -65536")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(cache)}")

    # -- names ---------------------------------------------------------------------------------

    def name_key(self, identity: str) -> str:
        """The key a document is found by: a keyed hash (HMAC-SHA256, this brain's own salt) of
        its real identity (a file's real path, a stdin --name, a conversation's citation). The
        brain stores names only as the scrubber left them, so a secret in a file's name never
        reaches the file; the key still finds the file again, and the salt makes it useless for
        testing guesses against a copied brain."""
        return self._keyed(identity.encode("utf-8", "surrogatepass"))

    def value_digest(self, value: str) -> str:
        """A redacted value as the brain may remember it (scrub.Remembered): a keyed hash, as
        `name_key`, in a domain of its own."""
        return self._keyed(b"value\0", value.encode("utf-8", "surrogatepass"))

    def content_digest(self, raw: bytes) -> str:
        """A file's bytes as the ledger remembers them, so a file whose mtime moved but whose
        bytes did not is not read again: a keyed hash, as `name_key`, in a domain of its own. A
        plain SHA-256 of a short note would let anyone holding a copy of the brain test guesses
        of what the scrubber took out of it (a four-digit PIN in 10,000 tries)."""
        return self._keyed(b"content\0", raw)

    def _keyed(self, *parts: bytes) -> str:
        if self._salt is None:
            self._salt = bytes.fromhex(self.get_meta(SALT_KEY) or _new_salt(self))
        digest = hmac.new(self._salt, digestmod=hashlib.sha256)
        for part in parts:
            digest.update(part)
        return digest.hexdigest()[:32]

    # -- files ledger --------------------------------------------------------------------------

    def file_record(self, key: str) -> dict | None:
        """The ledger entry of the document with this key (see name_key), or None."""
        cur = self.conn.execute("SELECT * FROM files WHERE key = ?", (key,))
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([d[0] for d in cur.description], row))

    def touch_file(self, key: str, **fields) -> None:
        """Refresh the ledger entry of an unchanged file (mtime touched, same content)."""
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self.write():
            self.conn.execute(f"UPDATE files SET {sets} WHERE key = ?", (*fields.values(), key))

    def files_under(self, folder: str) -> list[tuple[str, str]]:
        """(key, stored name) of every file stored under `folder` (a stored name's prefix)."""
        prefix = folder.rstrip(os.sep) + os.sep
        return self.conn.execute(
            "SELECT key, path FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)).fetchall()

    def _place(self, key: str, name: str) -> str:
        """The stored name of the document `key` under the name `name`: taken as it is unless
        another document already holds it (two names the scrubber made alike), and moved, with
        its chunks, when the document had another name before."""
        taken = self.conn.execute("SELECT key FROM files WHERE path = ?", (name,)).fetchone()
        if taken is not None and taken[0] != key:
            name = f"{name} ({key[:8]})"
        old = self.conn.execute("SELECT path FROM files WHERE key = ?", (key,)).fetchone()
        if old is not None and old[0] != name:
            self.conn.execute("UPDATE chunks SET path = ? WHERE path = ?", (name, old[0]))
            self.conn.execute("UPDATE files SET path = ? WHERE key = ?", (name, key))
            self._purge = True  # the old name's bytes go with the rewritten rows
        return name

    # -- staging -------------------------------------------------------------------------------

    def stage(
        self,
        *,
        path: str,
        chunks: list[ChunkRow],
        project: str,
        source: str,
        ts: str | None,
        ref: str | None = None,
        role: str | None = None,
        replace: bool = True,
        ledger: dict | None = None,
        title: str | None = None,
        key: str | None = None,
        rules: str | None = None,
    ) -> StageResult:
        """Make the brain hold exactly `chunks` for the document `key` (default: the key of
        `path`), stored under the name `path` (or add them, when replace=False).

        Everything given here is stored as it is: the caller has scrubbed it (ingest's gate),
        and `rules` names the scrub rules it was scrubbed under. Unchanged chunks keep their
        row (and vector); only their line span and labels are refreshed. The chunk rows and the
        ledger entry change in one transaction, so an interrupted ingest either did the whole
        file or nothing, and the next run picks up where it stopped. `title` (default: the
        first chunk's first line, indexed with every chunk after the first) is indexed with every
        chunk.
        """
        result = StageResult()
        key = key or self.name_key(path)
        created = now_iso()
        wanted: dict[str, ChunkRow] = {}
        for chunk in chunks:
            wanted.setdefault(text_sha(chunk.text), chunk)
        head = title or (segment_title(chunks[0].text) if len(chunks) > 1 else None)
        # a title the format gave (front matter, a PDF's metadata) is not in the first chunk's
        # text: that chunk is indexed with it too
        titles = {sha: (head if i or title else None) for i, sha in enumerate(wanted)}
        with self.write():
            path = self._place(key, path)
            existing = dict(
                self.conn.execute("SELECT sha, id FROM chunks WHERE path = ?", (path,)).fetchall()
            )
            if replace:
                stale = [cid for sha, cid in existing.items() if sha not in wanted]
                self._delete_ids(stale)
                result.removed = len(stale)
            kept, new_rows = [], []
            for sha, chunk in wanted.items():
                # a kept chunk is this text under today's rules too
                labels = (chunk.line_start, chunk.line_end, project, source, chunk.ts or ts, titles[sha],
                          cjk.index_form(chunk.text, titles[sha]),
                          json.dumps(chunk.meta, sort_keys=True) if chunk.meta else None, rules)
                if sha in existing:
                    kept.append((*labels, existing[sha]))
                else:
                    new_rows.append((sha, path, chunk.ref or ref, chunk.role or role, chunk.text, created, *labels))
            # Plain statements: sqlite-utils' insert_all, update and upsert read the schema on
            # every call, which was most of the time a small file takes to stage.
            if kept:
                self.conn.executemany(
                    f"UPDATE chunks SET ({_LABELS}) = (?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE id = ?", kept)
            if self._gathered is not None:
                self._gathered.extend(new_rows)
            else:
                self._insert_chunks(new_rows)
            result.kept, result.added = len(kept), len(new_rows)
            entry = {"path": path, "key": key, "project": project, "source": source, "ts": ts,
                     "ingested": created, "scrub_version": rules, **(ledger or {})}
            columns = ", ".join(f'"{name}"' for name in entry)
            updates = ", ".join(f'"{name}" = excluded."{name}"' for name in entry if name != "path")
            self.conn.execute(
                f"INSERT INTO files({columns}) VALUES ({', '.join('?' * len(entry))}) "
                f"ON CONFLICT(path) DO UPDATE SET {updates}", list(entry.values()))
        return result

    def _insert_chunks(self, rows: list[tuple]) -> None:
        """New chunk rows, many to a statement. FTS5 writes the terms its insert trigger has
        gathered out as a new index segment whenever a statement opens a statement
        transaction (SQLite sets a savepoint on the index then), and every execution of an
        INSERT that fires a trigger does: one row per statement cost a segment, and its
        merging, per chunk (three times what indexing the same rows at once costs). 999
        parameters a statement: the lowest limit a SQLite build has."""
        per = 999 // _INSERT_WIDTH
        for start in range(0, len(rows), per):
            part = rows[start:start + per]
            marks = ", ".join([f"({', '.join('?' * _INSERT_WIDTH)})"] * len(part))
            self.conn.execute(f"INSERT OR IGNORE INTO chunks(sha, path, ref, role, text, created, {_LABELS}) "
                              f"VALUES {marks}", [value for row in part for value in row])

    @contextlib.contextmanager
    def _gathering(self) -> Iterator[None]:
        """Inside a transaction: the chunks `stage` adds are inserted together at the end."""
        self._gathered = []
        try:
            yield
            rows, self._gathered = self._gathered, None
            self._insert_chunks(rows)
        finally:
            self._gathered = None

    def purge_search_index(self) -> bool:
        """After rows were deleted or rewritten, rebuild the FTS5 index's segments so the old
        terms are gone from the file, not merely marked deleted, then write the index's rows
        again into fresh pages. (secure_delete zeroes what is deleted, but a B-tree page that
        SQLite rebalanced keeps stale copies of cells that moved in its unused space: a
        replaced paragraph's words survived there in about one re-ingest in twenty.) FTS5's
        own 'secure-delete' option would work per row, but it changes the index format so
        that SQLite before 3.42 (Debian 12's, many Pythons') can no longer read it:
        `sqlite-utils search` and Datasette would break. Costs two rewrites of the index, once
        per command that deleted something. True when it purged."""
        purged = self._purge
        if self._purge:
            with self.write():
                self.conn.execute("INSERT INTO fts_chunks(fts_chunks) VALUES ('optimize')")
                self.conn.execute("CREATE TEMP TABLE fts_copy AS SELECT * FROM fts_chunks_data")
                self.conn.execute("DELETE FROM fts_chunks_data")
                self.conn.execute("INSERT INTO fts_chunks_data SELECT * FROM temp.fts_copy")
                self.conn.execute("DROP TABLE temp.fts_copy")
            self._purge = False
        return purged

    def _delete_ids(self, ids: Iterable[int]) -> int:
        """Delete chunks by id; the FTS rows go by trigger, the vectors here (same transaction)."""
        ids = list(ids)
        self._purge = self._purge or bool(ids)
        self.drop_vectors(ids)
        for part, marks in id_batches(ids):
            self.conn.execute(f"DELETE FROM chunks WHERE id IN ({marks})", part)
        return len(ids)

    def outdated_files(self, rules: str) -> list[tuple[str, str, str, str]]:
        """(key, stored name, project, source) of every file (a ledger row with a size:
        standard input has none) stored under other scrub rules than `rules`."""
        return self.conn.execute(
            "SELECT key, path, project, source FROM files WHERE scrub_version IS NOT ? "
            "AND size IS NOT NULL ORDER BY path", (rules,)).fetchall()

    def outdated_documents(self, rules: str, limit: int = 200) -> list[str]:
        """Stored names of documents that still hold a chunk stored under other rules."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT path FROM chunks WHERE scrub_version IS NOT ? LIMIT ?", (rules, limit))]

    def document_chunks(self, path: str) -> list[tuple[int, str, str | None, str | None]]:
        """(id, text, title, meta JSON) of every chunk of one document, in reading order."""
        return self.conn.execute(
            "SELECT id, text, title, meta FROM chunks WHERE path IS ? ORDER BY line_start, id", (path,)).fetchall()

    def rewrite_document(self, path: str, name: str, chunks: list[tuple[int, str, str | None, str | None]],
                         rules: str) -> int:
        """Store a document's chunks as the caller scrubbed them again in place (its source
        cannot be read again): `chunks` holds (id, text, title, meta JSON) and `name` its
        stored name now. A chunk whose text changed loses its vector and is embedded again;
        one that became a copy of another is dropped. Returns how many chunks changed."""
        changed = 0
        with self.write():
            row = self.conn.execute("SELECT key FROM files WHERE path IS ?", (path,)).fetchone()
            if row is not None and row[0] and name != path:
                path = self._place(row[0], name)
            elif row is None and name != path:
                self.conn.execute("UPDATE chunks SET path = ? WHERE path IS ?", (name, path))
                path = name
            current = {cid: (text, title, meta) for cid, text, title, meta in self.document_chunks(path)}
            for cid, text, title, meta in chunks:
                if cid not in current:
                    continue
                old_text, old_title, old_meta = current[cid]
                if (text, title, meta) == (old_text, old_title, old_meta):
                    continue
                changed += 1
                self._purge = True
                if text != old_text:
                    sha = text_sha(text)
                    twin = self.conn.execute("SELECT id FROM chunks WHERE path IS ? AND sha = ? AND id != ?",
                                             (path, sha, cid)).fetchone()
                    if twin:
                        self._delete_ids([cid])
                        continue
                    self.drop_vectors([cid])
                    self.conn.execute("UPDATE chunks SET text = ?, sha = ?, embedded = 0, embed_error = NULL "
                                      "WHERE id = ?", (text, sha, cid))
                self.conn.execute("UPDATE chunks SET title = ?, meta = ?, cjk = ? WHERE id = ?",
                                  (title, meta, cjk.index_form(text, title), cid))
            self.conn.execute("UPDATE chunks SET scrub_version = ? WHERE path IS ?", (rules, path))
            self.conn.execute("UPDATE files SET scrub_version = ? WHERE path IS ?", (rules, path))
        return changed

    def restamp_file(self, key: str, name: str, rules: str) -> None:
        """A ledger row's name scrubbed again under `rules` (a file whose chunks are gone)."""
        with self.write():
            self._place(key, name)
            self.conn.execute("UPDATE files SET scrub_version = ? WHERE key = ?", (rules, key))

    # -- forgetting ----------------------------------------------------------------------------

    def forget(
        self, *, paths: Iterable[str] = (), keys: Iterable[str] = (), project: str | None = None,
        source: str | None = None,
    ) -> tuple[int, int]:
        """Remove chunks (and their FTS rows and vectors) by stored name (a file, or everything
        under a folder), by key (see name_key), project or source. Returns (chunks removed,
        files removed from the ledger)."""
        where, params = [], []
        for p in paths:
            where.append("(path = ? OR substr(path, 1, ?) = ?)")
            prefix = p.rstrip(os.sep) + os.sep
            params += [p, len(prefix), prefix]
        keys = list(keys)
        if keys:
            where.append(f"path IN (SELECT path FROM files WHERE key IN ({','.join('?' * len(keys))}))")
            params += keys
        clauses = []
        if where:
            clauses.append("(" + " OR ".join(where) + ")")
        if project is not None:
            clauses.append("project = ?")
            params.append(project)
        if source is not None:
            clauses.append("source = ?")
            params.append(source)
        if not clauses:
            raise BrainError("say what to forget: a PATH, --project or --source")
        cond = " AND ".join(clauses)
        with self.write():
            ids = [r[0] for r in self.conn.execute(f"SELECT id FROM chunks WHERE {cond}", params)]
            removed = self._delete_ids(ids)
            files = self.conn.execute(f"DELETE FROM files WHERE {cond}", params).rowcount
            self._purge = self._purge or files > 0  # a name is text too
            # A remembered fact lives on as long as its chunk (facts.py).
            self.conn.execute("DELETE FROM facts WHERE substr(path, 1, 5) = 'fact:' AND NOT EXISTS "
                              "(SELECT 1 FROM chunks c WHERE c.path = facts.path)")
            # ... and a fact the forgotten one superseded is current again
            self.conn.execute("UPDATE facts SET superseded_by = NULL, superseded = NULL WHERE superseded_by "
                              "IS NOT NULL AND superseded_by NOT IN (SELECT id FROM facts)")
        return removed, files

    def forget_count(self, *, project: str | None = None, source: str | None = None) -> int:
        """How many chunks `forget(project=, source=)` would remove."""
        clauses = [f"{c} = ?" for c, v in (("project", project), ("source", source)) if v is not None]
        params = [v for v in (project, source) if v is not None]
        return self.conn.execute(f"SELECT count(*) FROM chunks WHERE {' AND '.join(clauses) or '1'}",
                                 params).fetchone()[0]

    def remove_keys(self, keys: Iterable[str]) -> int:
        """Remove the documents with these keys (files that vanished): chunks and ledger rows."""
        removed = 0
        for key in keys:
            with self.write():
                row = self.conn.execute("SELECT path FROM files WHERE key = ?", (key,)).fetchone()
                if row is None:
                    continue
                ids = [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE path = ?", (row[0],))]
                removed += self._delete_ids(ids)
                self.conn.execute("DELETE FROM files WHERE key = ?", (key,))
                self._purge = True
        return removed

    # -- reading -------------------------------------------------------------------------------

    def stats(self) -> dict:
        q = self.conn.execute
        total, embedded, pending, failed = q(
            "SELECT count(*), coalesce(sum(embedded = 1), 0), coalesce(sum(embedded = 0), 0), "
            "coalesce(sum(embedded = -1), 0) FROM chunks"
        ).fetchone()
        by_project = dict(q("SELECT coalesce(project, ''), count(*) FROM chunks GROUP BY 1 ORDER BY 2 DESC"))
        by_source = dict(q("SELECT coalesce(source, ''), count(*) FROM chunks GROUP BY 1 ORDER BY 2 DESC"))
        by_format = dict(q("SELECT coalesce(f.format, ''), count(*) FROM chunks c JOIN files f "
                           "ON f.path = c.path GROUP BY 1 ORDER BY 2 DESC"))
        files = q("SELECT count(*) FROM files").fetchone()[0]
        facts = q("SELECT count(*) FROM facts").fetchone()[0]
        size = sum(
            os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal")) if os.path.exists(p)
        )
        dim = self.get_meta("embed_dim")
        return {
            "path": str(self.path),
            "chunks": total,
            "embedded": embedded,
            "pending": pending,
            "failed": failed,
            "files": files,
            "facts": facts,
            "projects": by_project,
            "sources": by_source,
            "formats": by_format,
            "size_bytes": size,
            "embed_model": self.get_meta("embed_model"),
            "embed_dim": int(dim) if dim else None,
            "schema_version": SCHEMA_VERSION,
        }

    def vacuum(self) -> tuple[int, int]:
        """Compact the brain: rebuild the vector table (vec0 leaves a hole in its storage for
        every deleted vector and does not reuse it) in today's layout (VEC_CHUNK_SIZE), fill
        the sign bits if they are not in step, merge the FTS index, then VACUUM the file.
        The vector rebuild is one transaction, so a crash leaves the old table whole; the
        same vectors under the same ids keep their bits. Returns the file size (bytes)
        before and after."""
        if self.read_only:
            raise BrainError(f"cannot compact {self.path}: it is read-only here")
        before = os.path.getsize(self.path) + (
            os.path.getsize(f"{self.path}-wal") if os.path.exists(f"{self.path}-wal") else 0)
        if self.has_vectors_table():
            dim = self.vectors_dim()
            with self._large_cache(), self.write():
                self.conn.execute("CREATE TEMP TABLE vec_copy(id INTEGER PRIMARY KEY, embedding BLOB)")
                self.conn.execute("INSERT INTO temp.vec_copy SELECT rowid, embedding FROM vec_chunks")
                self.conn.execute("DROP TABLE vec_chunks")
                self.conn.execute(vectors_table_sql(dim))
                self.conn.execute(
                    "INSERT INTO vec_chunks(rowid, embedding) SELECT id, embedding FROM temp.vec_copy ORDER BY id")
                self.conn.execute("DROP TABLE temp.vec_copy")
            self.build_bits()
        with self.write():
            self.conn.execute("INSERT INTO fts_chunks(fts_chunks) VALUES ('optimize')")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._vacuum_file()
        return before, os.path.getsize(self.path)

    def _vacuum_file(self) -> None:
        """VACUUM, moving a brain made with smaller pages to PAGE_SIZE on the way. A WAL-mode
        file keeps its page size through VACUUM, so the rebuild runs with a rollback journal
        (still crash safe); when another connection holds the brain, the switch is refused
        and the file is compacted as it is. Either way the whole brain is in the file after."""
        if self.conn.execute("PRAGMA page_size").fetchone()[0] != PAGE_SIZE:
            try:
                mode = self.conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
            except DB_ERRORS:
                mode = "wal"
            if mode.lower() == "delete":
                try:
                    self.conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                    self.conn.execute("VACUUM")
                finally:
                    self.conn.execute("PRAGMA journal_mode = WAL")
                return
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def sources(self) -> list[dict]:
        cur = self.conn.execute(
            """SELECT f.path, f.project, f.source, count(c.id) AS chunks, f.ingested, f.ts, f.format
               FROM files f LEFT JOIN chunks c ON c.path = f.path
               GROUP BY f.path ORDER BY f.path"""
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]


def open_brain(path: Path | str, *, driver: str | None = None, create: bool = True) -> Brain:
    return Brain(Path(path), driver=driver, create=create)
