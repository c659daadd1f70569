"""The Python API is the façade every face calls: it behaves as the CLI does."""
from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest

from llm_secondbrain import SecondBrain
from llm_secondbrain.store import BrainError


def test_ingest_with_ollama_down_stores_and_reports_embedding_pending(tmp_path, run, brain_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The heat pump is serviced every October.\n")
    with SecondBrain.open(brain_path) as sb:
        report = sb.ingest([notes])  # OLLAMA_URL points at a closed port in the tests
    assert report.chunks_added == 1
    assert report.embedding["pending"] == 1 and "not reachable" in report.embedding["error"]
    cli = json.loads(run("brain", "ingest", notes, "--json").stdout)
    assert cli["embedding"]["pending"] == 1 and "not reachable" in cli["embedding"]["error"]


def test_ingest_embeds_and_reports_it(tmp_path, ollama, brain_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The heat pump is serviced every October.\n")
    with SecondBrain.open(brain_path) as sb:
        report = sb.ingest([notes])
        assert report.embedding["embedded"] == 1 and report.embedding["remaining"] == 0
        hit = sb.recall("heat pump service", k=1, mode="dense")[0]
    assert hit.path.endswith("a.md")


def _notes(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The heat pump is serviced every October.\n")
    return notes


def test_one_path_is_one_path_not_its_letters(tmp_path, brain_path, monkeypatch):
    """`ingest("notes")` read the files n, o, t, e, s; `ingest(Path("notes"))` was a
    TypeError; the same for update and forget."""
    _notes(tmp_path)
    monkeypatch.chdir(tmp_path)
    with SecondBrain.open(brain_path) as sb:
        assert sb.ingest("notes", embed=False).chunks_added == 1
        assert sb.ingest(Path("notes"), embed=False).unchanged == 1
        assert [r.root.path for r in sb.update(Path("notes"), embed=False).roots] == [str(tmp_path / "notes")]
        assert sb.update("notes", embed=False).total.unchanged == 1
        assert sb.forget(paths=Path("notes")).chunks == 1
        assert sb.ingest([Path("notes")], embed=False).chunks_added == 1
        assert sb.forget(paths="notes").chunks == 1
        with pytest.raises(ValueError, match="^paths must be a path or a list of paths, not int$"):
            sb.ingest(3)
    with pytest.raises(ValueError, match="^a path must be text or a Path, not int$"):
        SecondBrain.open(123)  # it made a brain file named 123
    assert not (tmp_path / "123").exists()


def test_tags_given_as_one_string_are_one_tag(brain_path):
    """tags="home" was stored as the tags h, o, m, e."""
    with SecondBrain.open(brain_path) as sb:
        assert sb.remember("The spare key is under the blue pot.", tags="home", embed=False).tags == ["home"]
        assert sb.facts()[0].tags == ["home"]


def test_recall_takes_dates_and_paths_as_python_has_them(tmp_path, brain_path):
    """since=date(...)/datetime(...) and path=Path(...) were AttributeErrors; a date is the
    bare date typed (--since 2020-01-01), a datetime that instant."""
    notes = _notes(tmp_path)
    with SecondBrain.open(brain_path) as sb:
        sb.ingest([notes], embed=False)
        for since in (date(2020, 1, 1), datetime(2020, 1, 1, 14, 30)):
            assert len(sb.recall("heat pump", since=since, mode="lexical")) == 1
        assert sb.recall("heat pump", until=date(2020, 1, 1), mode="lexical") == []
        assert len(sb.recall("heat pump", path=notes / "a.md", mode="lexical")) == 1
        assert sb.recall("heat pump", path=notes / "b.md", mode="lexical") == []


def test_a_wrong_type_is_a_one_line_error(brain_path):
    """recall(None) was an AttributeError, recall(project=[...]) an sqlite3.InterfaceError,
    remember(project=[...]) "the fact could not be scrubbed"."""
    with SecondBrain.open(brain_path) as sb:
        for query in (None, 123, ["heat"], b"heat"):
            with pytest.raises(ValueError, match="^the query must be text$"):
                sb.recall(query)
        with pytest.raises(ValueError, match="^project must be text, not list$"):
            sb.recall("heat", project=["notes"])
        with pytest.raises(ValueError, match="^a fact must be text$"):
            sb.remember(None)
        with pytest.raises(ValueError, match="^project must be text, not list$"):
            sb.remember("The spare key is under the blue pot.", project=["home"])


def test_a_closed_brain_says_so(brain_path):
    """After close(), or in a second `with` block, every call was sqlite3's "Cannot operate
    on a closed database"."""
    with SecondBrain.open(brain_path) as sb:
        sb.remember("The spare key is under the blue pot.", embed=False)
    closed = "^this brain is closed: open it again with SecondBrain.open$"
    for call in (lambda: sb.recall("key"), sb.stats, sb.facts, lambda: sb.remember("more")):
        with pytest.raises(BrainError, match=closed):
            call()
    with pytest.raises(BrainError, match=closed):
        with sb:
            pass
    sb.close()  # closing twice is harmless
    with SecondBrain.open(brain_path) as again:
        assert [f.text for f in again.facts()] == ["The spare key is under the blue pot."]
