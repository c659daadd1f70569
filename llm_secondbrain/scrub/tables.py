"""Cells under their column's header: Markdown tables, tables cut by pipes or tabs, CSV rows.

People keep credentials in tables ("| Service | User | Password |") and password managers export
them as CSV ("name,url,username,password"); there the label is the column's header, lines away
from the value. A table need not be Markdown: a spreadsheet's TSV export, a pipe table typed
without its "|---|" row, and the rows the HTML and DOCX readers write ("NAS | admin | …") are
read by their header line alone, when every cell of it is a name. This module only reads the layout and hands each cell to the caller together with
its header; whether the header names a secret and the cell holds one is ``scrub``'s judgement.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from .patterns import compiled

_MAX_ROWS = 500  # rows read under one header: the cost stays linear in the text
_MAX_COLUMNS = 40


# a Markdown table's header (a line with a letter in it) and its delimiter row: "|---|:---:|",
# "--- | ---" (each cell dashes, colons at the ends). (The lookahead for the letter is atomic: a
# header that is not followed by a rule is read once.)
_TABLE = (r"(?m)^(?=[^\n]*[^\W\d_])[^\n]*\n"
          r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*){1,40}\|?[ \t]*\r?$")
# one CSV field: quoted (a doubled quote inside) or bare, up to the next comma
_CSV_FIELD = r'[ \t]*(?:"((?:[^"\n]|"")*)"|([^SEP\n]*))'  # (SEP: the line's separator)
_HEADER_NAME = r"[^\W\d_][\w .-]{0,39}"  # (in any script: Lösenord, Contraseña, Mật khẩu, Пароль)


# a heading, or a line that is only a label, over a list ("## Passwords", "**Gate codes**",
# "PINs:"): heading marks, emphasis and up to three words before the label; emphasis and a colon
# after it; perhaps a blank line before the list
_HEADING_BEFORE = r"[ \t]*(?:#{1,6}[ \t]+)?(?:\*\*|__)?(?:[^\W\d_][\w'-]*[ \t]+){0,3}"
_HEADING_AFTER = r"(?:\*\*|__)?[ \t]*:?[ \t]*(?:\*\*|__)?(?=\r?\n)"
_BLANK_LINE = r"\r?\n[ \t]*(?=\r?\n)"


def list_under(text: str, a: int, b: int) -> int:
    """Where the list under a heading whose label is text[a:b] starts (the line break before its
    first item, past one blank line), or -1 when the label's line is no such heading."""
    after = compiled(_HEADING_AFTER).match(text, b)
    if after is None or compiled(_HEADING_BEFORE).fullmatch(text, text.rfind("\n", 0, a) + 1, a) is None:
        return -1
    blank = compiled(_BLANK_LINE).match(text, after.end())
    return blank.end() if blank is not None else after.end()


def _line_at(text: str, pos: int) -> tuple[int, int]:
    """(start, end) of the line holding pos, without its line break."""
    bol = text.rfind("\n", 0, pos) + 1
    eol = text.find("\n", pos)
    if eol < 0:
        eol = len(text)
    if eol > bol and text[eol - 1] == "\r":
        eol -= 1
    return bol, eol


def _pipe_cells(text: str, bol: int, eol: int) -> list[tuple[int, int]]:
    """The (start, end) of each cell's text in a table row, blanks around it left out."""
    line = text[bol:eol]
    cuts = [i for i, c in enumerate(line) if c == "|" and (i == 0 or line[i - 1] != "\\")]
    bounds = [-1, *cuts, len(line)]
    cells = []
    for left, right in zip(bounds, bounds[1:]):
        s, e = bol + left + 1, bol + right
        while s < e and text[s] in " \t":
            s += 1
        while e > s and text[e - 1] in " \t":
            e -= 1
        cells.append((s, e))
    stripped = line.strip(" \t")
    if stripped.startswith("|"):
        cells = cells[1:]  # (the empty text before a leading pipe)
    if stripped.endswith("|") and not stripped.endswith("\\|"):
        cells = cells[:-1]
    return cells


