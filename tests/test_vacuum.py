import json
import sqlite3

from faultkit import connect
from llm_secondbrain import SecondBrain


def test_vacuum_compacts_and_keeps_every_vector(run, tmp_path, ollama, brain_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(120):
        (notes / f"n{i}.md").write_text(f"Note {i} about subject{i % 9} and detail{i}.\n")
    run("brain", "ingest", notes, "--no-progress")
    for i in range(0, 120, 2):
        (notes / f"n{i}.md").unlink()
    run("brain", "ingest", notes, "--no-progress")  # 60 files vanish: their vectors go
    before = brain_path.stat().st_size
    out = run("brain", "vacuum").output
    assert "->" in out
    assert brain_path.stat().st_size <= before
    stats = json.loads(run("brain", "stats", "--json").stdout)
    assert stats["chunks"] == stats["embedded"] == 60
    with SecondBrain.open(brain_path) as brain:
        ids = {r[0] for r in brain.brain.conn.execute("SELECT rowid FROM vec_chunks")}
        chunk_ids = {r[0] for r in brain.brain.conn.execute("SELECT id FROM chunks")}
        assert ids == chunk_ids
        hit = brain.recall("detail7 subject7", k=1, mode="dense", exact=True)[0]
        assert hit.path.endswith("n7.md")
    conn = connect(brain_path)
    conn.execute("INSERT INTO fts_chunks(fts_chunks, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_vacuum_moves_an_older_brain_to_larger_pages(run, tmp_path, ollama, brain_path):
    """Brains made before 16 KB pages keep 4 KB pages until vacuumed; nothing is lost."""
    from llm_secondbrain.store import PAGE_SIZE

    brain_path.parent.mkdir(mode=0o700)
    old = sqlite3.connect(brain_path)
    old.execute("PRAGMA page_size = 4096")
    old.execute("CREATE TABLE scratch(x)")
    old.execute("DROP TABLE scratch")
    old.close()
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(30):
        (notes / f"n{i}.md").write_text(f"Note {i} about subject{i % 4} and detail{i}.\n")
    run("brain", "ingest", notes, "--no-progress")
    page_size = lambda: sqlite3.connect(brain_path).execute("PRAGMA page_size").fetchone()[0]  # noqa: E731
    assert page_size() == 4096
    run("brain", "vacuum")
    assert page_size() == PAGE_SIZE
    conn = sqlite3.connect(brain_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    stats = json.loads(run("brain", "stats", "--json").stdout)
    assert stats["chunks"] == stats["embedded"] == 30
    with SecondBrain.open(brain_path) as brain:
        assert brain.recall("detail7 subject3", k=1, mode="dense", exact=True)[0].path.endswith("n7.md")


def test_vacuum_without_a_brain_is_one_line(run):
    result = run("brain", "vacuum", ok=False)
    assert result.exit_code == 1 and "llm brain ingest" in result.output
