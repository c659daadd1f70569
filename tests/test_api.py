"""The Python API is the façade every face calls: it behaves as the CLI does."""
from __future__ import annotations

import json

from llm_secondbrain import SecondBrain


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
