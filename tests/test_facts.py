"""Remembered facts through every face: the CLI, the Python API, the fragment and the
brain_remember / brain_recall tools through `llm -m echo`."""
import json

import pytest

from conftest import dump_brain

from llm_secondbrain import SecondBrain
from llm_secondbrain.store import BrainError

SECRET = "ghp_" + "Zq8xLm2pWvR4tY7uK1oN3bH6jD9fS0gA5cE2"


def facts_json(run):
    return [json.loads(line) for line in run("brain", "facts", "--json").stdout.splitlines()]


def recall_json(run, *args):
    out = run("brain", "recall", *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines()]


def echo_tool(run, tool, arguments):
    call = json.dumps({"tool_calls": [{"name": tool, "arguments": arguments}]})
    return run("-m", "echo", "-T", tool, call)


def test_remember_is_scrubbed_found_and_cited(run, brain_path):
    result = run("brain", "remember", f"The deploy token for the boiler API is {SECRET}",
                 "--tag", "home", "--project", "house")
    assert result.stdout.strip() == "remembered: fact:1"
    assert "embedding pending" in result.stderr  # no Ollama here: stored all the same
    assert SECRET not in dump_brain(brain_path)
    hits = recall_json(run, "boiler deploy token")
    assert hits[0]["citation"] == "fact:1" and hits[0]["project"] == "house"
    assert SECRET not in hits[0]["text"] and "boiler API" in hits[0]["text"]
    # the filters see facts like any chunk
    assert recall_json(run, "boiler", "--source", "remember")[0]["citation"] == "fact:1"
    assert "no project named 'elsewhere'" in run("brain", "recall", "boiler", "--project", "elsewhere",
                                                  ok=False).output
    plain = run("brain", "recall", "boiler").stdout
    assert "fact:1  [house]" in plain


def test_the_same_fact_twice_is_stored_once(run):
    run("brain", "remember", "Anna prefers green tea", "--tag", "people")
    again = run("brain", "remember", "  Anna prefers\n green   tea ", "--tag", "drinks, people")
    assert again.stdout.strip() == "already remembered: fact:1"
    rows = facts_json(run)
    assert len(rows) == 1 and rows[0]["tags"] == ["people", "drinks"]
    assert rows[0]["origin"] == "cli" and rows[0]["text"] == "Anna prefers green tea"
    stats = json.loads(run("brain", "stats", "--json").stdout)
    assert stats["facts"] == 1 and stats["sources"] == {"remember": 1}


def test_facts_lists_and_forget_fact_removes_everywhere(run, brain_path):
    run("brain", "remember", "The spare key is under the blue flowerpot")
    run("brain", "remember", "Wifi in the cabin is called Fjellbu", "--tag", "cabin")
    listing = run("brain", "facts").stdout
    assert "fact:1" in listing and "fact:2" in listing and "#cabin" in listing
    assert run("brain", "forget", "--fact", "1").stdout.strip() == "forgot fact:1"
    assert [f["id"] for f in facts_json(run)] == [2]
    assert recall_json(run, "spare key flowerpot") == []
    run("brain", "vacuum")  # SQLite frees pages without wiping them: vacuum does
    assert "flowerpot" not in dump_brain(brain_path) and "Fjellbu" in dump_brain(brain_path)
    missing = run("brain", "forget", "--fact", "1", ok=False)
    assert missing.exit_code == 1 and missing.stderr.strip() == "Error: no fact 1 (list them with: llm brain facts)"
    # forgetting the source forgets the facts with their chunks
    run("brain", "forget", "--source", "remember")
    assert facts_json(run) == []


