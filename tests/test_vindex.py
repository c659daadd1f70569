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
                other.brain.drop_vectors([top.id])
                other.brain.put_vectors(
                    [(top.id, serialize(ollama.vector("zebra crossings in winter", normalised=True)))])
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


def _bits_in_step(brain_path) -> bool:
    with SecondBrain.open(brain_path) as sb:
        return sb.brain.bits_in_step()


def test_the_sign_bits_follow_every_write_to_the_vectors(tmp_path, run, ollama, brain_path):
    """Ingest, re-ingest, forget, reembed and vacuum each leave vec_bits holding exactly the
    sign bits of the vectors in vec_chunks, with the versions saying so."""
    from faultkit import check_invariants, wrong_bits

    notes = _notes(tmp_path / "a", 30)

    def edit():
        (notes / "n3.md").write_text("A new third note about glaciers.\n")
        (notes / "n4.md").unlink()

    steps = [("ingest", lambda: run("brain", "ingest", notes, "--no-progress"), 30),
             ("re-ingest", lambda: (edit(), run("brain", "ingest", notes, "--no-progress")), 29),
             ("forget", lambda: run("brain", "forget", notes / "n5.md"), 28),
             ("reembed", lambda: run("brain", "reembed", "--no-progress"), 28),
             ("vacuum", lambda: run("brain", "vacuum"), 28)]
    for step, act, vectors in steps:
        act()
        assert _bits_in_step(brain_path), step
        assert check_invariants(brain_path)["vectors"] == vectors, step  # bit ids == vector ids
        assert wrong_bits(brain_path) == 0, step


def _layout(brain_path) -> str:
    with SecondBrain.open(brain_path) as sb:
        return sb.brain.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vec_chunks'").fetchone()[0]


def _as_before_the_bits(brain_path) -> None:
    """Make a brain what one embedded by a version before migration 9 looks like."""
    with SecondBrain.open(brain_path) as sb, sb.brain.write():
        conn = sb.brain.conn
        conn.execute("DROP TABLE vec_bits")
        sb.brain.set_meta("bits_version", None)
        conn.execute("CREATE TEMP TABLE old AS SELECT rowid AS id, embedding FROM vec_chunks")
        conn.execute("DROP TABLE vec_chunks")  # and vec0's default layout, blobs of 1,024
        conn.execute("CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[768])")
        conn.execute("INSERT INTO vec_chunks(rowid, embedding) SELECT id, embedding FROM temp.old")
        conn.execute("PRAGMA user_version = 8")


def test_bits_for_vectors_from_before_them_are_built_in_resumable_steps(tmp_path, run, ollama, brain_path):
    from faultkit import check_invariants, wrong_bits

    run("brain", "ingest", _notes(tmp_path / "a", 30), "--no-progress")
    _as_before_the_bits(brain_path)

    class Stop(Exception):
        pass

    def stop_after_one(done, total):
        raise Stop

    with SecondBrain.open(brain_path) as sb:  # migration 9: the table, empty and not in step
        assert not sb.brain.bits_in_step()
        try:
            sb.brain.build_bits(stop_after_one, step=8)  # a kill after the first step
        except Stop:
            pass
        assert not sb.brain.bits_in_step() and sb.brain.get_meta("bits_built") == "8"
        assert sb.brain.conn.execute("SELECT count(*) FROM vec_bits").fetchone()[0] == 8
    run("brain", "embed")  # the next embed finishes the job
    assert _bits_in_step(brain_path)
    assert check_invariants(brain_path)["vectors"] == 30
    assert wrong_bits(brain_path) == 0
    assert "chunk_size" not in _layout(brain_path)
    run("brain", "vacuum")  # rebuilds the vectors in today's layout; their bits stay right
    assert "chunk_size=16" in _layout(brain_path)
    assert _bits_in_step(brain_path) and wrong_bits(brain_path) == 0
