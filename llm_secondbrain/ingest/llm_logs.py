"""`llm`'s own conversations as a source: every turn logged in logs.db, read strictly read-only.

A conversation is one document, cited `llm:conversation/<id>` (`llm logs --cid <id>` shows it
whole); each turn is two sections, the prompt the user typed and the model's answer, so they
become separate chunks with role user / assistant, the turn id as ref and the turn's own time.
Like a file that grows, a conversation is read again whole when it gains a turn, and goes
through the ordinary ingest: its content hash leaves an unchanged conversation untouched, and
staging keeps the chunks (and vectors) of the turns that did not change.

Both generations of the log are read: llm >= 0.32 writes `turns` (with `turn_search`, the typed
prompt and the answer's text, fragment contents left out), older releases wrote `responses`
(whose `prompt` is the typed text too; fragments are rows of their own). Thread ids are
conversation ids, so a conversation continued across an upgrade is one conversation.

It never disturbs `llm`: the file is opened through a `mode=ro` URI with the stdlib sqlite3 (no
migration, no journal switch, no extension), every read is one statement fetched whole (a read
lock held longer makes a concurrent `llm` prompt fail with "database is locked"), and the
cursor is kept in the brain, never beside logs.db.

Which conversations changed is found by a cursor on an insertion-ordered key (`turn_search.id`,
an explicit INTEGER PRIMARY KEY; the rowid of `responses`), never on ids or times: ids are
ULIDs minted when a response starts, so a slow turn is written after faster, later ones. Each
run steps back OVERLAP rows (a re-logged turn is deleted and written again, possibly under the
same key), and the content hash drops what is already stored.
"""
from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from .. import dates
from .readers import Section
from .sources import Document, Skipped, SourceError, resolve

SOURCE = "llm"
DEFAULT_PROJECT = "llm"
PATH_PREFIX = "llm:conversation/"
CURSOR_PREFIX = "llm_logs:"  # + the resolved logs path: one cursor per logs file, in brain meta
OVERLAP = 100  # rows read again each run, for turns re-logged under a key already passed
READ_TIMEOUT_S = 30.0  # waiting for a writing `llm` to finish its commit
BRAIN_TOOL = "brain_recall"
BRAIN_FRAGMENT = "brain:%"  # fragments.source of our fragment loader's fragments


@dataclass(frozen=True)
class Turn:
    """One model call: what the user typed and what the model answered."""

    id: str
    conversation_id: str
    conversation_name: str | None
    model: str | None
    ts: str | None
    prompt: str
    response: str
    uses_brain: bool  # a brain: fragment or the brain_recall tool took part


def default_logs_path() -> Path:
    """Where `llm` logs (what `llm logs path` prints)."""
    import llm

    return llm.user_dir() / "logs.db"


def logs_path(logs_db: str | os.PathLike | None = None) -> Path:
    """The logs file to read (default: llm's own), resolved; one line when it is not there."""
    path = Path(resolve(str(logs_db))) if logs_db else default_logs_path().resolve()
    if not path.is_file():
        raise SourceError(f"no llm logs at {path} (llm logs path says where llm writes them)")
    return path


def check_since(since: str | None) -> str | None:
    """--since as the instant turns are compared with (dates.parse: ISO, 7d, yesterday, a bare
    date in the user's zone), or a one-line error."""
    if since is None:
        return None
    try:
        return dates.parse(since)
    except ValueError:
        raise ValueError(f"--since must be an ISO date such as 2026-01-31 (or 7d, yesterday), "
                         f"not {since!r}") from None


def open_log(path: str | os.PathLike) -> sqlite3.Connection:
    """logs.db, read-only, through the stdlib sqlite3: autocommit, so each statement is its
    own short read transaction. Text is decoded with replacement: SQLite stores whatever bytes
    it is given as TEXT, and one stray byte in a prompt (a hand edit, a damaged file) would
    otherwise fail the whole read, and with it every conversation after."""
    if not os.path.isfile(path):
        raise SourceError(f"no llm logs at {path} (llm logs path says where llm writes them)")
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=READ_TIMEOUT_S,
                           isolation_level=None, check_same_thread=False)
    conn.text_factory = partial(str, encoding="utf-8", errors="replace")
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as e:
        conn.close()
        raise SourceError(f"cannot read llm logs {path}: {e}") from None
    return conn


