"""A brain that stays fresh: roots remembered by ingest, `update`, `roots`, `watch`, and the
warning when a hit's file changed since it was ingested. Real files, the real CLI."""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, dump_brain, interruptible, llm_cmd, unprivileged

NOTES = {
    "alpha.md": "# Alpha\n\nThe alpha plan ships in March.\n\nIt needs two reviewers.\n",
    "beta.md": "# Beta\n\nBeta is the billing rewrite, owned by Kari.\n",
    "gamma.md": "# Gamma\n\nGamma moves the servers to Oslo in the autumn.\n",
    "sub/delta.md": "# Delta\n\nDelta keeps the old invoices for ten years.\n",
    "debug.log": "a log line that the exclude glob keeps out of the brain\n",
    "big.md": "# Big\n\n" + "A paragraph that makes this note too large to keep. " * 40 + "\n",
}
OPTIONS = ("--project", "plans", "--exclude", "*.log", "--max-size", "0.001")


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def state(db: Path) -> tuple[list, list]:
    """What a brain holds that a user can see: chunks (path, project, source, text, lines)
    and the ledger (path, project, source, size, whether it holds a content hash: keyed with
    each brain's own salt, two brains hold different ones), without ids and times."""
    conn = sqlite3.connect(db)
    chunks = conn.execute("SELECT path, project, source, text, line_start, line_end, title "
                          "FROM chunks ORDER BY path, line_start").fetchall()
    files = conn.execute("SELECT path, project, source, size, content_sha IS NOT NULL FROM files ORDER BY path").fetchall()
    conn.close()
    return chunks, files


@pytest.fixture
def notes(tmp_path) -> Path:
    folder = tmp_path / "notes"
    write(folder, NOTES)
    return folder


def test_update_brings_the_brain_to_what_a_fresh_ingest_gives(run, notes, tmp_path, brain_path):
    single = tmp_path / "todo.txt"
    single.write_text("Call the bank about the mortgage on Friday.\n")
    run("brain", "ingest", notes, *OPTIONS, "--no-embed")
    run("brain", "ingest", single, "--project", "inbox", "--no-embed")

    (notes / "alpha.md").write_text(NOTES["alpha.md"] + "\nA third reviewer joined in April.\n")
    (notes / "epsilon.md").write_text("# Epsilon\n\nEpsilon is the new onboarding guide.\n")
    (notes / "beta.md").unlink()
    (notes / "gamma.md").rename(notes / "sub" / "gamma-renamed.md")
    (notes / "other.log").write_text("excluded as before\n")
    single.write_text("Call the bank about the mortgage on Monday instead.\n")

    result = run("brain", "update", "--no-embed")
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith(f"{notes}: ") and "3 ingested" in lines[0] and "2 vanished files removed" in lines[0]
    assert "1 too large" in lines[0]
    assert lines[1].startswith(f"{single}: ") and "1 ingested" in lines[1]
    assert lines[2].startswith("total: ") and "4 ingested" in lines[2]

    fresh = tmp_path / "fresh.db"
    run("brain", "ingest", notes, *OPTIONS, "--no-embed", "--db", fresh)
    run("brain", "ingest", single, "--project", "inbox", "--no-embed", "--db", fresh)
    assert state(brain_path) == state(fresh)
    chunks, _ = state(brain_path)
    texts = " ".join(c[3] for c in chunks)
    assert "third reviewer" in texts and "Epsilon" in texts and "Monday" in texts
    assert "billing rewrite" not in texts and "Friday" not in texts and "log line" not in texts
    assert {c[0] for c in chunks if "Oslo" in c[3]} == {str(notes / "sub" / "gamma-renamed.md")}

    again = run("brain", "update", "--no-embed", "--json")
    total = json.loads(again.stdout)["total"]
    assert total["ingested"] == 0 and total["unchanged"] == 5 and total["chunks_added"] == 0


def test_roots_lists_options_and_the_last_ingest_decides(run, notes, brain_path):
    run("brain", "ingest", notes, "--project", "first", "--exclude", "*.log", "--max-size", "0.001", "--no-embed")
    run("brain", "ingest", notes, *OPTIONS, "--include", "*.md", "--no-embed")
    rows = [json.loads(line) for line in run("brain", "roots", "--json").stdout.splitlines()]
    assert len(rows) == 1
    assert rows[0]["path"] == str(notes) and rows[0]["exists"] is True
    assert rows[0]["options"] == {"project": "plans", "exclude": ["*.log"], "include": ["*.md"],
                                  "max_bytes": 1048}
    text = run("brain", "roots").stdout
    assert "--project plans" in text and "--exclude *.log" in text and "--max-size 0.001" in text

    (notes / "zeta.md").write_text("# Zeta\n\nZeta is added after the second ingest.\n")
    run("brain", "update", "--no-embed")
    projects = {row[0] for row in sqlite3.connect(brain_path).execute("SELECT DISTINCT project FROM chunks")}
    assert projects == {"plans"}


