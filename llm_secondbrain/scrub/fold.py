r"""The text as a reader sees it, where it is written otherwise: a second view the rules also read.

A secret can be written so that a person reads it and a pattern does not:
- characters that take no space: a zero-width space or joiner, a soft hyphen, a word joiner, a
  byte-order mark, a direction mark. Chat apps, word processors and web pages put them inside
  words (a soft hyphen where a line may break, a zero-width space to stop a link), so
  `AKIA\u200bQ7ZK…` or `pass\u200bword:` arrives from a copy and paste;
- spaces that do not break (`Mot de passe\u202f:`, as French typography writes it);
- full-width letters, digits and signs (U+FF01-FF5E), which Japanese and Chinese input methods
  type: `パスワード：Ｈｙｔｔａ２０２４！`, `ＡＰＩキー：ｓｋ－…`;
- inline HTML around a value, in Markdown or a pasted page (`Password: <code>…</code>`), and an
  HTML table pasted into a note, read as the table it shows: each row a line, its cells cut by
  `|` (`<tr><th>SSID</th><th>Password</th></tr>` is ` | SSID | Password | `), a `<br>` a line break;
- escapes, as the text's format writes a character: a URL's, a log's or a form body's percent-
  escapes (`next=%2Fcb%3Faccess_token%3Dghp_…`, `%E5%AF%86%E7%A0%81=…`), HTML's character
  references in a pasted or saved page (`<b>Nordlicht55&amp;</b>`, `&#106;&#117;…`), and JSON's
  `\u` escapes (`"\u30d1\u30b9\u30ef\u30fc\u30c9": …`).

``view(text)`` gives the lines around any of these with each read as what it stands for (an
invisible character or a tag dropped, the others as the character they write), and a map from that view's
positions back to the text's. The rules read the view as well as the text, and what they find
there is redacted in the text, over every character that wrote it: one mechanism for every
rule, where a rule per encoding would be one branch per case. The text itself is never changed;
only what is redacted is.
"""
from __future__ import annotations

import html
from bisect import bisect_right

from .labels import _HEADER_STEM
from .patterns import lazy

