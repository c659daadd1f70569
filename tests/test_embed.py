"""The embedding backlog, through `llm brain embed` / `reembed` where a user would see it, with
real HTTP to tests/ollama_stub.py and real kills of a real process."""
from __future__ import annotations

import json
import math
import os
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm.cli import cli

sys.path.insert(0, str(Path(__file__).parent))

from llm_secondbrain import config  # noqa: E402
from llm_secondbrain.embed import (  # noqa: E402
    PROBE_TEXT,
    FingerprintMismatch,
    check_fingerprint,
    embed_pending,
    read_fingerprint,
    vec_table_dim,
)
from llm_secondbrain.ollama import ServerError, get_embedder  # noqa: E402
from llm_secondbrain.store import ChunkRow, open_brain  # noqa: E402
from conftest import interruptible  # noqa: E402
from ollama_stub import closed_port_url  # noqa: E402


# -- fixtures and helpers ----------------------------------------------------------------------


def db(env) -> Path:
    return Path(env["SECONDBRAIN_DB"])


def note(i: int) -> str:
    topics = ["cats purr on warm windowsills", "invoices are due at month end",
              "the garden needs water in july", "rust borrow checker lifetimes",
              "sourdough starter feeding schedule"]
    return f"Note {i}: {topics[i % len(topics)]}, item number {i} of the test set."


def make_brain(path: Path, docs: dict[str, list[str]]) -> None:
    with open_brain(path) as brain:
        for doc_path, texts in docs.items():
            brain.stage(path=doc_path, chunks=[ChunkRow(t, n + 1, n + 1) for n, t in enumerate(texts)],
                        project="test", source="files", ts=None)


def brain_cmd(*args, env=None):
    return CliRunner().invoke(cli, ["brain", *args], env=env)


def vectors(path: Path) -> dict[int, list[float]]:
    with open_brain(path, create=False) as brain:
        if not brain.has_vectors_table():
            return {}
        rows = brain.conn.execute("SELECT rowid, embedding FROM vec_chunks").fetchall()
    return {rid: list(struct.unpack(f"{len(blob) // 4}f", blob)) for rid, blob in rows}


def states(path: Path) -> dict[int, tuple[int, str | None]]:
    with open_brain(path, create=False) as brain:
        return {cid: (e, err) for cid, e, err in brain.conn.execute(
            "SELECT id, embedded, embed_error FROM chunks")}


def check_consistent(path: Path) -> dict:
    """The backlog's invariants; returns counts."""
    with open_brain(path, create=False) as brain:
        c = brain.conn
        embedded = {r[0] for r in c.execute("SELECT id FROM chunks WHERE embedded = 1")}
        all_ids = {r[0] for r in c.execute("SELECT id FROM chunks")}
        vec_ids = [r[0] for r in c.execute("SELECT rowid FROM vec_chunks")] if brain.has_vectors_table() else []
        assert len(vec_ids) == len(set(vec_ids)), "a chunk has two vectors"
        assert set(vec_ids) <= all_ids, "a vector without its chunk"
        assert set(vec_ids) == embedded, "embedded = 1 and vectors disagree"
        bad = c.execute("SELECT count(*) FROM chunks WHERE embedded NOT IN (-1, 0, 1)").fetchone()[0]
        assert bad == 0
        pending = c.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0]
        failed = c.execute("SELECT count(*) FROM chunks WHERE embedded = -1").fetchone()[0]
    return {"chunks": len(all_ids), "embedded": len(embedded), "pending": pending, "failed": failed}


# -- the happy path ----------------------------------------------------------------------------