def test_a_missing_root_is_reported_and_its_chunks_kept(run, notes, tmp_path, brain_path):
    run("brain", "ingest", notes, "--no-embed")
    before = state(brain_path)
    notes.rename(tmp_path / "unmounted")
    result = run("brain", "update", "--no-embed")
    assert f"{notes}: missing, its chunks are kept" in result.stdout
    assert state(brain_path) == before
    assert "(missing: chunks kept)" in run("brain", "roots").stdout

    run("brain", "roots", "--remove", notes)
    assert run("brain", "roots").stdout == ""
    assert state(brain_path) == before  # not tracking is not forgetting
    run("brain", "forget", notes)
    assert state(brain_path) == ([], [])


def test_a_root_folder_a_file_replaced_is_reported_and_its_chunks_kept(run, notes, tmp_path, brain_path):
    run("brain", "ingest", notes, "--no-embed")
    before = state(brain_path)
    notes.rename(tmp_path / "moved")
    notes.write_text("A file where the notes folder was.\n")
    result = run("brain", "update", "--no-embed")
    assert f"{notes}: no longer a folder (a file is there now), its chunks are kept" in result.stdout
    assert state(brain_path) == before  # not ingested under another project, nothing lost
    run("brain", "forget", notes)
    assert state(brain_path) == ([], [])


def test_update_without_roots_says_how_to_make_one(run):
    run("brain", "ingest", "-", "--name", "pasted", "--no-embed", input="Standard input is no root.\n")
    result = run("brain", "update", "--no-embed")
    assert "no roots yet" in result.stderr and result.stdout.startswith("total: 0 files seen")


def test_bad_names_are_one_line_errors(run, notes):
    run("brain", "ingest", notes, "--no-embed")
    for args in (("roots", "--remove", "/no/such/root"), ("update", "/no/such/root")):
        result = run("brain", *args, ok=False)
        assert result.exit_code == 1
        assert result.output.strip().splitlines() == [result.output.strip()]
        assert "not a root: /no/such/root" in result.output
        assert "Traceback" not in result.output


def test_a_root_that_cannot_be_read_fails_alone(run, notes, tmp_path, brain_path):
    other = tmp_path / "other"
    write(other, {"one.md": "# One\n\nThe other folder's only note.\n"})
    run("brain", "ingest", notes, other, "--no-embed")
    (notes / "zeta.md").write_text("# Zeta\n\nZeta arrives while other is locked.\n")
    other.chmod(0o000)
    try:
        res = unprivileged(llm_cmd("brain", "update", "--no-embed"))
    finally:
        other.chmod(0o755)
    assert res.returncode == 1
    assert res.stderr.strip() == "Error: 1 of 2 roots could not be updated"
    assert f"{other}: permission denied: {other}" in res.stdout
    assert any(line.startswith(f"{notes}: ") and "1 ingested" in line for line in res.stdout.splitlines())
    assert "Traceback" not in res.stderr


def test_update_replays_strip_emails(run, notes, brain_path):
    run("brain", "ingest", notes, "--strip-emails", "--no-embed")
    (notes / "contacts.md").write_text("# Contacts\n\nWrite to kari.nordmann@example.org about it.\n")
    run("brain", "update", "--no-embed")
    assert "kari.nordmann@example.org" not in dump_brain(brain_path)


