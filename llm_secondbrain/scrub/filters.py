"""Precision checks with names, and the value-shape judgements the rules share.

A rule first finds a candidate (a label's value, a token beside a secret word, a command's
argument); then these decide whether it is something else than a secret. Each check is a named
filter (as detect-secrets names ``is_templated_secret`` or ``is_sequential_string``), kept in an
ordered chain: ``VALUE`` for the value after a secret label, ``REFERENCE`` for references,
code and templates, ``PLACEHOLDER`` for placeholders, ``TOKEN`` for a random token found by its
context, and ``FILLER`` for every span whatever found it. The first filter that accepts a
candidate lets it go, and ``llm brain scrub --explain`` names it. A filter may also answer
``KEEP``: the candidate is settled as a secret and no later filter of its chain is asked.

The checks read the candidate and the few characters around it, never the whole document, so
the scan stays linear; and none of them is ever asked about a vendor-shaped or a private key:
those are redacted whatever their surroundings.
"""
from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import unquote

from .catalogue import (CHOICE_SEPARATOR, DEFAULT_PASSWORDS, FIELD_STATES, FILE_TYPES, PATH_ENDINGS,
                        PLACEHOLDER_ENDINGS, PLACEHOLDER_INNER, PLACEHOLDER_OPENINGS, PLACEHOLDER_WORDS,
                        REFERENCE_PREFIXES, SETTING_CHOICES)
from .patterns import compiled, lazy


class Filter(NamedTuple):
    """A precision check: ``test`` answers true when the candidate is not a secret."""
    name: str
    test: Callable
    releases: tuple = ()  # texts the scrubber leaves as they are because of this filter
    keeps: tuple = ()  # texts it does not let go (their ⟦marked⟧ parts are redacted)


class _Keep:
    """A filter's answer that settles the candidate as a secret: no later filter is asked."""
    __slots__ = ()

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()


def named(chain: list, name: str, *, releases: tuple = (), keeps: tuple = ()):
    """Add the decorated test to `chain` (in the order of definition) under `name`."""
    def add(test):
        chain.append(Filter(name, test, releases, keeps))
        return test
    return add


def first_release(chain: list, *args) -> str:
    """The name of the first filter of `chain` that lets the candidate go, or '' when none does
    (or one settles it with KEEP). A test may answer with a name of its own (a chain inside)."""
    for f in chain:
        r = f.test(*args)
        if r:
            if r is KEEP:
                return ""
            return r if r.__class__ is str else f.name
    return ""


# class of a label: 0 = not a label, 1 = password, 2 = secret/token, 3 = weak ("key")
_NOT, _PWD, _SEC, _WEAK = 0, 1, 2, 3


# ---- names in code (shared with the token rules) ------------------------------------------------
_DOTTED_IDENT = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_DECLARES = ("#define ", "struct ", "enum ", "union ", "class ")  # what a name follows when declared
# a module's attribute: a lower-case module name (letters, digits, '_', one vowel at least:
# "ed25519", "s2clientprotocol", "_win32typing") and names after dots
_MODULE_ATTR = r"_*(?=[a-z0-9_]*[aeiouy])[a-z][a-z0-9_]*(?:\.[A-Za-z_]\w*)+"


# the pieces a name is cut into at case changes and digits ("PyCMDIFrameWnd": Py CMDI Frame Wnd);
# the scrubber's own name test (_code_name) cuts names with the same pattern
NAME_PIECE = r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|\d+|[A-Z]"


def module_attribute(tok: str) -> bool:
    """'ed25519.Ed25519PublicKey', 's2clientprotocol.common_pb2.ImageData': a module's name.

    A generated token with a dot has random, mixed-case parts (a Discord or a JWT-like token):
    its first part is seldom a lower-case word of letters and digits (1 in 100 at six
    characters), and its case flips at random, leaving single capitals between the runs, where
    a name's parts are words, acronyms and numbers (at most one stray capital a part).
    """
    if "." not in tok or compiled(_MODULE_ATTR).fullmatch(tok) is None:
        return False
    piece = compiled(NAME_PIECE)
    return all(sum(len(p) == 1 and p.isupper() for p in piece.findall(part)) <= 1
               for part in tok.split(".")[1:])


def in_code_position(text: str, s: int, e: int, tok: str) -> bool:
    """Is the identifier at [s, e) called, declared (a macro, a struct), a function's return type
    or a mapping's key? Then it is code or a name. So is a call's lone argument written bare,
    where the call is named like code.

    A secret is a literal: it is never called ('DRAFT201909.optional_cases_of(name=…)',
    'Proxy__ENSURE_WRAPPED(self)') nor written after '->' as a dotted return type
    ('-> _win32typing.PyCMDIFrameWnd: ...'), where a bare token may be prose ('old -> new').
    """
    if compiled(_DOTTED_IDENT).fullmatch(tok) is None:
        return False
    if text.startswith("(", e) or text.endswith(_DECLARES, max(0, s - 8), s):
        return True  # (a macro's or a declared type's name is a name)
    if s > 0 and text[s - 1] in "\"'" and text.startswith((text[s - 1] + ":", text[s - 1] + " :"), e):
        return True  # a mapping's key ('"ListPrincipalThingsV2": {'): secrets are values
    if "_" in tok and text.startswith(")", e):
        # a call's lone bare argument is a variable or a constant: literals are quoted
        # ('EC_KEY_new_by_curve_name (NID_X9_62_prime256v1)'), when the callee is named like code
        j = s - 1 if text[s - 1:s] == "(" else s - 2 if text[max(0, s - 2):s] == "( " else -1
        if j > 0 and text[j - 1] == " ":
            j -= 1  # "name (arg)"
        k = j
        while 0 < k and j - k < 64 and (text[k - 1].isalnum() or text[k - 1] in "_."):
            k -= 1
        return j > k and ("_" in text[k:j] or "." in text[k:j])
    return "." in tok and text[max(0, s - 3):s].rstrip(" \t").endswith("->")


_SUM_OF_NAMES = r"[A-Za-z_]\w*(?:\+(?:[A-Za-z_]\w*|\d+))+"
_MANGLED = r"_\w*"


def code_expression(tok: str) -> bool:
    """'__pyx_callargs+__pyx_t_4', 'V4L2_CID_CAMERA_CLASS_BASE+13', '__pyx_kp_b_iso88591_A_t9A':
    names (and numbers) added up, or a generated name.

    Base64 has '+' but no '_', base64url '_' but no '+': a token holding both, made of names
    joined by '+', is a sum in code. A generated name opens with '_' and is cut by many more
    (a random base64url token opens with '_' once in 64 and has one '_' in 64 characters).
    """
    if "_" not in tok:
        return False
    if "+" in tok:
        return compiled(_SUM_OF_NAMES).fullmatch(tok) is not None
    return tok[0] == "_" and tok.count("_") >= 5 and compiled(_MANGLED).fullmatch(tok) is not None


_HEX_TEXT = r"(?:[0-9A-Fa-f]{2}){8,}"
_B64_TEXT = r"[A-Za-z0-9+/_-]{12,}={0,2}"


_DECODED_HEAD = 240  # characters decoded at most: the head tells text from random bytes


def _decoded(tok: str) -> str:
    """The text that hex or base64 spells (its head), or '' when it spells no printable text."""
    if len(tok) > _DECODED_HEAD:
        tok = tok[:_DECODED_HEAD]  # (a multiple of 4 and of 2: whole base64 quanta, whole bytes)
    try:
        if compiled(_HEX_TEXT).fullmatch(tok):
            raw = bytes.fromhex(tok)
        elif compiled(_B64_TEXT).fullmatch(tok):
            body = tok.rstrip("=").replace("-", "+").replace("_", "/")
            raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        else:
            return ""
        text = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return ""
    return text if text.isprintable() else ""


def encoded_sentence(tok: str) -> bool:
    """Hex or base64 of words ('2d2d2d2d20424547494e…' is '---- BEGIN SSH2 PUBLIC KEY ----',
    'c29tZSB1bmtub3duIGRhdGE=' is 'some unknown data'): a magic number or a fixture, not a key.

    Random bytes are printable text one time in 10^5 at twelve bytes; text with spaces between
    words, less often still. A password encoded alone has no spaces, so it stays a secret.
    """
    text = _decoded(tok)
    return text.count(" ") >= 2 and sum(c.isalpha() for c in text) >= 0.5 * len(text)


_MARK = "[REDACTED"  # (a marker, or the start of one cut at its colon)
_MARK_REACH = 48  # a marker's length at most: "[REDACTED:", a kind's name (26 characters at most), "]"
_MAX_VALUE = 400  # a longer labelled value is judged by this much of its head, and redacted whole
_HEX = lazy(r"[0-9a-fA-F]+")
_HAS_DIGIT = lazy(r"\d")
_LETTER = lazy(r"[a-z]")


