"""Personal secrets: wallet seed phrases, two-factor backup codes, PINs and door codes, BitLocker keys.

These are what people keep in their own notes, and the scrubber's other rules cannot see them:
they are words or a few digits, with none of the entropy or vendor shape a token rule looks for.
Only a label says they are secrets ("seed phrase:", "backup codes", "PIN:", "door code is"), so
each rule here reads a label first and then the short value or list right after it (the cells
under a table's header, the items under a heading), never the whole document again. A BitLocker
recovery key is the exception: its shape alone gives it away, and the token scan, which sees
every long run of digits and dashes anyway, asks about it.

Every pattern is bounded and reads forward from where the last one stopped: the scan stays linear.
"""
from __future__ import annotations

import re

from .catalogue import RECOVERY_CODE_PARTS, RECOVERY_CODE_WORDS
from .patterns import compiled
from .tables import csv_cells, delimited_cells, list_under, markdown_cells_at


def personal(text: str, low: str, spans) -> None:
    """Add the spans of seed phrases, backup codes, PINs and door codes (``low`` is ``text``
    lower-cased, of the same length).

    Every label holds "seed", "phrase" (or "frase"), "code", "pin" or "puk", or is a word of
    catalogue.RECOVERY_CODE_WORDS: the scrubber calls this only when one of them is in the text,
    and here each is looked for once.
    """
    # ("phrase", "frase"; not "linseed" nor "erase")
    seed = [i for i in _hits(low, "seed", "rase") if _opens_word(low, i) or low.endswith(("ph", "f"), 0, i)]
    if seed:
        _seed_phrases(text, low, seed, spans)
    code = [i for i in _find_all(low, "code") if low[max(0, i - 20):i].rstrip(" -").endswith(_CODE_OWNERS)
            or compiled(_CODE_FOR_LOCK).match(low, i + 4) is not None]
    if code:  # ("encode", "VS Code", "code block" end here: only a word that says whose code it is)
        _backup_codes(text, low, (m.end() for m in _labels(low, code, _CODES_LABEL)), spans)
        _labelled_numbers(text, low, code, _LOCK_LABEL, _LOCK_VALUE, spans, "lock-code")
    device = sorted(i for w in _LOCK_DEVICES for i in _find_all(low, w) if _opens_word(low, i))
    if device:  # a lock named alone: "Garage keypad: 5332", "Safe combination: 12-34-56"
        _labelled_numbers(text, low, device, _LOCK_LABEL, _LOCK_VALUE, spans, "lock-code")
    # recovery codes named in another language (a word of a script without spaces may be glued on)
    parts = _CODE_WORDS_BY_PART if not low.isascii() else _CODE_WORDS_BY_ASCII_PART
    elsewhere = sorted(i + len(w) for part, words in parts if part in low for w in words
                       for i in _find_all(low, w) if _opens_word(low, i) or not low[i - 1].isascii())
    if elsewhere:
        _backup_codes(text, low, elsewhere, spans)
    pin = sorted(i for w in ("pin", "puk") for i in _find_all(low, w) if _opens_word(low, i) and _pin_word(low, i))
    if pin:  # (not "spin", "mapping", "pinned")
        _labelled_numbers(text, low, pin, _PIN_LABEL, _PIN_VALUE, spans, "pin")
    if pin or code or device:
        _number_columns(text, low, sorted({*pin, *code, *device}), spans)
    pins = [i for w in ("pins", "puks") for i in _find_all(low, w) if _opens_word(low, i)]
    if pins or code:
        _number_lists(text, low, sorted({*pins, *code}), spans)


_LOCKS = r"(?:front[ -]door|door|gate|alarm|garage|keypad|padlock|lock[ -]?box|key[ -]?box|key[ -]?safe|safe)"
_CODE_FOR_LOCK = rf"[ \t]+(?:for|to)[ \t]+(?:the[ \t]+)?{_LOCKS}(?![a-z])"  # "code for the lock box"
_LOCK_DEVICES = ("keypad", "padlock", "lockbox", "lock box", "lock-box", "key box", "key-box", "keybox", "key safe", "key-safe", "keysafe",
                 "combination")
_REACH = 32  # how far before its keyword a label may start ("secret recovery phrase", "front door code")
# the words that may stand before "code" in _CODES_LABEL and _LOCK_LABEL (a plain look that spares
# the label patterns the many other codes of a technical note)
_CODE_OWNERS = ("backup", "recovery", "2fa", "mfa", "factor", "time", "emergency", "scratch", "verification",
                "wiederherstellungs", "sicherungs", "notfall", "building", "entry", "entrance", "lock", "door",
                "gate", "alarm", "garage", "keypad", "box", "safe", "tür", "garagentor", "tresor")