def test_recall_warns_about_changed_and_vanished_hits_and_fresh_reingests(run, notes):
    run("brain", "ingest", notes, *OPTIONS, "--no-embed")
    result = run("brain", "recall", "alpha plan reviewers", "--mode", "lexical", "--json")
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert hits and not any(h["stale"] for h in hits)
    assert "changed since" not in result.stderr

    (notes / "alpha.md").write_text("# Alpha\n\nThe alpha plan was cancelled; no reviewers.\n")
    (notes / "sub" / "delta.md").unlink()
    result = run("brain", "recall", "alpha plan reviewers invoices", "--mode", "lexical", "--json")
    hits = {Path(h["path"]).name: h for h in map(json.loads, result.stdout.splitlines())}
    assert hits["alpha.md"]["stale"] and hits["delta.md"]["stale"]
    assert not any(h["stale"] for name, h in hits.items() if name not in ("alpha.md", "delta.md"))
    assert "2 of these notes changed since they were ingested: run llm brain update" in result.stderr

    result = run("brain", "recall", "alpha plan reviewers invoices", "--mode", "lexical", "--json", "--fresh")
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert not any(h["stale"] for h in hits) and "changed since" not in result.stderr
    assert any("cancelled" in h["text"] for h in hits)
    assert not any(h["path"].endswith("delta.md") for h in hits)
    assert all(h["project"] == "plans" for h in hits)  # re-ingested with its root's options


def test_the_tool_and_fragment_warn_the_model(run, notes):
    run("brain", "ingest", notes, "--no-embed")
    (notes / "gamma.md").write_text("# Gamma\n\nThe servers stay in Bergen after all.\n")
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": "Gamma servers Oslo"}}]})
    tool = run("-m", "echo", "-T", "brain_recall", call)
    assert "1 of these notes changed since it was ingested" in tool.stdout
    assert re.search(r"gamma\.md:\d+ \(project notes\) \(changed\)", tool.stdout)
    fragment = run("-m", "echo", "-f", "brain:Gamma servers Oslo", "where are the servers?")
    assert "Warning: 1 of these notes changed since it was ingested" in fragment.stdout


def test_watch_without_the_extra_names_it(run, notes, monkeypatch):
    run("brain", "ingest", notes, "--no-embed")
    monkeypatch.setitem(sys.modules, "watchfiles", None)
    result = run("brain", "watch", ok=False)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: llm brain watch needs the watch extra: llm install 'llm-secondbrain[watch]'")


class Watcher:
    """`llm brain watch` in a subprocess, its stdout read line by line in a thread."""

    def __init__(self, *args: str):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(llm_cmd("brain", "watch", *args), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env,
                                     preexec_fn=interruptible)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, needle: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(line)
            if needle in line:
                return line
        raise AssertionError(f"no {needle!r} within {timeout}s; saw {self.seen}")

    def quiet(self, seconds: float) -> list[str]:
        """The lines printed over the next `seconds`."""
        got = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                got.append(self.lines.get(timeout=0.1))
            except queue.Empty:
                pass
        self.seen += got
        return got

    def batches(self) -> list[str]:
        return [line for line in self.seen if " changed: " in line]

    def settle(self, seconds: float = 2.5) -> None:
        """Drain lines until none came for `seconds`."""
        while self.quiet(seconds):
            pass

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=30)
        self.quiet(0.3)
        return code


