"""The readers under seeded mutation (issue 34): one small valid file of every format, damaged
by byte flips, truncation, spliced tokens and corrupted zip members (tests/fuzzkit.py). Nothing
but sections within the text limit or a named skip may come out of a reader: an exception of
any other kind is an escape. 50 mutants per format here; more with `-m slow`;
bench/bench_hostile.py --fuzz counts them by outcome and times the slowest."""
from __future__ import annotations

import logging

import pytest

import fuzzkit

FORMATS = ("pdf", "docx", "html", "epub", "mail", "mbox", "notebook")


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    return fuzzkit.fixtures(tmp_path_factory.mktemp("fuzz"))


def _escapes(fixtures, fmt: str, seed: int, count: int) -> list[str]:
    name, raw = fixtures[fmt]
    logging.disable(logging.CRITICAL)  # pypdf's warnings about the damage, read in this process
    try:
        outcomes = [(how, fuzzkit.read(name, data)[0]) for how, data in fuzzkit.mutants(fmt, raw, seed, count)]
    finally:
        logging.disable(logging.NOTSET)
    assert len(outcomes) == count
    return [f"{how}: {outcome}" for how, outcome in outcomes if outcome.startswith("ESCAPE")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_damaged_file_is_read_or_skipped_never_an_escape(fixtures, fmt):
    assert _escapes(fixtures, fmt, seed=34, count=50) == []


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_many_damaged_files_are_read_or_skipped_never_an_escape(fixtures, fmt, request):
    if "slow" not in request.config.getoption("markexpr"):
        pytest.skip("1,000 mutants per format: run with -m slow")
    assert _escapes(fixtures, fmt, seed=3400, count=1000) == []