class LogReader:
    """The reads an ingest needs, for whichever generations of tables the file has."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.tables = {r[0] for r in self._all("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self.new = {"turns", "turn_search", "threads"} <= self.tables
        self.old = "responses" in self.tables

    def _all(self, sql: str, params: tuple = ()) -> list[tuple]:
        """One statement fetched whole, so its read lock is gone before this returns. An error
        here is the logs file's (a damaged page, llm holding its lock past the timeout), not
        the brain's: it says so."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            raise SourceError(f"cannot read llm's logs: {e}") from None

    def changed(self, cursor: dict) -> tuple[set[str], dict]:
        """The conversations with a turn written after `cursor`, and the cursor past them."""
        changed: set[str] = set()
        after: dict = {}
        for name, ok, anchor_sql, rows_sql in (
            ("turns", self.new, "SELECT turn_id FROM turn_search WHERE id = ?",
             "SELECT s.id, s.turn_id, t.thread_id FROM turn_search s JOIN turns t ON t.id = s.turn_id "
             "WHERE s.id > ? ORDER BY s.id"),
            ("responses", self.old, "SELECT id FROM responses WHERE rowid = ?",
             "SELECT rowid, id, coalesce(conversation_id, id) FROM responses WHERE rowid > ? ORDER BY rowid"),
        ):
            if not ok:
                continue
            last, anchor = cursor.get(name) or (0, None)
            rows = self._all(rows_sql, (self._start(last, anchor, anchor_sql),))
            changed.update(r[2] for r in rows)
            after[name] = [rows[-1][0], rows[-1][1]] if rows else [0, None]
        return changed, after

    def _start(self, last: int, anchor: str | None, anchor_sql: str) -> int:
        """Where to read from: OVERLAP rows before the cursor, or from the start when the row
        the cursor stopped at now holds another turn (a VACUUM renumbered `responses`, or the
        turn was deleted): the content hash makes reading everything again cheap."""
        if not last:
            return 0
        row = self._all(anchor_sql, (last,))
        return max(0, last - OVERLAP) if row and row[0][0] == anchor else 0

    def conversation(self, cid: str) -> list[Turn]:
        """Every turn of a conversation, from both generations, oldest first."""
        rows: list[tuple] = []
        if self.new:
            rows += self._all(
                "SELECT t.id, t.thread_id, th.name, t.model, t.datetime_utc, s.prompt, s.response, "
                f"{self._new_brain_use()} FROM turns t JOIN turn_search s ON s.turn_id = t.id "
                "LEFT JOIN threads th ON th.id = t.thread_id WHERE t.thread_id = ?", (cid,))
        if self.old:
            newer = " AND r.id NOT IN (SELECT id FROM turns)" if "turns" in self.tables else ""
            conversations = "conversations" in self.tables
            rows += self._all(
                "SELECT r.id, coalesce(r.conversation_id, r.id), "
                f"{'c.name' if conversations else 'NULL'}, r.model, r.datetime_utc, r.prompt, "
                f"r.response, {self._old_brain_use()} FROM responses r "
                f"{'LEFT JOIN conversations c ON c.id = r.conversation_id ' if conversations else ''}"
                f"WHERE coalesce(r.conversation_id, r.id) = ?{newer}", (cid,))
        turns = [Turn(r[0], r[1], _text(r[2]) or None, _text(r[3]) or None, _iso(_text(r[4])), _text(r[5]),
                      _text(r[6]), bool(r[7])) for r in rows]
        return sorted(turns, key=lambda t: (t.ts or "", t.id))

    def _new_brain_use(self) -> str:
        checks = []
        if {"turn_fragments", "fragments"} <= self.tables:
            checks.append("EXISTS (SELECT 1 FROM turn_fragments tf JOIN fragments f ON f.id = tf.fragment_id "
                          f"WHERE tf.turn_id = t.id AND f.source LIKE '{BRAIN_FRAGMENT}')")
        if {"turn_tools", "tools"} <= self.tables:
            checks.append("EXISTS (SELECT 1 FROM turn_tools tt JOIN tools tl ON tl.id = tt.tool_id "
                          f"WHERE tt.turn_id = t.id AND tl.name = '{BRAIN_TOOL}')")
        return "(" + " OR ".join(checks) + ")" if checks else "0"

    def _old_brain_use(self) -> str:
        checks = []
        if "fragments" in self.tables:
            for table in ("prompt_fragments", "system_fragments"):
                if table in self.tables:
                    checks.append(f"EXISTS (SELECT 1 FROM {table} pf JOIN fragments f ON f.id = pf.fragment_id "
                                  f"WHERE pf.response_id = r.id AND f.source LIKE '{BRAIN_FRAGMENT}')")
        if {"tool_responses", "tools"} <= self.tables:
            checks.append("EXISTS (SELECT 1 FROM tool_responses tr JOIN tools tl ON tl.id = tr.tool_id "
                          f"WHERE tr.response_id = r.id AND tl.name = '{BRAIN_TOOL}')")
        for table in ("tool_calls", "tool_results"):
            if table in self.tables:
                checks.append(f"EXISTS (SELECT 1 FROM {table} x WHERE x.response_id = r.id "
                              f"AND x.name = '{BRAIN_TOOL}')")
        return "(" + " OR ".join(checks) + ")" if checks else "0"


