"""The fragment loader and the tool: recall as text for a model. Both degrade like the CLI:
without Ollama or vectors they answer lexically and say so on stderr."""
from __future__ import annotations

import os
import sys

import llm

from .api import FRAGMENT_BUDGET, SecondBrain, context_text

FRAGMENT_K = 8
_said: set[str] = set()


def _budget() -> int:
    raw = os.environ.get("SECONDBRAIN_FRAGMENT_CHARS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else FRAGMENT_BUDGET


def _search(query: str, k: int):
    with SecondBrain.open(create=False) as brain:
        result = brain.search(query, k)
    for note in result.notes:
        if note not in _said:  # llm may resolve one fragment several times in a run
            _said.add(note)
            print(note, file=sys.stderr)
    return result


def fragment(argument: str) -> llm.Fragment:
    query = argument.strip()
    if not query:
        raise ValueError("brain: needs a query, as in -f brain:'INV/2026/00037'")
    text = context_text(_search(query, FRAGMENT_K), _budget())
    return llm.Fragment(f"Passages from my notes for: {query}\n\n{text}", source=f"brain:{query}")


def tool(query: str, k: int = 5) -> str:
    k = max(1, min(int(k), 20))
    return context_text(_search(query, k), _budget())