def _by_part() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """RECOVERY_CODE_WORDS grouped under the first of RECOVERY_CODE_PARTS each holds."""
    groups: dict[str, list[str]] = {part: [] for part in RECOVERY_CODE_PARTS}
    for w in RECOVERY_CODE_WORDS:
        groups[next(part for part in RECOVERY_CODE_PARTS if part in w)].append(w)  # (StopIteration: a word with no part)
    return tuple((part, tuple(words)) for part, words in groups.items() if words)


_CODE_WORDS_BY_PART = _by_part()
_CODE_WORDS_BY_ASCII_PART = tuple((part, words) for part, words in _CODE_WORDS_BY_PART if part.isascii())


def _pin_word(low: str, i: int) -> bool:
    """Is the "pin" at i a word of its own ("PIN", "pin2", "PIN-kode"), not "pinned" or "pinch"?"""
    j = i + 3
    if low[j:j + 1].isdigit():
        j += 1
    return not low[j:j + 1].isalpha() or low.startswith(("code", "kode", "nummer", "number"), j)


def _hits(low: str, *keywords: str) -> list[int]:
    """Where the keywords occur, in order: str.find runs at close to memchr speed, where a regex
    scan for labels that open with any of a dozen words tries every position of the text."""
    return sorted(i for k in keywords for i in _find_all(low, k))


def _opens_word(low: str, i: int) -> bool:
    return i == 0 or not low[i - 1].isalnum()


def _labels(low: str, hits: list[int], label: str):
    """The matches of the label pattern around the keywords at hits, in order.

    A label is tried where the keyword's word starts and one and two words before it, the
    earliest first ("secret recovery phrase" before "recovery phrase"); a match must reach the
    keyword.
    """
    rx = compiled(label)
    last = -1
    for i in hits:
        if i < last:
            continue  # (the same label found by its second keyword: "seed phrase")
        for start in _word_starts(low, max(i - _REACH, last, 0), i):
            m = rx.match(low, start)
            if m is not None and m.end() > i:
                last = m.end()
                yield m
                break


def _find_all(low: str, word: str):
    i = low.find(word)
    while i >= 0:
        yield i
        i = low.find(word, i + 1)


def _word_starts(low: str, floor: int, i: int) -> list[int]:
    """The start of the word holding i and of the two words before it (not before floor: the last
    label's end), the earliest first."""
    starts = []
    j = i
    while True:
        while j > floor and low[j - 1].isalnum():
            j -= 1
        starts.append(j)
        if len(starts) == 3 or j <= floor or low[j - 1] not in " -_":
            return starts[::-1]
        j -= 1


# ---- wallet seed / recovery phrases (BIP39) ------------------------------------------------------
# the label, with what people put before it ("24-word recovery phrase", "Ledger seed")
_SEED_LABEL = (  # (and as a variable: SEED_PHRASE, WALLET_SEED)
    r"(?<![a-z0-9])(?:(?:12|15|18|21|24)[ _-]?words?[ _-])?(?:"
    r"(?:secret[ _-])?(?:seed|recovery|backup|wallet|mnemonic|bip-?39)[ _-]?(?:phrase|frase)|seed[ _-]?words"
    r"|(?:wallet|ledger|trezor|metamask|electrum|exodus|bitcoin|crypto)[ _-]seed"
    r"|seed|gjenopprettingsfrase|wiederherstellungsphrase"
    r")(?![a-z0-9])")
# what stands between the label and the words: a note in brackets, then ':' or 'is', or one or two
# line breaks (a heading, a blank line, then the list), or both; then perhaps a quote
_SEED_SEP = (r"[ \t]*(?:\([^()\n]{0,60}\)[ \t]*)?(?P<sep>[:=]|(?:is|er|ist|lautet)(?![a-z]))?[ \t]*"
             r"(?P<lines>(?:\n[ \t]*){1,2})?[`'\"]?")
# one word of the phrase, written inline ("witch collapse …"), one a line, or numbered ("1. witch",
# "1) witch", "1 witch 2 collapse"); a numbered item is a single word
_SEED_WORD = r"[ \t,]*(?:\n[ \t]*)?(?:(\d{1,2})[.):]?[ \t]+|[-*•][ \t]+)?([a-z]{3,8})(?![\w'’-])"
_SEED_MIN, _SEED_MAX = 12, 24
# common English words that no BIP39 list holds: prose after a label ("the seed words are …")
# stops at the first of them, a phrase drawn from the list never does
_NOT_SEED_WORDS = frozenset(
    "the and for your with are was from not its our these those them were been has had but which "
    "would could should his her she who how why did does than each some here".split())