# Format characters that show nothing (Unicode category Cf, those found inside words), dropped:
# soft hyphen, Mongolian vowel separator, zero-width space, non-joiner and joiner, direction marks
# and embeddings, word joiner and invisible operators, isolates, byte-order mark.
_INVISIBLE = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_SPACES = "\u00a0\u2007\u2009\u200a\u202f"  # spaces that do not break, read as a space
# escapes: a run of percent-escapes (UTF-8 bytes together), a character reference, a \u escape
_PERCENT = r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*"
_REFERENCE = r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
_U_ESCAPE = r"\\u[0-9A-Fa-f]{4}"
# inline HTML that formats a word in Markdown or a pasted page, which a reader never sees
# ("Password: <code>…</code>", "<b>…</b>", "<span style=…>…</span>"), dropped
_TAG_NAMES = "b|strong|i|em|u|s|code|kbd|samp|tt|var|mark|span|font|small|big"
_TAG = f"(?:{_TAG_NAMES})(?:[ \t][^<>\n]*)?>"
# a table's tags, with the blanks and line breaks between two of them (a row written over lines)
_TABLE_TAG = r"(?i:</?(?:table|thead|tbody|tfoot|tr|th|td)(?:[ \t][^<>\n]*)?>(?:\s*(?=</?t[a-z]*[ \t>]))?|<br[ \t]*/?>)"
_FOLD = lazy(f"[{_INVISIBLE}{_SPACES}\uff01-\uff5e]|{_PERCENT}|{_REFERENCE}|{_U_ESCAPE}|</?{_TAG}|{_TABLE_TAG}")
# What makes the lines around it worth reading again: an invisible character, a narrow or thin space that
# does not break, a full-width letter or digit, or an escape that may hide part of a secret (see
# _worth). Not what real text is full of and the rules already read: a no-break space (U+00A0,
# in every manual page groff renders; the rules' blanks take it), full-width signs alone
# (Chinese and Japanese prose writes its comma, colon and brackets full-width: ，：（）).
_UNSEEN = lazy(f"[{_INVISIBLE}{_SPACES.replace(chr(0xA0), '')}\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
# each escape searched for alone, and only in a text holding its first character: a pattern that
# opens with a literal is found by a fast search, an alternation by a try at every position
_ESCAPE_RXS = (("%", lazy(_PERCENT)), ("&", lazy(_REFERENCE)), ("\\u", lazy(_U_ESCAPE)), ("<", lazy("</?" + _TAG)))


def _read(c: str) -> str | None:
    """What `c`, a match of _FOLD, stands for; None when it is to stay as written (an escape of a
    control character, of bytes that are no UTF-8, an unknown reference)."""
    first = c[0]
    if first == "<":
        tag = c[1:4].lower()
        if tag in ("tr>", "tr ", "br>", "br ", "br/"):
            return "\n"  # (a row, a line)
        if tag[:2] in ("td", "th") and tag[2:] in (">", " ", "\t") or tag == "/tr":
            return " | "  # (a cell opens, a row ends)
        return ""
    if len(c) == 1:
        if "\uff01" <= first:
            return chr(ord(first) - 0xFEE0)
        return " " if first in _SPACE_SET else ""
    if first == "%":
        try:
            out = bytes.fromhex(c.replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return None
    elif first == "&":
        out = html.unescape(c)
        if out == c:
            return None
        out = out.translate(_SPACE_MAP)
    else:
        out = chr(int(c[2:], 16))
        if "\ud800" <= out <= "\udfff":
            return None  # (half of a surrogate pair)
    return out if out.isprintable() else None


def _worth(text: str, a: int, b: int, read: str) -> bool:
    """Is the escape at [a, b), which reads `read`, worth reading the lines around it again? A
    percent-escape is (a URL's or a form's); a character reference only where escaping a value
    puts one (html.escape's & < > " ', right after a letter or digit: 'Nordlicht55&amp;',
    '6xtF&lt;5HZ'; '&#106;&#117;…' for letters) or a no-break space beside a label's ':' or
    '=' ('Passwort&nbsp;:&nbsp;…', as French and German pages set it), not HTML's markup between
    words ('Tom &amp; Jerry', '&lt;p&gt;', 'word&nbsp;word'); a \\u escape only in a run that spells letters
    (an escaped word, '\\u30d1\\u30b9…'), not a string's one sign ('\\u2022')."""
    c = text[a]
    if c == "%":
        return True
    if c == "&":
        if text[a + 1] == "#":
            return read.isascii() and read.isalnum()
        return (read in _ESCAPED and a > 0 and text[a - 1].isalnum()) or (
            read == " " and (text[a - 1:a] in (":", "=") or text[b:b + 1] in (":", "=")))
    return read.isalpha() and text.startswith("\\u", b)


def _table_cells(text: str) -> list[int]:
    """Where the tags of each HTML table are whose header row (`<th>` cells) names a secret's or a
    PIN's column: each line of such a table, from its header to `</table>`, is read again, as
    one table. A table of other things (a changelog's index of versions) is passed over."""
    out: list[int] = []
    head = _HEADER_CELL.search(text)
    while head is not None:
        row_end = _ROW_END.search(text, head.start(), head.start() + _HEADER_REACH)
        row = text[head.start():row_end.start() if row_end else head.start() + _HEADER_REACH].lower()
        end = _TABLE_END.search(text, head.start())
        stop = end.end() if end is not None else len(text)
        if _HEADER_STEM.search(row) is not None or any(w in row for w in ("pin", "puk", "code")):
            out += [m.start() for m in _CELL.finditer(text, head.start(), stop)]
        head = _HEADER_CELL.search(text, stop)
    return out


_HEADER_REACH = 2000  # how far a header row is read for its column names
_HEADER_CELL = lazy(r"<[tT][hH][ \t>]")
_ROW_END = lazy(r"(?i)</tr\s*>")
_TABLE_END = lazy(r"(?i)</table\s*>")
_CELL = lazy(r"(?i)</?t(?:[dhr]|head|body|foot)[ \t>]")
_ESCAPED = frozenset("&<>\"'")
_SPACE_SET = frozenset(_SPACES)
_SPACE_MAP = {ord(c): " " for c in _SPACE_SET}


class View:
    """The folded lines of a text, and the way back from the view's positions to the text's."""

    __slots__ = ("text", "_f", "_o", "_copied")

    def __init__(self, text: str, f: list[int], o: list[int], copied: list[bool]):
        self.text = text
        self._f = f  # where each piece of the view starts, in the view
        self._o = o  # where it starts in the original (one more entry: where the last piece ends)
        self._copied = copied  # a run copied as it was (one to one), or what one match stands for

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


_AROUND = 2  # lines read again before and after the line that holds what is written otherwise


def _paragraphs(text: str, at: list[int]) -> list[tuple[int, int]]:
    """The parts of paragraphs to read again for the positions `at` (sorted), each once: the line
    holding a position and _AROUND lines on either side, within its paragraph (from the blank line
    before to the blank line after). A label and its value share those lines; a saved web page or
    a source file with no blank line is not read again whole for each escape in it. Each search
    starts where the last part ended, so the text is read once, not once per part."""
    out: list[tuple[int, int]] = []
    floor = 0
    n = len(text)
    stop = -1  # where the paragraph last looked for ends (found once for all the parts in it)
    for p in at:
        if p < floor:
            continue
        para = max(text.rfind("\n\n", floor, p), text.rfind("\n\r\n", floor, p))
        start = p
        for _ in range(_AROUND + 1):
            start = text.rfind("\n", max(floor, para + 1), start)
            if start < 0:
                break
        start = max(start + 1, para + 1, floor)
        if stop <= p:
            m = _BLANK_LINE.search(text, p)
            stop = m.start() + 1 if m is not None else n
        end = p
        for _ in range(_AROUND + 1):
            end = text.find("\n", end, stop)
            if end < 0:
                end = stop
                break
            end += 1
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], end)  # (it runs on from the last part)
        else:
            out.append((start, end))
        floor = end
    return out


def view(text: str) -> View | None:
    """The folded view of the lines of `text` around what is written otherwise, or None when
    nothing is (most texts: the rules then read the text once, as before). Only those lines are
    read again (see _paragraphs), set apart by blank lines."""
    at = []
    if not text.isascii():
        at = [m.start() for m in _UNSEEN.finditer(text)]
    for first, rx in _ESCAPE_RXS:
        if first not in text:
            continue
        if first == "<":  # a tag that opens a value or closes a label: right after a ':' or a '=' and blanks
            at += [m.start() for m in rx.finditer(text) if text[max(0, m.start() - 3):m.start()].rstrip(" \t")[-1:] in (":", "=")]
            at += _table_cells(text)
        else:
            for m in rx.finditer(text):
                read = _read(m.group())
                if read and _worth(text, m.start(), m.end(), read):
                    at.append(m.start())
    at.sort()
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
            read = _read(m.group())
            if read is None:
                continue  # (left as written: part of the run copied as it is)
            a, b = m.span()
            if a > last:
                piece(last, text[last:a], True)
            if read:
                piece(a, read, False)
            last = b
        if last < end:
            piece(last, text[last:end], True)
    o.append(end)
    return View("".join(out), f, o, copied)
