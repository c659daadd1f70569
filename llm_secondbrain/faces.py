"""The fragment loader and the tool: recall as text for a model, through the façade. Both
degrade like the CLI: without Ollama or vectors they answer lexically and say so on stderr."""
from __future__ import annotations

import sys

import llm

from . import config
from .api import SecondBrain, context_text
from .options import RecallOptions

FRAGMENT_K = 8
TOOL_MAX_K = 20
_said: set[str] = set()


def _search(query: str, options: RecallOptions):
    settings = config.load()
    with SecondBrain.open(create=False, settings=settings) as brain:
        result = brain.search(query, options)
    for note in result.notes:
        if note not in _said:  # llm may resolve one fragment several times in a run
            _said.add(note)
            print(note, file=sys.stderr)
    result.hits = result.hits if result.relevant else []  # below the floor: nothing matches
    return result, settings


def fragment(argument: str) -> llm.Fragment:
    query = argument.strip()
    if not query:
        raise ValueError("brain: needs a query, as in -f brain:'INV/2026/00037'")
    result, settings = _search(query, RecallOptions(k=FRAGMENT_K))
    text = context_text(result, settings.fragment_chars)
    return llm.Fragment(f"Passages from my notes for: {query}\n\n{text}", source=f"brain:{query}")


def tool(query: str, k: int = 5) -> str:
    result, settings = _search(query, RecallOptions(k=max(1, min(int(k), TOOL_MAX_K))))
    return context_text(result, settings.fragment_chars)