def test_bad_facts_are_one_line_errors_and_store_nothing(run, brain_path, monkeypatch):
    run("brain", "remember", "something to keep")
    empty = run("brain", "remember", "   ", ok=False)
    assert empty.exit_code == 1 and empty.stderr.strip() == "Error: nothing to remember: the text is empty"
    monkeypatch.setenv("SECONDBRAIN_MAX_CHARS", "200")
    monkeypatch.setenv("SECONDBRAIN_MIN_CHARS", "50")
    long = run("brain", "remember", "word " * 100, ok=False)
    assert long.exit_code == 1 and "at most 200 characters" in long.stderr
    assert len(long.stderr.strip().splitlines()) == 1
    both = run("brain", "forget", "--fact", "1", "--project", "x", ok=False)
    assert both.exit_code == 1 and "--fact forgets facts only" in both.stderr
    assert [f["id"] for f in facts_json(run)] == [1]
    assert json.loads(run("brain", "stats", "--json").stdout)["chunks"] == 1


def test_remember_reads_standard_input(run):
    run("brain", "remember", "-", "--tag", "stdin", input="Meeting moved to Thursday 14:00\n")
    assert facts_json(run)[0]["text"] == "Meeting moved to Thursday 14:00"


def test_with_ollama_a_fact_is_embedded_at_once_and_found_by_meaning(run, ollama):
    result = run("brain", "remember", "tomatoes need more soil moisture in July", "--json")
    assert json.loads(result.stdout)["embedding"]["embedded"] == 1
    assert "pending" not in result.stderr
    hits = recall_json(run, "soil moisture for tomatoes", "--mode", "dense")  # the dense lane only
    assert hits[0]["citation"] == "fact:1" and set(hits[0]["ranks"]) == {"dense"}


def test_a_fact_stored_without_ollama_is_embedded_later(run, monkeypatch, ollama):
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
    run("brain", "remember", "the cabin's water pump is a Grundfos")
    assert json.loads(run("brain", "stats", "--json").stdout)["pending"] == 1
    monkeypatch.setenv("OLLAMA_URL", ollama.url)
    run("brain", "embed", "--no-progress")
    hits = recall_json(run, "grundfos pump", "--mode", "dense")
    assert hits[0]["citation"] == "fact:1"


def test_brain_remember_tool_through_llm_echo(run):
    result = echo_tool(run, "brain_remember", {
        "text": f"Kari's birthday is 14 May; her old API key was {SECRET}",
        "tags": "people, birthdays", "project": "family"})
    output = next(line for line in result.stdout.splitlines() if '"output":' in line)
    assert "Remembered as fact:1" in output and SECRET not in output
    fact = facts_json(run)[0]
    assert fact["origin"] == "llm:brain_remember" and fact["turn"].startswith("tc_")
    assert fact["tags"] == ["people", "birthdays"] and fact["project"] == "family"
    assert SECRET not in fact["text"]
    # ... and the recall tool and the fragment find it, cited
    found = echo_tool(run, "brain_recall", {"query": "when is Kari's birthday?"})
    assert "[1] fact:1 (project family)" in found.stdout
    prompt = json.loads(run("-m", "echo", "-f", "brain:Kari birthday", "hi").stdout)["prompt"]
    assert "fact:1" in prompt and "14 May" in prompt


def test_brain_remember_tool_bad_input_is_an_answer_not_a_crash(run):
    result = echo_tool(run, "brain_remember", {"text": "  "})
    assert "nothing to remember" in result.stdout
    assert facts_json(run) == []


def test_python_api(brain_path):
    with SecondBrain.open(brain_path) as brain:
        fact = brain.remember("The invoice template lives in Drive/Admin", tags=["admin"],
                              embed=False)
        assert (fact.id, fact.citation, fact.origin, fact.stored) == (1, "fact:1", "api", True)
        assert brain.remember("The invoice template lives in Drive/Admin").stored is False
        assert brain.recall("invoice template", mode="lexical")[0].citation == "fact:1"
        assert [f.text for f in brain.facts()] == ["The invoice template lives in Drive/Admin"]
        brain.forget_fact(1)
        assert brain.facts() == [] and brain.recall("invoice template", mode="lexical") == []


