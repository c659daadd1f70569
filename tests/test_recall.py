import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm.cli import cli

from conftest import llm_cmd
from llm_secondbrain import SecondBrain
from llm_secondbrain.faces.evaluate import answer_matches, collapse_to_notes, score_one
from llm_secondbrain.recall import (
    LITERAL_MAX_FILES, adaptive_weights, code_spans, is_claim, content_words, fts_query, identifiers,
    is_question, lexical_match, literal_pattern, zscore,
)

HOSTILE = ['C++', "what's", "a-b", "INV/2026/00037", "NEAR", "AND OR NOT", "text:foo", '"',
           '""', "'", "(", "*", "^x", "col: NEAR(a b)", "\x00", "🙂", "ÆØÅ æøå", "-", "   ", "a" * 5000]


def write_notes(folder, notes: dict[str, str]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture(scope="module")
def _invoice_brain(tmp_path_factory, _server):
    """Thousands of near-miss invoice numbers and one exact one, ingested and embedded once for
    the module (the recall tests only read it); each test gets a copy of the brain file."""
    base = tmp_path_factory.mktemp("invoices")
    rng = random.Random(7)
    notes = {}
    for i in range(1500):
        year = rng.choice([2024, 2025, 2026])
        num = rng.randint(1, 99999)
        if (year, num) == (2026, 37):
            num = 38
        notes[f"inv{i:04d}.md"] = (f"Invoice INV/{year}/{num:05d} for consulting was paid on time. "
                                   f"Customer account {rng.randint(10**10, 10**11)}.")
    notes["near1.md"] = "Invoice INV/2026/00038 was disputed by the customer: wrong hourly rate."
    notes["near2.md"] = "Invoice INV/2025/00037 was disputed too, about the travel costs."
    notes["exact-a.md"] = "INV/2026/00037 sent to Nordlys AS on 2026-03-01, due in 30 days."
    notes["exact-b.md"] = ("Why INV/2026/00037 was disputed: Nordlys were billed twice for the March "
                           "workshop, so we issued a credit note.")
    notes["bank.md"] = "Pay to IBAN NO9386011117947 at DNB, reference the invoice number."
    notes["bank2.md"] = "Old account IBAN NO9386011117948 is closed; do not use it."
    notes["spaced.md"] = "Kari's account: GB33 BUKB 2020 1555 5555 55, for the deposit."
    folder = write_notes(base / "inv", notes)
    brain = base / "brain" / "brain.db"
    (base / "llm-user").mkdir()
    with pytest.MonkeyPatch.context() as env:  # what isolated_env gives a test, for the module
        for var in [v for v in os.environ if v.startswith("SECONDBRAIN_")] + ["OLLAMA_HOST"]:
            env.delenv(var, raising=False)
        env.setenv("LLM_USER_PATH", str(base / "llm-user"))
        env.setenv("SECONDBRAIN_DB", str(brain))
        env.setenv("OLLAMA_URL", _server.url)
        _server.wait_idle()
        _server.reset()
        _server.dim = 768
        result = CliRunner().invoke(cli, ["brain", "ingest", str(folder), "--no-progress"])
    assert result.exit_code == 0, result.output
    return folder, brain


@pytest.fixture
def invoices(_invoice_brain, brain_path, ollama):
    """The invoices brain, copied where this test's brain lives."""
    folder, built = _invoice_brain
    brain_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for suffix in ("", "-wal"):
        if Path(f"{built}{suffix}").exists():
            shutil.copy(f"{built}{suffix}", f"{brain_path}{suffix}")
    return folder


def recall_json(run, *args):
    out = run("brain", "recall", *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines()]


def test_fts_query_quotes_every_word():
    assert fts_query('C++ what\'s a-b "NEAR" AND') == '"C" OR "what" OR "s" OR "a" OR "b" OR "NEAR" OR "AND"'
    assert fts_query("   ") is None and fts_query('"') is None


def test_identifiers_are_detected_and_spacing_joined():
    assert identifiers("why was INV/2026/00037 disputed?") == ["INV/2026/00037"]
    assert identifiers("NO93 8601 1117 947") == ["NO9386011117947"]
    assert identifiers("what did we decide about invoicing?") == []
    assert identifiers("error E1102 on OPS-1234") == ["OPS-1234", "E1102"]


def test_spaced_and_punctuated_codes_are_identifiers():
    assert identifiers("OPS 1234") == ["OPS1234"]
    assert identifiers("when does SK 4035 leave?") == ["SK4035"]
    assert identifiers("LA 482 913 605 NO") == ["LA482913605NO"]
    assert identifiers("GB33 BUKB 2020 1555 5555 55") == ["GB33BUKB20201555555555"]
    assert identifiers("how did we fix ERR_SSL_PROTOCOL_ERROR?") == ["ERR_SSL_PROTOCOL_ERROR"]
    assert identifiers("I have 2 kids and 3 cats") == [] and identifiers("OPS AB") == []


@pytest.mark.parametrize("ident,text,found", [
    ("EL48213", "Our car is EL 48213.", True),
    ("EL48213", "Cars: EL 41213, EL 48231, LE 48213.", False),
    ("OPS1234", "Mentioned OPS-1234 in the weekly", True),
    ("OPS-1234", "closed OPS 1234 today", True),
    ("OPS-1234", "OPS-12345 and OHS-1234", False),
    ("INV/2026/00037", "INV/2026/00038 and INV/2025/00037", False),
    ("10.0.12.37", "db-2 lives at 10.0.12.37 now", True),
    ("10.0.12.37", "10.0.12.370 and 10.0.1.237", False),
])
def test_literal_pattern_tolerates_spacing_not_near_misses(ident, text, found):
    assert bool(literal_pattern(ident).search(text)) is found


def test_questions_and_function_words():
    assert is_question("what did we decide about invoicing?") and is_question("how do I restart it")
    assert is_question("hvordan fikser vi dette")
    assert not is_question("0-dimensional biomaterials show inductive properties.")
    assert not is_question("credit note workshop") and not is_question("")
    assert content_words("what did the doctor say about my knee?") == "doctor say knee"
    assert content_words("to be or not to be") == "to be or not to be"
    assert adaptive_weights("why did the deploy fail?")[0]["lexical"] < 0.1
    assert adaptive_weights("deploy failure friday")[0]["lexical"] == 1.0


def test_a_stated_claim_weighs_words_and_meaning_equally():
    claim = "Activated Cdk5 regulates DNA damage-induced neuronal death."
    assert is_claim(claim) and not is_claim("why did Cdk5 fail?") and not is_claim("Cdk5.")
    assert not is_claim("deploy failure friday") and not is_claim("wait for it...")
    weights, why = adaptive_weights(claim)  # not the code rule, though Cdk5 looks like code
    assert weights["lexical"] == 1.0 and why.startswith("claim")


def test_a_claim_promotes_no_literal_token(run, tmp_path, ollama):
    """In a stated claim a rare token is the claim's subject: the abstracts holding it are not
    moved above the rest of the ranking by it alone."""
    notes = {"holder.md": "Cdk5 was measured in the sample.",
             "other.md": "Kinase five regulates neuronal death after DNA damage in mice."}
    run("brain", "ingest", write_notes(tmp_path / "c", notes), "--no-progress")
    hits = recall_json(run, "Cdk5 regulates neuronal death after DNA damage.")
    assert not any("literal" in h["ranks"] for h in hits)
    hits = recall_json(run, "Cdk5 regulates neuronal death")  # keywords: the token is looked up
    assert "literal" in hits[0]["ranks"]
    # dense alone weighs no word: there the literal lane still speaks for the claim's token
    hits = recall_json(run, "Cdk5 regulates neuronal death after DNA damage.", "--mode", "dense")
    assert "literal" in hits[0]["ranks"]
    hits = recall_json(run, "Cdk5 regulates neuronal death after DNA damage.", "--mode", "lexical")
    assert not any("literal" in h["ranks"] for h in hits)


def test_zscore_fusion_scales_each_lane():
    lanes = {"dense": [(1, 0.9), (2, 0.5), (3, 0.45), (4, 0.4)],
             "lexical": [(3, 30.0), (2, 10.0), (5, 9.0)]}
    fused = zscore(lanes, {"dense": 1.0, "lexical": 1.0})
    # each lane's last hit and every chunk it did not find contribute 0
    assert fused[4]["contributions"]["dense"] == 0 and "lexical" not in fused[4]["contributions"]
    assert fused[5]["contributions"]["lexical"] == 0
    assert all(e["score"] >= 0 for e in fused.values())
    best = max(fused, key=lambda c: fused[c]["score"])
    assert best in (1, 3)  # the outlier of either lane
    quiet = zscore(lanes, {"dense": 1.0, "lexical": 0.05})
    assert max(quiet, key=lambda c: quiet[c]["score"]) == 1


def test_zscore_scores_each_passage_on_its_own_evidence():
    """A note is as good as its best passage: a long note whose best meaning (chunk 1) and best
    words (chunk 2) are different parts does not outrank a note whose one passage has both;
    statistics count each note once."""
    lanes = {"dense": [(1, 0.9), (3, 0.85), (4, 0.5), (2, 0.3)],
             "lexical": [(2, 20.0), (3, 18.0), (4, 12.0), (1, 1.0)]}
    groups = {1: ("long.md", None), 2: ("long.md", None), 3: ("b.md", None), 4: ("c.md", None)}
    fused = zscore(lanes, {"dense": 1.0, "lexical": 1.0}, groups=groups)
    assert max(fused, key=lambda c: fused[c]["score"]) == 3
    assert set(fused[1]["contributions"]) == {"dense", "lexical"} and fused[1]["contributions"]["lexical"] == 0
    assert all(e["score"] >= 0 for e in fused.values())


def test_a_term_many_files_hold_is_not_promoted(run, tmp_path, ollama):
    """p53 looks like an identifier, but when many files hold it, it is a term: those files
    are not all moved to the top, and the one answering the question wins on meaning and words."""
    notes = {f"p53-{i}.md": f"Paper {i}: p53 levels in cell line {i} were measured."
             for i in range(LITERAL_MAX_FILES + 3)}
    notes["answer.md"] = "Tumour suppressor protein response to DNA damage triggers apoptosis."
    run("brain", "ingest", write_notes(tmp_path / "terms", notes), "--no-progress")
    hits = recall_json(run, "p53 levels in cell line 3")
    assert not any("literal" in h["ranks"] for h in hits)
    assert hits[0]["path"].endswith("p53-3.md")
    few = {f"code-{i}.md": f"Ticket XQ-4417 note {i}." for i in range(2)}
    few["near.md"] = "Ticket XQ-4418 note about the same thing."
    run("brain", "ingest", write_notes(tmp_path / "codes", few), "--no-progress")
    hits = recall_json(run, "XQ-4417")
    assert {h["path"].rsplit("/", 1)[1] for h in hits[:2]} == {"code-0.md", "code-1.md"}
    assert all("literal" in h["ranks"] for h in hits[:2])


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_fail(run, tmp_path, query):
    write_notes(tmp_path / "n", {"a.md": "Notes about C++ templates and what's next for a-b tests."})
    run("brain", "ingest", tmp_path / "n", "--no-embed")
    for mode in ("hybrid", "lexical", "dense"):
        result = run("brain", "recall", query, "--mode", mode, ok=bool(query.strip()))
        assert "Traceback" not in result.output
        if not query.strip():
            assert result.exit_code == 1 and "the query is empty" in result.output


def test_exact_identifier_ranks_first_among_near_misses(run, invoices):
    hits = recall_json(run, "INV/2026/00037")
    assert {h["path"].rsplit("/", 1)[1] for h in hits[:2]} == {"exact-a.md", "exact-b.md"}
    assert all("literal" in h["ranks"] for h in hits[:2])
    assert "literal" not in hits[2]["ranks"]


def test_the_hit_that_answers_the_question_comes_first(run, invoices):
    hits = recall_json(run, "why was INV/2026/00037 disputed?")
    assert hits[0]["path"].endswith("exact-b.md")
    assert hits[1]["path"].endswith("exact-a.md")


@pytest.mark.parametrize("query,expected", [
    ("NO93 8601 1117 947", "bank.md"),
    ("NO9386011117947", "bank.md"),
    ("GB33BUKB20201555555555", "spaced.md"),
])
def test_identifiers_match_however_they_are_spaced(run, invoices, query, expected):
    hits = recall_json(run, query, "-k", "3")
    assert hits[0]["path"].endswith(expected)


def test_json_and_explain_output(run, invoices):
    hit = recall_json(run, "credit note for the workshop", "-k", "1")[0]
    for key in ("path", "line", "text", "score", "project", "source", "ranks", "citation", "rank"):
        assert key in hit
    assert hit["citation"] == f"{hit['path']}:{hit['line']}"
    out = run("brain", "recall", "credit note for the workshop", "--explain", "-k", "2").output
    assert "[hybrid]" in out and "dense #" in out and "lexical #" in out
    assert "zscore fusion" in out and "lexical 1" in out
    out = run("brain", "recall", "why was the workshop billed twice?", "--explain", "-k", "2").output
    assert "lexical 0.05 (question" in out
    out = run("brain", "recall", "credit note", "--explain", "--fusion", "rrf",
              "--lexical-weight", "0.5", "-k", "2").output
    assert "rrf fusion; weights dense 1, lexical 0.5 (weights given)" in out


def test_words_that_answer_little_of_a_request_weigh_less(run, tmp_path, ollama):
    # a paraphrase shares a stray word with an unrelated note: the lexical lane still ranks that
    # note far above its others, so its weight falls with the share of the request it holds
    notes = write_notes(tmp_path / "w", {
        "kettle.md": "# Kettle\n\nDescale the kettle with vinegar every month.",
        "printer.md": "# Printer\n\nThe printer jams when the tray holds more than two hundred lines of labels.",
    })
    run("brain", "ingest", notes, "--no-progress")
    out = run("brain", "recall", "keep the water boiler free of limescale lines", "--explain").output
    held = re.search(r"best passages hold (\d+)% of its words: lexical x([0-9.]+)", out)
    assert held is not None, out
    assert int(held.group(1)) < 60 and float(held.group(2)) < 0.1
    out = run("brain", "recall", "printer tray holds labels", "--explain").output
    assert "of its words" not in out  # (every word in one passage: the rule's own weight)


def test_dense_finds_meaning_without_shared_words(run, tmp_path, ollama):
    notes = write_notes(tmp_path / "m", {
        "garden.md": "tomatoes need water when the soil moisture sensor reads low",
        "car.md": "the car needs new winter tyres before november",
    })
    run("brain", "ingest", notes, "--no-progress")
    hits = recall_json(run, "soil moisture tomatoes", "--mode", "dense", "-k", "1")
    assert hits[0]["path"].endswith("garden.md")
    assert set(hits[0]["ranks"]) == {"dense"}


def test_filters_still_return_k_hits(run, tmp_path, ollama):
    """vec0 applies most filters after its top-k: a filtered query must still fill k."""
    a = {f"a{i}.md": f"Meeting notes number {i} about the budget and the roadmap." for i in range(60)}
    b = {f"b{i}.md": f"Budget roadmap meeting {i} for the side project." for i in range(5)}
    run("brain", "ingest", write_notes(tmp_path / "alpha", a), "--no-progress")
    run("brain", "ingest", write_notes(tmp_path / "beta", b), "--no-progress")
    for mode in ("dense", "hybrid", "lexical"):
        hits = recall_json(run, "budget roadmap meeting", "--project", "beta", "-k", "5", "--mode", mode)
        assert len(hits) == 5 and all(h["project"] == "beta" for h in hits), mode
    hits = recall_json(run, "budget roadmap meeting", "--path", "*/b1.md", "--mode", "dense")
    assert [h["path"].rsplit("/", 1)[1] for h in hits] == ["b1.md"]
    assert recall_json(run, "budget", "--since", "2999-01-01") == []
    assert len(recall_json(run, "budget", "--until", "2999-01-01", "-k", "3")) == 3


def test_degrades_to_lexical_when_ollama_is_down(run, invoices, ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
    result = run("brain", "recall", "INV/2026/00037", "--json")
    assert "not reachable" in result.stderr and "answering lexically" in result.stderr
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert hits[0]["path"].endswith(("exact-a.md", "exact-b.md"))


def test_no_vectors_yet_answers_lexically(run, tmp_path):
    run("brain", "ingest", write_notes(tmp_path / "n", {"a.md": "The boiler service is due in May."}))
    result = run("brain", "recall", "boiler service")
    assert "no vectors yet" in result.stderr
    assert "a.md:1" in result.stdout


def test_model_mismatch_answers_lexically_and_says_so(run, invoices, monkeypatch):
    monkeypatch.setenv("SECONDBRAIN_EMBED_MODEL", "all-minilm")
    result = run("brain", "recall", "credit note workshop", "--json")
    assert "answering lexically" in result.stderr and "reembed" in result.stderr
    assert result.stdout and all(set(json.loads(l)["ranks"]) <= {"lexical", "literal"}
                                 for l in result.stdout.splitlines())


def test_no_lexical_match_falls_back_to_dense(run, tmp_path, ollama):
    run("brain", "ingest", write_notes(tmp_path / "n", {"a.md": "tomatoes and soil moisture"}),
        "--no-progress")
    hits = recall_json(run, "tomattoes moisure")  # misspelt: no word in common
    assert hits and set(hits[0]["ranks"]) == {"dense"}


def test_fragment_loader_through_llm(run, invoices):
    result = run("-m", "echo", "-f", "brain:INV/2026/00037", "what is the status?")
    prompt = json.loads(result.stdout)["prompt"]
    assert "exact-a.md:1" in prompt and "exact-b.md:1" in prompt
    assert "INV/2026/00037" in prompt
    assert "near1.md" not in prompt and "INV/2026/00038" not in prompt  # no padding after the holders


def test_fragment_has_a_size_budget(run, invoices, monkeypatch):
    monkeypatch.setenv("SECONDBRAIN_FRAGMENT_CHARS", "300")
    prompt = json.loads(run("-m", "echo", "-f", "brain:invoice paid on time", "hi").stdout)["prompt"]
    assert len(prompt) < 300 + 200


def test_tool_through_llm_echo(run, invoices):
    call = json.dumps({"tool_calls": [{"name": "brain_recall",
                                       "arguments": {"query": "why was INV/2026/00037 disputed?", "k": 2}}]})
    result = run("-m", "echo", "-T", "brain_recall", call)
    assert "exact-b.md:1" in result.stdout and "credit note" in result.stdout


def test_the_tools_llm_sees_are_the_ones_it_would_make_from_the_functions():
    """The tools are registered with their schemas written out (llm would build them with
    pydantic on every prompt): the same name, description, schema and hash as llm's own."""
    import llm

    import llm_secondbrain

    tools = llm.get_tools()
    for function in (llm_secondbrain.brain_recall, llm_secondbrain.brain_remember):
        made = llm.Tool.function(function)
        made.plugin = tools[made.name].plugin
        assert tools[made.name].input_schema == made.input_schema
        assert tools[made.name].hash() == made.hash() and tools[made.name].implementation is function


def test_tool_degrades_when_ollama_is_down(run, invoices, monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": "INV/2026/00037"}}]})
    result = run("-m", "echo", "-T", "brain_recall", call)
    assert "exact-" in result.stdout


def test_python_api(invoices, brain_path):
    with SecondBrain.open(brain_path) as brain:
        hits = brain.recall("why was INV/2026/00037 disputed?", k=3)
        assert hits[0].path.endswith("exact-b.md") and hits[0].line == 1
        assert hits[0].ranks["literal"] == 1
        result = brain.search("disputed", k=2, mode="lexical")
        assert result.mode == "lexical" and len(result.hits) == 2


# --- issue 14: exact tokens, snippets, spread, relevance floor, eval ----------------------------

CODE_NOTES = {
    "camel.md": "# Fetching users\n\nCall getUserById with the numeric id to load one user.",
    "camel-near.md": "# Users\n\nLoading a user by id from the database with an ORM helper.",
    "dotted.md": "# Django queries\n\nModel.objects is the default manager of every model.",
    "dotted-near.md": "# Models\n\nA model's manager objects let you query the model table.",
    "sslmode.md": "# Postgres TLS\n\nAdd sslmode=require to the connection string for hosted databases.",
    "sslmode-near.md": "# Postgres connection\n\nThe connection string mode requires TLS on hosted databases.",
    "noopener.md": "# Safe links\n\nAdd rel=\"noopener\" to links that open a new tab.",
    "noopener-near.md": "# Links\n\nA rel attribute on links; noopener and opener explained elsewhere for new tabs.",
}


@pytest.mark.parametrize("query,expected", [
    ("getUserById", "camel.md"),
    ("Model.objects", "dotted.md"),
    ("sslmode=require", "sslmode.md"),
    ('rel="noopener"', "noopener.md"),
])
def test_code_like_tokens_are_found_first(run, tmp_path, ollama, query, expected):
    run("brain", "ingest", write_notes(tmp_path / "code", CODE_NOTES), "--no-progress")
    for mode in ("hybrid", "lexical"):
        hits = recall_json(run, query, "--mode", mode)
        assert hits[0]["path"].endswith("/" + expected), (mode, [h["path"] for h in hits])


def test_code_spans_keep_their_stopwords_as_a_phrase():
    assert code_spans('add rel="noopener" to `git add --patch` with getUserById?') == [
        "git add --patch", 'rel="noopener"', "getUserById"]
    assert code_spans("a built-in way I'm sure doesn't exist") == ["built-in"]
    match = lexical_match(None, 'autocomplete="off"')
    assert match == '"autocomplete off"'  # the stopword stays, inside the phrase


def test_a_compound_written_as_prose_is_its_words_unless_it_holds_a_function_word():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE fts_chunks USING fts5(text)")
    # a note saying "each letter, thirteen places on" still counts for "thirteen-letter"
    assert lexical_match(conn, "thirteen-letter rotation cipher") == '"thirteen" OR "letter" OR "rotation" OR "cipher"'
    # the function word is the point: dropped alone, kept inside the phrase
    assert lexical_match(conn, "clojure merge-with maps") == '"clojure" OR "merge" OR "maps" OR "merge with"'
    assert lexical_match(conn, "`year-month-day` format") == '"format" OR "year month day"'  # backticked: code


def test_the_note_about_a_token_ranks_above_one_that_lists_it(run, tmp_path, ollama):
    notes = {
        "list.md": "# Python builtins cheat sheet\n\nabs, all, any, divmod, enumerate, filter, map, "
                   "max, min, pow, round, sorted, sum and zip are builtins worth knowing.",
        "about.md": "# Quotient and remainder at once with divmod\n\ndivmod(7, 2) gives (3, 1).",
    }
    run("brain", "ingest", write_notes(tmp_path / "about", notes), "--no-progress")
    assert recall_json(run, "divmod")[0]["path"].endswith("/about.md")


def test_a_short_note_that_links_to_another_gives_way_to_it(run, tmp_path, ollama):
    # a stub or a journal line says in a few words what the note it links to holds: it matches
    # as well and ranks above it, but the answer is in the note it points to
    folder = tmp_path / "vault"
    for sub in ("Inbox", "Journal", "Resources", "Meetings"):
        (folder / sub).mkdir(parents=True)
    write_notes(folder, {
        "Inbox/sensor gaps.md": "---\ntitle: sensor gaps\n---\nmasked arrays for sensor gaps: see [[numpy-masked]]. TODO.",
        "Resources/numpy-masked.md": "---\ntitle: NumPy notes\n---\n# Masked arrays\n\nA masked array "
                                     "hides invalid entries from every computation: readings a sensor "
                                     "missed stay in the array, marked, and means skip them.",
        "Journal/2024-04-10.md": "Retention of monthly backups agreed, see [[Backup retention|the meeting]].",
        "Meetings/2024-04-09.md": "---\ntitle: Backup retention\n---\nWe keep each month-end copy for "
                                  "a year; weekly ones for five weeks.",
        "Inbox/cold frames.md": "cold frames for the seedlings: [notes](../Resources/cold%20frame%20build.md)",
        "Resources/cold frame build.md": "# Building a cold frame\n\nAn old window on a box of planks "
                                         "keeps seedlings warm in April; prop the lid on sunny days.",
        "other.md": "Watering tomatoes early in the morning keeps the leaves dry.",
    })
    run("brain", "ingest", folder, "--no-progress")
    hits = recall_json(run, "cold frames for the seedlings")
    assert [h["path"].rsplit("/", 1)[1] for h in hits[:2]] == ["cold frame build.md", "cold frames.md"]
    hits = recall_json(run, "masked arrays for sensor gaps")
    assert [h["path"].rsplit("/", 1)[1] for h in hits[:2]] == ["numpy-masked.md", "sensor gaps.md"]
    assert hits[0]["ranks"]["link"] == 2  # (--explain: the hit that links to it)
    hits = recall_json(run, "retention of monthly backups")
    assert [h["path"].rsplit("/", 1)[1] for h in hits[:2]] == ["2024-04-09.md", "2024-04-10.md"]


def test_per_note_limits_chunks_of_one_note(run, tmp_path, ollama, monkeypatch):
    monkeypatch.setenv("SECONDBRAIN_MAX_CHARS", "200")
    long = "\n\n".join(f"Paragraph {i} about the garden hose and watering tomatoes in summer."
                       for i in range(12))
    notes = {"long.md": long, "other.md": "Watering tomatoes with a garden hose works best early."}
    run("brain", "ingest", write_notes(tmp_path / "spread", notes), "--no-progress")
    paths = [h["path"] for h in recall_json(run, "garden hose watering tomatoes")]
    assert sum(p.endswith("/long.md") for p in paths) == 3 and any(p.endswith("/other.md") for p in paths)
    paths = [h["path"] for h in recall_json(run, "garden hose watering tomatoes", "--per-note", "1")]
    assert len(paths) == len(set(paths)) == 2


def test_snippet_and_citation_point_at_the_match_deep_in_a_chunk(run, tmp_path, ollama):
    lines = ["# Deploy notes", ""] + [f"Step {i}: check the dashboards and the logs." for i in range(1, 9)]
    lines += ["Step 9: run the migration with DB_MIGRATE_TOKEN_X9 set.", "Step 10: done."]
    run("brain", "ingest", write_notes(tmp_path / "deep", {"deploy.md": "\n".join(lines)}), "--no-progress")
    hit = recall_json(run, "DB_MIGRATE_TOKEN_X9")[0]
    assert hit["line"] == 1 and hit["match_line"] == 11
    assert hit["citation"].endswith("deploy.md:11")
    assert hit["snippet"] == "Step 9: run the migration with DB_MIGRATE_TOKEN_X9 set."
    assert hit["mode"] == "hybrid" and "z-score" in hit["scale"]
    out = run("brain", "recall", "DB_MIGRATE_TOKEN_X9").output
    assert "deploy.md:11" in out and "Step 9: run the migration" in out


def test_nothing_relevant_is_an_answer(run, invoices):
    query = "zzqqxx-nothing-9999"
    result = run("brain", "recall", query)
    assert result.exit_code == 0 and "nothing in the brain matches" in result.stderr
    assert result.stdout == ""
    prompt = json.loads(run("-m", "echo", "-f", f"brain:{query}", "hi").stdout)["prompt"]
    assert "nothing that matches" in prompt and "Invoice" not in prompt
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": query}}]})
    assert "nothing that matches" in run("-m", "echo", "-T", "brain_recall", call).stdout


@pytest.mark.parametrize("args", [["--dry-run"], ["--", "--dry-run"]])
def test_queries_that_start_with_a_dash(run, tmp_path, ollama, args):
    notes = {"flags.md": "Use terraform plan --dry-run before every apply.", "x.md": "Nothing here."}
    run("brain", "ingest", write_notes(tmp_path / "dash", notes), "--no-progress")
    result = run("brain", "recall", "--json", *args)
    assert json.loads(result.stdout.splitlines()[0])["path"].endswith("/flags.md")



def test_a_mistyped_option_is_refused_not_searched_for(run):
    """ignore_unknown_options lets a query hold flags; a typo of recall's own option is no
    such flag: searched for, it matched nothing and said only that, exit 0."""
    for flag in ("tar --no-same-owner", "git push --force-with-lease", "rm -rf build", "rsync --sources"):
        run("brain", "remember", f"Run {flag} nightly")
    for args, meant in ((["boiler", "interval", "--projet", "nope"], "Did you mean --project?"),
                        (["boiler", "--projet=ops"], "Did you mean --project?"),
                        (["boiler", "--json-out"], "Did you mean --json?"),
                        (["--sources"], "Did you mean --source?"),
                        (["--jsno"], "Did you mean --json?")):
        result = run("brain", "recall", *args, ok=False)
        option = next(a for a in args if a.startswith("--")).split("=")[0]
        assert result.exit_code == 2, result.output
        assert f"Error: No such option: {option}. {meant} To search for {option} itself, put it after --" \
            in result.output
    # real flags are searched for as they are, and every word after -- is
    for args, fact in ((["--no-same-owner"], "fact:1"), (["--force-with-lease"], "fact:2"), (["-rf"], "fact:3"),
                       (["--", "--sources"], "fact:4"), (["rsync", "--json", "--", "--sources"], "fact:4")):
        out = run("brain", "recall", "--json", *args).stdout
        assert json.loads(out.splitlines()[0])["citation"] == fact, args
    assert "llm brain recall rsync -- --sources" in run("brain", "recall", "--help").stdout


def test_eval_scores_golden_queries(run, invoices, tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(json.dumps(q) for q in [
        {"id": "a", "class": "exact", "query": "INV/2026/00037", "answers": ["inv/exact-a.md", "inv/exact-b.md"]},
        {"id": "b", "class": "semantic", "query": "why was the workshop billed twice?", "answers": ["inv/exact-b.md"]},
        {"id": "c", "class": "exact", "query": "NO9386011117947", "answers": ["bank.md"]},
    ]) + "\n")
    out = run("brain", "eval", golden, "--mode", "hybrid", "--mode", "lexical").output
    assert "| hybrid | exact | 2 | 1.000 | 1.000 | 1.000 | 1.000 |" in out
    assert "| lexical | all | 3 |" in out
    report = json.loads(run("brain", "eval", golden, "--json").output)
    assert set(report["modes"]) == {"hybrid", "dense", "lexical"}
    assert report["modes"]["hybrid"]["exact"]["nDCG@10"] == 1.0
    negatives = tmp_path / "negatives.jsonl"
    negatives.write_text('{"id": "n1", "query": "How do I roll back a Kubernetes deployment?"}\n')
    out = run("brain", "eval", golden, "--negatives", negatives, "--mode", "hybrid",
              "--project", "inv", "--path", "*/inv/exact-*").output
    assert "hybrid: 1 of 1 unanswerable questions got nothing" in out
    assert "| hybrid | all | 3 | 0.667" in out  # --path leaves bank.md out
    golden.write_text('{"query": "x"}\n')
    result = run("brain", "eval", golden, ok=False)
    assert result.exit_code == 1 and "line 1" in result.output
    negatives.write_text('{"query": "x", "answers": ["a.md"]}\n')
    result = run("brain", "eval", golden, "--negatives", negatives, ok=False)
    assert result.exit_code == 1 and "line 1" in result.output


def test_eval_says_which_file_and_line_is_wrong(run, tmp_path):
    """A golden file and its negatives are read in one run: a parse error named no file, bytes
    that are not UTF-8 no file or line ("'utf-8' codec can't decode byte 0xff in position 0"),
    a repeated id and an empty negatives file (an empty queries file is an error) passed."""
    run("brain", "ingest", write_notes(tmp_path / "n", {"a.md": "The heat pump is serviced in October.\n"}),
        "--no-embed")
    golden, negatives = tmp_path / "golden.jsonl", tmp_path / "negatives.jsonl"
    lines = [json.dumps({"id": f"q{i}", "query": f"heat pump {i} " + "x" * 60, "answers": ["n/a.md"]})
             for i in range(1, 301)]
    golden.write_text("\n".join(lines) + "\n")
    cases = [('{"query": "heat"}\nnot json\n', f"{negatives}, line 2: not JSON (Expecting value)"),
             (b'{"query": "heat"}\n{"query": "pump \xff"}\n', f"{negatives}, line 2: not UTF-8 text"),
             ('{"id": "n1", "query": "heat"}\n\n{"id": "n1", "query": "pump"}\n',
              f"{negatives}, lines 1 and 3: both have the id 'n1' (give each its own)"),
             ("\n", f"no questions in the negatives file {negatives}")]
    for content, said in cases:
        (negatives.write_bytes if isinstance(content, bytes) else negatives.write_text)(content)
        result = run("brain", "eval", golden, "--negatives", negatives, "--mode", "lexical", ok=False)
        assert result.exit_code == 1 and result.stderr == f"Error: {said}\n"
    golden.write_bytes("\n".join(lines[:250] + [lines[250].replace("heat", "he\xe6t")] + lines[251:])
                       .encode("latin-1"))  # past the decoder's first 8 KB block
    result = run("brain", "eval", golden, "--mode", "lexical", ok=False)
    assert result.stderr == f"Error: {golden}, line 251: not UTF-8 text\n"


def test_eval_says_when_dense_and_hybrid_answered_lexically(run, tmp_path, ollama, monkeypatch):
    """With no vectors (or no Ollama) the dense and hybrid rows were lexical figures under
    their names, and nothing said so."""
    run("brain", "ingest", write_notes(tmp_path / "n", {"a.md": "The heat pump is serviced in October.\n"}),
        "--no-embed")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "query": "heat pump", "answers": ["n/a.md"]}\n')
    why = "no vectors yet: answering lexically (run: llm brain embed)"
    result = run("brain", "eval", golden)
    assert result.stderr == f"{why} - the hybrid and dense figures are lexical\n"
    assert "| dense | all | 1 |" in result.stdout
    assert json.loads(run("brain", "eval", golden, "--json").stdout)["notes"] == {"hybrid": why, "dense": why}
    run("brain", "embed")
    result = run("brain", "eval", golden, "--json")
    assert result.stderr == "" and "notes" not in json.loads(result.stdout)
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
    result = run("brain", "eval", golden, "--mode", "dense", "--mode", "lexical")
    assert result.stderr.endswith(": answering lexically - the dense figures are lexical\n")
    assert result.stderr.count("\n") == 1


def test_eval_scoring_collapses_to_notes_and_matches_suffixes():
    assert answer_matches("git/rebase.md", "/home/me/til/git/rebase.md")
    assert not answer_matches("rebase.md", "/home/me/til/git/interactive-rebase.md")
    notes = collapse_to_notes(["/n/a.md", "/n/a.md", "/n/b.md", None, "/n/c.md"])
    assert notes == ["/n/a.md", "/n/b.md", "/n/c.md"]
    scores = score_one(notes, ["b.md", "c.md"])
    assert scores["hit@1"] == 0 and scores["MRR@10"] == 0.5 and scores["recall@10"] == 1.0
    assert 0 < scores["nDCG@10"] < 1
    # the same folder ingested from two places: the second copy of an answer is no second hit
    twice = score_one(["/a/b.md", "/copy/b.md", "/a/x.md"], ["b.md"])
    assert twice == {"hit@1": 1.0, "MRR@10": 1.0, "nDCG@10": 1.0, "recall@10": 1.0}


def test_chunk_size_follows_the_embedding_model():
    from llm_secondbrain import config

    assert config.load({"SECONDBRAIN_EMBED_MODEL": "all-minilm"}).max_chars == 1000
    assert config.load({"SECONDBRAIN_EMBED_MODEL": "all-minilm:l6-v2"}).max_chars == 1000
    assert config.load({}).max_chars == config.DEFAULT_MAX_CHARS  # nomic-embed-text
    assert config.load({"SECONDBRAIN_EMBED_MODEL": "all-minilm",
                        "SECONDBRAIN_MAX_CHARS": "700"}).max_chars == 700


def test_chinese_japanese_and_korean_are_found_by_words_and_phrases(run, tmp_path):
    """A word inside a run of Han characters, kana or Hangul is found by the lexical lane, a
    backticked CJK phrase by the literal lane; Latin words beside them as before."""
    notes = write_notes(tmp_path / "n", {
        "zh.md": "# caffeinate\n\n防止 Mac 进入休眠状态，直到命令结束：caffeinate -i make\n",
        "zh2.md": "# pmset\n\n修改电源管理设置，例如显示电池状态。\n",
        "ja.md": "# tar\n\nGNU tar は、アーカイブプログラムです。複数のファイルを格納します。\n",
        "ko.md": "# 메모\n\n회의는 학교에서 열렸고 예산을 논의했습니다.\n",
    })
    run("brain", "ingest", notes, "--no-embed")

    def top(query, *args):
        out = run("brain", "recall", query, "--json", *args).stdout.splitlines()
        return [json.loads(line)["path"].rsplit("/", 1)[1] for line in out]

    assert top("休眠", "--mode", "lexical")[0] == "zh.md"  # inside the run 防止…休眠状态
    assert top("显示电池状态", "--mode", "lexical")[0] == "zh2.md"
    assert top("`进入休眠`")[0] == "zh.md"
    assert top("アーカイブ", "--mode", "lexical") == ["ja.md"]
    assert top("학교 예산", "--mode", "lexical") == ["ko.md"]  # 학교에서: a particle glued on
    assert top("caffeinate 休眠")[0] == "zh.md"


def test_words_alone_do_not_answer_a_question_whose_weight_lies_in_words_no_note_holds(run, tmp_path, ollama):
    """`--mode lexical` has no meaning to weigh: when the words no note holds (Ansible,
    playbook) weigh half the question or more, the few common words a note shares with it
    (install, packages, hosts) are no answer, and recall says "nothing" instead of handing
    that note over. A question in the notes' own words still gets its note."""
    notes = {
        "fleet.md": "Install the packages listed in packages.txt on all hosts with pssh before the upgrade.",
        "tomatoes.md": "Tomatoes want deep watering twice a week and a stake once they flower.",
        "compost.md": "Turn the compost heap every month; add dry leaves when it smells sour.",
        "roses.md": "Prune the roses in late winter, just above an outward facing bud.",
        "slugs.md": "Beer traps and copper tape keep slugs away from the lettuce beds.",
        "soil.md": "Clay soil drains slowly: dig in grit and organic matter before planting.",
        "seeds.md": "Sow chilli seeds indoors in February on a warm windowsill.",
        "bikes.md": "Oil the bike chain after every wet ride and check the brake pads monthly.",
    }
    run("brain", "ingest", write_notes(tmp_path / "n", notes), "--no-progress")
    assert recall_json(run, "ansible playbook to install packages on all hosts", "--mode", "lexical") == []
    hits = recall_json(run, "install packages on all hosts", "--mode", "lexical")
    assert hits[0]["path"].endswith("fleet.md")


def test_the_floor_says_nothing_for_what_the_brain_does_not_hold(run, tmp_path, ollama):
    """Judged on the brain's own scale (the stub's bag of words here, MiniLM in bench/), in
    every mode: a question about something no note names gets "nothing", one about the notes
    gets its note, and a model is given only the passages near the top one."""
    notes = {f"{name}.md": text for name, text in {
        "tomatoes": "Tomatoes want deep watering twice a week and a stake once they flower.",
        "compost": "Turn the compost heap every month; add dry leaves when it smells sour.",
        "roses": "Prune the roses in late winter, just above an outward facing bud.",
        "slugs": "Beer traps and copper tape keep slugs away from the lettuce beds.",
        "soil": "Clay soil drains slowly: dig in grit and organic matter before planting.",
        "seeds": "Sow chilli seeds indoors in February on a warm windowsill.",
    }.items()}
    run("brain", "ingest", write_notes(tmp_path / "g", notes), "--no-progress")
    for mode in ("hybrid", "dense", "lexical"):
        assert recall_json(run, "How do I roll back a Kubernetes deployment?", "--mode", mode) == []
    # most of the question's weight is in words no note holds (frost, cloth): meaning must
    # stand higher than for a question in the notes' own words
    assert recall_json(run, "frost cloth for the lettuce") == []
    assert recall_json(run, "keep slugs off the lettuce")[0]["path"].endswith("slugs.md")
    hits = recall_json(run, "tomatoes: deep watering twice a week?")
    assert hits[0]["path"].endswith("tomatoes.md")
    prompt = json.loads(run("-m", "echo", "-f", "brain:tomatoes deep watering", "hi").stdout)["prompt"]
    assert "tomatoes.md" in prompt and "roses.md" not in prompt
    # a fresh process reads the scale the embedder kept, and comes to the same verdicts
    for query, want in (("How do I roll back a Kubernetes deployment?", "nothing in the brain matches"),
                        ("tomatoes: deep watering twice a week?", "tomatoes.md")):
        done = subprocess.run(llm_cmd("brain", "recall", query), capture_output=True, text=True, check=True)
        assert want in done.stdout + done.stderr
