"""Chinese, Japanese and Korean text for a word index that splits on spaces.

FTS5's `unicode61` tokenizer keeps a run of Han characters (or kana, or Hangul) as one token, so
a Chinese phrase matched only where that exact run stood between punctuation. The index also
holds each such text in `chunks.cjk`: every CJK character of the chunk (and of its title) as a
token of its own, in order. A query's CJK characters are looked up the same way: single
characters, OR-joined, weighed by BM25; a span of them is a phrase of consecutive characters,
which is a substring match. Single characters were measured against the alternatives on the
development sets, BM25 alone (nDCG@10 semantic / mixed): tldr-zh unigrams 0.434 / 0.944,
bigrams 0.202 / 0.858, both 0.322 / 0.844, trigram index 0.042 / 0.778; manpages-ja
unigrams 0.208 / 0.917, bigrams 0.098 / 0.873. Text without CJK characters gets no such
column (NULL) and is indexed exactly as before.
"""
from __future__ import annotations

import re

# Han (with extension A and compatibility ideographs), kana, Hangul syllables and jamo, the CJK
# symbols block's iteration marks; extension B and beyond are astral.
CJK_CHARS = ("\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff"
             "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
             "\U00020000-\U0003134f")
RUN = re.compile(f"[{CJK_CHARS}]+")


def has_cjk(text: str | None) -> bool:
    return bool(text) and RUN.search(text) is not None


def index_form(*texts: str | None) -> str | None:
    """The CJK characters of `texts`, each run on a line, its characters apart; None when
    there are none (the column stays NULL)."""
    # text.isascii() runs at memory speed; the class's scan, ~90 MB/s, is for text that may hold some
    runs = [" ".join(m.group()) for text in texts if text and not text.isascii() for m in RUN.finditer(text)]
    return "\n".join(runs) if runs else None


def split_runs(text: str) -> list[tuple[str, bool]]:
    """`text` cut into (piece, is_cjk) in order, so the CJK runs can be looked up by character
    and everything else as before."""
    out, at = [], 0
    for m in RUN.finditer(text):
        if m.start() > at:
            out.append((text[at:m.start()], False))
        out.append((m.group(), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out