def test_a_newer_fact_supersedes_the_older_until_it_is_forgotten(run, brain_path):
    run("brain", "remember", "The boiler service interval is 12 months")
    missing = run("brain", "remember", "The boiler service interval is 24 months", "--supersedes", "9", ok=False)
    assert missing.exit_code == 1 and "no fact 9 to supersede" in missing.stderr
    assert len(facts_json(run)) == 1  # refused before anything was stored
    said = run("brain", "remember", "The boiler service interval is now 18 months", "--supersedes", "1")
    assert said.stdout.strip() == "remembered: fact:2 (supersedes fact:1)"
    assert [h["citation"] for h in recall_json(run, "boiler service interval")] == ["fact:2"]
    history = recall_json(run, "boiler service interval", "--history")
    assert [h["citation"] for h in history] == ["fact:2", "fact:1"]
    assert history[1]["superseded_by"] == "fact:2" and history[1]["superseded"]
    assert "superseded by fact:2 on " in run("brain", "recall", "boiler interval", "--history").stdout
    assert "(superseded by fact:2 on " in run("brain", "facts").stdout
    # the tool supersedes too; forgetting the newest makes the one before it current again
    output = echo_tool(run, "brain_remember", {"text": "The boiler service interval is 20 months",
                                              "supersedes": 2}).stdout
    assert "Remembered as fact:3 (it supersedes fact:2)" in output
    assert [h["citation"] for h in recall_json(run, "boiler service interval")] == ["fact:3"]
    run("brain", "forget", "--fact", "3")
    assert [h["citation"] for h in recall_json(run, "boiler service interval")] == ["fact:2"]
    with SecondBrain.open(brain_path) as brain:  # fact:3 is never given again: a model may hold it
        fact = brain.remember("The boiler service interval is 12 months again", supersedes=2, embed=False)
        assert fact.supersedes == 2 and [h.citation for h in brain.recall("boiler service interval")] == ["fact:4"]
        with pytest.raises(ValueError, match="cannot supersede itself"):
            brain.remember("The boiler service interval is 12 months again", supersedes=4)



def test_a_fact_already_superseded_is_not_superseded_again(run, brain_path):
    """Superseding fact 1 a second time left facts 2 and 3 both current: refused, naming the
    newer; nothing is stored, and the history keeps its one chain and its dates."""
    run("brain", "remember", "The boiler service interval is 12 months")
    run("brain", "remember", "The boiler service interval is 18 months", "--supersedes", "1")
    before = facts_json(run)
    again = run("brain", "remember", "The boiler service interval is 24 months", "--supersedes", "1", ok=False)
    assert again.exit_code == 1
    assert again.stderr.strip() == ("Error: fact 1 was already superseded by fact 2; "
                                    "to replace that one, use --supersedes 2")
    assert facts_json(run) == before  # nothing stored, nothing re-marked
    assert [h["citation"] for h in recall_json(run, "boiler service interval")] == ["fact:2"]
    # the same step retried changes nothing, not even when it was taken
    retried = run("brain", "remember", "The boiler service interval is 18 months", "--supersedes", "1")
    assert retried.stdout.strip() == "already remembered: fact:2 (supersedes fact:1)"
    assert facts_json(run) == before
    # the tool is refused the same way; superseding the newest makes one chain 1 <- 2 <- 3
    call = {"text": "The boiler service interval is 24 months", "supersedes": 1}
    assert "already superseded by fact 2" in echo_tool(run, "brain_remember", call).stdout
    run("brain", "remember", "The boiler service interval is 24 months", "--supersedes", "2")
    assert [(f["id"], f["superseded_by"]) for f in facts_json(run)] == [(1, 2), (2, 3), (3, None)]
    history = recall_json(run, "boiler service interval", "--history")
    assert history[0]["citation"] == "fact:3" and sorted(h["citation"] for h in history[1:]) == ["fact:1", "fact:2"]
    with SecondBrain.open(brain_path) as brain, pytest.raises(BrainError, match="superseded by fact 3"):
        brain.remember("The boiler service interval is 30 months", supersedes=2, embed=False)


def test_an_id_past_what_sqlite_holds_is_no_fact(run):
    run("brain", "remember", "The boiler is serviced in May")
    for args in (("remember", "hello", "--supersedes", "9" * 23), ("forget", "--fact", str(2 ** 63))):
        result = run("brain", *args, ok=False)
        assert result.exit_code == 1 and result.output.startswith("Error: no fact "), result.output