def test_embed_stores_unit_vectors_and_records_the_fingerprint(env, stub):
    make_brain(db(env), {f"/n/{i}.md": [note(i)] for i in range(10)})
    result = brain_cmd("embed", "--batch-size", "4")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # not a terminal: no progress bar
    assert result.stdout.strip() == (
        "embedded 10 chunks (0 reused); 0 failed; 0 remaining — nomic-embed-text, 768 dimensions")
    assert check_consistent(db(env)) == {"chunks": 10, "embedded": 10, "pending": 0, "failed": 0}
    vecs = vectors(db(env))
    assert all(len(v) == 768 and abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-5 for v in vecs.values())
    with open_brain(db(env)) as brain:
        assert read_fingerprint(brain) == {"embed_model": "nomic-embed-text", "embed_dim": 768,
                                           "doc_prefix": "search_document: ", "query_prefix": "search_query: "}
        assert brain.stats()["embed_model"] == "nomic-embed-text"
        # Each chunk's vector is its own nearest neighbour: rowids line up with chunk ids.
        for cid, text in brain.conn.execute("SELECT id, text FROM chunks").fetchall()[:3]:
            q = struct.pack("768f", *vecs[cid])
            top = brain.conn.execute(
                "SELECT rowid FROM vec_chunks WHERE embedding MATCH ? AND k = 1", (q,)).fetchone()[0]
            assert top == cid
    embed_requests = [r for r in stub.requests if r["path"] == "/api/embed"]
    assert all(t.startswith("search_document: ") for r in embed_requests for t in r["input"])
    assert max(len(r["input"]) for r in embed_requests) == 4  # --batch-size
    # Nothing pending: the next run asks the server nothing.
    before = stub.counts["embed"]
    result = brain_cmd("embed", "--json")
    assert json.loads(result.stdout)["remaining"] == 0 and stub.counts["embed"] == before


def test_dimension_comes_from_the_model(env, stub):
    stub.dim = 384
    make_brain(db(env), {"/a.md": [note(1), note(2)]})
    result = brain_cmd("embed", env={"SECONDBRAIN_EMBED_MODEL": "all-minilm"})
    assert result.exit_code == 0, result.output
    assert "all-minilm, 384 dimensions" in result.stdout
    with open_brain(db(env)) as brain:
        assert vec_table_dim(brain) == 384
        assert brain.get_meta("doc_prefix") == "" and brain.get_meta("embed_dim") == "384"
    sent = [t for r in stub.requests for t in r["input"] if t != PROBE_TEXT]
    assert sent == [note(1), note(2)]  # no nomic prefix


def test_same_text_in_two_files_is_embedded_once(env, stub):
    shared = "The same paragraph copied into two notes about the garden."
    make_brain(db(env), {"/a.md": [shared, note(1)], "/b.md": [shared]})
    result = brain_cmd("embed", "--json")
    report = json.loads(result.stdout)
    assert (report["embedded"], report["reused"]) == (2, 1)
    sent = [t for r in stub.requests for t in r["input"]]
    assert sum(shared in t for t in sent) == 1
    # A later copy reuses the stored vector without asking the server.
    make_brain(db(env), {"/c.md": [shared]})
    before = stub.counts["texts"]
    report = json.loads(brain_cmd("embed", "--json").stdout)
    assert (report["embedded"], report["reused"]) == (0, 1) and stub.counts["texts"] == before
    vecs = vectors(db(env))
    with open_brain(db(env)) as brain:
        ids = [r[0] for r in brain.conn.execute("SELECT id FROM chunks WHERE text = ?", (shared,))]
    assert len(ids) == 3 and vecs[ids[0]] == vecs[ids[1]] == vecs[ids[2]]
    assert check_consistent(db(env))["embedded"] == 4


def test_same_text_in_neighbouring_batches_is_sent_once(env, stub):
    shared = "A paragraph that appears in many files, word for word."
    make_brain(db(env), {f"/{i}.md": [shared if i % 2 == 0 else note(i)] for i in range(9)})
    report = json.loads(brain_cmd("embed", "--batch-size", "1", "--json").stdout)
    assert (report["embedded"], report["reused"]) == (5, 4)
    sent = [t for r in stub.requests for t in r["input"]]
    assert sum(shared in t for t in sent) == 1
    assert check_consistent(db(env))["embedded"] == 9


def test_old_server_vectors_are_normalised_in_the_brain(env, stub):
    stub.old_server = True
    make_brain(db(env), {"/a.md": [note(1), note(2), note(3)]})
    result = brain_cmd("embed")
    assert result.exit_code == 0, result.output
    assert stub.counts["embeddings"] == 4  # the dimension probe + one per chunk
    assert all(abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-5 for v in vectors(db(env)).values())
    assert check_consistent(db(env))["embedded"] == 3