def _low_information(v: str) -> bool:
    """Filler, counting or repeating runs: 'xxxx…', 'AIzaaaaa…', 'abcdefgh…123', '1111…',
    'a1b2c3d4…'.

    A position is predictable when its character repeats one of the three before it or counts
    up from the one before, or from the one two before where letters are interleaved with digits
    (case-insensitive). In random text that happens at about a quarter of positions even over
    hex digits; placeholders typed by hand are mostly predictable.
    """
    s = v[:64].lower()  # the whole of most values; bounded cost
    n = len(s)
    if n < 8:
        return False
    o = s.encode("utf-8", "replace")
    # A step of 0 or +1 from the character before, a repeat of or a step of +1 from the second
    # before, a repeat of the third before, found at C speed: read the bytes as one big integer,
    # shift it by one, two and three bytes and XOR each with the current bytes; a zero byte is a
    # hit. Adding 0x0101…01 (ones) adds 1 to every byte and never carries: 0xff never occurs in
    # UTF-8. A position counts once however many of the five relations hold ('aaaa' is not five
    # times as predictable as 'Blaabaer2023'): each XOR's zero bytes become its 0x80 bits, and
    # the five are ORed.
    size = len(o) - 3
    mask = (1 << 8 * size) - 1
    ones = mask // 255
    low7 = ones * 0x7F
    word = int.from_bytes(o, "big")
    cur, prev, prev2 = word & mask, (word >> 8) & mask, (word >> 16) & mask
    relations = [cur ^ prev, cur ^ (prev + ones), cur ^ prev2, cur ^ (word >> 24)]
    if not s.isdigit() and _LETTER.search(s) is not None:
        relations.append(cur ^ (prev2 + ones))  # (letters counting between digits; a code of digits alone, "12-34-56", is a person's)
    hit = 0
    for x in relations:
        hit |= (((x & low7) + low7) | x | low7) ^ mask  # 0x80 where a byte of x is zero, else 0
    hits = hit.bit_count()
    # digits alone, a short value (a human password "Troll444!!") or a hex value under 20
    # characters (one of 16 symbols: about 2 % of random 13-character ones pass 0.6) repeat
    # more by chance
    if hits < (0.85 if n < 12 or s.isdigit() or (n < 20 and _HEX.fullmatch(s)) else 0.6) * (n - 3):
        return False
    # a long token is filler only if its end is too: a placeholder head on a random body is a
    # key (Twitter's bearer tokens open with 22 'A's)
    return len(v) <= 64 or _low_information(v[-32:])


_CAMEL_WORD = lazy(r"[A-Z][a-z]{3,}|[a-z]{4,}|[A-Z]{4,}(?![a-z])")
_DIGITS = lazy(r"\d")
_THREE_DIGITS = lazy(r"\d\D*\d\D*\d")
_FILLER_WORD = lazy(r"(?i)here|your|example|sample|dummy|fake|random|placeholder|insert|replace|"
                     r"redacted|xxxx|string|changeme")


_CONSONANTS4 = lazy(r"[b-df-hj-np-tv-xz]{4}")


def _wordy(v: str) -> float:
    """Share of v made of pronounceable words ('SalesResults', 'jetbrains.mps'): names, not keys.

    A letter run counts as a word when it has vowels in a natural share and no four consonants
    in a row; random letters ('luvzktoohjauwtjv') fail one or the other.
    """
    words = 0
    for run in _CAMEL_WORD.findall(v):
        w = run.lower()
        if sum(map(w.count, "aeiouy")) >= 0.25 * len(w) and _CONSONANTS4.search(w) is None:
            words += len(w)
    return words / max(1, len(v))


# The letter pairs that make 97 % of the pairs inside words of English technical text (this
# machine's /usr/share/doc Markdown and the Python standard library, counted once): a name made of
# words is almost all of these; letters drawn at random are not (about 2 pairs in 3 are rare).
_COMMON_PAIRS = frozenset(re.findall("..", (
    "aaabacadaeafagaiakalamanaparasatauavaybabcbdbebibjblbobrbubycacbcccdcecfchcickclcocrctcudadbdcdd"
    "dedfdidldodrdsdueaebecedeeefegeiejelemeneoepeqeresetevewexeyfafcfdfefffiflfofrfsfugegigngrgsguha"
    "hehihohrhthuiaibicidieifigiliminioipirisitivixizjajejojskekikslaldlelflilllolsltlulymambmdmemiml"
    "mmmompmsmumvnancndnenfngninknlnnnonsntnunvobocodofogoiokolomonoooporosotouovowpapdpepiplpoppprps"
    "ptpupyqurarcrdrergrirkrlrmrnrorrrsrtrurvrysascseshsislsospsrssstsusytatctdtethtitltotptrtstttuty"
    "uaubucueufuiulumunupurusutvaveviwawewhwiwowrxcxpxtyayeynypysytze")))


def _rare_pairs(v: str) -> float:
    """The share of v's pairs of letters that words seldom hold (_COMMON_PAIRS): names made of words
    stay under 0.2 ('XMLHttpRequestUpload' 0.16), letters drawn at random run near 2 in 3."""
    low = v.lower()
    pairs = [low[i:i + 2] for i in range(len(low) - 1) if low[i:i + 2].isalpha()]
    return sum(p not in _COMMON_PAIRS for p in pairs) / max(1, len(pairs))


