"""The fragment loader and the tool: recall as text for a model, through the façade. Both
degrade like the CLI: without Ollama or vectors they answer lexically and say so on stderr."""
from __future__ import annotations

import re
import sys

import llm

from .. import config
from ..api import SecondBrain, context_text
from ..options import RecallOptions

FRAGMENT_K = 8
TOOL_MAX_K = 20
_said: set[str] = set()


def _search(query: str, options: RecallOptions):
    settings = config.load()
    with SecondBrain.open(create=False, settings=settings) as brain:
        result = brain.search(query, options)
    for note in result.notes:
        _note(note)
    result.hits = result.for_a_model()
    return result, settings


def _note(note: str) -> None:
    """Say it on stderr once per run: llm may resolve one fragment several times in a run."""
    if note not in _said:
        _said.add(note)
        print(note, file=sys.stderr)


_KIND_WORD = re.compile(r"(?:^|\s)(-?)kind:(\S+)(?=\s|$)")


def fragment(argument: str) -> llm.Fragment:
    # `!fragment brain:two words` in `llm chat` passes one word: %20 stands for a space
    # (no real token holds %20, and C++, snake_case or a+b pass unchanged).
    # `kind:note` keeps one kind of source, `-kind:email` leaves one out (repeatable).
    query = argument.replace("%20", " ").strip()
    kinds: dict[str, list[str]] = {"": [], "-": []}
    for sign, value in _KIND_WORD.findall(query):
        kinds[sign].append(value)
    query = _KIND_WORD.sub(" ", query).strip()
    if not query:
        raise ValueError("brain: needs a query, as in -f brain:'INV/2026/00037'")
    from ..scrub import scrub

    try:
        result, settings = _search(query, RecallOptions(k=FRAGMENT_K, kind=",".join(kinds[""]) or None,
                                                        exclude_kind=",".join(kinds["-"]) or None))
    except ValueError as e:  # llm prints it: it may repeat what was typed ("no kind 'AKIA…'")
        raise ValueError(scrub(str(e))) from None
    text = context_text(result, settings.fragment_chars)
    shown = scrub(query)  # the fragment goes to a model and into llm's log: no secret in it
    return llm.Fragment(f"Passages from my notes for: {shown}\n\n{text}", source=f"brain:{shown}")


def tool(query: str, k: int = 5, kind: str = "", exclude_kind: str = "") -> str:
    """The tool answers in words even when the question is wrong: the model can fix it."""
    if not isinstance(query, str):
        return "brain_recall needs a query: the words to look for"
    try:
        result, settings = _search(query, RecallOptions(k=_tool_k(k), kind=kind or None,
                                                        exclude_kind=exclude_kind or None))
    except ValueError as e:
        from ..scrub import scrub

        return f"brain_recall could not search: {scrub(str(e))}"
    return context_text(result, settings.fragment_chars)


def _tool_k(k: object) -> int:
    """The model's k held to 1..TOOL_MAX_K; a number it wrote as text ("3") or 3.0 is taken.
    What is no number at all (a list, null, 1e400 read as infinity) raised int()'s TypeError or
    OverflowError, which llm showed the model as Python's words."""
    try:
        return max(1, min(int(k), TOOL_MAX_K))
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"k must be a whole number from 1 to {TOOL_MAX_K}") from None


def remember(text: str, tags: str = "", project: str = "", turn: str | None = None,
             supersedes: int | None = None) -> str:
    """The brain_remember tool: store a fact; the answer tells the model how it is cited."""
    with SecondBrain.open(create=True, settings=config.load()) as brain:
        fact = brain.remember(text, tags=[tags] if tags else [], project=project or None,
                              origin="llm:brain_remember", turn=turn, supersedes=supersedes or None)
    error = (fact.embedding or {}).get("error")
    if error:
        _note(f"fact stored, embedding pending ({error.rstrip('.')}); run: llm brain embed")
    said = "Remembered" if fact.stored else "Already remembered"
    replaced = f" (it supersedes fact:{fact.supersedes})" if fact.supersedes else ""
    return f"{said} as {fact.citation}{replaced}: {fact.text}"
