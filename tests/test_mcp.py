"""`llm brain mcp`, started as a subprocess and spoken to with the mcp SDK's own stdio client,
as a desktop app or coding agent would."""
import asyncio
import json
import os
import subprocess
import sys

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import ROOT, llm_cmd
from llm_secondbrain import options

NOTES = {
    "boiler.md": "The boiler service is booked with Varme AS every October.\n\nCode for the panel: 4471.",
    "cabin.md": "Cabin opening checklist: water pump, fuse box, chimney sweep in spring.",
    "invoice.md": "INV/2026/00037 was disputed: Nordlys were billed twice for the March workshop.",
}


def write_notes(folder, notes):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (folder / name).write_text(text)
    return folder


def server_env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def with_server(body, *args, client="test-agent"):
    """Start `llm brain mcp ARGS`, initialise a session and run `await body(session)`."""

    async def main():
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "llm", "brain", "mcp", *map(str, args)],
                                       env=server_env())
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=60,
                                     client_info=types.Implementation(name=client, version="1")) as session:
                await session.initialize()
                return await body(session)

    return asyncio.run(asyncio.wait_for(main(), 120))


def citations(result: types.CallToolResult) -> list[str]:
    assert not result.is_error, result.content
    return [hit["citation"] for hit in result.structured_content["hits"]]


@pytest.fixture
def notes(tmp_path, run, ollama):
    folder = write_notes(tmp_path / "notes", NOTES)
    run("brain", "ingest", folder, "--no-progress")
    return folder


def test_lists_its_tools_with_the_shared_recall_schema(notes):
    async def body(session):
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in with_server(body)}
    assert set(tools) == {"recall", "sources", "stats", "remember"}
    schema = tools["recall"].input_schema
    shared = options.json_schema()["properties"]
    assert schema["properties"] == {**shared, "query": {**shared["query"], "maxLength": 4000}}
    assert schema["required"] == ["query"]
    assert not {"pool", "fusion", "rrf_k", "lexical_weight", "exact"} & set(schema["properties"])
    assert {"query", "k", "mode", "project", "source", "path", "since", "until"} <= set(schema["properties"])
    assert all(len(tool.description) > 60 for tool in tools.values())
    assert tools["remember"].input_schema["required"] == ["text"]


def test_recall_returns_cited_passages_as_text_and_structured(notes):
    async def body(session):
        return (await session.call_tool("recall", {"query": "when is the boiler serviced?", "k": 2}),
                await session.call_tool("recall", {"query": "INV/2026/00037", "project": "notes",
                                                    "mode": "lexical"}),
                await session.call_tool("sources", {}),
                await session.call_tool("stats", {}))

    boiler, invoice, sources, stats = with_server(body)
    top = boiler.structured_content["hits"][0]
    assert top["citation"] == f"{notes / 'boiler.md'}:1" and top["project"] == "notes"
    assert isinstance(top["score"], float) and "Varme AS" in top["text"]
    assert boiler.structured_content["mode"] == "hybrid" and not boiler.structured_content["notes"]
    assert f"[1] {notes / 'boiler.md'}:1 (project notes)" in boiler.content[0].text
    assert len(boiler.structured_content["hits"]) == 1  # the cabin and the invoice are far below it
    assert citations(invoice)[0] == f"{notes / 'invoice.md'}:1"
    assert {row["path"] for row in sources.structured_content["sources"]} == {
        str(notes / name) for name in NOTES}
    assert stats.structured_content["chunks"] == stats.structured_content["embedded"] == 3


def test_remember_then_recall_finds_the_fact(notes, run, brain_path):
    secret = "ghp_" + "Zq8xLm2pWvR4tY7uK1oN3bH6jD9fS0gA5cE2"

    async def body(session):
        stored = await session.call_tool("remember", {
            "text": f"The boiler panel was moved to the garage; its token is {secret}",
            "tags": ["home"], "project": "house"})
        again = await session.call_tool("remember", {
            "text": f"The boiler panel was moved to the garage;  its token is {secret}"})
        found = await session.call_tool("recall", {"query": "where is the boiler panel now?",
                                                   "source": "remember"})
        return stored, again, found

    stored, again, found = with_server(body, client="desktop-app")
    assert stored.structured_content["citation"] == "fact:1" and stored.structured_content["stored"]
    assert again.structured_content["stored"] is False and again.structured_content["id"] == 1
    assert citations(found) == ["fact:1"] and secret not in json.dumps(found.structured_content)
    assert "[1] fact:1 (project house)" in found.content[0].text
    fact = json.loads(run("brain", "facts", "--json").stdout)
    assert fact["origin"] == "mcp:desktop-app" and fact["tags"] == ["home"]
    assert fact["embedding"] is None and json.loads(run("brain", "stats", "--json").stdout)["pending"] == 0


