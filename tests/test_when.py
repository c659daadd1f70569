"""Time in the question: a phrase read as a date window in the user's time zone (recall.when),
searched without the phrase, said under --explain and --json, and never emptying the answer
when the phrase was a word of the note."""
from __future__ import annotations

import json
from datetime import date, datetime, timedelta

import pytest

from llm_secondbrain.recall.when import find

NOW = datetime(2026, 12, 6, 10, 0).astimezone()  # a Sunday


@pytest.mark.parametrize("query, phrase, window, rest", [
    ("what did I decide last week about the boiler", "last week", "2026-11-23 to 2026-11-29",
     "what did I decide about the boiler"),
    ("yesterday's standup", "yesterday's", "2026-12-05", "standup"),
    ("last month report", "last month", "2026-11-01 to 2026-11-30", "report"),
    ("last year trip", "last year", "2025-01-01 to 2025-12-31", "trip"),
    ("this week", "this week", "2026-11-30 to 2026-12-06", ""),
    ("the budget in March", "in March", "2026-03-01 to 2026-03-31", "the budget"),
    ("the March numbers", "March", "2026-03-01 to 2026-03-31", "the numbers"),
    ("in March 2025 budget", "in March 2025", "2025-03-01 to 2025-03-31", "budget"),
    ("invoices since May", "since May", "2026-05-01 to now", "invoices"),
    ("tax before 2025", "before 2025", "the beginning to 2024-12-31", "tax"),
    ("two weeks ago meeting", "two weeks ago", "2026-11-16 to 2026-11-22", "meeting"),
    ("rent between 2024 and 2025", "between 2024 and 2025", "2024-01-01 to 2025-12-31", "rent"),
    ("deploys in the past 3 days", "in the past 3 days", "2026-12-03 to 2026-12-06", "deploys"),
    ("last Friday call", "last Friday", "2026-12-04", "call"),
])
def test_time_phrases_become_local_windows(query, phrase, window, rest):
    when = find(query, NOW)
    assert (when.phrase, when.shown, when.rest) == (phrase, window, rest)


@pytest.mark.parametrize("query", ["the 2025 budget", "what may I do", "the Monday meeting",
                                   "march on the capital", "INV/2026/00037"])
def test_words_that_only_look_like_dates_are_content(query):
    assert find(query, NOW) is None


def _note(folder, name, day: date, text: str) -> None:
    (folder / name).write_text(f"---\ndate: {day.isoformat()}\n---\n{text}\n")


def test_recall_reads_the_time_phrase(run, tmp_path, ollama):
    today = date.today()
    monday = today - timedelta(days=today.weekday())
    gone = (today - timedelta(days=200)).strftime("%B")  # a month no note is dated in
    notes = tmp_path / "dated"
    notes.mkdir()
    _note(notes, "recent.md", monday - timedelta(days=5), "Decided to replace the boiler valve.")
    _note(notes, "older.md", today - timedelta(days=60), "Last week we decided to keep the old boiler another winter.")
    # (dated today, never in last week: yesterday is in it on a Monday)
    _note(notes, "madness.md", today, f"The {gone} madness note: bracket picks.")
    run("brain", "ingest", notes, "--no-progress")

    def paths(*args):
        out = run("brain", "recall", *args, "--json").stdout
        lines = [json.loads(line) for line in out.splitlines()]
        return [hit["path"].rsplit("/", 1)[-1] for hit in lines], lines

    found, lines = paths("what did I decide last week about the boiler")
    assert found == ["recent.md"]
    assert lines[0]["when"]["phrase"] == "last week" and not lines[0]["when"]["fallback"]
    explained = run("brain", "recall", "what did I decide last week about the boiler", "--explain").stdout
    assert "[time: 'last week' = " in explained and "'what did I decide about the boiler'" in explained
    # --no-dates, or an explicit window: the phrase is left alone
    assert paths("what did I decide last week about the boiler", "--no-dates")[0][0] == "older.md"
    found, lines = paths("what did I decide last week about the boiler", "--since", "400d")
    assert found[0] == "older.md" and lines[0]["when"] is None
    # a month that is a word of the note: nothing dated then matches, every date is searched
    result = run("brain", "recall", f"{gone} madness bracket", "--json")
    assert json.loads(result.stdout.splitlines()[0])["when"]["fallback"] is True
    assert "madness.md" in result.stdout and "searched every date" in result.stderr
