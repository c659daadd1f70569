"""The in-memory copy of the vectors a long-lived process keeps (vindex): it must answer as
the brain would, whatever another process changed meanwhile."""
from __future__ import annotations

import time

from llm_secondbrain import SecondBrain
from llm_secondbrain.recall import vindex
from llm_secondbrain.ollama import serialize


def _notes(folder, n=60):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"n{i}.md").write_text(f"Note {i} about topic{i % 7} and theme{i % 11}, item {i * 37 % 101}.\n")
    return folder


def _wait_for_copy(sb: SecondBrain, query: str) -> None:
    """Ask until the background copy is in use (a long-lived process's later queries)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        sb.search(query, k=5, mode="dense")
        if vindex.warm(sb.brain.conn, 768) is not None:
            return
        time.sleep(0.05)
    raise AssertionError("the in-memory copy was never built")


def test_a_vector_replaced_by_another_process_is_never_ranked_by_its_old_value(tmp_path, run, ollama, brain_path):
    """Another process replaces one chunk's vector under the same chunk id (as a re-scrub or a
    re-embed does) while this process serves queries from its copy: the next query must rank
    by the new vector, exactly as a scan of the brain does."""
    run("brain", "ingest", _notes(tmp_path / "notes"), "--no-progress")
    vindex.forget_cache()
    try:
        with SecondBrain.open(brain_path) as sb:
            query = "topic3 theme5"
            _wait_for_copy(sb, query)
            top = sb.search(query, k=1, mode="dense").hits[0]
            # another process gives that chunk the vector of an unrelated text
            with SecondBrain.open(brain_path) as other, other.brain.write():
                other.brain.conn.execute("DELETE FROM vec_chunks WHERE rowid = ?", (top.id,))
                other.brain.conn.execute(
                    "INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                    (top.id, serialize(ollama.vector("zebra crossings in winter", normalised=True))))
                other.brain.bump_vectors()
            fast = sb.search(query, k=10, mode="dense")
            exact = sb.search(query, k=10, mode="dense", exact=True)
            assert fast.hits[0].id != top.id
            assert [round(h.score, 4) for h in fast.hits] == [round(h.score, 4) for h in exact.hits]
    finally:
        vindex.forget_cache()


def test_the_copy_follows_new_vectors_and_forget(tmp_path, run, ollama, brain_path):
    run("brain", "ingest", _notes(tmp_path / "a", 30), "--no-progress")
    vindex.forget_cache()
    try:
        with SecondBrain.open(brain_path) as sb:
            _wait_for_copy(sb, "topic1")
            # another ingest adds and embeds a note; the long-lived process sees it at once
            (tmp_path / "b").mkdir()
            (tmp_path / "b" / "new.md").write_text("Zebra crossings are painted white in winter.\n")
            run("brain", "ingest", tmp_path / "b", "--no-progress")
            hit = sb.search("zebra crossings winter", k=1, mode="dense").hits[0]
            assert hit.path.endswith("new.md")
            run("brain", "forget", tmp_path / "b")
            hits = sb.search("zebra crossings winter", k=5, mode="dense").hits
            assert all(not h.path.endswith("new.md") for h in hits)
    finally:
        vindex.forget_cache()
