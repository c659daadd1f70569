"""The text as a reader sees it, where it is written otherwise: a second view the rules also read.

A secret can be written so that a person reads it and a pattern does not:
- characters that take no space: a zero-width space or joiner, a soft hyphen, a word joiner, a
  byte-order mark, a direction mark. Chat apps, word processors and web pages put them inside
  words (a soft hyphen where a line may break, a zero-width space to stop a link), so
  `AKIA\u200bQ7ZK…` or `pass\u200bword:` arrives from a copy and paste;
- full-width letters, digits and signs (U+FF01-FF5E), which Japanese and Chinese input methods
  type: `パスワード：Ｈｙｔｔａ２０２４！`, `ＡＰＩキー：ｓｋ－…`;
- percent-escapes, as a URL, a log or a form body writes them:
  `next=%2Fcb%3Faccess_token%3Dghp_…`, `password%3DHytta2024%21`.

``view(text)`` gives the text with each of these read as what it stands for (the first dropped,
the second as ASCII, the third decoded), and a map from that view's positions back to the
text's. The rules read the view as well as the text, and what they find there is redacted in
the text, over every character that wrote it: one mechanism for every rule, where a rule per
encoding would be one branch per case. The text itself is never changed; only what is redacted
is.
"""
from __future__ import annotations

from bisect import bisect_right

from .patterns import lazy

# Characters dropped from the view: format characters that show nothing (Unicode category Cf,
# those found inside words): soft hyphen, Mongolian vowel separator, zero-width space, non-joiner
# and joiner, direction marks and embeddings, word joiner and invisible operators, isolates,
# byte-order mark. A full-width form (U+FF01-FF5E) is its ASCII character. A percent-escape of a
# printable ASCII character (%20-%7E) is that character; other escapes (UTF-8 bytes, controls)
# stay as written.
_INVISIBLE = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_ESCAPE = r"%(?:[2-6][0-9A-Fa-f]|7[0-9A-Ea-e])"
_FOLD = lazy(f"[{_INVISIBLE}\uff01-\uff5e]|{_ESCAPE}")
# What makes a paragraph worth reading again: an invisible character, a full-width letter or
# digit, or an escape. Full-width signs alone do not: Chinese and Japanese prose writes its
# comma, colon and brackets full-width (，：（）), and the rules read those as they are.
_UNSEEN = lazy(f"[{_INVISIBLE}\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_ESCAPE_RX = lazy(_ESCAPE)  # (each searched for alone is faster than both in one pattern)


class View:
    """The folded paragraphs of a text, and the way back from the view's positions to the
    text's."""

    __slots__ = ("text", "_f", "_o", "_copied")

    def __init__(self, text: str, f: list[int], o: list[int], copied: list[bool]):
        self.text = text
        self._f = f  # where each piece of the view starts, in the view
        self._o = o  # where it starts in the original (one more entry: where the last piece ends)
        self._copied = copied  # a run copied as it was (one to one), or one folded character

    def _piece(self, p: int) -> int:
        return bisect_right(self._f, p) - 1

    def start(self, p: int) -> int:
        """The original position of the view's character at `p`."""
        i = self._piece(p)
        return self._o[i] + (p - self._f[i] if self._copied[i] else 0)

    def end(self, p: int) -> int:
        """The original position just after the view's character at `p - 1` (a span's end)."""
        i = self._piece(p - 1)
        return self._o[i] + (p - self._f[i]) if self._copied[i] else self._o[i + 1]

    def back(self, items: list[tuple]) -> list[tuple]:
        """Spans of the view, as spans of the original: each covers every character that wrote
        what was found, invisible ones inside it too."""
        return [(self.start(s), self.end(e), *rest) for s, e, *rest in items if e > s]


_BLANK_LINE = lazy(r"\n\r?\n")


def _paragraphs(text: str, at: list[int]) -> list[tuple[int, int]]:
    """The paragraphs (from the blank line before to the blank line after) holding the positions
    `at` (sorted), each once. Each search starts where the last paragraph ended, so a text of
    many short paragraphs is read once, not once per paragraph."""
    out: list[tuple[int, int]] = []
    floor = 0
    for p in at:
        if p < floor:
            continue
        a = max(text.rfind("\n\n", floor, p), text.rfind("\n\r\n", floor, p))
        start = a + 1 if a >= 0 else floor
        m = _BLANK_LINE.search(text, p)
        floor = m.start() + 1 if m is not None else len(text)
        out.append((start, floor))
    return out


def view(text: str) -> View | None:
    """The folded view of the paragraphs of `text` that hold something written otherwise, or
    None when nothing is (most texts: the rules then read the text once, as before). Only those
    paragraphs are read again, set apart by blank lines: a secret and its label share a
    paragraph, and a 1 MB file with one escaped URL costs one paragraph more, not 1 MB."""
    at = []
    if not text.isascii():
        at = [m.start() for m in _UNSEEN.finditer(text)]
    if "%" in text:
        at = sorted(at + [m.start() for m in _ESCAPE_RX.finditer(text)])
    if not at:
        return None
    out: list[str] = []
    f: list[int] = []
    o: list[int] = []
    copied: list[bool] = []
    n = 0  # the view's length so far

    def piece(orig: int, s: str, as_is: bool) -> None:
        nonlocal n
        f.append(n)
        o.append(orig)
        copied.append(as_is)
        out.append(s)
        n += len(s)

    for start, end in _paragraphs(text, at):
        if out:
            piece(start, "\n\n", False)  # (maps to the paragraph's start: no span holds it)
        last = start
        for m in _FOLD.finditer(text, start, end):
            a, b = m.span()
            if a > last:
                piece(last, text[last:a], True)
            c = m.group()
            if len(c) == 3:
                piece(a, chr(int(c[1:], 16)), False)
            elif c >= "\uff01":
                piece(a, chr(ord(c) - 0xFEE0), False)
            last = b
        if last < end:
            piece(last, text[last:end], True)
    o.append(end)
    return View("".join(out), f, o, copied)
