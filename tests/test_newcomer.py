"""A newcomer's day: the promises the README makes and the conventions of the llm /
sqlite-utils / Datasette world, each tried the way a person meets it."""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, interruptible, llm_cmd


def notes(folder: Path, texts: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def recall_json(run, *args):
    return [json.loads(line) for line in run("brain", "recall", *args, "--json").stdout.splitlines()]


# -- the brain uses the model it was built with --------------------------------------------------


def test_a_brain_answers_with_the_model_that_built_it(tmp_path, run, ollama, monkeypatch):
    folder = notes(tmp_path / "n", {"soil.md": "Tomatoes want deep watering twice a week in July.\n",
                                     "bike.md": "The bicycle chain needs oil every month.\n"})
    monkeypatch.setenv("SECONDBRAIN_EMBED_MODEL", "all-minilm")
    run("brain", "ingest", folder, "--no-progress")
    monkeypatch.delenv("SECONDBRAIN_EMBED_MODEL")  # a new shell without the variable
    result = run("brain", "recall", "watering tomatoes", "--mode", "dense", "--json")
    assert "lexically" not in result.stderr
    assert json.loads(result.stdout.splitlines()[0])["path"].endswith("soil.md")
    assert {r["model"] for r in ollama.requests[-1:]} == {"all-minilm"}
    stats = json.loads(run("brain", "stats", "--json").stdout)
    assert stats["embed_model"] == stats["query_model"] == "all-minilm"
    assert "queries:  embedded with all-minilm" in run("brain", "stats").stdout
    # only an explicit, different setting is a mismatch, and stats says so
    monkeypatch.setenv("SECONDBRAIN_EMBED_MODEL", "mxbai-embed-large")
    assert "lexically" in run("brain", "recall", "watering tomatoes").stderr
    assert "is not the model that built the vectors" in run("brain", "stats").stdout


# -- --db never converts a database that is not a brain ------------------------------------------


def test_a_database_that_is_not_a_brain_is_refused_untouched(tmp_path, run):
    logs = tmp_path / "logs.db"
    conn = sqlite3.connect(logs)
    conn.execute("CREATE TABLE responses (id TEXT PRIMARY KEY, prompt TEXT, response TEXT)")
    conn.execute("INSERT INTO responses VALUES ('01', 'hi', 'hello')")
    conn.commit()
    conn.close()
    before = logs.read_bytes()
    folder = notes(tmp_path / "n", {"a.md": "A note about nothing in particular.\n"})
    for args in (["ingest", folder, "--no-embed"], ["stats"], ["recall", "hello"]):
        result = run("brain", *args, "--db", logs, ok=False)
        assert result.exit_code == 1
        assert result.output.count("\n") == 1 and "is not a brain" in result.output
    assert logs.read_bytes() == before
    assert not Path(f"{logs}-wal").exists()


# -- sqlite-utils and Datasette --------------------------------------------------------------------


def test_sqlite_utils_reads_and_searches_the_brain_without_vec0(tmp_path, run, ollama, brain_path):
    """The default Python here cannot load sqlite-vec, like many users' Pythons: the plain
    sqlite-utils commands still work on the brain, and search uses its FTS index."""
    folder = notes(tmp_path / "n", {"inv.md": "Invoice INV/2026/00037 was disputed by Nordlys.\n"})
    run("brain", "ingest", folder, "--no-progress")  # embedded: the brain has its vec0 table

    def sqlite_utils(*args):
        return subprocess.run([sys.executable, "-m", "sqlite_utils", *map(str, args)],
                              capture_output=True, text=True, timeout=60)

    tables = sqlite_utils("tables", brain_path)
    assert tables.returncode == 0, tables.stderr
    assert '"chunks"' in tables.stdout and '"vec_chunks"' in tables.stdout
    rows = sqlite_utils("rows", brain_path, "chunks")
    assert rows.returncode == 0 and "INV/2026/00037" in rows.stdout
    found = sqlite_utils("search", brain_path, "chunks", "disputed")
    assert found.returncode == 0, found.stderr
    assert "Nordlys" in found.stdout


def test_path_prints_the_datasette_command(run, brain_path):
    out = run("brain", "path", "--datasette").stdout
    assert out.strip() == f"datasette install datasette-sqlite-vec && datasette {brain_path}"


# -- dates -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["2026-13-45", "12/03/2026", "yesterdayish", "last week"])
def test_a_date_that_is_not_a_date_is_refused(run, bad, tmp_path):
    run("brain", "ingest", notes(tmp_path / "n", {"a.md": "Something to find here.\n"}), "--no-embed")
    result = run("brain", "recall", "something", "--since", bad, ok=False)
    assert result.exit_code == 1 and "not a date" in result.output and result.output.count("\n") == 1


def test_dates_compare_as_times_and_a_note_keeps_its_own_date(run, tmp_path):
    folder = notes(tmp_path / "n", {
        "old.md": "---\ntitle: Old\ndate: 2020-05-01\n---\nThe boiler was serviced.\n",
        "new.md": "The boiler was serviced again this week.\n",
    })
    os.utime(folder / "old.md", (time.time(), time.time()))  # a fresh clone: every mtime is now
    run("brain", "ingest", folder, "--no-embed")
    paths = lambda *a: {Path(h["path"]).name for h in recall_json(run, "boiler serviced", *a)}  # noqa: E731
    assert paths() == {"old.md", "new.md"}
    assert paths("--since", "7d") == {"new.md"}
    assert paths("--until", "2020-05-01") == {"old.md"}  # the whole day, in the user's zone
    assert paths("--since", "2020-05-02", "--until", "2021-01-01") == set()
    assert paths("--since", "yesterday") == {"new.md"}


# -- projects, limits, queries -----------------------------------------------------------------------


def test_a_note_keeps_its_project_when_its_file_is_ingested_alone(run, tmp_path, brain_path):
    folder = notes(tmp_path / "garden", {"sub/soil.md": "Soil wants compost in spring.\n"})
    run("brain", "ingest", folder, "--no-embed")
    (folder / "sub" / "soil.md").write_text("Soil wants compost in spring and autumn.\n")
    run("brain", "ingest", folder / "sub" / "soil.md", "--no-embed")
    assert {r["project"] for r in map(json.loads, run("brain", "sources", "--json").stdout.splitlines())} == {"garden"}
    run("brain", "ingest", folder / "sub" / "soil.md", "--project", "allotment", "--no-embed")
    run("brain", "ingest", folder, "--no-embed")  # the last explicit one wins
    assert recall_json(run, "compost")[0]["project"] == "allotment"


def test_unknown_project_lists_the_known_ones(run, tmp_path):
    run("brain", "ingest", notes(tmp_path / "garden", {"a.md": "Compost heaps need air.\n"}), "--no-embed")
    result = run("brain", "recall", "compost", "--project", "gardn", ok=False)
    assert result.exit_code == 1 and "no project named 'gardn'" in result.output and "garden" in result.output


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_queries_are_refused(run, tmp_path, query):
    run("brain", "ingest", notes(tmp_path / "n", {"a.md": "Anything at all.\n"}), "--no-embed")
    result = run("brain", "recall", query, ok=False)
    assert result.exit_code == 1 and "the query is empty" in result.output


def test_k_above_the_limit_is_one_line(run, tmp_path):
    run("brain", "ingest", notes(tmp_path / "n", {"a.md": "Anything at all.\n"}), "--no-embed")
    result = run("brain", "recall", "anything", "-k", "5000", ok=False)
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "at most 1000" in result.output
    assert len(recall_json(run, "anything", "-n", "1000")) == 1


def test_path_filter_takes_a_relative_folder_or_file(run, tmp_path, monkeypatch):
    folder = notes(tmp_path / "n", {"work/a.md": "Budget meeting on Monday.\n",
                                    "home/b.md": "Budget for the holiday.\n"})
    run("brain", "ingest", folder, "--no-embed")
    monkeypatch.chdir(folder)
    assert {Path(h["path"]).name for h in recall_json(run, "budget", "--path", "work")} == {"a.md"}
    assert {Path(h["path"]).name for h in recall_json(run, "budget", "--path", "home/b.md")} == {"b.md"}
    assert {Path(h["path"]).name for h in recall_json(run, "budget", "--path", "*/work/*")} == {"a.md"}


def test_include_that_matches_nothing_says_so(run, tmp_path):
    result = run("brain", "ingest", notes(tmp_path / "n", {"a.md": "x y z note.\n"}), "--include", "*.rst",
                 "--no-embed")
    assert "no file matched --include *.rst" in result.stderr


def test_summaries_count_in_good_english(run, tmp_path):
    result = run("brain", "ingest", notes(tmp_path / "n", {"a.md": "One little note.\n"}), "--no-embed")
    assert result.stdout.startswith("1 file seen;")
    assert run("brain", "forget", tmp_path / "n").stdout.splitlines()[0] == "forgot 1 chunk from 1 source"


def test_fragment_takes_percent_20_for_a_space_and_leaves_real_tokens_alone(run, tmp_path):
    from llm_secondbrain.faces.fragment import fragment

    run("brain", "ingest", notes(tmp_path / "n", {
        "a.md": "The invoice run happens on the first Monday.\n",
        "b.md": "C++ templates and snake_case names and a+b sums.\n"}), "--no-embed")
    assert "a.md" in str(fragment("invoice%20run"))
    for token in ("C++", "snake_case", "a+b"):
        assert "b.md" in str(fragment(token))


def test_the_tool_says_an_empty_query_in_its_answer(run, tmp_path):
    run("brain", "ingest", notes(tmp_path / "n", {"a.md": "Anything at all.\n"}), "--no-embed")
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": "  "}}]})
    result = run("-m", "echo", "-T", "brain_recall", call)
    assert "the query is empty" in result.output


def _tool_answer(run, arguments: str) -> str:
    """What brain_recall told the model: echo prints its first request, then the next one
    carrying the tool's result."""
    out = run("-m", "echo", "-T", "brain_recall", '{"tool_calls": [{"name": "brain_recall", "arguments": %s}]}'
              % arguments).stdout
    _, end = json.JSONDecoder().raw_decode(out)
    return json.loads(out[end:])["tool_results"][0]["output"]


def test_the_tool_answers_a_wrong_argument_in_words_the_model_can_act_on(run, tmp_path):
    """A null query, or a k that is no number, got Python's words ("'NoneType' object has no
    attribute 'strip'", "cannot convert float infinity to integer")."""
    run("brain", "ingest", notes(tmp_path / "n", {"a.md": "The heat pump is serviced in October.\n"}), "--no-embed")
    for arguments in ('{"query": null}', '{"query": ["heat"]}'):
        assert _tool_answer(run, arguments) == "brain_recall needs a query: the words to look for"
    for k in ("[1, 2]", "1e400", '"many"'):
        assert _tool_answer(run, '{"query": "heat", "k": %s}' % k) == (
            "brain_recall could not search: k must be a whole number from 1 to 20")
    assert "heat pump" in _tool_answer(run, '{"query": "heat", "k": "3"}')


# -- pipes, signals and progress (real processes) ----------------------------------------------------


def _env(tmp_path: Path, **extra) -> dict:
    return {**os.environ, "SECONDBRAIN_DB": str(tmp_path / "brain.db"), "OLLAMA_URL": "http://127.0.0.1:9",
            "LLM_USER_PATH": str(tmp_path / "llm"), "PYTHONPATH": str(ROOT), **extra}


def test_a_closed_pipe_ends_quietly(tmp_path):
    folder = notes(tmp_path / "n", {f"{i}.md": f"Budget line {i} for the year.\n" * 3 for i in range(40)})
    env = _env(tmp_path)
    subprocess.run(llm_cmd("brain", "ingest", folder, "--no-embed"), env=env, check=True, capture_output=True)
    for args in (("recall", "budget", "-k", "40"), ("sources",)):
        proc = subprocess.Popen(llm_cmd("brain", *args), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()  # `| head -1`
        err = proc.stderr.read().decode()
        proc.wait(timeout=60)
        assert proc.returncode == 0, err
        assert "Broken pipe" not in err and "Traceback" not in err and "Error" not in err, err


def test_ctrl_c_during_ingest_says_what_was_stored_and_exits_130(tmp_path):
    folder = notes(tmp_path / "n", {f"{i:04d}.md": f"Paragraph {i} about the harvest.\n" * 30
                                     for i in range(3000)})
    env = _env(tmp_path)
    proc = subprocess.Popen(llm_cmd("brain", "ingest", folder, "--no-embed"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            conn = sqlite3.connect(f"file:{tmp_path / 'brain.db'}?mode=ro", uri=True, timeout=5)
            try:
                if conn.execute("SELECT count(*) FROM files").fetchone()[0] >= 50:
                    break
            finally:
                conn.close()
        except sqlite3.OperationalError:
            pass  # not created yet
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted; stored so far:" in err and "Traceback" not in err
    stored = int(err.split("stored so far: ")[1].split(" file")[0])
    assert stored >= 50
    # files wait in a batch before they are committed: Ctrl-C commits the finished ones, and
    # the report counts exactly what the brain holds
    ingested = int(re.search(r"; (\d+) ingested;", err).group(1))
    conn = sqlite3.connect(tmp_path / "brain.db")
    try:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == ingested
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == int(
            re.search(r"chunks: (\d+) added", err).group(1))
    finally:
        conn.close()


def test_long_work_prints_progress_lines_off_a_terminal(tmp_path):
    folder = notes(tmp_path / "n", {f"{i:04d}.md": f"Note {i} on the weather.\n" * 20 for i in range(300)})
    env = _env(tmp_path, SECONDBRAIN_PROGRESS_SECONDS="0.001")  # every few seconds, made short
    result = subprocess.run(llm_cmd("brain", "ingest", folder, "--no-embed"), env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("ingesting: ")]
    assert len(lines) > 3 and "files read or checked" in lines[-1]
    (folder / "new.md").write_text("One more note.\n")
    quiet = subprocess.run(llm_cmd("brain", "ingest", folder, "--no-embed", "--no-progress"), env=env,
                           capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and "ingesting:" not in quiet.stderr