def test_watch_follows_bursts_atomic_saves_renames_and_stops_cleanly(tmp_path, run):
    notes = tmp_path / "notes"
    write(notes, {"alpha.md": NOTES["alpha.md"], "gamma.md": NOTES["gamma.md"]})
    brain = notes / ".brain" / "brain.db"  # the brain inside the watched folder must not loop
    os.environ["SECONDBRAIN_DB"] = str(brain)  # isolated_env restores it
    run("brain", "ingest", notes, "--project", "plans", "--no-embed")
    todo = tmp_path / "todo.md"  # a file root: watched through its folder, not recursively
    todo.write_text("# Todo\n\nRenew the passport.\n")
    (tmp_path / "not-a-root.md").write_text("# Beside\n\nA note beside the file root.\n")
    run("brain", "ingest", todo, "--no-embed")
    (notes / "added-while-stopped.md").write_text("# Offline\n\nWritten while watch was not running.\n")

    watcher = Watcher("--no-embed")
    try:
        start = watcher.wait_for("watching 2 roots")
        assert "Traceback" not in start
        assert any(line.startswith(f"{notes}: ") and "1 ingested" in line for line in watcher.seen)
        watcher.settle()
        assert watcher.batches() == []  # the brain's own writes woke nothing

        for i in range(100):
            (notes / f"burst-{i:03}.md").write_text(f"# Burst {i}\n\nburst note number {i} says token{i}.\n")
        watcher.wait_for(" changed: ")
        watcher.settle()
        assert 1 <= len(watcher.batches()) <= 5, watcher.batches()

        (notes / ".alpha.md.swp").write_bytes(b"b0VIM 9.0\x00\x00 swap")  # Vim's swap file
        os.symlink("kari@laptop.4242", notes / ".#alpha.md")  # Emacs' lock: a dangling link
        tmp = notes / ".alpha.md.tmp-1234"  # an atomic save: write a temp file, rename it
        tmp.write_text("# Alpha\n\nThe alpha plan now ships in May, saved atomically.\n")
        tmp.replace(notes / "alpha.md")
        (notes / "gamma.md").rename(notes / "gamma-moved.md")
        for text in ("Renew the passport and the driving licence.", "Passport renewed; licence next."):
            saved = tmp_path / ".todo.md.tmp"
            saved.write_text(f"# Todo\n\n{text}\n")
            saved.replace(todo)
            watcher.wait_for(" changed: ")
        (tmp_path / "not-a-root.md").write_text("# Beside\n\nStill beside, never ingested.\n")
        watcher.settle()
        batches_before_idle = len(watcher.batches())
        watcher.settle(3)
        assert len(watcher.batches()) == batches_before_idle
    finally:
        code = watcher.stop()
    assert code == 0
    assert "stopped after" in watcher.seen[-1]
    assert "Traceback" not in "\n".join(watcher.seen)

    conn = sqlite3.connect(brain)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    paths = {Path(p).name for (p,) in conn.execute("SELECT path FROM files")}
    assert len([p for p in paths if p.startswith("burst-")]) == 100
    assert "gamma.md" not in paths and "gamma-moved.md" in paths
    assert not any(p.startswith(".brain") or p.endswith((".swp", "alpha.md.tmp-1234")) or p.startswith(".#") or "brain.db" in p for p in paths)
    conn.close()

    fresh = tmp_path / "fresh.db"
    run("brain", "ingest", notes, "--project", "plans", "--no-embed", "--db", fresh)
    run("brain", "ingest", todo, "--no-embed", "--db", fresh)
    assert state(brain) == state(fresh)
    chunks, _ = state(brain)
    assert any("ships in May" in c[3] for c in chunks)
    assert any("licence next" in c[3] for c in chunks) and not any("beside" in c[3] for c in chunks)


def test_watch_keeps_the_chunks_of_a_root_that_disappears(tmp_path, run, brain_path):
    notes = tmp_path / "mnt" / "notes"
    write(notes, {"alpha.md": NOTES["alpha.md"], "sub/delta.md": NOTES["sub/delta.md"]})
    run("brain", "ingest", notes, "--no-embed")
    before = state(brain_path)
    watcher = Watcher("--no-embed")
    try:
        watcher.wait_for("watching 1 roots")
        notes.rename(tmp_path / "elsewhere")  # what an unmounted disk looks like
        line = watcher.wait_for(" changed: ")
        watcher.settle()
    finally:
        code = watcher.stop()
    assert code == 0, watcher.seen
    assert f"root missing, chunks kept: {notes}" in line
    assert state(brain_path) == before


def test_a_running_watch_leaves_no_removed_text_in_the_wal(tmp_path, run, brain_path):
    notes = tmp_path / "notes"
    write(notes, {"alpha.md": NOTES["alpha.md"]})
    run("brain", "ingest", notes, "--no-embed")
    watcher = Watcher("--no-embed")
    try:
        watcher.wait_for("watching 1 roots")
        (notes / "cw.md").write_text("The codeword is xylophonequartz for the meeting.\n")
        watcher.wait_for(" changed: ")
        watcher.settle()
        (notes / "cw.md").unlink()
        watcher.wait_for(" changed: ")
        watcher.settle()
        wal = Path(f"{brain_path}-wal")  # read while watch still runs: a backup would copy it now
        assert not wal.exists() or b"xylophonequartz" not in wal.read_bytes()
    finally:
        code = watcher.stop()
    assert code == 0, watcher.seen


def test_watch_embeds_each_batch(tmp_path, run, ollama):
    notes = tmp_path / "notes"
    write(notes, {"alpha.md": NOTES["alpha.md"]})
    run("brain", "ingest", notes)
    watcher = Watcher()
    try:
        watcher.wait_for("watching 1 roots")
        (notes / "kiln.md").write_text("# Kiln\n\nThe pottery kiln fires at 1260 degrees.\n")
        line = watcher.wait_for(" changed: ")
    finally:
        assert watcher.stop() == 0
    assert "1 ingested" in line and line.endswith("embedded 1")
    result = run("brain", "recall", "pottery kiln degrees", "--mode", "dense", "--json", "-k", "1")
    assert json.loads(result.stdout)["path"] == str(notes / "kiln.md")
