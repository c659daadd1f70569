"""Precision checks for the scrubber: shapes of real text that release a token judged a secret.

The scrubber first decides that a token is a secret (a secret word nearby, a generic
``prefix_<random>`` shape); only then are these checks asked whether the token is in fact a
name in code, an id or encoded text. They read the token and the few characters around it,
never the whole document, so they keep the scan linear, and they are never asked about a
vendor-shaped key or a private key: those are redacted whatever their surroundings.
"""
from __future__ import annotations

import base64
import functools
import re


@functools.cache
def compiled(src: str) -> re.Pattern:
    """Compile on first use: importing the scrubber must stay cheap. (Shared by the scrubber's
    helper modules: scrub_tables and scrub_personal compile their patterns here too.)"""
    return re.compile(src)


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