def test_500s_are_retried_and_the_run_succeeds(env, stub):
    make_brain(db(env), {"/a.md": [note(1), note(2)]})
    stub.fail_next(2)
    result = brain_cmd("embed")
    assert result.exit_code == 0, result.output
    assert stub.counts["failed"] == 2
    assert check_consistent(db(env))["embedded"] == 2


def test_persistent_500s_stop_the_run_and_lose_nothing(env, stub):
    make_brain(db(env), {"/a.md": [note(i) for i in range(6)]})
    assert brain_cmd("embed", "--batch-size", "3").exit_code == 0
    make_brain(db(env), {"/b.md": [note(i) for i in range(6, 12)]})
    stub.fail_next(100)
    result = brain_cmd("embed", env={"SECONDBRAIN_OLLAMA_RETRIES": "1"})
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "failed 2 times" in result.output
    assert check_consistent(db(env)) == {"chunks": 12, "embedded": 6, "pending": 6, "failed": 0}


def test_a_server_failure_mid_backlog_keeps_every_answer_before_it(env, stub, monkeypatch):
    """When the server gives out, the batches answered before the failing one are written,
    not thrown away with it."""
    total = 1200
    make_brain(db(env), {f"/n/{i // 100}.md": [note(i) for i in range(i, i + 100)] for i in range(0, total, 100)})
    monkeypatch.setenv("SECONDBRAIN_OLLAMA_RETRIES", "1")
    writes = []

    def give_out(chunks: int) -> None:
        writes.append(chunks)
        if len(writes) == 1:
            stub.fail_next(10_000)

    with open_brain(db(env)) as brain:
        with pytest.raises(ServerError):
            embed_pending(brain, config.load(), batch_size=4, on_batch=give_out)
    stub.wait_idle()
    assert len(writes) >= 1
    counts = check_consistent(db(env))
    assert 0 < counts["embedded"] < total and counts["pending"] == total - counts["embedded"]
    assert counts["embedded"] == sum(writes)
    answered = {t.removeprefix("search_document: ") for r in stub.requests for t in r["input"]}
    with open_brain(db(env)) as brain:
        first_pending = brain.conn.execute(
            "SELECT text FROM chunks WHERE embedded = 0 ORDER BY id LIMIT 1").fetchone()[0]
        embedded = {t for (t,) in brain.conn.execute("SELECT text FROM chunks WHERE embedded = 1")}
    assert embedded <= answered
    assert first_pending not in answered  # the failed batch is where the brain stopped


# -- errors the user sees ----------------------------------------------------------------------


def test_unreachable_is_one_line_and_chunks_stay_pending(env, monkeypatch):
    make_brain(db(env), {"/a.md": [note(1)]})
    url = closed_port_url()
    monkeypatch.setenv("OLLAMA_URL", url)
    result = brain_cmd("embed")
    assert result.exit_code == 1
    assert result.output == (
        f'Error: Ollama is not reachable at {url} — start it with "ollama serve" or set OLLAMA_URL\n')
    assert check_consistent(db(env))["pending"] == 1


def test_missing_model_says_ollama_pull(env, stub):
    make_brain(db(env), {"/a.md": [note(1)]})
    stub.missing = {"nomic-embed-text"}
    result = brain_cmd("embed")
    assert result.exit_code == 1
    assert "ollama pull nomic-embed-text" in result.output and result.output.count("\n") == 1
    assert check_consistent(db(env))["pending"] == 1


def test_no_brain_yet(env):
    result = brain_cmd("embed")
    assert result.exit_code == 1 and "no brain at" in result.output