def _random_letters(v: str) -> bool:
    """Letters drawn at random ('uNaWuEQWGjMPMf', 'vkbqpmzthxlewryd'), not a name made of words
    ('newPassword', 'getpasswordfromkeychain').

    A password or key without a digit is rarer than one with, but real: its case flips every
    few letters and its letters do not make words (no vowels in a natural share, runs of four
    consonants), where camelCase names flip case only at word boundaries. In one case (a Google
    app password is sixteen small letters) only the letters can tell: three pairs in ten that
    words seldom hold catch 94 % of random runs of twelve and 97 % of sixteen.
    """
    n = len(v)
    if n < 10 or not v.isalpha():
        return False
    if v.islower():
        return n >= 12 and v.isascii() and _rare_pairs(v) >= 0.3
    if v.isupper():
        return False
    flips = sum(a.isupper() != b.isupper() for a, b in zip(v, v[1:]))
    if flips < max(4, n // 4):
        return False
    low = v.lower()
    sparse = sum(map(low.count, "aeiou")) < 0.25 * n
    return (sparse or _CONSONANTS4.search(low) is not None) and _wordy(v) < 0.3


def _placeholder_body(body: str) -> bool:
    """The part after a vendor prefix is made of words ('xoxe.xoxp-1-RANDOMSTRINGHERE').

    (Filler such as 'AIzaaaa…' is refused for every rule when a span is added.)
    """
    return _THREE_DIGITS.search(body) is None and _FILLER_WORD.search(body) is not None


def _entropy_ok(s: str, min_len: int = 16) -> bool:
    """Random-looking: long enough and mixes letters with digits (and usually case)."""
    if len(s) < min_len:
        return False
    up, lo, dg = _classes(s)
    if not dg or not (up or lo):
        return False
    if up and lo:
        return True
    # single-case: accept hex-ish / long base32-ish strings only
    return len(s) >= 24

# values that are references, code or placeholders, never secrets
_REF_FIRST = frozenset("$%{<[(")
_REF_HINT = lazy(r"[.(:\[+!{/-]")
# a name, its members ('.', and '::' or '->' in C++, Rust and Perl), then a call, an index or a member
_CODEISH = lazy(
    r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*"
    r"(?:\(|\[(?:[\"':A-Za-z_0-9\[-]|$)|(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*(?:$|\)))")  # (Callable[[int, key=mod.attr)[0
_IDENTIFIER = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_TYPEISH = lazy(r"^(?:Optional|List|Dict|Union|str|int|bytes|SecretStr|Secret|String|number|boolean)\b")
_PH_INNER_RE = lazy("|".join(map(re.escape, PLACEHOLDER_INNER)))  # one scan, not one per word
_PH_WORDY = lazy(r"[a-z_ .-]+")
_EMPHASIS = lazy(r"\*{1,2}[A-Za-z][A-Za-z_-]*\*{1,2}")


# ---- is it a placeholder? ('<YOUR_API_KEY>', 'your-api-key-here', 'xxxx', 'changeme', 'DB_PASSWORD') ----
PLACEHOLDER: list[Filter] = []


@named(PLACEHOLDER, "placeholder_word", releases=(
    'client_secret: REDACTED\n"apiKey": "your-api-key-here",',
    'env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password',
    "    def read(self, name, pwd=None):\n        return self.open(name, 'r', pwd)\n    def extract(self, member, path=None, pwd=None):\n",
    "passphrase: 'sample',",
    '| Service | User | Password |\n|---|---|---|\n| Mail | ola | see the vault |\n| NAS | admin | admin |\n',
    'if password != "changeme":',
    'if ("admin" == password) {',
    'Network key: password',
    'user, password = admin, Qx7vLp9w2',
    'PyObject *key = NULL;\n__pyx_t_1 = __Pyx_PyObject_FastCall(f, __pyx_callargs+__pyx_t_4, 2);',
    'password: changeme',
    'api_key: "placeholder"',
    'Password: mandatory\n| Benutzer | Passwort |\n|---|---|\n| mmueller | abgelaufen |\n',
))
def _placeholder_word(v: str, lv: str) -> bool:
    return lv in PLACEHOLDER_WORDS or lv in FIELD_STATES


@named(PLACEHOLDER, "setting_choices",
    releases=(
        'ask_password = on/off\n     Prompt for a password for each connection established.',
        'verify_password: yes|no',
        'ssh_password = true/false',
    ),
    keeps=('password: ⟦yes/no42⟧',))
def _setting_choices(v: str, lv: str) -> bool:
    # a manual's table of settings: the value lists what the setting takes ('on/off', '[yes|no]')
    if "/" not in v and "|" not in v:
        return False
    parts = _CHOICE_SPLIT.split(lv.strip("[]{}()<>"))
    return len(parts) >= 2 and all(part in SETTING_CHOICES for part in parts)


_CHOICE_SPLIT = lazy(CHOICE_SEPARATOR)


@named(PLACEHOLDER, "escaped_placeholder",
    releases=('"password": "&lt;YOURPASSWORD&gt;"', 'passphrase: &#x3C;string>]}'))
def _escaped_placeholder(v: str, lv: str) -> bool:
    return v[0] == "&" and _ESCAPED_PH.fullmatch(lv) is not None  # <YOUR_PASSWORD> written HTML-escaped


@named(PLACEHOLDER, "bracketed_placeholder")
def _bracketed(v: str, lv: str) -> bool:
    # (words inside: '<YOUR_API_KEY>', '[REDACTED]', '{{ db_password }}', '%APPDATA%'; not a value that
    # merely opens and closes with braces: '{{h}o)p${e]nob(ody[finds>-_$#thisone}}')
    f, l = v[0], v[-1]
    return ((f == "<" and l == ">") or (f == "[" and l == "]") or (f == "{" and l == "}") or (f == "%" and l == "%")) and (
        _BRACKETED_WORDS.fullmatch(v.strip("<>[]{}%")) is not None)


@named(PLACEHOLDER, "placeholder_phrase",
    releases=('export GITHUB_TOKEN=YOUR_TOKEN_HERE', 'if key == "Enter":'))
def _placeholder_phrase(v: str, lv: str) -> bool:
    return (lv.startswith(PLACEHOLDER_OPENINGS) and _PH_WORDY.fullmatch(lv) is not None) or lv.endswith(PLACEHOLDER_ENDINGS)


@named(PLACEHOLDER, "repeated_characters",
    releases=(
        'api_key: "xxxxxxxxxxxxxxxxxxxxxxxx"',
        'password: ********',
        'secret: xxxxxxxxxxxxxxxx',
        'jdbc:sqlserver://localhost:1433;database=AdventureWorks;user=MyUserName@MyServer;password=*****;encrypt=true',
    ))
def _repeated(v: str, lv: str) -> bool:
    return v.strip(v[0] + v[-1]) == ""  # one or two repeated characters


@named(PLACEHOLDER, "placeholder_inside",
    releases=(
        'ANTHROPIC_API_KEY=sk-ant-...',
        'STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx',
        'GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX',
        'my_password = "fakesecret"',
        'cloud-iam-key:=afakekey',
        'theapikey = @"somefakekey"',
        'aws cognito-idp admin-set-user-password --username diego --password MyExamplePassword1!',
        '            "DkimTokens": [\n                "EXAMPLEq76owjnks3lnluwg65scbemvhw",',
        'token: "thisisnotarealtoken"',
        'api_key = "ssk-ant-api04-NotARealKeyButLooksLikeOne"',
        '$ cmd P --oracle-password=fakepassword --oracle-username=fakeuser --display-name=my-profile --oracle-hostname=35.188.150.50 --oracle-port=1521',
    ))
def _placeholder_inside(v: str, lv: str) -> bool:
    return len(lv) <= 120 and _PH_INNER_RE.search(lv) is not None


@named(PLACEHOLDER, "marked_example",
    releases=('"SessionToken": "AQoEXAMPLEH4aoAH0gNCAPy{b64:200}"',))
def _marked_example(v: str, lv: str) -> bool:
    # a manual's sample says so in capitals, however long: 'AQoEXAMPLEH4aoAH0gNCAP…' (seven given
    # letters never occur in a random key by chance)
    return "EXAMPLE" in v


@named(PLACEHOLDER, "constant_name")
def _constant_name(v: str, lv: str) -> bool:
    # an environment variable or constant name (SOCKS5_CUSTOM_AUTH_END), a PLACEHOLDER; a manual
    # hyphenates one at the end of a line ("--password=PASS‐" / "WORD")
    v = v.rstrip("\u2010\u00ad-") if v[-1] in "\u2010\u00ad-" else v
    return v.isupper() and len(v) > 1 and (v.replace("_", "").isalpha() or _CONST_NAME.fullmatch(v) is not None)


@named(PLACEHOLDER, "self_named",
    releases=(
        "const password = 'Password used to generate key';",
        "passphrase: 'top secret',",
        "libpub.unpublish('lodash', { token: 'i-am-a-token'})",
        "    ACCESS_KEY = 'aws_access_key_id'\n    SECRET_KEY = 'aws_secret_access_key'",
        'secret: my-k8s-secret-name',
    ))
def _self_named(v: str, lv: str) -> bool:
    # words naming what belongs there: 'Password used to generate key', 'i-am-a-token'
    return (" " in v or _NAME_SLUG.fullmatch(v) is not None) and _SELF_NAMED.search(lv) is not None


def _placeholder(v: str, lv: str) -> str:
    """The name of the placeholder filter v passes ('' when none does); lv is v lower-cased."""
    return first_release(PLACEHOLDER, v, lv)


_VERSION = lazy(r"v?\d+(?:\.\d+)+")
_SMALL_HEX = lazy(r"0[xX][0-9A-Fa-f]{1,16}")  # (an Ethereum private key is 0x and 64 hex digits)
# a dotted name of short words: a setting's or a property's name, never a generated token
_PROPERTY_NAME = lazy(r"[A-Za-z_][A-Za-z0-9_]{0,15}(?:\.[A-Za-z_][A-Za-z0-9_]{0,15}){2,}")
_ESCAPED_PH = lazy(r"&(?:lt|#x3c|#60);[\w|. -]{1,60}(?:&(?:gt|#x3e|#62);|>)?")
_JOINED_WORDS = lazy(r"[a-z]+(?:[-_][a-z]+)+")
# a name of joined words, some with a digit inside ("my-k8s-secret-name", "db_password_v2")
_NAME_SLUG = lazy(r"[a-z][a-z0-9]{0,11}(?:[-_][a-z][a-z0-9]{0,11})+")
_CONST_NAME = lazy(r"[A-Z]{3}[A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+")
_SELF_NAMED = lazy(r"(?<![a-z])(?:password|passphrase|passwort|pass|secret|token|api key|key)(?![a-z])")
# a format string: "from %d to %d", "{}:{}", "Bearer {token}"
_FORMAT_SPEC = lazy(r"%[-+ 0#]?\d*(?:\.\d+)?[sdifr](?![A-Za-z0-9])|(?<!\{)\{\d*\}|(?<!\{)\{[a-z_]+\}|\$\{[\w.:-]*\}?(?![^\s}])")


# ---- is it a reference, code or a placeholder, never a secret? ----------------------------------
REFERENCE: list[Filter] = []


@named(REFERENCE, "format_field",
    releases=(
        "    out.write('username={0}\\n'.format(username))\n    out.write('password={0}\\n'.format(signature))",
    ))
def _format_field(v: str, lv: str, quoted: bool) -> bool:
    # a format's field, alone or before an escape: "'password={0}\\n'.format(signature)"
    return v[0] in "{%" and (fm := _FORMAT_SPEC.match(v)) is not None and _ALNUM_RUN.search(v, fm.end()) is None


# where a secret is kept, named instead of the secret: a password manager or a keychain
_KEPT_IN = lazy(r"(?:1password|bitwarden|vaultwarden|keepass(?:xc)?|lastpass|dashlane|enpass|nordpass|"
                r"keychain|proton ?pass)(?![a-z0-9])")


@named(REFERENCE, "kept_in_a_vault", releases=(
    'the API key is 1Password',
    'API 키는 1Password에 보관',
    'APIキーは1Passwordに保存',
    'Passwort: KeePassXC',
),
       keeps=('password: ⟦1Password2024!⟧',))
def _kept_in(v: str, lv: str, quoted: bool) -> bool:
    m = _KEPT_IN.match(lv)
    rest = lv[m.end():m.end() + 1] if m is not None else "x"
    return rest in ("", ".", ",", ";", ")") or not rest.isascii()  # (a particle may follow: "1Passwordに")


@named(REFERENCE, "template_or_variable", releases=(
    'DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=${API_KEY:?missing}',
    'password: "{{ vault_db_password }}"\napi_token: "{{ lookup(\'env\', \'API_TOKEN\') }}"',
    'export OPENAI_API_KEY=$(op read "op://Private/OpenAI/credential")',
    'password = %(DB_PASS)s\ntoken = $TOKEN',
    'USERNAME=donjuan\nPASSWORD=$($(dirname $0)/../bin/get-django-setting LOCAL_DATABASE_PASSWORD)',
    'password=%DB_PASSWORD%',
    'password=%env.DB_PASSWORD%',
    'password = "%(password)s"',
    'variable "db_password" {\n  default = "${var.vault_password}"\n}',
    'pwd: {pw1, pw2}',
    '  __pyx_v_bytes_key = ((PyObject*)__pyx_t_3);\n  __pyx_t_3 = 0;',
    'region = re.sub(r".*Credential=[^/]+/[^/]+/([^/]+)/.*", r"\\1", auth)',
    '    key = [[i.n(2).as_real_imag()[0] for i in r.as_real_imag()] for r in roots]',
    "$ echo -n 'hello' | openssl enc -aes-256-cbc -a -salt -pass pass:$KEY\nU2FsdGVkX1/ota7yhCh/27/25KWzWX8zzaiVB+ns8pA=",
    'password: "{{ db_password }}"',
    'token=${GITHUB_TOKEN}',
),
       keeps=('password: ⟦{x9Fq2LmZ7pQ⟧',))
def _template(v: str, lv: str, quoted: bool):
    first = v[0]
    if first not in _REF_FIRST:
        return False
    # a leading "{" / "(" / "[" / "%" / "<" only means code when it is not part of a password
    # like "{x9Fq..." — require something identifier-like right after.
    # ("((PyObject*)__pyx_t_3": a cast inside parentheses, "[[i.n(2)": a nested list; "[^/]+/": a
    # regular expression's class)
    nxt = v.lstrip("([")[:1] if first in "([" and v[1:2] in "([" else v[1:2]
    if first in "{([%<" and len(v) > 1 and not (nxt.isalpha() or nxt in "{%$_'\" " or (first == "[" and nxt == "^")) and not lv.startswith(("[redacted", "<%", "{%", "{{", "%(")):
        return KEEP
    if v.startswith(("{{", "{%")) and _TEMPLATE.match(v) is None:
        return KEEP  # a template's delimiters around what no template holds: "{{h}o)p${e]nob(…}}"
    if first == "{" and _OPEN_BRACE_WORD.fullmatch(v) and _HAS_DIGIT.search(v) is not None:
        return KEEP  # a field or a template closes its brace; "{x9Fq2LmZ7" never does
    if first == "%" and _PERCENT_REF.match(v) is None:
        return KEEP  # not %APPDATA% / %(name)s / %s: a key that happens to open with '%'
    return True


@named(REFERENCE, "shell_splice",
    releases=('- echo \'export DATABASE_PASSWORD="\'$PRECOMPILE_PASSWORD\'"\' >> .env',))
def _shell_splice(v: str, lv: str, quoted: bool) -> bool:
    return v[0] in "'\"" and v[1:2] in ("$", "%")  # "'$PRECOMPILE_PASSWORD'"


@named(REFERENCE, "negation_or_tag",
    releases=(
        '    const noCreds = !(creds.token || creds.username)',
        'password: !secret db_password',
        'password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231',
        'password: !env_var DB_PASS',
    ))
def _negation_or_tag(v: str, lv: str, quoted: bool) -> bool:
    # a negated expression: "!(creds.token || creds.username"; a YAML tag: "!secret db_pw"
    return v[0] == "!" and len(v) > 2 and (v[1] == "(" or _CODEISH.match(v, 1) is not None or _yaml_tag(v))


@named(REFERENCE, "reference_prefix",
    releases=(
        'password = getpass.getpass("Password: ")',
        'password = os.environ["DB_PASSWORD"]\nconn = psycopg.connect(host=HOST, user=USER, password=password)',
        'token = request.headers.get("Authorization", "").removeprefix("Bearer ")',
        'api_key = settings.OPENAI_API_KEY\nclient = OpenAI(api_key=api_key)',
        'client_secret = os.getenv("CLIENT_SECRET")  # set in 1Password, never commit',
        "        if self.credentials.token is not None:\n            fields['X-Amz-S3session-Token'] = self.credentials.token",
        'DB_PASSWORD=op://Private/Postgres/password\nTOKEN=$GITHUB_TOKEN',
        'password: ENC[AES256_GCM,data:p673w==,iv:YY=,aad:UQ=,tag:A=]',
    ))
def _reference_prefix(v: str, lv: str, quoted: bool) -> bool:
    return _REF_HINT.search(v, 0, 24) is not None and lv.startswith(REFERENCE_PREFIXES)


@named(REFERENCE, "placeholder")
def _a_placeholder(v: str, lv: str, quoted: bool) -> str:
    return _placeholder(v, lv)


@named(REFERENCE, "code_expression",
    releases=(
        'secret = client.get_secret_value(SecretId="prod/db")["SecretString"]',
        '  else if (!strcmp(buf, "password"))\n   password = utf8_to_utf16_dup(value);',
        '            pw = pw[:-1]',
        '            password = auth[0]',
        "            self.password = config['password']\n            self.realm = config['realm']",
        '    password = models.CharField(max_length=128)',
        'def f(\n    client_certificate_password: Callable[[], str] | None,\n    func: Callable[[Handler], None],\n) -> None: ...',
        '_assertion_pass: Callable[[int, str, str], None] | None = None',
        'new_user.password = params[:password]\ncreate_with(password: params[:password])',
        '    Key: _win32typing.PyPROPERTYKEY, riid: _win32typing.PyIID, /',
        '    pw = Piecewise((1, And(1 <= n, n <= nmax)), (0, True))',
        'password = click.prompt("Password", hide_input=True)',
        'class SHA224Password(Password):\n    hashfunc = hashlib.sha224\n\npassword = SHA224Password()',
        "            username, password = ident.split(':', 1)\n        else:\n            password = ident",
        'credentials = StaticCredentials(token="token123")\napi_key = "apikey1"',
        'return sorted(have_required, key=usage_text.GetArgSortKey)[0]',
        '    my $pwd  = CPAN::anycwd();\n    Pass *ResultPass = Resolver->getAnalysisIfAvailable(PI);',
        '  MemDeallocPolicy MDP = MemDeallocPolicy::Standard;\n  _M_token = __it->second;',
    ))
def _code_expr(v: str, lv: str, quoted: bool) -> bool:
    return not quoted and ("(" in v or "[" in v or "." in v or ":" in v or ">" in v) and _CODEISH.match(v) is not None


@named(REFERENCE, "variable_name", releases=(
    '            self.username, self.password = credentials',
    '      ctx->key = EC_KEY_new_by_curve_name (NID_X9_62_prime256v1);',
    'password = user_pw',
    'token = accessToken',
    'key = getApplicationContextFactory',
),
       keeps=('api_key=⟦sIPMNlluYmhgcrJYuwrs⟧',))
def _variable_name(v: str, lv: str, quoted: bool) -> bool:
    # bare identifiers: variables unless they look like a made-up word with digits
    if quoted or _IDENTIFIER.fullmatch(v) is None or _HAS_DIGIT.search(v) is not None or _random_letters(v):
        return False
    if len(v) >= 16 and "_" not in v and _rare_pairs(v) >= 0.3:
        return False  # a long name is made of words ('getApplicationContext'); 'sIPMNlluYmhgcrJYuwrs' is not
    if "_" in v or (v[0].islower() and not v.islower()):
        return True
    return any(w in lv for w in ("pass", "secret", "token", "key", "auth", "pwd", "cred"))


@named(REFERENCE, "type_name")
def _type_name(v: str, lv: str, quoted: bool) -> bool:
    return v[0] in "OLDSUsibn" and _TYPEISH.match(v) is not None


@named(REFERENCE, "secret_manager_version",
    releases=('gcloud run deploy api --set-secrets=DB_PASS=db-pass:latest',))
def _manager_version(v: str, lv: str, quoted: bool) -> bool:
    return lv.endswith(":latest")  # a secret manager's entry and version: --set-secrets=DB_PASS=db-pass:latest


@named(REFERENCE, "powershell_call",
    releases=('$pw = Read-Host -AsSecureString',))
def _cmdlet(v: str, lv: str, quoted: bool) -> bool:
    return "-" in v and _CMDLET.match(v) is not None  # $pw = Read-Host -AsSecureString / ConvertTo-SecureString …


@named(REFERENCE, "string_being_built",
    releases=(
        'sb.append("MasterUserPassword: " + getMasterUserPassword() + ",");',
        '"//localhost:1337/:_password = "+new Buffer("feast").toString("base64")',
        'echo \'password = \'.$p[\'config\'][\'daemon_password\']."\\n";',
        'usernameLabel:"Username or email:",passwordLabel:"Password:",rememberMeLabel:"Remember me:"',
        'please add them to the "hosts:",\n        "passwd:" and "group:" lines of /etc/nsswitch.conf',
        '        sig = "from %d to %d" % (atleast, len(args))',
        '                        creds = " --username=" + auth',
    ))
def _string_gap(v: str, lv: str, quoted: bool) -> bool:
    # code between two strings ('"passwd:" and "group:"'), a piece of a string being built
    return quoted and (_STRING_GAP.match(v) is not None or v[0] in " \t" or _FORMAT_SPEC.search(v) is not None)


@named(REFERENCE, "escape_or_selector",
    releases=(
        '<?php\n  \\$user = \\$_POST[\\"username\\"];\n  \\$pwd = \\$_POST[\\"password\\"];\n?>',
        'this.addPassword = "#add-password";',
    ))
def _escape_or_selector(v: str, lv: str, quoted: bool) -> bool:
    return v[0] in "\\#." and _ESCAPED_OR_SELECTOR.match(v) is not None


def _is_reference(v: str, quoted: bool) -> str:
    """The name of the filter that shows v is a reference, code or a placeholder ('' for none)."""
    return first_release(REFERENCE, v, v.lower(), quoted)


_TEMPLATE = lazy(r"\{\{[^{}]*(?:\}\}|$)|\{%[^{}%]*(?:%\}|$)")  # (closed, or cut where the value was trimmed)
_BRACKETED_WORDS = lazy(r"[\w .:|/'\"*=!?&,-]*")
_ALNUM_RUN = lazy(r"[A-Za-z0-9]{4}")
_OPEN_BRACE_WORD = lazy(r"\{[A-Za-z0-9!@#$%^&*_+=.~-]{5,}")  # (no closing brace, no ':' or ',' of an object)
_PERCENT_REF = lazy(r"%(?:[\w.-]+%|[({]|[sdrif](?!\w))")
_CMDLET = lazy(r"(?:Get|Set|New|Read|ConvertTo|ConvertFrom|Import|Export|Invoke|Protect|Unprotect|Join|"
               r"Select|Format)-[A-Z][A-Za-z]+(?![\w-])")


# The "value" between a label's closing quote and the next opening quote is code, not a string:
# "MasterUserPassword: " + get() + ",", 'password = '.$p['config'], passwordLabel:"Password:",x:"…".
# It starts with a concatenation or separator and ends where the next literal or call begins.
# \$_POST[...] / \${VAR}: an escaped variable inside a quoted script; "#add-password",
# ".login-form": a CSS selector or a page anchor made of words, what the UI code calls a field
_ESCAPED_OR_SELECTOR = lazy(r"\\[$%]|[#.][a-z]+(?:[-_][a-z]+)+$")
_STRING_GAP = lazy(r"[ \t]*[+.,;)][^\n]*[ \t(\[:+,.=]$|[ \t]+[+.,;)]")


def _classes(s: str) -> tuple[bool, bool, bool]:
    return s.lower() != s, s.upper() != s, _HAS_DIGIT.search(s) is not None


_CALL_VALUE = lazy(r"[a-z_][A-Za-z0-9_.]*\([^()]*\)")


# ---- is the value after a secret label something else than a secret? ------------------------------
# Each filter reads the value, its lower-cased form, the label's class and whether it was quoted.
VALUE: list[Filter] = []


@named(VALUE, "too_short",
    releases=(
        'env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}',
        "            binary_stdout.write('password={0}'.format(signature))",
        'ADO_PAT: ${{ secrets.ADO_PAT }}',
        'password = {token1: x}',
        'password: {{ vault_pw }}',
        '**Token:** ${{ secrets.TOKEN }}',
        '| Option | Secret |\n|---|---|\n| verbose | no |\n| password | yes |\n',
        'if token == "EOF":',
        'def generate_password_hash(\n    password: str, method: str = "scrypt", salt_length: int = 16\n) -> str:',
        "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  API_KEY: '{{ api_key }}'",
    ))
def _too_short(v, lv, cls, quoted) -> bool:
    return len(v) < 4


@named(VALUE, "already_redacted")
def _already_redacted(v, lv, cls, quoted) -> bool:
    return _MARK in v


@named(VALUE, "roff_markup",
    releases=(
        '\\-\\-page\\-size=3 \\-\\-page\\-token=\\-\\-token\\-format=full \\-\\-password=my\\-username',
    ))
def _roff_markup(v, lv, cls, quoted) -> str:
    """A manual page's markup: "\\-\\-token\\-format=full", "\\fIuser-id\\fR". A value whose only
    escape is "\\&" goes only when its plain reading would: a shell escapes "&" the same way in a
    password (`ADMIN_PASSWORD=8p7ez\\&MbcHv5`), where a manual page writes "\\&" beside
    "\\-" and fonts."""
    if "\\" not in v or _ROFF.search(v) is None:
        return ""
    if _ROFF_ONLY.search(v) is not None:
        return "roff_markup"
    plain = v.replace("\\&", "")
    return (first_release(VALUE, plain, plain.lower(), cls, quoted) and "roff_markup") if plain else "roff_markup"


@named(VALUE, "reference")
def _a_reference(v, lv, cls, quoted) -> str:
    return first_release(REFERENCE, v, lv, quoted)


@named(VALUE, "call_written_out",
    releases=('assert sig == "short_fun(a=1)"\ndef short_fun(a=1): pass',))
def _call_written_out(v, lv, cls, quoted) -> bool:
    return v[-1] == ")" and _CALL_VALUE.fullmatch(v) is not None  # assert sig == "short_fun(a=1)"


@named(VALUE, "path", releases=(
    'the secret: https://en.wikipedia.org/wiki/Diffie%E2%80%93Hellman_key_exchange',
    "PWD: '/Users/maciej', HOME: '/Users/maciej', LOGNAME: 'maciej'",
    '"Key": "a.txt",\n"Owner": {\n  "ID": "{hex:64}",\n  "DisplayName": "webfile"\n}',
    'Authorization: AWS4-HMAC-SHA256 Credential=mock_access_key/20220524/us-east-1/cognito-idp/aws4_request, SignedHeaders=host',
    'secret: /etc/app/tls/server.pem',
))
def _path(v, lv, cls, quoted) -> bool:
    # a path: "/en/enterprise-server@3.0/auth"; a path of words:
    # "mock_access_key/20220524/us-east-1/cognito-idp/aws4_request"
    return (((v[0] in "/~." or lv.endswith(PATH_ENDINGS)) and (not _entropy_ok(v, 20) or _wordy(v) >= 0.4))
            or (v.count("/") >= 2 and _wordy(v) >= 0.4))


@named(VALUE, "url", releases=(
    'secret: https://vault.acme.io:8200/v1/kv/app',
))
def _url(v, lv, cls, quoted) -> bool:
    return "://" in v  # URLs are read by the URL rule


@named(VALUE, "emphasis",
    releases=('CHANGING USERID AND PASSWORD\t\t*netrw-chgup* *netrw-userpass*',))
def _emphasis(v, lv, cls, quoted) -> bool:
    return v[0] == "*" and _EMPHASIS.fullmatch(v) is not None  # "PASSWORD  *netrw-passwd*"


@named(VALUE, "file_name")
def _file_name(v, lv, cls, quoted) -> bool:
    return "." in v and lv.rpartition(".")[2] in FILE_TYPES  # "my-dir/big-video-file.mp4"


@named(VALUE, "default_password",
    releases=(
        "user = User(username='scolvin', password='password1')",
        "GOOGLE_OAUTH2_DEFAULT_FILE_PASSWORD = 'notasecret'",
    ))
def _default_password(v, lv, cls, quoted) -> bool:
    return lv in DEFAULT_PASSWORDS


@named(VALUE, "sentence",
    releases=(
        '"AllowCredentials": "Boolean indicating whether request is allowed to contain credentials."',
    ))
def _sentence(v, lv, cls, quoted) -> bool:
    # "Boolean indicating whether …": keys have no spaces, passphrases few
    return " " in v and (v.count(" ") >= (5 if cls == _PWD else 2) or ". " in v)


@named(VALUE, "public_key",
    releases=('keys: [\n  { keyid: "npm-2023", key: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{b64:86}==" }\n]',),
    keeps=('signing key: "⟦MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg{b64:43}=⟧"',))
def _public_key(v, lv, cls, quoted) -> bool:
    return cls != _PWD and _public_der(v)  # "MFkwEwYHKoZIzj0CAQY…"


@named(VALUE, "encoded_placeholder",
    releases=(
        "  auth: 'aXNhYWNzOm5vdCBteSByZWFsIHBhc3N3b3Jk',\n  password: 'bm90IG15IHJlYWwgcGFzc3dvcmQ=',",
    ))
def _encoded_placeholder(v, lv, cls, quoted) -> bool:
    # base64 of 'not my real password', of 'isaacs:<placeholder>', of a sentence, a ciphertext
    return _b64_placeholder(v) or (cls != _PWD and _encoded_text(v))


@named(VALUE, "property_name",
    releases=(
        '<entry key="jetbrains.mps.v8_elimination" value="executed" />',
        "EMRFS_CSE_KMS_KEY_ID_KEY = 'fs.s3.cse.kms.keyId'",
    ))
def _property_name(v, lv, cls, quoted) -> bool:
    return cls != _PWD and _PROPERTY_NAME.fullmatch(v) is not None  # "fs.s3.cse.kms.keyId"


@named(VALUE, "version",
    releases=(
        '"lastModifiedSecret": 1596573346.171,',
        "            'Test2::Event::Pass'    => '1.302103',\n            'Test2::Event::Plan'    => '1.302103',",
    ))
def _version(v, lv, cls, quoted) -> bool:
    return _VERSION.fullmatch(v) is not None  # 'Test2::Event::Pass' => '1.302103'


@named(VALUE, "number",
    releases=('use constant ZIP_LOCAL_HDR_SIG                 => 0x04034b50;',))
def _number(v, lv, cls, quoted) -> bool:
    # a number written in hex (ZIP_LOCAL_HDR_SIG => 0x04034b50), a time ("lastModifiedSecret": 1596573346.171)
    return cls != _PWD and (_SMALL_HEX.fullmatch(v) is not None or _DECIMAL.fullmatch(v) is not None)


@named(VALUE, "punctuation", releases=('token = "((((4))))"',))
def _punctuation(v, lv, cls, quoted) -> bool:
    # a token is letters and digits: '((((4))))' after "tokens1 =" is a test's input
    return cls == _SEC and sum(c.isalnum() for c in v) < 0.5 * len(v)


@named(VALUE, "short_number")
def _short_number(v, lv, cls, quoted):
    if not v.isdigit():
        return False  # a PIN-like password, or a long numeric token
    return KEEP if (cls == _PWD and len(v) >= 6) or (cls == _SEC and len(v) >= 16) else True


@named(VALUE, "short_password", releases=(
    'password: abc1',
), keeps=(
    'password: ⟦abc12⟧',
))
def _short_password(v, lv, cls, quoted):
    if cls != _PWD:
        return False
    return KEEP if len(v) >= 5 else True


@named(VALUE, "short_token")
def _short_token(v, lv, cls, quoted) -> bool:
    return cls == _SEC and len(v) < 8


@named(VALUE, "word",
    releases=("await libpub.unpublish('lodash', { token: 'i-am-the-worst'})",))
def _word_not_random(v, lv, cls, quoted) -> bool:
    # one case, no digit: a word or a slug ('i-am-the-worst'), not random letters
    if cls != _SEC:
        return False
    up, lo, dg = _classes(v)
    return not dg and not (up and lo) and (v.isalpha() or _JOINED_WORDS.fullmatch(lv) is not None) and not _random_letters(v)


@named(VALUE, "short_without_digit")
def _short_without_digit(v, lv, cls, quoted) -> bool:
    return cls == _SEC and len(v) < 12 and _HAS_DIGIT.search(v) is None


@named(VALUE, "words_apart",
    releases=("      'opaquelocktoken': 'RFC 2518',",))
def _words_apart(v, lv, cls, quoted) -> bool:
    # a token is one unbroken run: "RFC 2518" names a document
    return cls == _SEC and " " in v and max(map(len, v.split())) < 12


@named(VALUE, "name_of_words", releases=(
    'apiKey: "AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\ntoken = "xxxxxxxxxxxxxx.atlasv1.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"',
    'token: AgencyIdentificationCodeContentType',
),
       keeps=(
           'secret: ⟦hardcoded0⟧',
           'client_secret = "⟦SuperSecret2024⟧"',
           'api_key=⟦sIPMUQYOWKVTuLGLobcU⟧',
       ))
def _name_of_words(v, lv, cls, quoted):
    if cls != _SEC:
        return False
    # "AgencyIdentificationCodeContentType" names something; a short one with a digit
    # ('hardcoded0', 'SuperSecret2024') is how people make passwords: a miss costs more than a word
    # (a run of letters drawn at random can read as words to _wordy: its letter pairs tell it apart)
    return True if _wordy(v) >= 0.7 and (len(v) >= 24 or _HAS_DIGIT.search(v) is None) and _rare_pairs(v) < 0.3 else KEEP


@named(VALUE, "not_random",
    releases=(
        '"key": "ctrl+shift+down",\n"command": "editor.action.copyLinesDownAction"',
        '2026-04-14T21:04:45.019Z DEBUG cache: key=user:143989:profile hit=true ttl=573',
        '<add key="ConnectionString_B2B" value="Server=db;Database=B2B;Integrated Security=True" />',
        '| Key | Action |\n|---|---|\n| Ctrl+C | copy |\n',
        'kind: Secret\nmetadata:\n  name: x\n---\nkind: ConfigMap\ndata:\n  key: secret/mysecret\n',
        'aws s3api list-parts --bucket b --key multipart/01 --upload-id {alnum:70}\naws cognito-idp forgot-password --client-id {lower:26} --username jane',
        '"S3Key": "867139942017-PHIDetection-{hex:32}"\n{"bucket": "b", "key": "{hex:8}-{hex:4}-4{hex:3}-a{hex:3}-{hex:12}"}\naws s3api put-object --bucket b --key my-dir/big-video-file.mp4',
    ))
def _weak_not_random(v, lv, cls, quoted) -> bool:
    # weak label ("key", "bucket_key"): only clearly random values, not names made of words
    # (a quoted UUID after a bare "key" is an object's or a record's id: '"bucket": "b", "key": "48c6…"';
    # "?key=<uuid>" in a URL is an API key)
    return not (_entropy_ok(v, 16) and ":" not in v and _wordy(v) < 0.5
                and not (quoted and len(v) == 36 and _UUID.fullmatch(v)))


def value_filter(v: str, cls: int, quoted: bool) -> str:
    """The name of the filter that lets the value of a secret label go, or '' when it is a secret.

    A value longer than _MAX_VALUE is judged by its head: it is redacted whole unless a filter
    shows the head is something else (a template, a path, a URL, a sentence). No length lets a
    value go, and none leaves part of one in clear."""
    if len(v) > _MAX_VALUE:
        v = v[:_MAX_VALUE]
    return first_release(VALUE, v, v.lower(), cls, quoted)


def _public_der(v: str) -> bool:
    """Base64 of a SubjectPublicKeyInfo ('MFkwEwYHKoZIzj0CAQY…', 'MCowBQYDK2VwAyEA…'): a public key.

    Its DER is SEQUENCE { AlgorithmIdentifier SEQUENCE, BIT STRING }; a private key's (PKCS#8,
    PKCS#1) opens with an INTEGER and an encrypted one's carries an OCTET STRING, so both stay
    secret. Only the first 48 bytes are decoded.
    """
    if len(v) < 60 or v[0] != "M":
        return False
    der = _b64_head(v)
    if len(der) < 8 or der[0] != 0x30:
        return False
    i = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)
    if i + 2 > len(der) or der[i] != 0x30 or der[i + 1] >= 0x80:
        return False
    j = i + 2 + der[i + 1]
    return j < len(der) and der[j] == 0x03


