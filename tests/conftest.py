"""Shared fixtures: an isolated `llm` user dir, a temp brain per test, the CLI runner, and
helpers to read the whole brain file and to run a command without root's file powers."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm.cli import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Every test gets its own LLM_USER_PATH and brain; Ollama points at a closed port unless a
    test starts the stub, so no test can reach a real server by accident."""
    user = tmp_path / "llm-user"
    user.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(user))
    monkeypatch.setenv("SECONDBRAIN_DB", str(tmp_path / "brain" / "brain.db"))
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
    for var in ("OLLAMA_HOST", "SECONDBRAIN_EMBED_MODEL", "SECONDBRAIN_STRIP_EMAILS",
                "SECONDBRAIN_MAX_CHARS", "SECONDBRAIN_MIN_CHARS", "SECONDBRAIN_SQLITE",
                "SECONDBRAIN_DOC_PREFIX", "SECONDBRAIN_QUERY_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture
def brain_path(tmp_path) -> Path:
    return tmp_path / "brain" / "brain.db"


@pytest.fixture
def run():
    """Invoke `llm ...` in-process the way a user would; returns the click Result."""

    def _run(*args, input=None, ok=True):
        result = CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=True)
        if ok and result.exit_code != 0:
            raise AssertionError(
                f"llm {' '.join(map(str, args))} exited {result.exit_code}\n{result.output}"
                f"\n{result.exception!r}"
            )
        return result

    return _run


def dump_brain(path: Path) -> str:
    """Every row of every table of the brain file, shadow tables included, as one string,
    read with a plain sqlite3 so nothing our code does can hide a row. The WAL is folded in
    first by opening the file normally (the copy has the same bytes a user would copy)."""
    copy = path.parent / "dump-copy.db"
    for suffix in ("", "-wal"):
        src = Path(f"{path}{suffix}")
        if src.exists():
            shutil.copy(src, f"{copy}{suffix}")
    conn = sqlite3.connect(copy)
    out = []
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for name in names:
        try:
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
        except sqlite3.OperationalError:
            continue  # virtual tables need their module; their shadow tables are dumped
        for row in rows:
            out.append(" ".join(
                v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row
            ))
    conn.close()
    raw = b"".join(Path(f"{copy}{s}").read_bytes() for s in ("", "-wal") if Path(f"{copy}{s}").exists())
    return "\n".join(out) + "\n" + raw.decode("utf-8", "replace")


def unprivileged(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run a command as root *without* the capabilities that let root ignore permission bits,
    so a chmod 000 file is really unreadable to it (tests run as root on these machines)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0:
        if not setpriv:
            pytest.skip("needs setpriv to drop root's file capabilities")
        caps = "-dac_override,-dac_read_search,-fowner"
        cmd = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kwargs)


def interruptible() -> None:
    """`preexec_fn` for a command a test will stop with SIGINT: a shell starts a background job
    (`pytest ... &`) with Ctrl-C ignored, and the command would inherit that and never stop.
    Runs in the child only, between fork and exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def llm_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "llm", *map(str, args)]


@pytest.fixture(scope="session")
def _server():
    """One Ollama-compatible stub on 127.0.0.1 for the whole run (deterministic bag-of-words
    vectors); each test gets it with every fault and counter cleared (see `stub`)."""
    from ollama_stub import OllamaStub

    with OllamaStub() as stub:
        yield stub


@pytest.fixture
def stub(_server):
    """The stub, with every fault and counter cleared before and after the test."""
    _server.wait_idle()  # a request an earlier test gave up on may still be answered
    _server.reset()
    _server.dim = 768
    yield _server
    _server.reset()
    _server.dim = 768


@pytest.fixture
def ollama(stub, monkeypatch):
    """The stub, with OLLAMA_URL pointing at it."""
    monkeypatch.setenv("OLLAMA_URL", stub.url)
    return stub


@pytest.fixture
def env(tmp_path, stub, monkeypatch):
    """The environment a user's shell would have: isolated llm dir, a temp brain, the stub."""
    values = {
        "LLM_USER_PATH": str(tmp_path / "llm"),
        "SECONDBRAIN_DB": str(tmp_path / "brain.db"),
        "OLLAMA_URL": stub.url,
    }
    for key in ("SECONDBRAIN_OLLAMA_TIMEOUT", "SECONDBRAIN_OLLAMA_RETRIES"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values