def test_other_model_is_refused_and_reembed_fixes_it(env, stub):
    make_brain(db(env), {"/a.md": [note(i) for i in range(5)]})
    assert brain_cmd("embed").exit_code == 0
    make_brain(db(env), {"/b.md": [note(9)]})
    stub.dim = 384
    other = {"SECONDBRAIN_EMBED_MODEL": "all-minilm"}
    before = stub.counts["texts"]
    result = brain_cmd("embed", env=other)
    assert result.exit_code == 1
    message = result.output.strip()
    assert message.count("\n") == 0
    assert "nomic-embed-text" in message and "all-minilm" in message and "llm brain reembed" in message
    assert stub.counts["texts"] == before  # refused before asking the server anything
    assert check_consistent(db(env)) == {"chunks": 6, "embedded": 5, "pending": 1, "failed": 0}

    result = brain_cmd("reembed", env=other)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("re-embedded 6 chunks") and "all-minilm, 384 dimensions" in result.stdout
    assert check_consistent(db(env))["embedded"] == 6
    assert {len(v) for v in vectors(db(env)).values()} == {384}
    with open_brain(db(env)) as brain:
        assert brain.get_meta("embed_model") == "all-minilm" and brain.get_meta("reembed_target") is None
    assert brain_cmd("embed", env=other).exit_code == 0
    assert brain_cmd("embed").exit_code == 0  # unset, the brain keeps the model that built it
    assert brain_cmd("embed", env={"SECONDBRAIN_EMBED_MODEL": "nomic-embed-text"}).exit_code == 1


def test_changing_the_document_prefix_is_a_different_fingerprint(env, stub):
    make_brain(db(env), {"/a.md": [note(1)]})
    assert brain_cmd("embed").exit_code == 0
    result = brain_cmd("embed", env={"SECONDBRAIN_DOC_PREFIX": ""})
    assert result.exit_code == 1 and "document prefix" in result.output
    # The query prefix does not change stored vectors: no reembed needed.
    assert brain_cmd("embed", env={"SECONDBRAIN_QUERY_PREFIX": "query: "}).exit_code == 0
    s = config.replace(config.load(), query_prefix="query: ")
    with open_brain(db(env)) as brain, get_embedder(s) as emb:
        check_fingerprint(brain, emb)
        assert brain.get_meta("query_prefix") == "query: "


def test_model_that_changes_dimension_under_the_same_name_is_refused(env, stub):
    make_brain(db(env), {"/a.md": [note(1), note(2)]})
    assert brain_cmd("embed").exit_code == 0
    make_brain(db(env), {"/b.md": [note(3), note(4)]})
    stub.dim = 512
    result = brain_cmd("embed")
    assert result.exit_code == 1
    assert "512" in result.output and "768" in result.output and "llm brain reembed" in result.output
    assert check_consistent(db(env)) == {"chunks": 4, "embedded": 2, "pending": 2, "failed": 0}


def test_unreachable_reembed_keeps_the_old_vectors(env, monkeypatch):
    make_brain(db(env), {"/a.md": [note(1)]})
    assert brain_cmd("embed").exit_code == 0
    monkeypatch.setenv("OLLAMA_URL", closed_port_url())
    assert brain_cmd("reembed").exit_code == 1
    assert check_consistent(db(env))["embedded"] == 1


# -- quarantine --------------------------------------------------------------------------------


def test_a_text_the_server_crashes_on_is_quarantined_and_the_rest_embedded(env, stub, monkeypatch):
    """Ollama answers 500 to any request holding some inputs, however often it is asked. The
    batch is split until that text is alone; it is set aside with the server's reason and
    the other 62 chunks are embedded (this used to leave 0 of 63 embedded)."""
    monkeypatch.setenv("SECONDBRAIN_OLLAMA_RETRIES", "1")
    texts = [note(i) for i in range(63)]
    texts[40] = "A paragraph with CRASHME inside, which the runner cannot digest."
    make_brain(db(env), {f"/n/{i}.md": [t] for i, t in enumerate(texts)})
    stub.crash_marker = "CRASHME"
    result = brain_cmd("embed")
    assert result.exit_code == 0, result.output
    assert "embedded 62 chunks" in result.stdout and "1 failed" in result.stdout
    assert check_consistent(db(env)) == {"chunks": 63, "embedded": 62, "pending": 0, "failed": 1}
    with open_brain(db(env)) as brain:
        (error,) = brain.conn.execute("SELECT embed_error FROM chunks WHERE embedded = -1").fetchone()
    assert "llama runner process has terminated" in error and "CRASHME" not in error
    # once the server is mended, --retry-failed finishes it
    stub.crash_marker = None
    assert "embedded 1 chunk " in brain_cmd("embed", "--retry-failed").stdout
    assert check_consistent(db(env))["embedded"] == 63