def _text(value) -> str:
    """A column as text: llm writes text, but a hand-edited or damaged log may hold a BLOB or a
    number where text belongs."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _iso(value: str | None) -> str | None:
    """llm's times (with an offset since 0.32, naive UTC before) as the brain's ISO form."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace(" ", "T"))
    except ValueError:
        return value
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat(timespec="seconds")


def whole_words(name: str | None) -> str | None:
    """A conversation's name without a cut word. llm names a conversation after the start of
    its first prompt, cut mid-word: the cut word may be the head of a pasted key that the
    scrubber no longer recognises, so a cut name loses its last word (the gate then scrubs
    the name with the conversation)."""
    if not name:
        return None
    if name.endswith("…"):
        name = name[:-1].rsplit(None, 1)[0] if " " in name.strip() else ""
    return name.strip() or None


def conversation_document(cid: str, turns: list[Turn], *, project: str, explicit_project: bool) -> Document:
    """A conversation as a document: two sections per turn (prompt, answer), each cited as
    the conversation, dated by its turn, with the model and conversation name as metadata.
    The raw bytes hashed for change detection are the turns themselves."""
    name = whole_words(next((t.conversation_name for t in turns if t.conversation_name), None))

    def read() -> tuple[list, bytes]:
        sections = []
        for turn in turns:
            meta = {"model": turn.model, "conversation_name": name}
            for role, text in (("user", turn.prompt), ("assistant", turn.response)):
                if text.strip():
                    sections.append(Section(text, meta=meta, ts=turn.ts, role=role, ref=turn.id,
                                            cite_lines=False))
        if sections:
            sections[0].title = name
        raw = json.dumps([{**asdict(t), "conversation_name": name} for t in turns], sort_keys=True)
        return sections, raw.encode("utf-8", "surrogatepass")

    return Document(PATH_PREFIX + cid, project, SOURCE, read, explicit_project=explicit_project,
                    ts=max((t.ts for t in turns if t.ts), default=None))


class LogSource:
    """The conversations logged in `logs_db` (default: llm's own logs.db) as documents. Only
    conversations with a turn written since the last run are read (the cursor `state` the
    brain kept under `cursor_key`; `cursor` is the one to keep after this run); with `since`,
    only conversations with a turn on or after that date. Turns that used the brain (a brain:
    fragment, the brain_recall tool) are left out unless `include_brain_turns`."""

    def __init__(self, *, logs_db: str | os.PathLike | None = None, include_brain_turns: bool = False,
                 since: str | None = None, project: str | None = None):
        self.start = check_since(since)
        self.path = logs_path(logs_db)
        self.cursor_key = CURSOR_PREFIX + str(self.path)
        self.options = {"include_brain_turns": include_brain_turns, "since": since}
        self.include_brain_turns = include_brain_turns
        self.project = project
        self.cursor: dict | None = None

    def documents(self, state: dict) -> Iterator[Document | Skipped]:
        """Yield each changed conversation (or a Skipped when every turn used the brain); when
        done, `self.cursor` is what the brain keeps for the next run."""
        cursor = state if state.get("options") == self.options else {}  # other options: read all again
        conn = open_log(self.path)
        try:
            reader = LogReader(conn)
            changed, after = reader.changed(cursor)
            for cid in sorted(changed):
                turns = reader.conversation(cid)
                if self.start and not any(t.ts and t.ts >= self.start for t in turns):
                    continue
                kept = [t for t in turns if self.include_brain_turns or not t.uses_brain]
                if not kept:
                    yield Skipped(PATH_PREFIX + cid, "used the brain")
                    continue
                yield conversation_document(cid, kept, project=self.project or DEFAULT_PROJECT,
                                            explicit_project=self.project is not None)
        finally:
            conn.close()
        after["options"] = self.options
        self.cursor = after
