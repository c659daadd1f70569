"""Jupyter notebooks (.ipynb): markdown and code cells in order, outputs left out.

Outputs are what the code printed (tracebacks, data frames, base64 images): large, repeated
on every run, and not what a person wrote. Code cells are kept between ``` fences so a chunk
reads as the notebook does. The notebook's first heading is its title; json is stdlib, so
notebooks need no extra.
"""
from __future__ import annotations

import json

from ..readers import Section
from ...segment import title as first_line
from ..sources import Skip, decode


def read(raw: bytes, path: str) -> list[Section]:
    try:
        notebook = json.loads(decode(raw))
    except (json.JSONDecodeError, RecursionError):
        raise Skip("corrupt") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):  # nbformat 3 kept cells in worksheets
        worksheets = notebook.get("worksheets") if isinstance(notebook, dict) else None
        cells = [c for w in worksheets or [] if isinstance(w, dict) for c in w.get("cells", [])]
    if not cells and not isinstance(notebook, dict):
        raise Skip("corrupt")
    language = ((notebook.get("metadata") or {}).get("kernelspec") or {}).get("language", "")
    parts, title = [], None
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", cell.get("input", ""))
        text = "".join(source) if isinstance(source, list) else str(source)
        if not text.strip():
            continue
        if cell.get("cell_type") == "code":
            parts.append(f"```{language}\n{text.strip()}\n```")
        elif cell.get("cell_type") in ("markdown", "raw", "heading"):
            parts.append(text.strip())
            if title is None and text.lstrip().startswith("#"):
                title = first_line(text)
    return [Section("\n\n".join(parts), title=title)]