def test_read_only_offers_no_remember_and_refuses_it(notes, run):
    async def body(session):
        names = {tool.name for tool in (await session.list_tools()).tools}
        with pytest.raises(MCPError, match="unknown tool: remember .this server is read-only"):
            await session.call_tool("remember", {"text": "should not be stored"})
        return names, await session.call_tool("recall", {"query": "cabin checklist"})

    names, recall = with_server(body, "--read-only")
    assert names == {"recall", "sources", "stats"}
    assert citations(recall)[0].endswith("cabin.md:1")
    assert json.loads(run("brain", "stats", "--json").stdout)["facts"] == 0


def test_bad_arguments_are_tool_errors_and_the_server_keeps_answering(notes):
    bad = [
        ("recall", {"query": "boiler", "k": "five"}, "invalid argument k: 'five' is not of type 'integer'"),
        ("recall", {"query": "boiler", "k": 0}, "invalid argument k: 0 is less than the minimum of 1"),
        ("recall", {"query": "boiler", "mode": "psychic"}, "invalid argument mode: 'psychic' is not one of"),
        ("recall", {"k": 3}, "invalid argument: 'query' is a required property"),
        ("recall", {"query": "boiler", "pool": 5}, "invalid argument: Additional properties"),
        ("recall", {"query": "boiler", "k": 5000}, "invalid argument k: 5000 is greater than the maximum of 1000"),
        ("remember", {"text": ""}, "invalid argument text: '' should be non-empty"),
        ("remember", {"text": "   "}, "nothing to remember: the text is empty"),
        ("remember", {"text": "x", "tags": "a,b"}, "invalid argument tags: 'a,b' is not of type 'array'"),
    ]

    async def body(session):
        answers = [await session.call_tool(name, args) for name, args, _ in bad]
        with pytest.raises(MCPError, match="unknown tool: forget_everything"):
            await session.call_tool("forget_everything", {})
        return answers, await session.call_tool("recall", {"query": "boiler"})

    answers, after = with_server(body)
    for (name, args, message), answer in zip(bad, answers):
        assert answer.is_error, (name, args)
        assert answer.content[0].text.startswith(message), answer.content[0].text
    assert citations(after)[0].endswith("boiler.md:1")


def test_sees_what_another_process_ingests_meanwhile(notes, tmp_path):
    later = write_notes(tmp_path / "later", {"zebra.md": "The zebra crossing outside the office gets a new light."})

    async def body(session):
        before = [await session.call_tool("recall", {"query": "zebra crossing light", "mode": mode})
                  for mode in ("dense", "lexical")]
        await asyncio.sleep(0.5)  # the server warms its in-memory vectors from the first query
        ingest = subprocess.run(llm_cmd("brain", "ingest", later, "--no-progress"), env=server_env(),
                                capture_output=True, text=True, timeout=120)
        assert ingest.returncode == 0, ingest.stderr
        after = [await session.call_tool("recall", {"query": "zebra crossing light", "mode": mode})
                 for mode in ("dense", "lexical", "hybrid")]
        return before, after

    before, after = with_server(body)
    zebra = str(later / "zebra.md") + ":1"
    assert all(zebra not in citations(r) for r in before)
    for result in after:
        assert citations(result)[0] == zebra, result.structured_content["mode"]


