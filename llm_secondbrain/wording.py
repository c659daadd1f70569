"""Small pieces of wording shared by the summaries every face prints."""
from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """'1 chunk', '2 chunks' (or the irregular `many`)."""
    return f"{n} {noun if n == 1 else (many or noun + 's')}"