def test_a_server_that_fails_every_request_stops_the_run_with_one_line(env, stub, monkeypatch):
    monkeypatch.setenv("SECONDBRAIN_OLLAMA_RETRIES", "1")
    make_brain(db(env), {"/a.md": [note(i) for i in range(10)]})
    stub.fail_next(10_000)
    result = brain_cmd("embed")
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "HTTP 500" in result.output
    assert check_consistent(db(env)) == {"chunks": 10, "embedded": 0, "pending": 10, "failed": 0}


def test_bad_chunks_are_quarantined_and_the_rest_embedded(env, stub):
    texts = [note(i) for i in range(20)]
    texts[3] = "This one has a POISON marker and the server refuses it."
    texts[9] = "This one comes back with NANVEC inside its vector."
    texts[14] = "This one comes back WRONGDIM one element short."
    make_brain(db(env), {"/a.md": texts})
    stub.reject_marker, stub.nan_marker, stub.wrong_dim_marker = "POISON", "NANVEC", "WRONGDIM"
    result = brain_cmd("embed", "--batch-size", "8")
    assert result.exit_code == 0, result.output
    assert "embedded 17 chunks" in result.stdout and "3 failed" in result.stdout
    assert check_consistent(db(env)) == {"chunks": 20, "embedded": 17, "pending": 0, "failed": 3}
    with open_brain(db(env)) as brain:
        errors = dict(brain.conn.execute("SELECT text, embed_error FROM chunks WHERE embedded = -1"))
    assert "rejected by the server" in errors[texts[3]]
    assert "not finite" in errors[texts[9]]
    assert "wrong dimension: got 767, expected 768" in errors[texts[14]]
    for text, error in errors.items():
        assert text[:15] not in error and "POISON" not in error
    # The refused batch was split, not retried one by one from the start: few requests.
    assert stub.counts["rejected"] <= 4

    # Later runs skip them...
    before = stub.counts["texts"]
    assert brain_cmd("embed").exit_code == 0 and stub.counts["texts"] == before
    # ...until --retry-failed, once the problem is gone.
    stub.reset()
    result = brain_cmd("embed", "--retry-failed", "--json")
    report = json.loads(result.stdout)
    assert (report["reset"], report["embedded"], report["failed"]) == (3, 3, 0)
    assert check_consistent(db(env)) == {"chunks": 20, "embedded": 20, "pending": 0, "failed": 0}
    with open_brain(db(env)) as brain:
        assert brain.conn.execute("SELECT count(*) FROM chunks WHERE embed_error IS NOT NULL").fetchone()[0] == 0


def test_retry_failed_that_fails_again_stays_quarantined(env, stub):
    make_brain(db(env), {"/a.md": ["POISON one here", note(1)]})
    stub.reject_marker = "POISON"
    assert brain_cmd("embed").exit_code == 0
    result = brain_cmd("embed", "--retry-failed")
    assert result.exit_code == 0 and "1 failed" in result.stdout
    assert check_consistent(db(env))["failed"] == 1


# -- concurrency and other embedders ---------------------------------------------------------


class DeletingEmbedder:
    """A real embedder that, while the server 'thinks', lets another connection delete a
    chunk of the batch (as `forget` or a re-ingest would)."""

    def __init__(self, inner, path, victim_text):
        self.inner, self.path, self.victim = inner, path, victim_text
        self.name, self.doc_prefix, self.query_prefix = inner.name, inner.doc_prefix, inner.query_prefix

    def fingerprint(self):
        return self.inner.fingerprint()

    def embed_documents(self, texts):
        out = self.inner.embed_documents(texts)
        if any(self.victim in t for t in texts):
            with open_brain(self.path) as other:
                other.forget(paths=["/victim.md"])
        return out

    def close(self):
        self.inner.close()