_SALTED = b"Salted__"  # what `openssl enc -a` output opens with: a ciphertext shown, not its key


def _encoded_text(v: str) -> bool:
    """Hex or base64 of a sentence, or OpenSSL's salted ciphertext: something shown encoded, not a key."""
    return encoded_sentence(v) or _b64_head(v).startswith(_SALTED)


def _b64_head(v: str) -> bytes:
    """The first bytes of base64 text, decoded ('' when it is not base64)."""
    head = v[:64]
    try:
        return base64.b64decode(head[:len(head) - len(head) % 4], validate=True)
    except (binascii.Error, ValueError):
        return b""


def _b64_placeholder(v: str) -> bool:
    """Base64 of a placeholder pair such as 'username:password' (curl's own docs), or of a
    placeholder alone ('bm90IG15IHJlYWwgcGFzc3dvcmQ=' is 'not my real password')."""
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True).decode("utf-8").strip()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    user, _, pw = raw.partition(":")
    if not pw:  # (a phrase: base64 of a lone word, even 'mypassword', may be what a Secret holds)
        return " " in raw and raw.isprintable() and _placeholder(raw, raw.lower())
    return _url_placeholder(pw) or pw.lower() == user.lower()


def _b64_creds(v: str) -> bool:
    """True if v is base64 of 'user:password' (Basic auth, docker config 'auth')."""
    if len(v) < 8 or len(v) > 400:
        return False
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
        s = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    if ":" not in s or not s.isprintable():
        return False
    user, _, pw = s.partition(":")
    return bool(pw) and len(pw) >= 3 and " " not in user