def _seed_phrases(text: str, low: str, hits: list[int], spans) -> None:
    """12 to 24 short lower-case words after a seed-phrase label: the keys to a crypto wallet.

    A label and twelve or more words of 3 to 8 lower-case letters, none of them a common English
    function word, is the whole rule: the word list is not needed, and prose after a label (a
    capital, a long word, punctuation, "the") ends the run well before twelve words. A phrase
    that repeats its words is a documented test mnemonic (Hardhat's "test test … junk"), left
    alone as the scrubber leaves documented default passwords: a wallet's seed repeats a word
    once in thirty phrases, hardly ever three times.
    """
    pos = 0
    for m in _labels(low, hits, _SEED_LABEL):
        if m.start() < pos:
            continue  # inside the phrase just read
        sep = compiled(_SEED_SEP).match(low, m.end())
        if not (sep.group("sep") or sep.group("lines")):
            continue  # words run on from the label: prose ("mnemonic devices help …")
        words = _seed_words(text, sep.end())
        if len(words) < _SEED_MIN or len({text[s:e] for _, s, e in words}) < len(words) - 2:
            continue  # (a test vector repeats its words: "test test … junk", "abandon … about")
        if words[0][0]:  # a numbered list: one span a word, the numbers stay
            for _, s, e in words:
                spans.add(s, e, "seed_phrase", text, "seed-phrase")
        else:
            spans.add(words[0][1], words[-1][2], "seed_phrase", text, "seed-phrase")
        pos = words[-1][2]


def _seed_words(text: str, i: int) -> list[tuple[bool, int, int]]:
    """(numbered, start, end) of each word of the phrase that starts at i: all numbered or none."""
    words: list[tuple[bool, int, int]] = []
    word = compiled(_SEED_WORD)
    while len(words) < _SEED_MAX:
        m = word.match(text, i)
        if m is None or m.group(2) in _NOT_SEED_WORDS:
            break
        numbered = m.group(1) is not None
        if words and numbered != words[0][0]:
            break  # "1. install the package": a numbered list of sentences, not of words
        words.append((numbered, m.start(2), m.end(2)))
        i = m.end()
    return words


# ---- two-factor backup / recovery codes ----------------------------------------------------------
_CODES_LABEL = (
    r"(?<![a-z])(?:backup|recovery|2fa|mfa|two[- ]factor|2-factor|one[- ]time|emergency|scratch"
    r"|wiederherstellungs|sicherungs|notfall)[ -]?(?:verification[ -])?codes?(?![a-z])")
# the rest of the label's line up to its ':' ("recovery codes for GitHub (2024-03-01):")
_CODES_HEAD = r"[^:=：\[\n]{0,80}[:=：]"
# a code: GitHub's "a1b2c-3d4e5", "4f9k-2mxq", Google's "1234 5678", a plain "12345678"
_CODE = r"((?:[0-9a-z]{3,8}(?:-[0-9a-z]{3,8}){1,4}|\d{4} \d{4}|[0-9a-z]{6,16}))(?![\w-])"
# the first code may open the next line or the one after a blank line (a heading, then the list);
# then codes follow on the same line or one a line, bulleted, numbered or ticked off ("- [x]")
_ITEM = r"(?:(?:[-*+•]|\d{1,2}[.)])[ \t]+)?(?:\[[ x]\][ \t]+)?(?:~~)?"
_FIRST_CODE = r"[ \t,;]*(?:\n[ \t]*){0,2}" + _ITEM + _CODE
_NEXT_CODE = r"[ \t,;]*(?:~~)?[ \t,;]*(?:\n[ \t]*)?" + _ITEM + _CODE
# GitHub gives 16 codes, Google and most others 10: a list longer than this is no list of codes
_MAX_CODES = 20


def _backup_codes(text: str, low: str, ends, spans) -> None:
    """Each code in the list after a backup-code label (`ends`: where each label ends, in order):
    every one of them opens the account.

    The list ends at a blank line or at the first item that is no code (a word, a year, a short
    number: a code has six characters or more and a digit, or the shape of one in the same list
    that has a digit: "efdj-wyjb" beside "eyet-71jm", small letters by chance), so a label in
    prose ("keep your backup codes somewhere safe") reads nothing.
    """
    pos = 0
    for end in ends:
        if end <= pos:
            continue
        head = compiled(_CODES_HEAD).match(low, end)
        i = head.end() if head else end
        item = compiled(_FIRST_CODE)
        found = []
        for _ in range(_MAX_CODES):
            c = item.match(low, i)
            if c is None:
                break
            found.append(c)
            i = c.end()
            item = compiled(_NEXT_CODE)
        shapes = {_shape(c.group(1)) for c in found if _has_digit(c.group(1))}
        for c in found:
            if not (_has_digit(c.group(1)) or _shape(c.group(1)) in shapes):
                break
            spans.add(c.start(1), c.end(1), "recovery_code", text, "recovery-codes")
            pos = c.end()


