"""Faults: SIGKILL at seeded points of ingest and embed, Ollama failing mid-run, a full disk and
a read-only brain. After each, the brain must be consistent, keep what it held, and the next
run must finish in the state an uninterrupted run reaches (issue 7)."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from llm.cli import cli

from conftest import llm_cmd, unprivileged
from faultkit import (Corpus, check_invariants, connect, content, knn_ids, ledger, vectors_by_chunk,
                      wrong_bits)

CRASH_SEED = 7_2026
MAX_CHARS = "300"  # a few paragraphs per chunk: many chunks per file, so replaces are partial


@pytest.fixture(scope="module")
def stub(_server):
    """The session's stub for this module (kills and faults leave requests in flight)."""
    _server.wait_idle()
    _server.reset()
    _server.keep_requests = False
    yield _server
    _server.wait_idle()
    _server.reset()
    _server.keep_requests = True


def cli_env(brain: Path, url: str, user: Path, **extra) -> dict:
    return {"SECONDBRAIN_DB": str(brain), "OLLAMA_URL": url, "LLM_USER_PATH": str(user),
            "SECONDBRAIN_MAX_CHARS": MAX_CHARS, **extra}


def invoke(args: list, env: dict):
    """`llm ...` in-process with `env` set for the call."""
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=True)


def one_line_error(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), text
    assert "Traceback" not in text
    return lines[0]


# =================================================================================================
# Crash anywhere


class _Poll:
    """Read-only peeks at a brain another process is writing (never takes the write lock).
    One connection, each query its own short read transaction."""

    def __init__(self, path: Path):
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def __call__(self, sql: str, params=()) -> int | None:
        if not self.path.exists():
            return None
        try:
            if self.conn is None:
                self.conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=0.5)
            return self.conn.execute(sql, params).fetchall()[0][0]
        except sqlite3.Error:
            self.close()
            return None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _phase_a(peek: _Poll, n_files: int, total: int) -> str:
    files = peek("SELECT count(*) FROM files")
    if not files:
        return "startup"
    if files < n_files:
        return "staging+fts"
    embedded = peek("SELECT count(*) FROM chunks WHERE embedded = 1") or 0
    if embedded == 0:
        return "staged"
    return "vectors" if embedded < total else "closing"


def _phase_b(peek: _Poll, corpus: Corpus, root: Path, v2_shas: dict[str, str], pending_total: int) -> str:
    staged = sum(
        1 for rel, sha in v2_shas.items()
        if peek("SELECT count(*) FROM files WHERE path = ? AND content_sha = ?", (str(root / rel), sha)))
    left = sum(1 for rel in corpus.deleted
               if peek("SELECT count(*) FROM files WHERE path = ?", (str(root / rel),)))
    if staged == 0 and left == len(corpus.deleted):
        return "startup"
    if staged < len(v2_shas):
        return "replace+fts"
    if left:
        return "delete-vanished"
    pending = peek("SELECT count(*) FROM chunks WHERE embedded = 0") or 0
    if pending == pending_total:
        return "staged"
    return "vectors" if pending else "closing"


def _left(peek: _Poll, root: Path, corpus: Corpus) -> int:
    """How many of the deleted files the brain's ledger still lists."""
    gone = [str(root / rel) for rel in corpus.deleted]
    n = peek(f"SELECT count(*) FROM files WHERE path IN ({','.join('?' * len(gone))})", gone)
    return len(gone) if n is None else n


