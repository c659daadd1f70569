"""Gone means gone: what `forget`, a changed file or a re-scrub removes leaves no clear text in
the brain file's free pages or its WAL. Each test reads the raw bytes, not the tables."""
from __future__ import annotations

import json
from pathlib import Path

from llm_secondbrain.store import open_brain, text_sha

MARKER = "vorpalquokka"


def raw_bytes(brain_path: Path) -> bytes:
    """brain.db and brain.db-wal as they are on disk (after the CLI closed the brain)."""
    return b"".join(Path(f"{brain_path}{s}").read_bytes()
                    for s in ("", "-wal") if Path(f"{brain_path}{s}").exists())


def assert_gone(brain_path: Path, word: str) -> None:
    raw = raw_bytes(brain_path).lower()
    # FTS5 stores a term after the prefix it shares with its neighbour, so its tail is checked too.
    for needle in (word.lower(), word.lower()[-6:]):
        assert needle.encode() not in raw, f"{needle!r} is still in the brain file"


def note(tmp_path: Path) -> Path:
    path = tmp_path / "notes" / "trip.md"
    path.parent.mkdir()
    path.write_text(f"The hut key is under the {MARKER} stone.\n\n"
                    "Bring the blue tent and two stoves.\n")
    return path


def test_forget_leaves_no_trace(tmp_path, brain_path, run):
    path = note(tmp_path)
    run("brain", "ingest", path.parent)
    assert MARKER.encode() in raw_bytes(brain_path)  # the test can see it while it is stored
    run("brain", "forget", path)
    assert_gone(brain_path, MARKER)


def test_a_changed_file_leaves_no_trace_of_the_old_paragraph(tmp_path, brain_path, run):
    path = note(tmp_path)
    run("brain", "ingest", path.parent)
    path.write_text("Bring the blue tent and two stoves.\n\nThe hut key is with Kari.\n")
    run("brain", "ingest", path.parent)
    assert_gone(brain_path, MARKER)
    assert b"two stoves" in raw_bytes(brain_path)


def _age(brain_path: Path, secret_text: str, path: str) -> None:
    """Make the brain look filled under older rules that let `secret_text` through: the stored
    chunk holds it in clear and every scrub version is an old one."""
    brain = open_brain(brain_path)
    with brain.write():
        brain.conn.execute("UPDATE chunks SET text = ?, sha = ? WHERE path = ?",
                           (secret_text, text_sha(secret_text), path))
        brain.conn.execute("UPDATE chunks SET scrub_version = 1")
        brain.conn.execute("UPDATE files SET scrub_version = 1")
        brain.set_meta("scrub_version", "1")  # (what brains made before the rules' identity hold)
        brain.set_meta("scrub_rules", None)
    brain.close()


def test_a_rescrub_in_place_leaves_no_trace(tmp_path, brain_path, run):
    secret = "Qz7mVorpalQuokka42x"
    run("brain", "ingest", "-", "--name", "wifi", input="The cabin wifi works again.\n")
    _age(brain_path, f"The cabin wifi password: {secret}", "wifi")
    assert secret.encode() in raw_bytes(brain_path)
    (tmp_path / "empty").mkdir()
    result = run("brain", "ingest", tmp_path / "empty")
    assert "1 chunk re-scrubbed in place: its source cannot be re-read" in result.output
    assert_gone(brain_path, secret)


def test_a_rescrub_rereads_the_file_and_leaves_no_trace(tmp_path, brain_path, run):
    secret = "Qz7mVorpalQuokka42x"
    path = note(tmp_path)
    run("brain", "ingest", path.parent, "--project", "trips", "--source", "hytte")
    _age(brain_path, f"old rules kept this: token = {secret}", str(path.resolve()))
    assert secret.encode() in raw_bytes(brain_path)
    (tmp_path / "empty").mkdir()
    result = run("brain", "ingest", tmp_path / "empty")
    assert "re-scrubbed in place" not in result.output
    assert "1 file re-read under new scrub rules" in result.output
    assert_gone(brain_path, secret)
    # The file was read again: its text is back as the file has it, under its project and source.
    assert MARKER.encode() in raw_bytes(brain_path)
    [row] = [json.loads(line) for line in run("brain", "sources", "--json").output.splitlines()]
    assert (row["project"], row["source"]) == ("trips", "hytte")
