"""`llm brain mcp`: the brain as a Model Context Protocol server over stdio.

Agents outside `llm` (desktop chat apps, coding agents, editors) speak MCP. This face offers
the same four things the others do, through the one façade: `recall` (its input schema made
from RecallOptions, so it cannot drift from the CLI), `sources`, `stats` and, unless
read-only, `remember`.

The server is long-lived, so it keeps one SecondBrain open and says so to the vector index
(`vindex.keep_warm`): from the first query on it keeps the vectors' sign bits in memory (with
NumPy, which the `mcp` extra installs) and a large brain's dense search starts there. It still
reads the SQLite file per query, and the copy follows the brain's vectors version, so what
another process (an ingest, an embed) committed meanwhile is in the next answer. The brain is
used from one worker thread at a time (one SQLite connection), off the event loop.

Arguments are checked against each tool's schema first: a bad one is a tool error the model
reads and can correct (isError), never a crash of the server; an unknown tool is a protocol
error. Needs the `mcp` extra; nothing here is imported by any other command.
"""
from __future__ import annotations

import functools
import json
from typing import Any, Callable

import anyio
import anyio.to_thread
import jsonschema
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .. import options
from ..recall import vindex
from ..api import SecondBrain, context_text
from ..scrub import scrub
from ..store import DB_ERRORS, BrainError

INSTRUCTIONS = (
    "The user's personal second brain: their own notes, documents, code and chat logs, with "
    "secrets redacted. Use recall before answering from memory about anything the user may "
    "have written down or decided; cite passages by their citation (path:line or fact:<id>). "
    "Use remember to keep a lasting fact the user tells you or asks you to keep."
)

RECALL = types.Tool(
    name="recall",
    description=(
        "Search the user's second brain by meaning and by exact token (invoice numbers, IBANs, "
        "ticket keys, error codes are matched literally). Returns up to k passages, best first, "
        "each cited as path:line (or fact:<id> for a remembered fact) with its score and "
        "project; quote the citation when you use a passage. Narrow with project, source "
        "(files, stdin, remember, ...), a path glob, or since/until ISO dates."),
    input_schema={**options.json_schema(), "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
SOURCES = types.Tool(
    name="sources",
    description=("List what the second brain holds: each file, stdin source or remembered fact, "
                 "with its project, number of chunks and when it was ingested."),
    input_schema={"type": "object", "properties": {
        "project": {"type": "string", "description": "Only this project"}},
        "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
STATS = types.Tool(
    name="stats",
    description=("How much the second brain holds: chunks by project and source, how many are "
                 "embedded, remembered facts, the embedding model, the file size."),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
REMEMBER = types.Tool(
    name="remember",
    description=(
        "Save one self-contained fact to the user's second brain (a decision, a preference, "
        "something the user asked you to keep), so recall finds it later, cited as fact:<id>. "
        "Secrets are redacted before it is stored; the same fact twice is stored once."),
    input_schema={"type": "object", "properties": {
        "text": {"type": "string", "minLength": 1, "description": "The fact, as one statement"},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Optional tags"},
        "project": {"type": "string", "description": "Optional project name"},
    }, "required": ["text"], "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                      idempotent_hint=True, open_world_hint=False),
)


class BrainServer:
    """The tools over one open brain."""

    def __init__(self, brain: SecondBrain, *, read_only: bool = False):
        self.brain = brain
        self.read_only = read_only
        self.tools = [RECALL, SOURCES, STATS] + ([] if read_only else [REMEMBER])
        self._by_name: dict[str, tuple[types.Tool, Callable[..., types.CallToolResult]]] = {
            RECALL.name: (RECALL, self.recall), SOURCES.name: (SOURCES, self.sources),
            STATS.name: (STATS, self.stats), REMEMBER.name: (REMEMBER, self.remember)}
        self._one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        offered = {tool.name for tool in self.tools}
        if params.name not in offered:
            why = " (this server is read-only)" if params.name == REMEMBER.name else ""
            raise MCPError(types.INVALID_PARAMS, f"unknown tool: {params.name}{why}")
        tool, run = self._by_name[params.name]
        arguments = params.arguments or {}
        problem = _schema_problem(tool.input_schema, arguments)
        if problem:
            return _error(problem)
        client = ctx.session.client_params
        origin = f"mcp:{client.client_info.name}" if client and client.client_info else "mcp"
        call = functools.partial(run, **arguments)
        if params.name == REMEMBER.name:
            call = functools.partial(call, origin=origin)
        try:
            return await anyio.to_thread.run_sync(call, limiter=self._one_at_a_time)
        except (BrainError, ValueError) as e:
            return _error(str(e))
        except DB_ERRORS as e:
            return _error(f"brain database error: {e}")

    # -- the tools (run in a worker thread) ----------------------------------------------------

    def recall(self, query: str, **values: Any) -> types.CallToolResult:
        result = self.brain.search(query, options.RecallOptions.build(**values))
        hits = [{"rank": rank, "citation": h.citation, "score": h.score, "project": h.project,
                 "source": h.source, "ts": h.ts, "text": h.text}
                for rank, h in enumerate(result.hits, start=1)]
        text = context_text(result, self.brain.settings.fragment_chars)
        if result.notes:
            text = "\n".join(f"({note})" for note in result.notes) + "\n\n" + text
        return _ok(text, {"query": scrub(query), "mode": result.mode, "notes": result.notes, "hits": hits})

    def sources(self, project: str | None = None) -> types.CallToolResult:
        rows = [r for r in self.brain.sources() if project is None or r["project"] == project]
        text = "\n".join(f"{r['path']}  [{r['project']}]  {r['chunks']} chunks  {r['ingested']}"
                         for r in rows) or "The second brain holds no sources yet."
        return _ok(text, {"sources": rows})

    def stats(self) -> types.CallToolResult:
        stats = self.brain.stats()
        return _ok(json.dumps(stats, indent=2), stats)

    def remember(self, text: str, tags: list[str] = (), project: str | None = None,
                 origin: str = "mcp") -> types.CallToolResult:
        fact = self.brain.remember(text, tags=tags, project=project, origin=origin)
        said = "Remembered" if fact.stored else "Already remembered"
        note = ""
        if (fact.embedding or {}).get("error"):
            note = " (found by its words until the embedding server answers)"
        return _ok(f"{said} as {fact.citation}{note}: {fact.text}", fact.as_dict())


def _schema_problem(schema: dict, arguments: dict) -> str | None:
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return f"invalid argument{' ' + where if where else ''}: {error.message}"


def _ok(text: str, structured: dict) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def serve(brain: SecondBrain, *, read_only: bool = False) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    from importlib.metadata import version

    vindex.keep_warm()
    tools = BrainServer(brain, read_only=read_only)
    server = Server("llm-secondbrain", version=version("llm-secondbrain"), instructions=INSTRUCTIONS,
                    on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