def _shape(code: str) -> str:
    """A code with each letter and digit as "x": "4f9k-2mxq" and "efdj-wyjb" are "xxxx-xxxx"."""
    return compiled(r"[0-9a-z]").sub("x", code)


def _has_digit(code: str) -> bool:
    return any(ch.isdigit() for ch in code)


# ---- PINs, door, gate and alarm codes ------------------------------------------------------
# "PIN" is a label when something says what it unlocks ("card pin", "SIM PIN", "PIN code") or
# when ':' or 'is' follows it ("PIN: 4921", "PIN for the card: 4921"): a bare "pin 13" is a GPIO
# pin and "pin the version to 2024" a verb. "code" is a label only after what it opens.
_PIN_LABEL = (
    r"(?<![a-z0-9_])(?:(?P<owner>sim|card|bank|debit|credit|atm|visa|phone|iphone|ipad|bankkort)[ -]?)?"
    r"(?:pin|puk)\d?(?P<suffix>[ -]?(?:code|kode|nummer|number))?(?![a-z0-9_])")
# ("building code" and "entry code" name rules and programs too, and a lock named alone ("Garage
# keypad: 5332", "Safe combination: 12-34-56") may be followed by its model: those need a ':' or 'is')
_LOCK_LABEL = (
    r"(?<![a-z])(?:(?P<weak>building|entry|entrance|lock)[ -]?code"
    r"|(?P<device>keypad|padlock|lock[ -]?box|key[ -]?box|key[ -]?safe|(?:safe|lock|padlock)[ -]?combination)(?![ -]?code)"
    rf"|(?:{_LOCKS}|unlock|tür|garagentor|tresor)[ -]?code"
    rf"|code[ \t]+(?:for|to)[ \t]+(?:the[ \t]+)?{_LOCKS}"  # (the lock after its code: "the code for the lock box is 7082")
    r")(?![a-z])")
# between label and value: a closing quote, then "for the card:" or ':' or 'is', then a quote
_NUMBER_SEP = (
    r"[\"']?[ \t]*(?:(?P<for>(?:for|to|til|på|für|zu[mr]?)[ \t][^\n:=]{1,40}?[ \t]*[:=])"
    r"|(?P<sep>[:=]|(?:is|er|ist|lautet)(?![a-zæøåäöü])[ \t]*:?))?[*_ \t]*[`'\"]?")
# 4 to 8 digits (a door code may end in '#', which stays), for a lock also a dial's "12-34-56"
_PIN_VALUE = r"(\d{4,8}|\d(?: \d){3,7})(?!\w|[.,:/-]\d)"  # (read out digit by digit: "1 4 6 9")
_LOCK_VALUE = r"(\d{4,8}|\d{1,2}(?:[- ]\d{1,2}){2,3})(?!\w|[.,:/-]\d)"


def _labelled_numbers(text: str, low: str, hits: list[int], label: str, value: str, spans, rule: str) -> None:
    """A PIN or a door code after a label that says it is one.

    Values that count or repeat ("0000", "1234", "4321") stay: they are the documented defaults of
    SIM cards, Bluetooth pairing and voicemail, and the examples of manuals, as 'changeme' is for a
    password; the scrubber leaves documented defaults alone.
    """
    for m in _labels(low, hits, label):
        sep = compiled(_NUMBER_SEP).match(low, m.end())
        if sep.group("sep") or sep.group("for") or _bare_label_ok(text, m):
            v = compiled(value).match(low, sep.end())
            if v is not None and not _trivial(v.group(1)):
                spans.add(v.start(1), v.end(1), "pin", text, rule)