def _header(name: str) -> str:
    """A header cell as one identifier: "**API key**" -> "API_key"."""
    return compiled(r"[ \t]+").sub("_", name.strip("*_` \t"))


def markdown_cells(text: str, hint: Callable[[int, int], bool],
                   is_label: Callable[[str], object]) -> Iterator[tuple[object, int, int]]:
    """(what is_label said of the header, start, end) of each cell in a column whose header
    is_label accepts (returns something true for), in every Markdown table of text whose header
    line, text[start:end], hint(start, end) accepts (a cheap look that passes over tables of
    other things)."""
    resume = 0  # the end of the rows last read: a table among them is not read again
    for table in compiled(_TABLE).finditer(text):
        if table.start() < resume:
            continue
        hb, he = _line_at(text, table.start())
        if hint(hb, he):
            cells, end = _markdown_rows(text, table, is_label)
            resume = max(resume, end)
            yield from cells


def markdown_cells_at(text: str, at: int, is_label: Callable[[str], object]
                      ) -> tuple[list[tuple[object, int, int]], int]:
    """The cells under is_label's columns of the Markdown table whose header is the line
    holding position at, if it heads one (`markdown_cells` without a search of the whole
    text); and where the rows read end."""
    bol = text.rfind("\n", 0, at) + 1
    table = compiled(_TABLE).match(text, bol)
    return _markdown_rows(text, table, is_label) if table is not None else ([], bol)


def _markdown_rows(text: str, table, is_label: Callable[[str], object]
                   ) -> tuple[list[tuple[object, int, int]], int]:
    """The cells under is_label's columns of the Markdown table matched by `table` (its header
    and delimiter row); and where the rows read end."""
    hb, he = _line_at(text, table.start())
    header = _pipe_cells(text, hb, he)
    if not 1 < len(header) <= _MAX_COLUMNS:
        return [], table.end()
    labels = {}
    for col, (s, e) in enumerate(header):
        name = _header(text[s:e])
        if compiled(_HEADER_NAME).fullmatch(name):
            said = is_label(name)
            if said:
                labels[col] = said
    out: list[tuple[object, int, int]] = []
    resume = table.end()
    pos = table.end() + 1
    for _ in range(_MAX_ROWS if labels else 0):
        if pos >= len(text):
            break
        bol, eol = _line_at(text, pos)
        if "|" not in text[bol:eol]:
            break
        cells = _pipe_cells(text, bol, eol)
        if len(cells) == len(header):  # (a row that lost or gained a cell cannot be placed)
            for col, said in labels.items():
                s, e = cells[col]
                if e > s:
                    out.append((said, s, e))
        resume = eol
        nl = text.find("\n", eol)
        pos = nl + 1 if nl >= 0 else len(text)
    return out, resume


def _tab_cells(text: str, bol: int, eol: int) -> list[tuple[int, int]]:
    """The (start, end) of each cell of a tab-separated row, blanks around it left out."""
    cells, s = [], bol
    for piece in text[bol:eol].split("\t", _MAX_COLUMNS + 1):
        a, b = s, s + len(piece)
        while a < b and text[a] == " ":
            a += 1
        while b > a and text[b - 1] == " ":
            b -= 1
        cells.append((a, b))
        s += len(piece) + 1
    return cells