def test_chunk_deleted_during_embedding_leaves_no_orphan_vector(env, stub):
    make_brain(db(env), {"/a.md": [note(1), note(2)], "/victim.md": ["The victim paragraph is here."]})
    settings = config.load()
    with open_brain(db(env)) as brain:
        emb = DeletingEmbedder(get_embedder(settings), db(env), "victim paragraph")
        report = embed_pending(brain, settings, embedder=emb, batch_size=10)
        emb.close()
    assert report.embedded == 2
    assert check_consistent(db(env)) == {"chunks": 2, "embedded": 2, "pending": 0, "failed": 0}


def test_llm_model_embeds_the_backlog(env, stub):
    import llm
    from llm.plugins import pm

    class Tiny(llm.EmbeddingModel):
        model_id = "tiny-backlog-embed"

        def embed_batch(self, items, *, key=None):
            for text in items:
                yield [float(len(text)), 3.0, 4.0]

    class Plugin:
        @llm.hookimpl
        def register_embedding_models(self, register):
            register(Tiny())

    pm.register(Plugin(), name="secondbrain-test-backlog")
    try:
        make_brain(db(env), {"/a.md": [note(1), note(2)]})
        result = brain_cmd("embed", env={"SECONDBRAIN_EMBED_MODEL": "llm:tiny-backlog-embed"})
    finally:
        pm.unregister(name="secondbrain-test-backlog")
    assert result.exit_code == 0, result.output
    assert "llm:tiny-backlog-embed, 3 dimensions" in result.stdout
    assert stub.counts["embed"] == 0
    assert check_consistent(db(env))["embedded"] == 2


def test_seed_brain_with_vectors_but_no_fingerprint_is_adopted(env, stub):
    path = db(env)
    make_brain(path, {"/a.md": [note(1), note(2)]})
    with open_brain(path) as brain, brain.write():
        brain.conn.execute("CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[768])")
        cid = brain.conn.execute("SELECT min(id) FROM chunks").fetchone()[0]
        brain.conn.execute("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                           (cid, struct.pack("768f", *([1.0] + [0.0] * 767))))
        brain.conn.execute("UPDATE chunks SET embedded = 1 WHERE id = ?", (cid,))
    result = brain_cmd("embed")
    assert result.exit_code == 0, result.output
    assert check_consistent(path)["embedded"] == 2
    with open_brain(path) as brain:
        assert brain.get_meta("embed_model") == "nomic-embed-text"



def test_seed_brain_pending_chunks_lose_their_old_vectors_whatever_the_answer(env, stub):
    """The seed script could leave a pending chunk with a vector. The chunk embedded now gets
    exactly one vector, the new one; the chunk the server refuses keeps none."""
    path = db(env)
    make_brain(path, {"/a.md": [note(1), "POISON " + note(2), note(3)]})
    old = struct.pack("768f", *([1.0] + [0.0] * 767))
    with open_brain(path) as brain, brain.write():
        brain.conn.execute("CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[768])")
        ids = [r[0] for r in brain.conn.execute("SELECT id FROM chunks ORDER BY id")]
        for cid in ids[:2]:  # pending, yet holding a vector
            brain.conn.execute("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)", (cid, old))
    stub.reject_marker = "POISON"
    result = brain_cmd("embed", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["embedded"], report["failed"]) == (2, 1)
    vecs = vectors(path)
    assert set(vecs) == {ids[0], ids[2]}
    assert vecs[ids[0]][0] != 1.0
    assert states(path)[ids[1]][0] == -1
    check_consistent(path)


# -- kills -------------------------------------------------------------------------------------


def _spawn(env: dict, *args) -> subprocess.Popen:
    full = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "llm", "brain", *args, "--no-progress"],
                            env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=interruptible)


