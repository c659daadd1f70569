"""HTML (and the XHTML inside EPUBs and e-mails): the visible text only, with the `<title>`.

Scripts, styles, navigation, headers, footers and asides are left out: they repeat on every
page of a site and would make every saved page match every query about the site's menu.
Block elements become paragraphs (blank lines), so segmenting keeps a page's paragraphs whole.

selectolax (MIT, the `html` extra) parses with lexbor, about ten times faster than the
standard library's `html.parser`, which is the fallback: HTML needs no extra to be read.

Building a tree costs lexbor time in proportion to the depth of the elements still open at
each block tag (20,000 nested `<div>`s: 1.5 s; 100,000, in a 2 KB zip: minutes). In a page
nested deeper than browsers build (`Limits.depth`), the block tags past that depth are taken
out before parsing (their text stays, run together with their parent's): 3.3 million nested
`<div>`s read in 4 s, not hours. `html.parser` keeps no tree, so it needs no such care.
"""
from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from itertools import accumulate
from operator import sub

from ..readers import MAX_DEPTH, Limits, Section, Sections
from ..sources import Skip

HIDDEN = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside",
          "form", "button", "select", "iframe", "object")
BLOCKS = ("p", "div", "section", "article", "main", "h1", "h2", "h3", "h4", "h5", "h6",
          "blockquote", "pre", "table", "ul", "ol", "dl", "figure", "figcaption", "hr",
          "address", "details", "summary")
LINES = ("br", "li", "tr", "dt", "dd")
CELLS = ("td", "th")
# Marks put where elements begin, turned into text once all whitespace is collapsed.
_PARA, _LINE, _CELL = "\x1e", "\x1f", "\x1d"
_SPACE = re.compile(r"[^\S\x1d\x1e\x1f]+")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.I)
# The block tags whose start makes a tree builder look down the stack of open elements (they
# close an open <p>): what makes nesting cost time. Counted in lower case (`nesting`), taken
# out whole where too deep (`flattened`).
_DEEP = ("div|section|article|aside|main|nav|header|footer|blockquote|ul|ol|dl|menu|dir|fieldset|"
         "figure|figcaption|details|summary|dialog|center|address|hgroup|search|pre|listing")
_NESTING = re.compile(rf"<(/?)(?:{_DEEP})[\s/>]")
_NESTING_TAG = re.compile(rf"<(/?)(?:{_DEEP})(?=[\s/>])[^>]*>", re.I)


def read(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    title, text = visible_text(decode_markup(raw), limits.depth)
    sections = Sections(limit=limits.text)
    sections.add(Section(text, title=title))
    return sections


def decode_markup(raw: bytes) -> str:
    """Markup bytes as text: a BOM, else the page's <meta charset> (UTF-8 for one claiming
    UTF-16), else UTF-8, else Windows-1252 (what browsers assume for unlabelled legacy pages)."""
    if raw.startswith(codecs.BOM_UTF8):
        return raw[3:].decode("utf-8", "replace")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16", "replace")
    declared = _CHARSET.search(raw[:4096])
    if declared:
        try:
            codec = codecs.lookup(declared.group(1).decode("ascii")).name
            # a <meta> read as ASCII says the page is not UTF-16 or UTF-32, whatever it claims
            # (browsers then read UTF-8, as the HTML standard says)
            return raw.decode("utf-8" if codec.startswith(("utf-16", "utf-32")) else codec, "replace")
        except (LookupError, UnicodeError, ValueError):  # unknown, or a codec that always fails
            pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", "replace")


def visible_text(markup: str, max_depth: int = MAX_DEPTH) -> tuple[str | None, str]:
    """(title, visible text) of an HTML document or fragment."""
    if "\x00" in markup:
        raise Skip("binary")
    try:
        from selectolax.lexbor import LexborHTMLParser
    except ImportError:
        return _stdlib_text(markup)
    if nesting(markup) > max_depth:
        markup = flattened(markup, max_depth)
    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text().split()) if title_node is not None else None
    tree.strip_tags(list(HIDDEN))
    for selector, mark in ((",".join(BLOCKS), _PARA), (",".join(LINES), _LINE), (",".join(CELLS), _CELL)):
        for node in tree.css(selector):
            node.insert_before(mark)
    root = tree.body or tree.root
    text = root.text(separator="") if root is not None else ""
    return title or None, _layout(text)


def nesting(markup: str) -> int:
    """How deep the block tags that cost a tree builder time nest. An end tag without a
    start is ignored, as parsers do: the depth is each running total less the lowest total
    before it (so a thousand stray end tags cannot hide a thousand starts after them)."""
    steps = [-1 if closing else 1 for closing in _NESTING.findall(markup.lower())]
    levels = list(accumulate(steps, initial=0))
    return max(map(sub, levels, accumulate(levels, min)))


def flattened(markup: str, max_depth: int) -> str:
    """`markup` without the block tags nested deeper than `max_depth` (each becomes a
    space), so that no tree deeper than that is built."""
    depth = 0

    def tag(match: re.Match) -> str:
        nonlocal depth
        if match.group(1):  # an end tag: dropped with the start tag it closes
            depth = max(depth - 1, 0)
            return match.group(0) if depth < max_depth else " "
        depth += 1
        return match.group(0) if depth <= max_depth else " "

    return _NESTING_TAG.sub(tag, markup)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.hidden = 0
        self.in_title = False
        self.in_head = False

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in HIDDEN:
            self.hidden += 1
        elif tag == "title":
            self.in_title = True
        elif tag == "head":
            self.in_head = True
        elif tag == "body":
            self.in_head = False
        elif tag in BLOCKS:
            self.parts.append(_PARA)
        elif tag in LINES:
            self.parts.append(_LINE)
        elif tag in CELLS:
            self.parts.append(_CELL)

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag in LINES or tag in BLOCKS:  # <br/>, <hr/>
            self.parts.append(_LINE if tag in LINES else _PARA)

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "title":
            self.in_title = False
        elif tag == "head":
            self.in_head = False
        elif tag in BLOCKS:
            self.parts.append(_PARA)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.hidden and not self.in_head:
            self.parts.append(data)


def _stdlib_text(markup: str) -> tuple[str | None, str]:
    collector = _Collector()
    collector.feed(markup)
    collector.close()
    title = " ".join("".join(collector.title).split())
    return title or None, _layout("".join(collector.parts))


def _layout(text: str) -> str:
    """Collapse the markup's whitespace, then turn the element marks into blank lines, line
    breaks and cell separators."""
    text = _SPACE.sub(" ", text)
    paragraphs = []
    for para in text.split(_PARA):
        lines = []
        for line in para.split(_LINE):
            cells = [c.strip() for c in line.split(_CELL)]
            line = " | ".join(c for c in cells if c)
            if line:
                lines.append(line)
        if lines:
            paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)