def test_without_ollama_recall_answers_lexically_and_says_so(notes, monkeypatch):
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")

    async def body(session):
        return (await session.call_tool("recall", {"query": "cabin water pump"}),
                await session.call_tool("remember", {"text": "The cabin key is at the neighbour's"}))

    recall, remember = with_server(body)
    assert recall.structured_content["mode"] == "lexical"
    assert "answering lexically" in recall.structured_content["notes"][0]
    assert recall.content[0].text.startswith("(Ollama is not reachable")
    assert citations(recall)[0].endswith("cabin.md:1")
    assert remember.structured_content["embedding"]["pending"] == 1
    assert "found by its words until the embedding server answers" in remember.content[0].text


def test_a_brain_that_cannot_open_is_one_line_before_serving(run, tmp_path):
    result = run("brain", "mcp", "--read-only", "--db", tmp_path / "nowhere.db", ok=False)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: no brain at {tmp_path / 'nowhere.db'} (run: llm brain ingest PATH)"


def test_without_the_mcp_extra_it_names_the_extra(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "llm_secondbrain.faces.mcp_server", raising=False)
    result = run("brain", "mcp", ok=False)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: llm brain mcp needs the mcp extra: llm install 'llm-secondbrain[mcp]'")


# -- always an answer (issue 34) -----------------------------------------------------------------


def test_every_line_gets_an_answer_malformed_params_a_parse_error_a_bad_date(notes):
    """What the SDK's client never sends, written raw: each request is answered as JSON-RPC
    says, none left waiting, nothing on stderr, and the server goes on."""
    lines = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "oops"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": 7},
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {',
        [1, 2],
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": "x"},  # not answered
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 5}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "recall", "arguments": {"query": "boiler", "since": "99999999d"}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "recall", "arguments": {"query": "boiler service", "mode": "lexical"}}},
    ]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    wire = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    wire += [line if isinstance(line, str) else json.dumps(line) for line in lines]
    server = subprocess.Popen([sys.executable, "-m", "llm", "brain", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server_env())
    server.stdin.write("\n".join(wire) + "\n")
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(8)]  # calls answer in any order
    server.stdin.close()
    assert server.wait(timeout=60) == 0 and server.stderr.read() == ""
    by_id = {a.get("id"): a for a in answers if a.get("id") is not None}
    assert sorted(by_id) == [1, 2, 3, 5, 6, 7]
    assert sorted(a["error"]["code"] for a in answers if a.get("id") is None) == [-32700, -32600]
    assert [by_id[i]["error"]["code"] for i in (2, 3, 5)] == [-32602] * 3
    assert by_id[6]["result"]["isError"] and "date out of range" in by_id[6]["result"]["content"][0]["text"]
    assert by_id[7]["result"]["structuredContent"]["hits"][0]["citation"].endswith("boiler.md:1")


def test_a_line_refused_just_before_standard_input_ends_is_still_answered(notes):
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "1"}}})
    for bad in ("not json", "[1]"):  # (piping a request in and reading the answers: how one tries a server)
        done = subprocess.run([sys.executable, "-m", "llm", "brain", "mcp"], input=f"{init}\n{bad}\n",
                              capture_output=True, text=True, env=server_env(), timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        assert [a.get("id") for a in answers] == [1, None] and "error" in answers[1], done.stdout


def test_a_long_query_is_refused_at_once_and_a_slow_call_times_out_while_others_answer(notes, stub, monkeypatch):
    monkeypatch.setenv("SECONDBRAIN_CALL_SECONDS", "1")
    stub.delay = 4  # every embedding request: the hybrid recall waits on it

    async def body(session):
        order = []

        async def call(label, name, args):
            try:
                result = await session.call_tool(name, args)
            except MCPError as e:
                result = e
            order.append(label)
            return result

        return await asyncio.gather(
            call("slow", "recall", {"query": "boiler service"}),
            call("long", "recall", {"query": "boiler " * 800}),
            call("stats", "stats", {}),
            call("lexical", "recall", {"query": "cabin water pump", "mode": "lexical"})), order

    (slow, long, stats, lexical), order = with_server(body)
    assert order[-1] == "slow"  # the others were answered while it ran
    assert isinstance(slow, MCPError) and slow.error.code == types.REQUEST_TIMEOUT
    assert "took longer than 1 s" in slow.error.message
    assert long.is_error and "is too long" in long.content[0].text
    assert stats.structured_content["chunks"] == 3
    assert citations(lexical)[0].endswith("cabin.md:1")

