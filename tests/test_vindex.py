"""The dense search (vindex): the sign bits kept beside the vectors, the paths that search them
(in SQL, or from a long-lived process's copy in memory) and the plan that picks one. Every path
must rank as vec0's exact scan does, whatever another process changed meanwhile."""
from __future__ import annotations

import struct
import time

from llm_secondbrain import SecondBrain
from llm_secondbrain.ollama import serialize
from llm_secondbrain.recall import vindex


def _notes(folder, n=60):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"n{i}.md").write_text(f"Note {i} about topic{i % 7} and theme{i % 11}, item {i * 37 % 101}.\n")
    return folder


def _query(ollama, text: str) -> bytes:
    return serialize(ollama.vector(text, normalised=True))


def _same(found, exact) -> None:
    """The same distances, and the same ids above the last distance (ties at the cut may go
    either way)."""
    assert [round(d, 5) for _, d in found] == [round(d, 5) for _, d in exact]
    last = round(exact[-1][1], 5)
    assert {i for i, d in found if round(d, 5) < last} == {i for i, d in exact if round(d, 5) < last}


def test_every_path_ranks_as_the_exact_scan_does(tmp_path, run, ollama, brain_path):
    """Bits in SQL and bits in memory, with and without a filter, give vec0's exact top-k; the
    Hamming step itself returns the `want` nearest bit strings."""
    notes = _notes(tmp_path / "fast", 150)
    run("brain", "ingest", notes, "--no-progress")
    vindex.forget_cache()
    try:
        with SecondBrain.open(brain_path) as sb:
            conn = sb.brain.conn
            for text in ("topic3 theme5", "item 74 about topic1", "note 12"):
                q = _query(ollama, text)
                for where, params in (("", []), ("c.path GLOB ?", ["*/n1*"])):
                    exact = vindex.nearest(conn, q, 10, where, params, exact=True).found
                    for path in ("bits", "memory"):
                        _same(vindex.nearest(conn, q, 10, where, params, path=path).found, exact)
                stored = dict(conn.execute("SELECT id, bits FROM vec_bits"))
                qbits = int.from_bytes(vindex.query_bits(conn, q), "little")
                hamming = {i: (int.from_bytes(b, "little") ^ qbits).bit_count() for i, b in stored.items()}
                for want in (5, 20, 60):  # (with a sample of 16 rows, the SQL step cuts)
                    nearest = sorted(hamming.values())[:want]
                    for picked in (vindex.sql_candidates(conn, q, want), vindex.sql_candidates(conn, q, want, sample=16),
                                   vindex.get(conn).search(vindex.query_bits(conn, q), want)):
                        assert sorted(hamming[i] for i in picked) == nearest
                # in memory: the 8 x 5 nearest by Hamming distance, then the 5 whose signs agree
                # best with the query's values
                values = struct.unpack(f"{len(q) // 4}f", q)
                signs = {i: [1 if int.from_bytes(b, "little") >> k & 1 else -1 for k in range(len(values))]
                         for i, b in stored.items()}
                agree = {i: round(sum(v * s for v, s in zip(values, signs[i])), 4)
                         for i in vindex.get(conn).search(vindex.query_bits(conn, q), 40)}
                picked = vindex.get(conn).shortlist(vindex.query_bits(conn, q), q, 5)
                assert sorted(agree[i] for i in picked) == sorted(agree.values())[-5:]  # (ties: by score)
    finally:
        vindex.forget_cache()


def _wait_for_copy(sb: SecondBrain) -> vindex.BitIndex:
    """Ask until the background copy is current (a long-lived process's later queries)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        index = vindex.warm(sb.brain.conn)
        if index is not None:
            return index
        time.sleep(0.05)
    raise AssertionError("the in-memory copy was never built")


def test_a_vector_replaced_by_another_process_is_never_ranked_by_its_old_value(tmp_path, run, ollama, brain_path):
    """Another process replaces one chunk's vector under the same chunk id (as a re-scrub or a
    re-embed does) while this process holds a copy of the bits: the copy is stale at once,
    and the next query ranks by the new vector, exactly as a scan of the brain does."""
    run("brain", "ingest", _notes(tmp_path / "notes"), "--no-progress")
    vindex.forget_cache()
    vindex.keep_warm()
    try:
        with SecondBrain.open(brain_path) as sb:
            q = _query(ollama, "topic3 theme5")
            old = _wait_for_copy(sb)
            top = vindex.nearest(sb.brain.conn, q, 1, path="memory").found[0][0]
            with SecondBrain.open(brain_path) as other, other.brain.write():
                other.brain.drop_vectors([top])
                other.brain.put_vectors([(top, _query(ollama, "zebra crossings in winter"))])
            assert vindex.warm(sb.brain.conn) is not old  # never the stale copy
            exact = vindex.nearest(sb.brain.conn, q, 10, exact=True).found
            assert exact[0][0] != top
            for path in ("bits", "memory"):
                _same(vindex.nearest(sb.brain.conn, q, 10, path=path).found, exact)
    finally:
        vindex.forget_cache()


def test_the_copy_follows_new_vectors_and_forget(tmp_path, run, ollama, brain_path):
    run("brain", "ingest", _notes(tmp_path / "a", 30), "--no-progress")
    vindex.forget_cache()
    vindex.keep_warm()
    try:
        with SecondBrain.open(brain_path) as sb:
            _wait_for_copy(sb)
            # another ingest adds and embeds a note; the long-lived process sees it at once
            (tmp_path / "b").mkdir()
            (tmp_path / "b" / "new.md").write_text("Zebra crossings are painted white in winter.\n")
            run("brain", "ingest", tmp_path / "b", "--no-progress")
            q = _query(ollama, "Zebra crossings are painted white in winter.")
            new = vindex.nearest(sb.brain.conn, q, 1, path="memory").found[0][0]
            assert sb.brain.conn.execute("SELECT path FROM chunks WHERE id = ?", (new,)).fetchone()[0].endswith("new.md")
            run("brain", "forget", tmp_path / "b")
            assert new not in [i for i, _ in vindex.nearest(sb.brain.conn, q, 5, path="memory").found]
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

    said = run("brain", "recall", "topic3 theme5", "--explain").output
    assert "[dense: exact scan (the sign-bit index is not in step with the vectors yet" in said
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
    said = run("brain", "recall", "topic3 theme5", "--explain").output
    assert "[dense: exact scan (a small brain: up to 30 vectors scan faster than a bit search)]" in said
    assert check_invariants(brain_path)["vectors"] == 30
    assert wrong_bits(brain_path) == 0
    assert "chunk_size" not in _layout(brain_path)
    run("brain", "vacuum")  # rebuilds the vectors in today's layout; their bits stay right
    assert "chunk_size=16" in _layout(brain_path)
    assert _bits_in_step(brain_path) and wrong_bits(brain_path) == 0