def _number_columns(text: str, low: str, hits: list[int], spans) -> None:
    """The cells of a table's PIN or door-code column ("| Card | PIN |", a SIM card's
    "iccid,msisdn,pin,puk", "Door code" over a tab-separated row): the header is the label,
    as "PIN:" is before a value, and each cell is judged as that label's value would be. A
    header that only names a lock ("Keypad") or a code that is also a rule ("Building code")
    needs a ':' in prose and says too little over a column of model numbers and years."""
    cells: list = []
    done = -1
    for bol in sorted({low.rfind("\n", 0, i) + 1 for i in hits}):
        if bol <= done:
            continue  # (a header among the rows just read)
        eol = low.find("\n", bol)
        line = low[bol:eol if eol >= 0 else len(low)]
        if "|" in line:
            found, done = markdown_cells_at(text, bol, _number_column)
            if not found:
                found, done = delimited_cells(text, bol, _number_column)
        elif line.count(",") >= 2 or line.count(";") >= 2:
            found, done = csv_cells(text, bol, _number_column)
        else:
            found, done = delimited_cells(text, bol, _number_column)
        cells += found
    for value, s, e in cells:
        while e - s > 2 and low[s] == low[e - 1] and low[s] in "`*":  # ('`4921`', '**4921**')
            s, e = s + 1, e - 1
        v = compiled(value).match(low, s, e)
        if v is not None and low[v.end(1):e].strip("#* ") == "" and not _trivial(v.group(1)):
            spans.add(v.start(1), v.end(1), "pin", text, "pin-column")


def _number_lists(text: str, low: str, hits: list[int], spans) -> None:
    """A heading or a line of its own that names PINs or door codes ("### Door codes", "PINs:",
    "**Gate codes**"), and a list under it: each item's number ("- Front door: 8076#", "- Visa:
    4921"), as the label's value would be. The line holds the label and at most three words
    before it; an item is a number alone or after a name."""
    for i in hits:
        eol = low.find("\n", i)
        if eol < 0:
            return
        label = None  # (the last on its line: a heading's label ends it)
        for label in compiled(_LIST_HEAD).finditer(low, low.rfind("\n", 0, i) + 1, eol):
            pass
        pos = list_under(low, label.start(), label.end()) if label is not None else -1
        if pos < 0:
            continue
        for _ in range(_MAX_LIST):
            m = compiled(_NUMBER_ITEM).match(low, pos)
            if m is None:
                break
            if not _trivial(m.group(1)):
                spans.add(m.start(1), m.end(1), "pin", text, "pin-list")
            pos = m.end()


_MAX_LIST = 50  # items read under one heading
_LIST_HEAD = r"(?:(?:sim|card|bank)[ -]?)?(?:pins|puks|(?:pin|door|gate|alarm|garage|lock|keypad|safe)[ -]?codes)"
_NUMBER_ITEM = (r"\r?\n[ \t]*[-*+][ \t]+(?:[^\W\d_][\w .'()/&-]{0,39}?[ \t]*(?::|=|[–—])[ \t]*)?"
                r"(\d{4,8}|\d{1,2}(?:[- ]\d{1,2}){2,3})[#*]?[ \t]*(?=\r?\n|$)")


def _number_column(name: str) -> str | None:
    """The pattern of a value under this table header (`tables._header`: spaces made '_') when it
    names a PIN or a lock's code."""
    words = name.strip("*_`").replace("_", " ").lower()
    if compiled(_PIN_LABEL).fullmatch(words) is not None:
        return _PIN_VALUE
    m = compiled(_LOCK_LABEL).fullmatch(words)
    return _LOCK_VALUE if m is not None and m["weak"] is None and m["device"] is None else None


def _bare_label_ok(text: str, m: re.Match) -> bool:
    """May the value follow the label after a mere space ("card pin 8812", "gate code 1987")?

    Yes when the label names what it unlocks, or is the capitalised acronym "PIN"; not for a
    bare "pin" ("pin 13"), "building code" ("International Building Code 2018") or a lock named
    alone ("keypad 2000 series").
    """
    groups = m.groupdict()
    if "weak" in groups:
        return groups["weak"] is None and groups["device"] is None
    return bool(groups["owner"] or groups["suffix"]) or text.startswith(("PIN", "PUK"), m.start())


def _trivial(v: str) -> bool:
    """'0000', '1234', '9876': a default or an example, not somebody's PIN."""
    v = v.replace(" ", "")
    return len(set(v)) == 1 or v in "0123456789" or v in "9876543210"


# ---- BitLocker recovery keys ---------------------------------------------------------------------
_BITLOCKER = r"\d{6}(?:-\d{6}){7}"


def bitlocker_key(tok: str) -> bool:
    """48 digits in eight dash-separated groups of six: a BitLocker recovery password.

    No other common number is written so, so the shape needs no label. Each group of a key
    Windows made is a multiple of 11, but that is not checked: people copy the key by hand from
    a screen or a printout, and a key with one mistyped group still gives away the other 42 digits
    (and is one guess from the real key).
    """
    return len(tok) == 55 and compiled(_BITLOCKER).fullmatch(tok) is not None
