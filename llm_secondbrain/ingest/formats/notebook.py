"""Jupyter notebooks (.ipynb): markdown and code cells in order, outputs left out.

Outputs are what the code printed (tracebacks, data frames, base64 images): large, repeated
on every run, and not what a person wrote. Code cells are kept between ``` fences so a chunk
reads as the notebook does. The notebook's first heading is its title; json is stdlib, so
notebooks need no extra. What json refuses (a number past Python's 4,300 digits, nesting past
the stack) makes the notebook "corrupt" or "nested too deep"; a cell of the wrong shape is
passed over, as a notebook viewer does.
"""
from __future__ import annotations

import json

from ..readers import Limits, Section, Sections
from ...segment import title as first_line
from ..sources import Skip, decode


def read(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    try:
        notebook = json.loads(decode(raw))
    except RecursionError:
        raise Skip("nested too deep") from None
    except ValueError:  # not JSON, or a number too long to convert
        raise Skip("corrupt") from None
    if not isinstance(notebook, dict):
        raise Skip("corrupt")
    cells = notebook.get("cells")
    if not isinstance(cells, list):  # nbformat 3 kept cells in worksheets
        worksheets = notebook.get("worksheets")
        cells = [c for w in (worksheets if isinstance(worksheets, list) else [])
                 if isinstance(w, dict) and isinstance(w.get("cells"), list) for c in w["cells"]]
    language = _get(_get(notebook, "metadata"), "kernelspec").get("language", "")
    language = language if isinstance(language, str) else ""
    parts, title, size = [], None, 0
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            text = "".join(line for line in source if isinstance(line, str))
        else:
            text = source if isinstance(source, str) else ""
        kind = cell.get("cell_type")
        if not text.strip() or kind not in ("code", "markdown", "raw", "heading"):
            continue
        if kind == "code":
            parts.append(f"```{language}\n{text.strip()}\n```")
        else:
            parts.append(text.strip())
            if title is None and text.lstrip().startswith("#"):
                title = first_line(text)
        size += len(parts[-1]) + 2
        if size > limits.text:
            break
    sections = Sections(limit=limits.text)
    sections.add(Section("\n\n".join(parts), title=title))
    return sections


def _get(value, key: str) -> dict:
    """value[key] when both are mappings, else an empty one: metadata of any shape."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}
