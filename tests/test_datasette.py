"""Datasette on a brain, as the README tells a user to open it.

Datasette reads every table, the vec0 one too, so it needs sqlite-vec loaded: the
datasette-sqlite-vec plugin and a Python whose sqlite3 can load extensions. This machine's
default Python cannot; `.ci/run` runs this file in a venv of Debian's Python with both
installed. (Loading sqlean and pysqlite3 in one process crashed here, so Datasette gets a
process and a Python of its own.)"""
from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

pytest.importorskip("datasette", reason="run by .ci/run in a venv with Datasette and datasette-sqlite-vec")
if not hasattr(sqlite3.Connection, "enable_load_extension"):
    pytest.skip("this Python's sqlite3 cannot load sqlite-vec: .ci/run uses one that can",
                allow_module_level=True)


def test_datasette_browses_and_searches_the_brain(tmp_path, run, ollama, brain_path):
    from datasette.app import Datasette

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "inv.md").write_text("Invoice INV/2026/00037 was disputed by Nordlys: billed twice.\n")
    (notes / "garden.md").write_text("Tomatoes want deep watering twice a week in July.\n")
    run("brain", "ingest", notes, "--no-progress")

    async def fetch():
        ds = Datasette([str(brain_path)])
        await ds.invoke_startup()
        tables = (await ds.client.get("/brain.json")).json()["tables"]
        found = (await ds.client.get("/brain/chunks.json?_search=disputed&_shape=array")).json()
        return tables, found

    tables, found = asyncio.run(fetch())
    by_name = {t["name"]: t for t in tables}
    assert by_name["chunks"]["fts_table"] == "fts_chunks"
    assert "vec_chunks" in by_name
    assert [row["path"].rsplit("/", 1)[-1] for row in found] == ["inv.md"]
    assert json.dumps(found).count("Nordlys") == 1