def delimited_cells(text: str, at: int, is_label: Callable[[str], object]
                    ) -> tuple[list[tuple[object, int, int]], int]:
    """The cells under the secret columns of a header cut by tabs or pipes, on the line holding
    position at, with no Markdown delimiter row under it (`markdown_cells` reads those): every
    cell of the header a name, down to the first line with another number of cells; and where
    the rows read end."""
    hb, he = _line_at(text, at)
    inner = text[hb:he].strip(" \t|")  # (two cells at least: a cut between them)
    cut = _tab_cells if "\t" in inner else _pipe_cells if "|" in inner else None
    if cut is None or compiled(_TABLE).match(text, hb):
        return [], he  # (a Markdown table: its delimiter row says so, and markdown_cells reads it)
    header = cut(text, hb, he)
    if not 1 < len(header) <= _MAX_COLUMNS or he >= len(text):
        return [], he
    names = [_header(text[s:e]) for s, e in header]
    if not all(compiled(_HEADER_NAME).fullmatch(name) for name in names):
        return [], he  # a header names its columns; this line is data, code or prose
    labels = {col: said for col, name in enumerate(names) if (said := is_label(name))}
    return _column_cells(text, he, len(header), labels, cut)


def _column_cells(text: str, pos: int, width: int, labels: dict, cut: Callable
                  ) -> tuple[list[tuple[object, int, int]], int]:
    """The cells under `labels`' columns in the rows after a header that ends at pos, each row
    cut by `cut`, down to the first line that is blank or has another number of cells than
    `width`; and where the rows read end."""
    cells: list[tuple[object, int, int]] = []
    for _ in range(_MAX_ROWS if labels else 0):
        nl = text.find("\n", pos)
        if nl < 0:
            break
        bol, eol = _line_at(text, nl + 1)
        if eol == bol:
            break
        row = cut(text, bol, eol)
        if len(row) != width:
            break
        for col, said in labels.items():
            s, e = row[col]
            if e > s:
                cells.append((said, s, e))
        pos = eol
    return cells, pos


def _csv_fields(text: str, bol: int, eol: int, sep: str = ",") -> list[tuple[int, int]]:
    """(start, end) of each field's value in one CSV line cut by `sep` (inside its quotes when
    quoted; blanks around it left out)."""
    fields = []
    if text.find('"', bol, eol) < 0:  # no quotes: the separators alone cut the line
        for piece in text[bol:eol].split(sep, _MAX_COLUMNS + 1):
            s = bol + len(piece) - len(piece.lstrip(" \t"))
            fields.append((s, max(s, bol + len(piece.rstrip(" \t")))))
            bol += len(piece) + 1
        return fields
    pos = bol
    field = compiled(_CSV_FIELD.replace("SEP", sep))
    while True:
        m = field.match(text, pos, eol)
        g = 1 if m.group(1) is not None else 2
        end = m.end(g) if g == 1 else m.start(g) + len(m.group(g).rstrip(" \t"))
        fields.append((m.start(g), end))
        pos = m.end()
        while pos < eol and text[pos] in " \t":
            pos += 1
        if pos >= eol or text[pos] != sep or len(fields) > _MAX_COLUMNS:
            return fields
        pos += 1


def csv_cells(text: str, at: int, is_label: Callable[[str], object]) -> tuple[list[tuple[object, int, int]], int]:
    """The cells under the secret columns of the CSV header on the line holding position at
    (a password manager's export: "name,url,username,password"; a spreadsheet's, cut by
    semicolons where the comma is the decimal sign: "Name;Benutzer;Passwort"), down to the
    first line that is blank or has another number of fields; and where the rows read end."""
    hb, he = _line_at(text, at)
    sep = ";" if text.count(";", hb, he) >= max(2, text.count(",", hb, he)) else ","
    cut = functools.partial(_csv_fields, sep=sep)
    header = cut(text, hb, he)
    if not 2 < len(header) <= _MAX_COLUMNS:
        return [], he
    labels = {}
    for col, (s, e) in enumerate(header):
        name = text[s:e].strip()
        if not compiled(_HEADER_NAME).fullmatch(name):
            return [], he  # a header names its fields; this line is data or prose
        said = is_label(_header(name))
        if said:
            labels[col] = said
    return _column_cells(text, he, len(header), labels, cut)
