"""Regular expressions compiled on first use, shared by the scrubber's modules.

Importing the scrubber happens in every `llm` invocation that loads the plugin, and a one-shot
recall scrubs one short query: compiling the catalogue's ~400 patterns up front cost it ~35 ms
of CPU for the handful a query reaches. So a module declares its patterns with ``lazy(src)``,
and each one compiles the first time any of its methods is used (`Lazy`). ``compiled`` is the
same for code that compiles a pattern where it is used.
"""
from __future__ import annotations

import functools
import re

# What the scrubber calls on a pattern: bound to the compiled pattern on first use, so later
# calls are a plain attribute lookup.
_METHODS = ("finditer", "search", "match", "fullmatch", "sub", "subn", "findall", "split")


class Lazy:
    """A pattern's source, compiled the first time it is used; then it answers as the compiled
    pattern does. Two threads may both compile it once: the same pattern either way."""

    def __init__(self, src: str, flags: int = 0):
        self.src, self.flags = src, flags

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and friends look for protocols: not a pattern's
            raise AttributeError(name)
        rx = self.__dict__.get("_rx")
        if rx is None:
            rx = re.compile(self.src, self.flags)
            self.__dict__.update({method: getattr(rx, method) for method in _METHODS}, _rx=rx)
        return getattr(rx, name)


def lazy(src: str, flags: int = 0) -> Lazy:
    return Lazy(src, flags)


@functools.cache
def compiled(src: str) -> re.Pattern:
    """Compile on first use (for the modules that compile a pattern where they use it)."""
    return re.compile(src)


def skipping(rx, text: str, skip: list):
    """finditer that jumps over the (sorted) skip ranges: key bodies, certificates."""
    pos = 0
    for a, b in skip:
        if b <= pos:
            continue
        if a > pos:
            yield from rx.finditer(text, pos, a)
        pos = b
    yield from rx.finditer(text, pos)