def _placeholder_token(tok: str) -> bool:
    """A token that says in capitals that it is a stand-in ('…EXAMPLE', 'AKIADUMMY…', 'sk_SAMPLE…KEY'):
    five given capitals never occur in a random key by chance."""
    return tok.endswith("EXAMPLE") or "XXXXXXXX" in tok or "xxxxxxxx" in tok or _STAND_IN.search(tok) is not None


_STAND_IN = lazy(r"EXAMPLEKEY|DUMMY|SAMPLE|PLACEHOLDER|REPLACEME|YOURKEY|NOTREAL")
_UUID = lazy(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_COMPOUND_PART = lazy(r"[A-Za-z]+|\d+|[A-Za-z0-9]{1,8}")
_COMPOUND_SEP = lazy(r"[-_./]")
_CASE_FLIP = lazy(r"[a-z][0-9]*[A-Z]")


def _is_compound_name(tok: str) -> bool:
    """A name built of words, numbers and short codes joined by - _ . / (a chemical, a gene
    pathway, a strain: "3-hydroxy-3-methylglutaryl", "GEP100-Arf6-AMAP1-cortactin") is not a
    random token: a generated secret's parts between separators are long runs of mixed
    characters, and their case changes at random ("SEeNW8bM_Rref-UFdiBKio"): no part of a
    name has a capital after a small letter. One part must be a word of four letters or more."""
    parts = _COMPOUND_SEP.split(tok)
    return (len(parts) > 1 and all(_COMPOUND_PART.fullmatch(p) and not _CASE_FLIP.search(p) for p in parts)
            and any(len(p) >= 4 and p.isalpha() for p in parts))
_DECIMAL = lazy(r"\d+\.\d+")
_CAMEL_NAME = lazy(r"[a-z]+(?:[A-Z][a-z0-9]+){3,}")
_HUMP = lazy(r"[A-Z][a-z0-9]+")
_VOWEL = lazy(r"[aeiou]")
_DOTTED_NAME = lazy(r"\.[a-z]+(?:[A-Z][a-z]+){2,}$")
_NAME_CHARS = lazy(r"[A-Za-z0-9_.]+")
_CASE_HUMP = lazy(r"[a-z0-9][A-Z]")
_LETTER_NUMBER = lazy(r"(?:^|(?<=[._]))[A-Za-z]\d+(?=[A-Z._]|$)")  # x25519, v8, s3 opening a segment
_NAME_PIECE = lazy(NAME_PIECE)


def _name_word(piece: str) -> bool:
    w = piece.lower()
    return (len(w) >= 3 and piece[-1].islower() and sum(map(w.count, "aeiouy")) >= 0.2 * len(w)
            and _CONSONANTS4.search(w) is None)


def _code_name(tok: str) -> bool:
    """A name in code, not a key: "ed25519.Ed25519PrivateKey", "TerminalTrueColorFormatter",
    "sodium_crypto_aead_chacha20poly1305_ietf_keygen", "v8.setFlagsFromString".

    Cut at case changes, digits and separators, a name is mostly pronounceable words; a random
    token is mostly single letters and short runs (about 1 in 300 random 20-character base62
    tokens pass, 1 in 1,000 at 32; at 12 characters 1 in 80, so labelled values, which are
    often short, are not judged by this). A name has camelCase humps or snake_case joints;
    without them the runs of a random lower-case body make words too often.
    """
    if "." in tok and (_wordy(tok) >= 0.7 or _DOTTED_NAME.search(tok) or module_attribute(tok)):
        return True  # a module's attribute: "http2.sensitiveHeaders", "ed25519.Ed25519PublicKey"
    if tok[0].islower() and _CAMEL_NAME.fullmatch(tok) and sum(
            len(h) > 2 and _VOWEL.search(h) is not None for h in _HUMP.findall(tok)) >= 3:
        return True  # camelCase: "xmlSecTransformRsaPkcs1Id"
    if _NAME_CHARS.fullmatch(tok) is None:
        return False  # a name is letters, digits, '_' and '.': no '=', '-', '+' or '/'
    if _CASE_HUMP.search(tok) is None and tok.count("_") + tok.count(".") < 2:
        return False  # no camelCase hump, no snake_case: 'NRAK-i5basoqzasyr8lurozafmt2ts29' is a key
    pieces = _NAME_PIECE.findall(tok)
    singles = sum(len(p) == 1 and p.isalpha() for p in pieces)
    if singles > 1 and singles - len(_LETTER_NUMBER.findall(tok)) > 1:
        return False  # random case flips leave single letters between the runs (not 'x25519.X25519')
    letters = sum(len(p) for p in pieces if not p.isdigit())
    need = max(8, 0.7 * letters)
    # a word is a run of three letters or more ending in a small one: when those runs alone fall
    # short, no vowels need counting (a random token's runs are short, so most end here)
    runs = [p for p in pieces if len(p) >= 3 and p[-1].islower()]
    if len(runs) < 2 or sum(map(len, runs)) < need:
        return False
    words = [p for p in runs if _name_word(p)]
    return len(words) >= 2 and sum(map(len, words)) >= need


def _typed_name(v: str) -> bool:
    """A name code would use for a type or a variable, not a password someone chose: a name of
    words ('X25519PrivateKey'), a PascalCase word run ('FilterOrBool') or a snake_case name. A
    name that ends in digits ('SuperSecret2024') is how people make passwords: not a name here."""
    if _IDENTIFIER.fullmatch(v) is None or v[-1].isdigit():
        return False
    return ("_" in v.strip("_") or (v[0].isupper() and v.isalpha() and _CASE_HUMP.search(v) is not None)
            or _code_name(v))


def _name_like(v: str) -> bool:
    """A type's, a setting's, a mode's or a manual's argument's name ('ReadableBuffer',
    'Incomplete', 'svc_backup', 'bandpass', 'USER-ID'): only such a value may go free for being
    held by another label too. A password someone chose is often typed twice ('"password":
    "Zq8xLm2pWv", "confirm": "Zq8xLm2pWv"'), and both copies must go."""
    m = _IDENTIFIER.match(v)
    if m is not None and v[m.end():m.end() + 1] in ("[", "("):
        v = m.group()  # a generic type's head: "Callable[[", "Optional["
    return _typed_name(v) or (v.isalpha() and (v.islower() or (v[:1].isupper() and v[1:].islower()))) or (
        v.isupper() and v.replace("-", "").replace("_", "").isalpha())  # a manual's USER-ID, FILE_NAME


def _url_placeholder(pw: str) -> bool:
    if "%" in pw and not pw.startswith("%("):
        pw = unquote(pw)  # a URL's user info is percent-encoded: 'a%20secret' is 'a secret'
    lp = pw.lower()
    if lp in PLACEHOLDER_WORDS or lp in ("pass", "pw", "pwd", "passwd", "password", "secret", "foobared", "example", "changeme", "xxx"):
        return True
    if pw.startswith(("$", "{", "<", "%(", "[REDACTED", "*")) or _placeholder(pw, lp):
        return True
    return len(set(pw)) <= 1 or lp in DEFAULT_PASSWORDS or _low_information(pw)


def _cli_value_ok(v: str) -> bool:
    if len(v) < 3 or _MARK in v:
        return False
    lv = v.lower()
    if v.startswith(("$", "%", "<", "{", "-")) or lv in PLACEHOLDER_WORDS:
        return False
    if _placeholder(v, lv):
        return False
    if v.isdigit() and len(v) < 6:
        return False
    return True
_STRONG_SYM = frozenset("!@#$%^&*?~+=|{}[]()<>;,")


def _yaml_tag(tok: str) -> bool:
    """'!secret', '!vault', '!env_var', '!Ref': a YAML tag names where the value comes from."""
    return tok[:1] == "!" and tok[1:].replace("_", "").isalpha()


def _pw_shape(tok: str) -> int:
    """0 = not a password, 1 = letters+digits, 2 = letters+digits+symbols / passphrase."""
    if tok.endswith("**"):
        tok = tok.rstrip("*")  # Markdown bold closing: "… a password change**"
    n = len(tok)
    if n < 6 or n > 64 or _yaml_tag(tok):
        return 0
    if "://" in tok or "@" in tok[1:-1] and "." in tok.split("@")[-1] or tok.endswith(":"):
        return 0
    if tok.startswith(("#", "@", "/", "~/", "./", "$", "%", "<", "{{", "[REDACTED", "http")):
        return 0
    if "\\" in tok and _ROFF.search(tok):
        return 0  # a manual page's markup: "prompt\\&.", "\\-\\-password"
    if tok[0] in "*_" and tok.strip("*_").replace("_", "").isalpha():
        return 0  # Markdown or reStructuredText emphasis: "*Type*", "*makes", "*codec_errors*"
    if tok[0] == "{" and (tok[1:2].isalnum() or tok[1:2] in "_}"):
        return 0  # an f-string's or a format's field: "{password!r}", "{0}"
    if tok[0] == "&" and tok[1:6].lower().startswith(("lt;", "#x3c;", "#60;")):
        return 0  # an HTML-escaped <placeholder>
    if _DATEISH.match(tok) or _CODE_TOKEN.search(tok) or module_attribute(tok):
        return 0  # (a date, a version, code; "win32typing.PyHANDLE" after '->')
    if "(" in tok and _MAN_REFERENCE.fullmatch(tok):
        return 0  # a manual's reference to another page: "plymouth(8),", "SYSTEMD-ASK-PASSWORD(1)"
    letters = digits = syms = 0
    for ch in tok:
        if ch.isalpha():
            letters += 1
        elif ch.isdigit():
            digits += 1
        elif ch in _STRONG_SYM:
            syms += 1
    if tok[-1] == "?" and tok.rstrip("?").replace("-", "").isalpha():
        return 0  # a question: "(file? command-line? env. variable?)"
    if not digits and (tok.count("(") != tok.count(")") or tok.count("[") != tok.count("]")):
        return 0  # a word and its punctuation ("digest)#", "options])#"), not a generated password
    if _EXPRESSION.search(tok) and not _nested(tok):
        return 0  # a piece of an expression: "Piecewise((1", "1/3)*piecewise(x", "x^2)/x"
    if not letters or tok.rstrip("!?.").isalpha():
        # a word ending a sentence ("did not match!", "you've just created?"), unless random
        return 1 if _random_letters(tok) else 0
    if not letters:
        return 0
    if "=" in tok and _IDENTIFIER.match(tok) and tok[_IDENTIFIER.match(tok).end():].startswith("="):
        return 0
    if "/" in tok and not syms:
        return 0
    if tok.count("-") >= 3 and digits and letters >= 12:
        return 2  # diceware passphrase
    if digits and syms:
        return 2
    if syms >= 1 and letters >= 4 and not tok.isalpha():
        return 2 if any(c in "!@#$%^&*?~" for c in tok) else 0
    if digits:
        return 1
    return 0


# v8::Object, GetCurrent(), res.writeHead(200, utf8_to_utf16_dup(value, target[1024, pw[:-1]
_CODE_TOKEN = lazy(r"::|\(\)|\.[A-Za-z_]\w*\(|[A-Za-z0-9]_\w*\(|\w\[[-:\d]+\]?$|\(\?[:i!=<]|\)\|\(")
# calls nested in calls or an operator beside a parenthesis: with unmatched parentheses, code cut
# at a space ("Piecewise((1", "Sum(Piecewise((1", "x^2)/x"), where "Welcome(2024" is a password
_EXPRESSION = lazy(r"[A-Za-z]{3}\((?:\(|[A-Za-z]{3})|[)\]][*/^+]|[*/^+]\(")


def _nested(tok: str) -> bool:
    """Parentheses that open before they close and all close: "Welcome(2024)", not "f((1"."""
    depth = 0
    for c in tok:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_MAN_REFERENCE = lazy(r"[\w.:-]+\([1-9][a-z]{0,4}(?:\)[).,;:]*)?")
_ROFF = lazy(r"\\(?:[&-]|f[BIRP]|\*\()")  # (not a Windows path's "\\fx166.exe")
_ROFF_ONLY = lazy(r"\\(?:-|f[BIRP]|\*\()")  # (what only roff writes: a shell escapes "&" too)
_DATEISH = lazy(r"^(?:\d{1,4}[-./:]\d{1,2}[-./:]\d{1,4}|v?\d+(?:\.\d+)+|\d+(?:[.,]\d+)*%?$|[A-Z]{2,}[-#]\d+$)")


def _bounded(text: str, s: int, e: int) -> bool:
    """The copy at [s, e) is a whole token, not the middle of a longer word or token."""
    if s > 0 and text[s].isalnum() and (text[s - 1].isalnum() or text[s - 1] == "_"):
        return False
    return not (e < len(text) and text[e - 1].isalnum() and (text[e].isalnum() or text[e] == "_"))


# ---- validators a Pattern rule of the catalogue names ----------------------------------------------
def _random14(v: str) -> bool:
    """Mixes letters with digits, 14 characters or more (Sumo Logic's access ids)."""
    return _entropy_ok(v, 14)


def _random20(v: str) -> bool:
    """Mixes letters with digits, 20 characters or more (Vault's unseal keys)."""
    return _entropy_ok(v, 20)


def _b64_private_key(v: str) -> bool:
    """Base64 of a PEM file whose head is a private key's (not a certificate's)."""
    return b"PRIVATE KEY" in _b64_head(v)


VALIDATORS: dict[str, Callable[[str], bool]] = {
    "cli_value": _cli_value_ok, "random14": _random14, "random20": _random20, "b64_private_key": _b64_private_key,
}


# ---- is a random token beside a secret word something else? ----------------------------------------
# Each filter reads the token, its length and whether it has upper-case letters, lower-case
# letters and digits.
# a cloud resource's id: its type in words and 8 or 17 hex digits ("device-07f6fd08867abc123", "i-0a1b…")
_RESOURCE_ID = lazy(r"[a-z]+(?:-[a-z]+)*-[0-9a-f]{8}(?:[0-9a-f]{9})?")
_HEX_GROUPS = lazy(r"[0-9A-Fa-f]{1,12}(?:-[0-9A-Fa-f]{1,12})+")
_WORDS_THEN_HEX = lazy(r"[A-Za-z]+(?:-[A-Za-z]+)*-[0-9A-Fa-f]{1,12}(?:-[0-9A-Fa-f]{1,12}){2,}")
# segments that are numbers or names in camel case: a path of ids and words, not a key
_WORDS_AND_NUMBERS = lazy(r"(?:[\d-]+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*)(?:/(?:[\d-]+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*))+")
_PATH_HEAD = lazy(r"[a-z][a-z0-9_-]{0,11}/")
# a segment is letters, optionally a number and a lower-case tail ("S3session", "k8s"); the tail only
# after digits, so a run of letters splits one way only (two adjacent letter runs backtrack
# exponentially over many segments)
_WORDY_SEGMENTS = lazy(r"_*(?:[A-Za-z]{1,12}(?:\d{1,3}[a-z]{0,10})?|\d+)(?:[-_.](?:[A-Za-z]{1,12}(?:\d{1,3}[a-z]{0,10})?|\d+))+")
_RANDOM_DOTTED = lazy(r"[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]{6,}){1,4}")
TOKEN: list[Filter] = []


@named(TOKEN, "no_digit")
def _no_digit(tok, n, up, lo, dg) -> bool:
    return not dg


@named(TOKEN, "path")
def _token_path(tok, n, up, lo, dg) -> bool:
    # a path, a URL, "rsa4096/1A86…" (a key's listing), "123456789013/costCenter", "tagKeys/1234…"
    return "/" in tok and ("." in tok or not (up and lo) or _PATH_HEAD.match(tok) is not None
                           or _WORDS_AND_NUMBERS.fullmatch(tok) is not None)


@named(TOKEN, "dotted_name")
def _dotted_name(tok, n, up, lo, dg) -> bool:
    # a domain, a version, a dotted.name
    return "." in tok and (tok.count(".") >= 2 or not (up and lo)) and not _RANDOM_DOTTED.fullmatch(tok)


@named(TOKEN, "uuid", releases=(
    'the secret id is 6f1c2a8e-4b7d-4e2f-9a3b-1c2d3e4f5a6b',
))
def _uuid_or_ulid(tok, n, up, lo, dg) -> bool:
    return (n == 36 and tok[8] == "-" and tok[13] == "-") or (n == 26 and tok.isupper() and tok.isalnum())


@named(TOKEN, "id_of_hex_groups")
def _hex_groups(tok, n, up, lo, dg) -> bool:
    # groups of hex digits: a GUID cut by a line break ("E914-47DA-95CA-C5AB0DC85B11"), a MAC; a cloud
    # resource's id ("device-07f6fd08867abc123"); a name and a UUID ("Console-CreateStack-7f59…")
    return "-" in tok and (_HEX_GROUPS.fullmatch(tok) is not None or _RESOURCE_ID.fullmatch(tok) is not None
                           or _WORDS_THEN_HEX.fullmatch(tok) is not None)


@named(TOKEN, "constant_name")
def _token_constant(tok, n, up, lo, dg) -> bool:
    # a constant's or an environment variable's name: "OAUTH2CLIENT_TEST_P12_KEY_PATH"
    return "_" in tok and tok.isupper() and _CONST_NAME.fullmatch(tok) is not None and _wordy(tok) >= 0.4


@named(TOKEN, "wordy_segments")
def _wordy_segments(tok, n, up, lo, dg) -> bool:
    # "PuTTY-User-Key-File-3", "claude-3-5-sonnet-20241022", "Some_Var_Name_2"
    return ("-" in tok or "_" in tok) and _WORDY_SEGMENTS.fullmatch(tok) is not None


@named(TOKEN, "compound_name", releases=(
    "A key finding: the 3-hydroxy-3-methylglutaryl pathway is essential for angiogenesis in these mice.",
    "A key finding: the phosphatidylinositol-3-kinase pathway is essential for angiogenesis in these mice.",
    "A key finding: the GEP100-Arf6-AMAP1-cortactin pathway is essential for angiogenesis in these mice.",
    "A key finding: the TLR4-TRIF-RIPK1-FADD-CASP8 pathway is essential for angiogenesis in these mice.",
    "A key finding: the A/Netherlands/602/2009 pathway is essential for angiogenesis in these mice.",
    "A key finding: the epigallocatechin-3-gallate pathway is essential for angiogenesis in these mice.",
))
def _compound(tok, n, up, lo, dg) -> bool:
    # "phosphatidylinositol-3-kinase", "TLR4-TRIF-RIPK1-FADD-CASP8", "A/Netherlands/602/2009"
    return _is_compound_name(tok)


@named(TOKEN, "too_short_to_be_random")
def _too_short_to_be_random(tok, n, up, lo, dg) -> bool:
    # hex under 32 digits (a short hash or an id), one case under 24 characters
    if _HEX.fullmatch(tok) is not None:
        return n < 32
    return not (up and lo) and n < 24


# ---- is a token its context names a secret something else after all? -----------------------------
CONTEXT_TOKEN: list[Filter] = []


@named(CONTEXT_TOKEN, "code_name")
def _ctx_code_name(tok, mixed) -> bool:
    return _code_name(tok)


@named(CONTEXT_TOKEN, "encoded_placeholder")
def _ctx_b64_placeholder(tok, mixed) -> bool:
    return _b64_placeholder(tok)  # base64 of 'username:password'


@named(CONTEXT_TOKEN, "public_key")
def _ctx_public_key(tok, mixed) -> bool:
    return _public_der(tok)


@named(CONTEXT_TOKEN, "placeholder_inside")
def _ctx_placeholder(tok, mixed) -> bool:
    return _PH_INNER_RE.search(tok.lower()) is not None  # an EXAMPLE or other filler word ('NotARealKey', 'dummy')


@named(CONTEXT_TOKEN, "code_expression")
def _ctx_code_expression(tok, mixed) -> bool:
    return code_expression(tok)  # a sum of names, a generated name


@named(CONTEXT_TOKEN, "name_of_words")
def _ctx_words(tok, mixed) -> bool:
    return not mixed and _wordy(tok) >= 0.8  # a name of words in one case ("oauth2credentialprovider")


@named(CONTEXT_TOKEN, "encoded_text")
def _ctx_encoded(tok, mixed) -> bool:
    return _encoded_text(tok)  # words in hex or base64, OpenSSL's ciphertext ("U2FsdGVkX1…")


# ---- is a span found by any rule filler? ('xxxx…', 'AIzaaaa…', 'abcdef…123', '…EXAMPLE') --------------
FILLER: list[Filter] = []
named(FILLER, "low_information", releases=(
    ' --set global.licenseKey=a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8NRAL `',
    'shopify_client_secret=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',
))(_low_information)
named(FILLER, "placeholder_token")(_placeholder_token)
