"""Regular expressions compiled on first use, shared by the scrubber's modules.

Importing the scrubber happens in every `llm` invocation that loads the plugin, so it must stay
cheap: a module declares its patterns with ``lazy(src)`` and ``compile_all`` turns every one of
them into a compiled pattern, in every module that holds it (a pattern imported by another
module is the same object there, and is replaced there too), the first time text is scrubbed.
``compiled`` is the same for code that compiles a pattern where it is used.
"""
from __future__ import annotations

import functools
import re
import threading
from types import ModuleType


class Lazy:
    """A pattern's source, waiting to be compiled."""
    __slots__ = ("src", "flags")

    def __init__(self, src: str, flags: int = 0):
        self.src, self.flags = src, flags


def lazy(src: str, flags: int = 0) -> Lazy:
    return Lazy(src, flags)


_LOCK = threading.Lock()


def compile_all(*modules: ModuleType) -> None:
    """Replace every ``Lazy`` among the modules' globals by its compiled pattern (once each)."""
    with _LOCK:
        done: dict[int, re.Pattern] = {}
        for module in modules:
            g = vars(module)
            for name, value in list(g.items()):
                if isinstance(value, Lazy):
                    rx = done.get(id(value))
                    if rx is None:
                        rx = done[id(value)] = re.compile(value.src, value.flags)
                    g[name] = rx


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