def _embedded_count(path: Path, model: str | None = None) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        if model is not None:
            row = conn.execute("SELECT value FROM meta WHERE key = 'embed_model'").fetchone()
            if not row or row[0] != model:
                return 0
        return conn.execute("SELECT count(*) FROM chunks WHERE embedded = 1").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def _kill_when(proc: subprocess.Popen, path: Path, at_least: int, model: str | None = None,
               timeout: float = 30, sig: int = signal.SIGKILL) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = _embedded_count(path, model)
        if n >= at_least:
            proc.send_signal(sig)
            proc.wait(timeout=30)
            return n
        if proc.poll() is not None:
            raise AssertionError(f"finished before the kill: {proc.stderr.read().decode()}")
        time.sleep(0.01)
    proc.kill()
    raise AssertionError("the embedding process made no progress")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_kill_mid_backlog_then_resume(env, stub, sig):
    path = db(env)
    total = 240
    make_brain(path, {f"/n/{i // 10}.md": [note(i) for i in range(i, i + 10)] for i in range(0, total, 10)})
    stub.delay = 0.02
    proc = _spawn(env, "embed", "--batch-size", "4")
    _kill_when(proc, path, at_least=40, sig=sig)
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:  # as ingest: what was done, in one line, and 130
        err = proc.stderr.read().decode()
        assert proc.returncode == 130 and "Traceback" not in err and "Aborted" not in err, err
        assert re.search(r"^interrupted; embedded \d+ chunks .*\d+ remaining", err, re.M), err
    after_kill = check_consistent(path)
    assert 40 <= after_kill["embedded"] < total and after_kill["pending"] == total - after_kill["embedded"]

    stub.delay = 0.0
    stub.wait_idle()  # the killed process may have left a request in flight
    stub.requests.clear()
    result = brain_cmd("embed", "--batch-size", "16")
    assert result.exit_code == 0, result.output
    assert check_consistent(path) == {"chunks": total, "embedded": total, "pending": 0, "failed": 0}
    # It continued where it stopped: only what was pending was sent.
    assert sum(len(r["input"]) for r in stub.requests) == total - after_kill["embedded"]


def test_sigkill_mid_reembed_then_resume(env, stub):
    path = db(env)
    total = 160
    make_brain(path, {f"/n/{i // 10}.md": [note(i) for i in range(i, i + 10)] for i in range(0, total, 10)})
    assert brain_cmd("embed", "--batch-size", "64").exit_code == 0
    other = {**env, "SECONDBRAIN_EMBED_MODEL": "all-minilm"}
    stub.dim = 384
    stub.delay = 0.02
    proc = _spawn(other, "reembed", "--batch-size", "4")
    _kill_when(proc, path, at_least=30, model="all-minilm")
    mid = check_consistent(path)
    assert 30 <= mid["embedded"] < total
    with open_brain(path) as brain:
        assert brain.get_meta("reembed_target") is not None
        assert brain.get_meta("embed_model") == "all-minilm" and vec_table_dim(brain) == 384

    stub.delay = 0.0
    stub.wait_idle()  # the killed process may have left a request in flight
    stub.requests.clear()
    result = brain_cmd("reembed", "--batch-size", "32", env={"SECONDBRAIN_EMBED_MODEL": "all-minilm"})
    assert result.exit_code == 0, result.output
    # Resumed, not restarted: only the chunks still pending were sent.
    assert sum(len(r["input"]) for r in stub.requests) == total - mid["embedded"]
    assert check_consistent(path) == {"chunks": total, "embedded": total, "pending": 0, "failed": 0}
    assert {len(v) for v in vectors(path).values()} == {384}
    with open_brain(path) as brain:
        assert brain.get_meta("reembed_target") is None
    # Once finished, reembed again means: rebuild everything.
    stub.requests.clear()
    assert brain_cmd("reembed", "--batch-size", "64", env={"SECONDBRAIN_EMBED_MODEL": "all-minilm"}).exit_code == 0
    assert sum(len(r["input"]) for r in stub.requests) == total + 1  # probe + every chunk


def test_fingerprint_mismatch_exception_is_one_line(env, stub):
    make_brain(db(env), {"/a.md": [note(1)]})
    assert brain_cmd("embed").exit_code == 0
    s = config.load({**os.environ, "SECONDBRAIN_EMBED_MODEL": "mxbai-embed-large"})
    with open_brain(db(env)) as brain, get_embedder(s) as emb:
        with pytest.raises(FingerprintMismatch) as info:
            embed_pending(brain, s, embedder=emb)
    assert "\n" not in str(info.value)