def _killed_run(cmd, env, trigger, extra_delay: float, classify, timeout: float = 120) -> str | None:
    """Start `cmd`, wait until trigger() is true (or the seeded time passes), freeze the
    process, note the phase it is in, SIGKILL it. None when it finished first."""
    proc = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while not trigger():
            if proc.poll() is not None:
                out, err = proc.communicate()
                assert proc.returncode == 0, err.decode()
                return None
            if time.monotonic() > deadline:
                raise AssertionError("the run made no progress")
            time.sleep(0.004)
        time.sleep(extra_delay)
        if proc.poll() is not None:
            proc.communicate()
            return None
        proc.send_signal(signal.SIGSTOP)
        phase = classify()
        proc.kill()
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        return phase
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.fixture(scope="module")
def crash_world(tmp_path_factory, stub):
    """Two copies of the seeded corpus (one for the first ingest, one that gets edited), the
    reference states of uninterrupted runs and their durations."""
    base = tmp_path_factory.mktemp("crash")
    corpus = Corpus(seed=CRASH_SEED, n_files=30, paras=6, changed=8, deleted=6, added=12,
                    short_deleted=40)
    user = base / "llm"
    user.mkdir()
    stub.delay = 0.02  # embedding takes a while, so kills land among the vector writes too
    world = {"base": base, "corpus": corpus, "user": user}

    root_a = base / "first" / "notes"
    corpus.write_v1(root_a)
    ref_a = base / "ref-a" / "brain.db"
    env = cli_env(ref_a, stub.url, user)
    t0 = time.monotonic()
    res = subprocess.run(llm_cmd("brain", "ingest", root_a, "--no-progress", "--json"),
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    world["dur_a"] = time.monotonic() - t0
    assert res.returncode == 0, res.stderr
    check_invariants(ref_a)
    world.update(root_a=root_a, ref_a=ref_a, state_a=content(ref_a), vec_a=vectors_by_chunk(ref_a),
                 ledger_a=ledger(ref_a))
    assert {row[3] for row in world["state_a"]} == {1}  # all embedded

    root_b = base / "second" / "notes"
    corpus.write_v1(root_b)
    template = base / "template" / "brain.db"
    res = invoke(["brain", "ingest", root_b, "--no-progress"], cli_env(template, stub.url, user))
    assert res.exit_code == 0, res.output
    corpus.apply_edit(root_b)
    ref_b = base / "ref-b" / "brain.db"
    ref_b.parent.mkdir(mode=0o700)
    shutil.copy(template, ref_b)
    t0 = time.monotonic()
    res = subprocess.run(llm_cmd("brain", "ingest", root_b, "--no-progress", "--json"),
                         env={**os.environ, **cli_env(ref_b, stub.url, user)},
                         capture_output=True, text=True, timeout=300)
    world["dur_b"] = time.monotonic() - t0
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["files_removed"] == len(corpus.deleted) and summary["chunks_removed"] > 0
    assert summary["chunks_kept"] > 0 and summary["chunks_added"] > 0
    check_invariants(ref_b)
    world.update(root_b=root_b, template=template, ref_b=ref_b, state_b=content(ref_b),
                 vec_b=vectors_by_chunk(ref_b), ledger_b=ledger(ref_b),
                 pending_b=summary["chunks_added"])
    # the ledger's keyed hash of each changed file (store.Brain.content_digest): every copy of
    # the template shares its salt
    salt = bytes.fromhex(sqlite3.connect(ref_b).execute(
        "SELECT value FROM meta WHERE key = 'name_salt'").fetchone()[0])
    world["v2_shas"] = {rel: hmac.new(salt, b"content\0" + (root_b / rel).read_bytes(), hashlib.sha256).hexdigest()[:32]
                        for rel in corpus.changed + sorted(r for r in corpus.edit if "added" in r)}
    yield world
    stub.delay = 0.0


def _same_as_reference(brain: Path, state: set, vecs: dict, ledger_ref: dict) -> None:
    after = content(brain)
    assert after == state, (
        f"differs from an uninterrupted run: {len(after - state)} extra, {len(state - after)} missing; "
        f"e.g. extra {sorted(after - state)[:1]} missing {sorted(state - after)[:1]}")
    got = vectors_by_chunk(brain)
    assert got.keys() == vecs.keys()
    assert all(got[k] == vecs[k] for k in vecs), "a chunk holds another text's vector"
    assert wrong_bits(brain) == 0
    counts = check_invariants(brain)
    assert knn_ids(brain, counts["chunks"] + 5) == {r[0] for r in connect(brain).execute(
        "SELECT id FROM chunks WHERE embedded = 1")}
    assert ledger(brain) == ledger_ref


def _plan(rng: random.Random, world: dict, which: str, full: bool) -> list[tuple[str, object]]:
    """Seeded kill points: (kind, parameter). Progress triggers spread the kills over every
    phase whatever the machine's speed; plain seeded times cover whatever lies between. The
    suite kills once or twice per kind of point (every phase that writes is still hit); `-m
    slow` runs the full plan, 12 + 11 points."""
    c: Corpus = world["corpus"]

    def n(count: int) -> int:
        return count if full else max(1, (count + 1) // 3)
    if which == "a":
        n_files, total = len(c.v1), len(world["state_a"])
        plan = [("files>=", rng.randint(1, n_files - 1)) for _ in range(n(5))]
        plan += [("embedded>=", rng.randint(1, total - 1)) for _ in range(n(5))]
        plan += [("time", rng.uniform(0, world["dur_a"])) for _ in range(n(2))]
    else:
        plan = [("replaced>=", rng.randint(1, len(world["v2_shas"]) - 1)) for _ in range(n(3))]
        plan += [("deleted>=", rng.randint(1, len(c.deleted) - 1)) for _ in range(n(3))]
        # vectors are written 32 at a time: a kill after the first batch lands among the rest
        plan += [("b-embedded>=", rng.randint(1, world["pending_b"] - 33)) for _ in range(n(3))]
        plan += [("time", rng.uniform(0, world["dur_b"])) for _ in range(n(2))]
    return plan


@pytest.mark.slow
@pytest.mark.parametrize("which", ["a", "b"], ids=["first-ingest+embed", "reingest-changed+deleted"])
def test_sigkill_at_seeded_points_then_resume(crash_world, stub, which, request):
    """SIGKILL `llm brain ingest` (ingest, then embed, in one process) at seeded points; after
    each kill the brain is consistent, and the next run ends where an uninterrupted run does.
    'a' is a first ingest of a folder (staging + FTS triggers, then vector writes); 'b' a
    re-ingest after files were changed, deleted and added (partial replaces, deletes of
    chunks with their FTS rows and vectors, vanished files, then new vectors)."""
    w = crash_world
    c: Corpus = w["corpus"]
    rng = random.Random(f"{CRASH_SEED}-{which}")
    root = w["root_a"] if which == "a" else w["root_b"]
    phases: Counter = Counter()
    full = "slow" in request.config.getoption("markexpr")
    kills = 0
    for i, (kind, param) in enumerate(_plan(rng, w, which, full)):
        brain = w["base"] / f"trial-{which}{i:02d}" / "brain.db"

        def fresh():
            shutil.rmtree(brain.parent, ignore_errors=True)
            if which == "b":
                brain.parent.mkdir(mode=0o700)
                shutil.copy(w["template"], brain)

        fresh()
        env = cli_env(brain, stub.url, w["user"])
        peek = _Poll(brain)
        started = time.monotonic()
        if which == "a":
            classify = lambda: _phase_a(peek, len(c.v1), len(w["state_a"]))  # noqa: E731
        else:
            classify = lambda: _phase_b(peek, c, root, w["v2_shas"], w["pending_b"])  # noqa: E731
        if kind == "time":
            trigger = lambda: time.monotonic() - started >= param  # noqa: E731
        elif kind == "files>=":
            trigger = lambda: (peek("SELECT count(*) FROM files") or 0) >= param  # noqa: E731
        elif kind == "embedded>=":
            trigger = lambda: (peek("SELECT count(*) FROM chunks WHERE embedded = 1") or 0) >= param  # noqa: E731
        elif kind == "replaced>=":
            pairs = [x for rel, sha in w["v2_shas"].items() for x in (str(root / rel), sha)]
            sql = ("SELECT count(*) FROM files WHERE (path, content_sha) IN (VALUES "
                   + ",".join(["(?, ?)"] * len(w["v2_shas"])) + ")")
            trigger = lambda: (peek(sql, pairs) or 0) >= param  # noqa: E731
        elif kind == "deleted>=":
            trigger = lambda: len(c.deleted) - _left(peek, root, c) >= param  # noqa: E731
        else:  # b-embedded>=: vanished files gone, then vectors written for `param` new chunks
            kept = len(w["state_b"]) - w["pending_b"]
            trigger = lambda: _left(peek, root, c) == 0 and (peek(  # noqa: E731
                "SELECT count(*) FROM chunks WHERE embedded = 1") or 0) >= kept + param
        extra = 0.0 if kind == "deleted>=" else rng.uniform(0, 0.01)  # that phase is short
        phase = _killed_run(llm_cmd("brain", "ingest", root, "--no-progress", "--json"), env,
                            trigger, extra, classify)
        while phase is None and kind == "time" and param > 0.05:
            # this run was quicker than the measured one: kill the next run earlier
            param /= 2
            peek.close()
            fresh()
            started = time.monotonic()
            phase = _killed_run(llm_cmd("brain", "ingest", root, "--no-progress", "--json"), env,
                                trigger, 0.0, classify)
        peek.close()
        if phase is None:
            phases["finished first"] += 1
        else:
            kills += 1
            phases[phase] += 1
            check_invariants(brain)  # consistent right after the kill, before any repair
        res = invoke(["brain", "ingest", root, "--no-progress", "--json"], env)
        assert res.exit_code == 0, f"run after kill {i} ({kind} {param}, {phase}): {res.output}"
        if which == "a":
            _same_as_reference(brain, w["state_a"], w["vec_a"], w["ledger_a"])
        else:
            _same_as_reference(brain, w["state_b"], w["vec_b"], w["ledger_b"])
        shutil.rmtree(brain.parent)
    print(f"\nkills ({which}): {kills}, by phase at the kill: {dict(phases)}")
    # a progress trigger met only as the run exits may find it gone
    assert kills >= len(_plan(random.Random(f"{CRASH_SEED}-{which}"), w, which, full)) - 1, dict(phases)
    # The seeded triggers put kills inside the phases that write.
    if which == "a":
        assert phases["staging+fts"] >= 1 and phases["vectors"] >= 1, dict(phases)
    else:
        assert phases["replace+fts"] + phases["delete-vanished"] >= 1 and phases["vectors"] >= 1, dict(phases)


# =================================================================================================
# Ollama faults mid-run (what tests/test_embed.py does not cover already: garbage and truncated
# JSON, an HTML page from a proxy, too few vectors, vectors of strings, persistent resets, a
# server too slow for the timeout, the model changing dimension mid-run, the server killed).


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a client gone mid-answer is expected
        pass


class FaultProxy:
    """An HTTP proxy in front of the stub: forwards the first `good` embedding requests, then
    answers every later one according to `mode`."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.good = 10**9
        self.mode = "pass"
        self.seen = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _reply(self, code: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _forward(self, method: str, body: bytes | None) -> httpx.Response:
                with httpx.Client(base_url=proxy.upstream, timeout=60, trust_env=False) as client:
                    return client.request(method, self.path, content=body,
                                          headers={"Content-Type": "application/json"})

            def do_GET(self):
                r = self._forward("GET", None)
                self._reply(r.status_code, r.content, r.headers.get("content-type", "text/plain"))

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy.lock:
                    proxy.seen += 1
                    faulty = proxy.seen > proxy.good
                mode = proxy.mode if faulty else "pass"
                if mode == "reset":
                    self.close_connection = True
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.connection.close()
                    return
                if mode == "slow":
                    time.sleep(3)
                if mode == "garbage":
                    return self._reply(200, b'{"model": "nomic-embed-text", "embeddings": [[0.01, 0.2')
                if mode == "html":
                    return self._reply(200, b"<html><body>Welcome to nginx!</body></html>", "text/html")
                if mode == "proxy-502":
                    return self._reply(502, b"<html><body>502 Bad Gateway</body></html>", "text/html")
                r = self._forward("POST", body)
                if mode in ("pass", "slow") or r.status_code != 200:
                    return self._reply(r.status_code, r.content, r.headers.get("content-type", "text/plain"))
                data = r.json()
                if mode == "short":
                    data["embeddings"] = data["embeddings"][:-1]
                elif mode == "strings":
                    data["embeddings"] = [["%.3f" % x for x in v] for v in data["embeddings"]]
                elif mode == "wrong-dim":
                    data["embeddings"] = [v[:-1] for v in data["embeddings"]]
                self._reply(200, json.dumps(data).encode())

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _notes(root: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    from faultkit import paragraph, write_files

    write_files(root, {f"n{i:03d}.md": paragraph(rng, f"{root.name} note {i}") + "\n" for i in range(n)})
    return root


@pytest.fixture
def fault_brain(tmp_path, stub):
    """A brain holding 12 embedded chunks (an earlier run) and 40 pending ones, behind a proxy."""
    stub.delay = 0.0
    proxy = FaultProxy(stub.url)
    brain = tmp_path / "brain" / "brain.db"
    env = cli_env(brain, proxy.url, tmp_path / "llm", SECONDBRAIN_OLLAMA_RETRIES="1",
                  SECONDBRAIN_OLLAMA_TIMEOUT="1")
    old, new = _notes(tmp_path / "old", 12, 1), _notes(tmp_path / "new", 40, 2)
    assert invoke(["brain", "ingest", old, "--no-progress"], env).exit_code == 0
    assert invoke(["brain", "ingest", new, "--no-embed"], env).exit_code == 0
    before = check_invariants(brain)
    assert (before["embedded"], before["pending"]) == (12, 40)
    yield {"brain": brain, "env": env, "proxy": proxy, "new": new,
           "vectors": vectors_by_chunk(brain), "texts": content(brain)}
    proxy.close()


FAULTS = {
    # mode: (what the one-line message says, or None when the bad chunks are quarantined)
    "garbage": "not JSON",
    "html": "not JSON",
    "proxy-502": "HTTP 502",
    "short": "returned 7 vectors for 8 inputs",
    "reset": "dropped the connection",
    "slow": "timed out",
    "wrong-dim": "llm brain reembed",
    "strings": None,
}


@pytest.mark.parametrize("mode", list(FAULTS))
def test_ollama_fault_mid_run_is_one_line_and_loses_nothing(fault_brain, mode):
    fb, proxy = fault_brain, fault_brain["proxy"]
    proxy.seen, proxy.good, proxy.mode = 0, 2, mode  # two batches of 8 go through, then the fault
    res = invoke(["brain", "embed", "--batch-size", "8", "--no-progress"], fb["env"])
    after = check_invariants(fb["brain"])
    expected = FAULTS[mode]
    if expected is None and res.exit_code == 0:  # bad vectors quarantined, each with a reason
        assert after["failed"] == 24 and after["embedded"] == 12 + 16
        conn = connect(fb["brain"])
        reasons = {r[0] for r in conn.execute("SELECT embed_error FROM chunks WHERE embedded = -1")}
        assert reasons and all(r and len(r) < 200 for r in reasons)
    else:  # (a server answering vectors of strings may also be refused as a whole)
        assert res.exit_code == 1
        line = one_line_error(res.stderr)
        assert expected is None or expected in line, line
        assert after["embedded"] == 12 + 16 and after["pending"] == 40 - 16 and after["failed"] == 0
    # Nothing already stored is lost: the earlier vectors and every chunk are intact.
    got = vectors_by_chunk(fb["brain"])
    assert all(got[k] == v for k, v in fb["vectors"].items())
    assert {r[:3] for r in content(fb["brain"])} == {r[:3] for r in fb["texts"]}
    # Once the server behaves again, the next run finishes the backlog.
    proxy.mode = "pass"
    args = ["brain", "embed", "--no-progress"] + (["--retry-failed"] if expected is None else [])
    res = invoke(args, fb["env"])
    assert res.exit_code == 0, res.output
    assert check_invariants(fb["brain"])["embedded"] == 52
    assert {r[:3] for r in content(fb["brain"])} == {r[:3] for r in fb["texts"]}


def test_garbage_from_ollama_during_ingest_still_stores_everything(fault_brain):
    """The ingest half of `llm brain ingest` succeeds whatever the embedder does."""
    fb, proxy = fault_brain, fault_brain["proxy"]
    more = _notes(fb["new"].parent / "more", 10, 3)
    proxy.seen, proxy.good, proxy.mode = 0, 0, "garbage"
    res = invoke(["brain", "ingest", more, "--no-progress", "--json"], fb["env"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["chunks_added"] == 10
    note = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(note) == 1 and "50 chunks stored, embedding pending" in note[0] and "not JSON" in note[0]
    assert check_invariants(fb["brain"])["pending"] == 50


@pytest.mark.slow
def test_ollama_killed_mid_run_then_restarted(tmp_path):
    """The embedding server dies (SIGKILL) while `llm brain embed` runs: one line, the vectors
    written so far stay, and once it is back the next run finishes."""
    port_file = tmp_path / "port"
    stub_cmd = [sys.executable, str(Path(__file__).parent / "ollama_stub.py"), "--delay", "0.05",
                "--port-file", str(port_file)]

    def start(port: int = 0) -> subprocess.Popen:
        port_file.unlink(missing_ok=True)
        proc = subprocess.Popen(stub_cmd + ["--port", str(port)], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not port_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "stub did not start"
            time.sleep(0.05)
        return proc

    server = start()
    port = int(port_file.read_text())
    brain = tmp_path / "brain" / "brain.db"
    env = cli_env(brain, f"http://127.0.0.1:{port}", tmp_path / "llm", SECONDBRAIN_OLLAMA_RETRIES="2")
    notes = _notes(tmp_path / "notes", 80, 4)
    try:
        assert invoke(["brain", "ingest", notes, "--no-embed"], env).exit_code == 0
        proc = subprocess.Popen(llm_cmd("brain", "embed", "--batch-size", "4", "--no-progress"),
                                env={**os.environ, **env}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        peek = _Poll(brain)
        deadline = time.monotonic() + 120
        while (peek("SELECT count(*) FROM chunks WHERE embedded = 1") or 0) < 12:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.01)
        peek.close()
        server.kill()
        server.wait()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, (out, err)
        line = one_line_error(err)
        assert "Ollama is not reachable" in line or "dropped the connection" in line, line
        mid = check_invariants(brain)
        assert 12 <= mid["embedded"] < 80 and mid["embedded"] + mid["pending"] == 80
        kept = vectors_by_chunk(brain)
        server = start(port)
        res = invoke(["brain", "embed", "--no-progress"], env)
        assert res.exit_code == 0, res.output
        assert check_invariants(brain)["embedded"] == 80
        got = vectors_by_chunk(brain)
        assert all(got[k] == v for k, v in kept.items())
    finally:
        server.kill()
        server.wait()


# =================================================================================================
# A full disk and a read-only brain.


def _no_bigger_than(limit: int):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@pytest.fixture
def held(tmp_path, stub):
    """A brain holding a small embedded folder, and the reference state of ingesting a big
    folder after it without limits."""
    stub.delay = 0.0
    user = tmp_path / "llm"
    small = _notes(tmp_path / "small", 5, 5)
    rng = random.Random(6)
    from faultkit import paragraph, write_files

    big = tmp_path / "big"
    write_files(big, {f"b{i:03d}.md": "\n\n".join(paragraph(rng, f"big {i} p{p}", 30, 60)
                                                 for p in range(6)) + "\n" for i in range(150)})
    ref = tmp_path / "ref" / "brain.db"
    for path in (ref, tmp_path / "brain" / "brain.db"):
        assert invoke(["brain", "ingest", small, "--no-progress"], cli_env(path, stub.url, user)).exit_code == 0
    brain = tmp_path / "brain" / "brain.db"
    held_state = content(brain)
    assert invoke(["brain", "ingest", big, "--no-progress"], cli_env(ref, stub.url, user)).exit_code == 0
    return {"brain": brain, "big": big, "user": user, "held": held_state, "ref": content(ref),
            "vectors": vectors_by_chunk(brain), "env": cli_env(brain, stub.url, user)}


def _whole_files_only(brain: Path, ref: set) -> None:
    """Every file the brain holds, it holds exactly as an uninterrupted run would."""
    by_path: dict[str, set] = {}
    for row in ref:
        by_path.setdefault(row[1], set()).add(row)
    now: dict[str, set] = {}
    for row in content(brain):
        now.setdefault(row[1], set()).add(row[:3])
    for path, rows in now.items():
        assert rows == {r[:3] for r in by_path[path]}, f"{path} is half there"


@pytest.mark.parametrize("step", ["ingest", "embed"])
def test_disk_full_is_one_line_and_the_brain_keeps_what_it_held(held, step):
    brain = held["brain"]
    if step == "embed":  # stage everything first, so the vectors are what no longer fits
        res = invoke(["brain", "ingest", held["big"], "--no-embed"], held["env"])
        assert res.exit_code == 0, res.output
        held["held"] = content(brain)
        cmd = llm_cmd("brain", "embed", "--no-progress")
    else:
        cmd = llm_cmd("brain", "ingest", held["big"], "--no-progress")
    limit = brain.stat().st_size + 200_000
    res = subprocess.run(cmd, env={**os.environ, **held["env"]}, capture_output=True, text=True,
                         timeout=300, preexec_fn=_no_bigger_than(limit))
    assert res.returncode == 1, res.stderr
    line = one_line_error(res.stderr)
    # EFBIG is an I/O error to SQLite (ENOSPC, below, is "database or disk is full")
    assert "disk I/O error" in line or "disk is full" in line, line
    counts = check_invariants(brain)  # still opens, consistent
    now = content(brain)
    rows = lambda state: {r[:3] for r in state}  # noqa: E731  (sha, path, text)
    assert rows(held["held"]) <= rows(now)  # nothing it held is lost
    got = vectors_by_chunk(brain)
    assert all(got[k] == v for k, v in held["vectors"].items())
    _whole_files_only(brain, held["ref"])
    if step == "embed":
        assert counts["pending"] > 0
    res = invoke(["brain", "stats", "--json"], held["env"])
    assert res.exit_code == 0 and json.loads(res.stdout)["chunks"] == counts["chunks"]
    # With room again, the next run completes to the same state as an uninterrupted one.
    res = invoke(["brain", "ingest", held["big"], "--no-progress"], held["env"])
    assert res.exit_code == 0, res.output
    assert content(brain) == held["ref"]


@pytest.fixture
def tiny_fs(tmp_path):
    """An 8 MB tmpfs, for a real ENOSPC and a really read-only file system (skipped where
    mounting is not allowed)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_real_disk_full_and_read_only_file_system(tiny_fs, held):
    brain = tiny_fs / "brain" / "brain.db"
    env = {**held["env"], "SECONDBRAIN_DB": str(brain)}
    small = held["big"].parent / "small"
    res = invoke(["brain", "ingest", small, "--no-progress"], env)
    assert res.exit_code == 0, res.output
    before = content(brain)
    vfs = os.statvfs(tiny_fs)  # fill the disk up to 150 KB
    with open(tiny_fs / "filler", "wb") as fh:
        fh.write(b"\0" * (vfs.f_bavail * vfs.f_frsize - 150_000))
    res = subprocess.run(llm_cmd("brain", "ingest", held["big"], "--no-progress"),
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stderr
    assert "disk is full" in one_line_error(res.stderr)
    check_invariants(brain)
    assert {r[:3] for r in before} <= {r[:3] for r in content(brain)}
    _whole_files_only(brain, held["ref"])
    # Now the whole file system read-only: every read still works, a write is one clear line.
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    snapshot = brain.read_bytes()
    for args in (["brain", "stats", "--json"], ["brain", "sources"], ["brain", "recall", "note", "--json"]):
        res = subprocess.run(llm_cmd(*args), env={**os.environ, **env}, capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 0, (args, res.stderr)
        assert "Traceback" not in res.stderr
    res = subprocess.run(llm_cmd("brain", "forget", "--project", "small"), env={**os.environ, **env},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert "readonly" in one_line_error(res.stderr) or "read-only" in res.stderr
    assert brain.read_bytes() == snapshot


def test_brain_in_a_read_only_folder_is_readable_and_writes_fail_clearly(held):
    """Folder permissions (not the file's) deny writing: SQLite cannot create the WAL index
    beside the brain. Reading must still work; a write is one line; nothing changes."""
    brain = held["brain"]
    extra = _notes(held["big"].parent / "extra", 3, 8)
    snapshot = brain.read_bytes()
    brain.parent.chmod(0o500)
    try:
        env = {**os.environ, **held["env"]}
        res = unprivileged(llm_cmd("brain", "stats", "--json"), env=env)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["chunks"] == len(held["held"])
        res = unprivileged(llm_cmd("brain", "recall", "small note", "--json", "--mode", "lexical"), env=env)
        assert res.returncode == 0 and res.stdout.strip(), res.stderr
        res = unprivileged(llm_cmd("brain", "ingest", extra, "--no-progress"), env=env)
        assert res.returncode == 1
        assert "read-only" in one_line_error(res.stderr)
    finally:
        brain.parent.chmod(0o700)
    assert brain.read_bytes() == snapshot
    assert sorted(p.name for p in brain.parent.iterdir()) == ["brain.db"]
