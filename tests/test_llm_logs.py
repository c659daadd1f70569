"""`llm`'s own conversations in the brain: real logs.db files written by `llm` and the echo
model (and an old-generation file made with the SQL of llm's early migrations), ingested with
`llm brain ingest --llm-logs`, then recalled through the CLI."""
from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import string
import subprocess
import sys
from pathlib import Path

import llm
import pytest
import sqlite_utils
from conftest import ROOT, dump_brain, llm_cmd
from llm.migrations import MIGRATIONS, ensure_migrations_table

from llm_secondbrain import SecondBrain


@pytest.fixture
def logs(tmp_path) -> Path:
    """The logs.db of the isolated LLM_USER_PATH (what `llm logs path` prints)."""
    return Path(os.environ["LLM_USER_PATH"]) / "logs.db"


def recall(run, *args) -> list[dict]:
    out = run("brain", "recall", *args, "--mode", "lexical", "--json").output
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def ingest(run, *args) -> dict:
    out = run("brain", "ingest", "--llm-logs", "--no-embed", "--json", *args).output
    return json.loads(out.strip().splitlines()[-1])


def rows(brain_path: Path, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(brain_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def turns_of(logs: Path) -> list[dict]:
    conn = sqlite3.connect(logs)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(
            "SELECT turns.id, turns.thread_id, turns.datetime_utc, turn_search.prompt FROM turns "
            "JOIN turn_search ON turn_search.turn_id = turns.id ORDER BY turn_search.id")]
    finally:
        conn.close()


def log_with_llm(logs: Path, prompt: str, *, response: "llm.Response | None" = None):
    """Log a turn through llm's own Python API (what `llm prompt` does after answering)."""
    db = sqlite_utils.Database(logs)
    from llm.migrations import migrate

    migrate(db)
    response = response or llm.get_model("echo").prompt(prompt)
    response.text()
    response.log_to_db(db)
    db.close()
    return response


def test_conversations_are_recalled_cited_and_dated(run, logs, brain_path):
    run("-m", "echo", "The ferry to Bergen leaves at 07:15 from quay three")
    run("-m", "echo", "-c", "And the return ferry sails at 18:40 on weekdays")
    run("-m", "echo", "-s", "You answer like a harbour master", "Which quay for the Stavanger boat?")
    turns = turns_of(logs)
    ferry_cid = turns[0]["thread_id"]
    assert turns[1]["thread_id"] == ferry_cid and turns[2]["thread_id"] != ferry_cid

    report = ingest(run)
    assert report["ingested"] == 2 and report["files_seen"] == 2

    hits = recall(run, "return ferry weekdays", "--role", "user")
    assert hits[0]["citation"] == f"llm:conversation/{ferry_cid}"
    assert hits[0]["text"] == "And the return ferry sails at 18:40 on weekdays"
    assert hits[0]["source"] == "llm" and hits[0]["line"] is None
    # the turn's own time is the chunk's date
    assert hits[0]["ts"] == turns[1]["datetime_utc"][:19] + "+00:00"
    # the prompt and the answer are separate chunks with their roles and the turn id as ref
    got = rows(brain_path, "SELECT role, ref, meta FROM chunks WHERE path = ? ORDER BY id",
               (f"llm:conversation/{ferry_cid}",))
    assert [(r[0], r[1]) for r in got] == [
        ("user", turns[0]["id"]), ("assistant", turns[0]["id"]),
        ("user", turns[1]["id"]), ("assistant", turns[1]["id"])]
    meta = json.loads(got[0][2])
    assert meta["model"] == "echo" and meta["conversation_name"].startswith("The ferry to Bergen")
    # the answers are there too (echo answers with the prompt as JSON), role assistant
    answers = recall(run, "Stavanger boat", "--role", "assistant")
    assert answers and all(
        r[0] == "assistant" for r in rows(brain_path, "SELECT role FROM chunks WHERE id = ?", (answers[0]["id"],)))
    # a system prompt is an instruction, not something the user said
    assert not rows(brain_path, "SELECT 1 FROM chunks WHERE role = 'user' AND text LIKE '%harbour master%'")
    # the citation leads to the thread in llm's own logs
    shown = run("logs", "--cid", ferry_cid).output
    assert "The ferry to Bergen" in shown and "return ferry" in shown


def test_recall_filters_by_source_and_forget_removes_conversations(run, logs, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "boats.md").write_text("The ferry timetable for the island changes in May.")
    run("brain", "ingest", notes, "--no-embed")
    run("-m", "echo", "Is the ferry timetable for the island different in summer?")
    ingest(run)

    both = {h["source"] for h in recall(run, "ferry timetable island")}
    assert both == {"files", "llm"}
    assert {h["source"] for h in recall(run, "ferry timetable island", "--source", "llm")} == {"llm"}
    assert {h["source"] for h in recall(run, "ferry timetable island", "--exclude-source", "llm")} == {"files"}

    run("-m", "echo", "A second conversation, about ferry fares")
    ingest(run)
    fares = recall(run, "ferry fares", "--source", "llm")[0]["citation"]
    out = json.loads(run("brain", "forget", fares, "--json").output)  # one conversation, by its citation
    assert (out["chunks_removed"], out["sources_removed"]) == (2, 1)
    out = json.loads(run("brain", "forget", "--source", "llm", "--json").output)
    assert out["chunks_removed"] == 2 and out["sources_removed"] == 1
    assert {h["source"] for h in recall(run, "ferry timetable island")} == {"files"}


def test_turns_that_used_the_brain_are_left_out(run, logs, brain_path, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "wifi.md").write_text("The cabin wifi network is Fjordhytta, the router is in the loft.")
    run("brain", "ingest", notes, "--no-embed")
    run("-m", "echo", "-f", "brain:cabin wifi", "where is the router at the cabin?")
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": "cabin wifi"}}]})
    run("-m", "echo", "-T", "brain_recall", call)
    other = json.dumps({"tool_calls": [{"name": "llm_version", "arguments": {}}]})
    run("-m", "echo", "-T", "llm_version", other)
    run("-m", "echo", "Plain question about sourdough starters")

    report = ingest(run)
    assert report["skipped_by_reason"] == {"used the brain": 2}
    stored = {r[0] for r in rows(brain_path, "SELECT text FROM chunks WHERE source = 'llm' AND role = 'user'")}
    assert stored == {"Plain question about sourdough starters", other}
    assert not recall(run, "router cabin", "--source", "llm")

    # kept on request; what the fragment brought in is still not taken as typed by the user
    report = ingest(run, "--include-brain-turns")
    assert report["ingested"] == 2
    users = [r[0] for r in rows(brain_path, "SELECT text FROM chunks WHERE source = 'llm' AND role = 'user'")]
    assert "where is the router at the cabin?" in [u.strip() for u in users]
    assert not any("Fjordhytta" in u or "Passages from my notes" in u for u in users)


def test_second_run_changes_nothing_and_new_turns_come_in(run, logs, brain_path):
    run("-m", "echo", "Remember to renew the passport before the Tokyo trip")
    run("-m", "echo", "-c", "The embassy appointment is on the ninth")
    first = ingest(run)
    assert first["ingested"] == 1
    stored = "SELECT * FROM chunks ORDER BY id", "SELECT * FROM files ORDER BY path"
    before = [rows(brain_path, sql) for sql in stored]
    again = ingest(run)
    assert again["ingested"] == 0 and again["chunks_added"] == 0 and again["unchanged"] == 1
    # no stored row changes (only the roots table notes when the logs were last read)
    assert [rows(brain_path, sql) for sql in stored] == before

    run("-m", "echo", "-c", "Bring two photos to the embassy")
    third = ingest(run)
    assert third["ingested"] == 1 and third["chunks_added"] == 2 and third["chunks_removed"] == 0
    assert third["chunks_kept"] == 4
    assert recall(run, "photos embassy", "--role", "user")[0]["text"] == "Bring two photos to the embassy"


def test_a_turn_that_finished_late_is_not_lost(run, logs, brain_path):
    """Two prompts run at once: the one that started first (smaller ULID) is written last."""
    model = llm.get_model("echo")
    slow = model.prompt("The slow question about glacier hiking permits")
    fast = model.prompt("The quick question about tide tables")
    assert slow.id < fast.id
    log_with_llm(logs, "", response=fast)
    ingest(run)
    log_with_llm(logs, "", response=slow)
    report = ingest(run)
    assert report["ingested"] == 1
    hits = recall(run, "glacier hiking permits", "--role", "user")
    assert hits and hits[0]["text"] == "The slow question about glacier hiking permits"


def test_a_relogged_turn_replaces_only_its_own_chunks(run, logs, brain_path):
    run("-m", "echo", "First turn about the garden shed roof")
    run("-m", "echo", "-c", "Second turn about the moss on the shed")
    ingest(run)
    last = turns_of(logs)[-1]
    # llm logs the same turn again (same id) with what it says now
    redo = llm.get_model("echo").prompt("Second turn, corrected: lichen, not moss")
    redo.id = last["id"]
    redo.conversation = None
    db = sqlite_utils.Database(logs)
    redo.text()
    from llm.logs import LogStore

    LogStore(db).log(redo, thread_id=last["thread_id"])
    db.close()
    report = ingest(run)
    assert report["ingested"] == 1
    texts = [r[0] for r in rows(brain_path, "SELECT text FROM chunks WHERE role = 'user' ORDER BY id")]
    assert texts == ["First turn about the garden shed roof", "Second turn, corrected: lichen, not moss"]
    assert rows(brain_path, "SELECT count(DISTINCT ref) FROM chunks")[0][0] == 2


def test_a_pasted_secret_is_not_in_the_brain(run, logs, brain_path):
    rng = random.SystemRandom()
    secret = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    run("-m", "echo", f"{secret} is my token, why does the push fail?")
    run("-m", "echo", "-c", f"I also set GITHUB_TOKEN={secret} in the CI settings")
    report = ingest(run)
    assert report["redacted"] >= 2
    dump = dump_brain(brain_path)
    assert secret not in dump and secret[:12] not in dump
    assert recall(run, "push fail token")


def legacy_log(path: Path) -> sqlite_utils.Database:
    """A logs.db as llm < 0.32 left it: the schema of its migrations up to m022, with the
    `responses`/`conversations` rows those releases wrote (naive UTC times)."""
    db = sqlite_utils.Database(path)
    ensure_migrations_table(db)
    for fn in MIGRATIONS:
        if fn.__name__ == "m023_message_store":
            break
        fn(db)
        db["_llm_migrations"].insert({"name": fn.__name__, "applied_at": "2025-03-01 10:00:00"})
    return db


def legacy_turn(db, rid: str, cid: str, prompt: str, when: str, *, name: str = "") -> None:
    db["conversations"].insert({"id": cid, "name": name or prompt[:30], "model": "echo"}, ignore=True)
    db["responses"].insert({
        "id": rid, "model": "echo", "prompt": prompt, "system": None, "prompt_json": None,
        "options_json": "{}", "response": f"Echo: {prompt}", "response_json": None,
        "conversation_id": cid, "duration_ms": 3, "datetime_utc": when,
    })


def test_old_generation_logs_and_a_conversation_across_the_upgrade(run, logs, brain_path):
    db = legacy_log(logs)
    legacy_turn(db, "01jn0000000000000000000001", "01jn00000000000000000000c1",
                "Old llm: the boiler service is booked for March", "2025-03-01T09:00:00.123456")
    legacy_turn(db, "01jn0000000000000000000002", "01jn00000000000000000000c2",
                "Old llm: what did the brain say about cabins?", "2025-03-02T09:00:00")
    legacy_turn(db, "01jn0000000000000000000003", "01jn00000000000000000000c3",
                "Old llm: unrelated note on bread", "2025-03-02T10:00:00")
    # an old turn that used the brain, recorded the old way
    fid = db["fragments"].insert({"hash": "h1", "content": "cabin passages", "source": "brain:cabins",
                                  "datetime_utc": "2025-03-02 09:00:00"}).last_pk
    db["prompt_fragments"].insert({"response_id": "01jn0000000000000000000002", "fragment_id": fid, "order": 0})
    db.close()

    report = ingest(run)
    assert report["ingested"] == 2 and report["skipped_by_reason"] == {"used the brain": 1}
    hit = recall(run, "boiler service March")[0]
    assert hit["citation"] == "llm:conversation/01jn00000000000000000000c1"
    assert hit["ts"] == "2025-03-01T09:00:00+00:00"

    # today's llm continues the old conversation: new tables, same conversation id
    run("-m", "echo", "--cid", "01jn00000000000000000000c1", "New llm: the boiler man comes at noon")
    assert {"turns", "responses"} <= set(sqlite_utils.Database(logs).table_names())
    report = ingest(run)
    assert report["ingested"] == 1 and report["chunks_kept"] == 2
    got = rows(brain_path, "SELECT DISTINCT path FROM chunks WHERE text LIKE '%boiler%' AND role = 'user'")
    assert got == [("llm:conversation/01jn00000000000000000000c1",)]
    assert len(rows(brain_path, "SELECT 1 FROM chunks WHERE path = ? AND role = 'user'",
                    ("llm:conversation/01jn00000000000000000000c1",))) == 2


def test_since_limits_the_import(run, logs, brain_path):
    db = legacy_log(logs)
    legacy_turn(db, "01jn0000000000000000000011", "01jn00000000000000000000d1",
                "An old question from 2024 about kayaks", "2024-06-01T09:00:00")
    legacy_turn(db, "01jn0000000000000000000012", "01jn00000000000000000000d2",
                "A newer question from 2025 about canoes", "2025-06-01T09:00:00")
    db.close()
    report = ingest(run, "--since", "2025-01-01")
    assert report["ingested"] == 1
    assert not recall(run, "kayaks") and recall(run, "canoes")


def test_python_api_and_another_logs_file(tmp_path, run, logs, brain_path):
    other = tmp_path / "elsewhere" / "logs.db"
    other.parent.mkdir()
    db = legacy_log(other)
    legacy_turn(db, "01jn0000000000000000000021", "01jn00000000000000000000e1",
                "Logged on the laptop: the VPN needs the new certificate", "2025-05-05T05:05:05")
    db.close()
    with SecondBrain.open(brain_path) as sb:
        report = sb.ingest([], llm_logs=True, logs_db=other, embed=False)
        assert report.ingested == 1
        hits = sb.recall("VPN certificate", mode="lexical", source="llm")
    assert hits[0].citation == "llm:conversation/01jn00000000000000000000e1"
    assert not logs.exists()  # the default logs file was not touched, nor created


def test_bad_input_is_one_line(run, tmp_path):
    missing = run("brain", "ingest", "--llm-logs", "--logs-db", tmp_path / "nope.db", ok=False)
    assert missing.exit_code == 1 and "no llm logs at" in missing.output
    assert "Traceback" not in missing.output
    nothing = run("brain", "ingest", ok=False)
    assert nothing.exit_code == 1 and "--llm-logs" in nothing.output
    stray = run("brain", "ingest", tmp_path, "--since", "2025-01-01", ok=False)
    assert stray.exit_code == 1 and "go with --llm-logs" in stray.output
    (tmp_path / "logs.db").write_bytes(b"")
    sqlite_utils.Database(tmp_path / "logs.db")["x"].insert({"a": 1})
    bad = run("brain", "ingest", "--llm-logs", "--logs-db", tmp_path / "logs.db", "--since", "last week", ok=False)
    assert bad.exit_code == 1 and "--since must be an ISO date" in bad.output
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    broken = run("brain", "ingest", "--llm-logs", "--logs-db", junk, ok=False)
    assert broken.exit_code == 1 and "cannot read llm logs" in broken.output.splitlines()[-1]


def test_text_that_is_not_utf8_is_read_with_replacement_and_the_ingest_goes_on(run, logs, tmp_path):
    """SQLite keeps whatever bytes it is given as TEXT: a prompt holding a stray byte (in
    today's `turn_search` or an old `responses` row) is stored with its readable part, the
    conversations after it are ingested, and nothing blames the brain or quotes the text."""
    run("-m", "echo", "The boathouse key hangs behind the blue door")
    run("-m", "echo", "The ferry to Bergen leaves at 07:15 from quay three")
    run("-m", "echo", "The lighthouse lamp is lit at dusk")
    first = turns_of(logs)[0]  # conversations are read in id order: this one comes first
    conn = sqlite3.connect(logs)
    conn.execute("UPDATE turn_search SET prompt = CAST(? AS TEXT) WHERE turn_id = ?",
                 (b"The boathouse key hangs behind the \xffblue door", first["id"]))
    conn.commit()
    conn.close()

    result = run("brain", "ingest", "--llm-logs", "--no-embed")
    assert "3 ingested" in result.output and "error" not in result.output.lower()
    assert recall(run, "ferry Bergen quay") and recall(run, "lighthouse lamp dusk")
    hit = recall(run, "boathouse key blue door", "--role", "user")[0]
    assert hit["citation"] == f"llm:conversation/{first['thread_id']}"
    assert hit["text"] == "The boathouse key hangs behind the \ufffdblue door"

    old = legacy_log(tmp_path / "old-logs.db")
    legacy_turn(old, "01jn0000000000000000000001", "01jn00000000000000000000c1",
                "Old llm: the boiler service is booked for March", "2025-03-01T09:00:00")
    legacy_turn(old, "01jn0000000000000000000002", "01jn00000000000000000000c2",
                "Old llm: the chimney sweep comes in April", "2025-03-02T09:00:00")
    old.execute("UPDATE responses SET prompt = CAST(X'4f6c64206c6c6d3a20626f696c6572ff' AS TEXT) "
                "WHERE id = '01jn0000000000000000000001'")
    old.conn.commit()
    old.close()
    result = run("brain", "ingest", "--llm-logs", "--logs-db", tmp_path / "old-logs.db", "--no-embed")
    assert "2 ingested" in result.output
    assert recall(run, "chimney sweep April")
    assert recall(run, "old llm boiler", "--role", "user")[0]["text"] == "Old llm: boiler\ufffd"


def test_llm_keeps_working_while_an_ingest_reads_its_log(tmp_path, logs, run):
    """`llm -m echo` prompts in another process while ingests read the same log: both succeed,
    the log is only read (same bytes, no side files), and every prompt ends up in the brain.
    The log is big enough that one ingest takes longer than llm waits for a lock (5 s), so
    an ingest that held its read lock throughout would make these prompts fail."""
    rng = random.Random(5)
    words = "lighthouse keeper lamp oil storm fog horn island rock ledger watch night tide".split()
    db = sqlite_utils.Database(logs)
    from llm.migrations import migrate

    migrate(db)
    model = llm.get_model("echo")
    with db.conn:  # one transaction: logging 100 turns one commit each takes a minute here
        for i in range(100):
            response = model.prompt(f"Question {i}: " + " ".join(rng.choice(words) for _ in range(10000)))
            response.text()
            response.log_to_db(db)
    db.close()

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = ("import subprocess, sys\n"
              "for i in range(4):\n"
              f"    r = subprocess.run({llm_cmd()!r} + ['-m', 'echo', f'concurrent prompt {{i}} about seals'],"
              " capture_output=True, text=True)\n"
              "    if r.returncode: sys.exit(r.stderr)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE, text=True)
    runs = 0
    while proc.poll() is None or runs == 0:
        # a fresh brain each time, so each ingest reads the whole log
        assert ingest(run, "-d", tmp_path / f"brain-{runs}.db")["files_seen"] >= 100
        runs += 1
    assert proc.wait(timeout=120) == 0, proc.stderr.read()

    listing = sorted(os.listdir(logs.parent))
    digest = hashlib.sha256(logs.read_bytes()).hexdigest()
    final = tmp_path / f"brain-{runs - 1}.db"  # brings the last brain up to date: new turns only
    ingest(run, "-d", final)
    assert sorted(os.listdir(logs.parent)) == listing
    assert hashlib.sha256(logs.read_bytes()).hexdigest() == digest
    found = rows(final,
                 "SELECT count(*) FROM chunks WHERE role = 'user' AND text LIKE 'concurrent prompt %'")
    assert found == [(4,)]


def test_the_logs_are_a_root_that_update_keeps_current(run, logs, brain_path):
    run("-m", "echo", "The plumber comes on Thursday")
    ingest(run, "--include-brain-turns")
    roots = [json.loads(line) for line in run("brain", "roots", "--json").output.splitlines()]
    assert [(r["path"], r["options"]) for r in roots] == [
        ("llm:logs", {"include_brain_turns": True, "llm_logs": True})]
    run("-m", "echo", "-c", "Ask the plumber about the boiler pressure")
    report = json.loads(run("brain", "update", "--no-embed", "--json").output.strip().splitlines()[-1])
    assert report["total"]["chunks_added"] == 2
    assert recall(run, "boiler pressure", "--source", "llm")[0]["text"] == "Ask the plumber about the boiler pressure"
    run("brain", "roots", "--remove", "llm:logs")
    assert run("brain", "roots", "--json").output.strip() == ""
