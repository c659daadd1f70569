"""A secret label and its value, wherever the text writes the pair.

One scan of the lower-cased text finds the stems a label can hold ("pass", "token", "key",
"kennwort", ...); each hit is widened to its identifier and classified (memoised): a password
word, a secret word, a weak "key", or no label. The label must *end* in a secret word
(``PASSWORD_MIN_LENGTH`` or ``token_uri`` are not labels). Then the value is read where the
text's structure puts it: after an operator (``password=``, ``"api_key": "…"``, ``token ::=``,
``password == "…"``), inside an element (``<password>…</password>``, ``<entry key="password">``),
as an attribute (``<add key="…Password" value="…"/>``), as a call's second argument
(``define('DB_PASSWORD', '…')``), beside a name field (``{"key": "token", "value": "…"}``), after
a flag or a netrc word (``--token X``, ``password X``), alone on the line below a title
("Wifi password:" then "Hytta2024"), on the left of a comparison, among names unpacked from
literals, in a table's column or a CSV export's, as a Terraform variable's default. The value is
then judged by the named filters (``filters.VALUE``).
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .catalogue import (AUTH_SCHEMES, CODE_WORDS, FLAG_NOUNS, FOREIGN_KEY_QUALIFIERS, FOREIGN_KEY_WORDS,
                        FUSED_PASS_PREFIXES, HEAD_FIRST_KEY_WORDS, HEAD_FIRST_NOT, HEAD_FIRST_PASSWORD_WORDS,
                        KEY_QUALIFIERS, LABEL_TRAILERS, NOT_A_VALUE, PAGING_WORDS, PASSWORD_WORDS, PAT_OWNERS,
                        SECRET_WORDS, SECRET_WORDS_ELSEWHERE, SERVICES, SPACED_LABELS, WIFI_WORDS)
from .filters import (_IDENTIFIER, _MARK, _MAX_VALUE, _NOT, _OPEN_BRACE_WORD, _PWD, _SEC, _WEAK, _b64_creds,
                      _b64_placeholder, _bounded, _entropy_ok, _is_compound_name, _is_reference, _name_like,
                      _placeholder, _pw_shape, _typed_name, value_filter)
from .patterns import lazy
from .prose import (_BEFORE_REACH, _PROSE_KW, _WIDE, _app_password, _prose_before, _prose_kw, after_word, after_word_start,
                    passphrase, strong)
from .tables import csv_cells, delimited_cells, list_under, markdown_cells

if TYPE_CHECKING:
    from .engine import _Spans

# the marks that write a vowel or an accent on a letter (पासवर्ड, รหัสผ่าน), which \w leaves out
_MARKS = "\u0300-\u036f\u0900-\u0dff\u0e31-\u0e4e\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff"
_LETTERS = lazy(rf"[^\W\d_](?:[^\W\d_]|[{_MARKS}])*")


def _components(ident: str) -> list[str]:
    """An identifier's words: a run of capitals (HTTPServer's HTTP), a capital and its small
    letters, or any other run of letters (κλειδί, пароль, 密码), in every script that has
    capitals (KLÍČ_API, NØGLE_API), where a pattern's [A-Z] knows only ASCII's."""
    out = []
    for run in _LETTERS.findall(ident):
        start = 0
        for j in range(1, len(run)):
            a, b = run[j - 1], run[j]
            if (b.isupper() and not a.isupper()) or (
                    a.isupper() and b.isupper() and j + 1 < len(run) and run[j + 1].islower()):
                out.append(run[start:j])
                start = j
        out.append(run[start:])
    return out


def _label_class(ident: str) -> int:
    comps = [c.lower() for c in _components(ident)]
    if not comps:
        return _NOT
    if "api" in comps[-2:] and not FOREIGN_KEY_WORDS.isdisjoint(comps[-2:]):
        return _SEC  # an API key in another language: CHIAVE_API, API_KLUC, kunci_api
    if len(comps) > 1 and HEAD_FIRST_NOT.isdisjoint(comps[1:]):
        if comps[0] in HEAD_FIRST_PASSWORD_WORDS:
            return _PWD  # the head first: HASLO_BAZY, PAROL_BD, senha_do_banco, parola_d_ordine
        if comps[0] in HEAD_FIRST_KEY_WORDS and not FOREIGN_KEY_QUALIFIERS.isdisjoint(comps[1:]):
            return _SEC  # chiave_segreta, clave_de_acceso, cle_api
    # drop trailing harmless words: "secret_key_base" -> secret key, "token_value" -> token
    while len(comps) > 1 and comps[-1] in LABEL_TRAILERS and comps[-1] != "key":
        comps.pop()
    last = comps[-1]
    prev = comps[-2] if len(comps) > 1 else ""
    if last in PASSWORD_WORDS or "".join(comps[-3:]) in PASSWORD_WORDS or "".join(comps[-2:]) in PASSWORD_WORDS:
        return _PWD  # (a password word written in words: mot_de_passe, kata_laluan, mat_khau)
    if last in SECRET_WORDS:
        if prev in ("public", "publishable") or (prev == "key" and len(comps) > 2 and comps[-3] == "public"):
            return _NOT  # publicToken, publishable_key, .NET's publicKeyToken: meant to be shown
        if last == "token" and prev in PAGING_WORDS:
            return _NOT  # NextToken, page_token, IdempotencyToken: a cursor or a request's id
        if last == "auth" and prev in ("o", "basic", "http", "no"):
            return _WEAK
        return _SEC
    if last == "key" or last == "keys":
        if prev == "s" and ident[-5:-3].lower() == "s3":
            return _NOT  # S3Key: an object's name in a bucket
        if prev in ("public", "publishable", "primary", "foreign", "cache", "sort", "partition",
                    "hot", "short", "lookup", "map", "dict", "host", "unique", "composite",
                    "idempotency", "i18n", "translation", "object", "s3", "file", "ssh"):
            return _NOT if prev != "ssh" else _WEAK
        if prev in WIFI_WORDS:
            return _PWD  # a Wi-Fi network's key is its password: 'hunter22' counts
        if prev in KEY_QUALIFIERS or prev in SERVICES or prev in PASSWORD_WORDS or prev in SECRET_WORDS or prev == "token":
            return _SEC  # (a key named for a service is that service's key: "atlassian_key")
        return _WEAK
    if last == "pat" and not PAT_OWNERS.isdisjoint(comps):
        return _SEC  # a personal access token (GITHUB_PAT, AZURE_DEVOPS_EXT_PAT), not a pattern (date_pat)
    # fused words: PGPASSWORD, MYSQL_PWD(covered), storepass, apikey, authtoken, xsrftoken
    for w in ("password", "passwd", "passwort", "passord", "kennwort", "pwd"):
        if last.endswith(w):
            return _PWD
    if last.endswith("pass") and last.startswith(FUSED_PASS_PREFIXES):
        return _PWD
    if last.endswith("token") or last.endswith("secret"):
        return _SEC
    if last.endswith("key") and len(last) > 3 and last[:-3] in KEY_QUALIFIERS:
        return _SEC
    if last.endswith("key") and len(last) > 5 and ident.isupper():
        # a glued constant: "TWITTERCONSUMERKEY" (a qualifier before KEY: secret), "MAILERKEY" (weak)
        return _SEC if last[:-3].endswith(_GLUED_QUALIFIERS) else _WEAK
    # a service name fused before 'apikey' (IBMCLOUDIAMAPIKEY, googleapikey) still names an API key
    if last.endswith("apikey"):
        return _SEC
    if last in FOREIGN_KEY_WORDS:
        return _WEAK
    return _NOT


_GLUED_QUALIFIERS = ("api", "secret", "private", "access", "consumer", "signing", "master", "encryption",
                     "license", "client", "app", "auth", "account", "service", "webhook", "session")
_IDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-äöüåøæéñßÄÖÜÅØÆ")

# the operator between a label and its value: "=", ":", "=>", "->", ":=", "::=", "?=", PHP ".=", "+=",
# "||=", an optional type first ("var apiToken string = ", "token: str = ") and, before a quoted
# value only, a spaced dash ("api token - '...'")
_OP = (r"""(?:[ \t]*(?::[ \t]*)?(?:string|String|str|&str|\[\]byte|CharSequence)(?![\w\[]))?[ \t]*"""
       r"""(:{1,3}=|\.=|\?\??=|\|\|=|\+=|=>|[!=]==?(?=[ \t]*["'`])|=(?!=)|:(?!:)|->|(?<=[ \t])-(?=[ \t]+["'`]))""")
_ASSIGN = lazy(r"""(?:\\?["']\]?)?""" + _OP + r"""[ \t]*""")
# the characters _ASSIGN and _ASSIGN_VALUE can start with (a quote, a space, a type's ":" or first
# letter, an operator's first character): after any other, neither is tried
_OP_START = frozenset("\\\"' \t:sS&[C.?|+=!-")
# after blanks, the character _ASSIGN needs next: a type's ":" or first letter, an operator's first
# character (fewer blanks never help: the next character would be a blank)
_OP_AFTER_BLANKS = frozenset(":sS&[C.?|+=!-")
_BLANKS = lazy(r"[ \t]*")
_PHP_DEFINE = lazy(r"""["']\s*,\s*""")
# A bare value runs to the next space: a quote between two letters or digits (not an English
# contraction's "n't", "'s", "'re"), or a '<' that opens no tag, is a character of the value
# ("61aFnuLrl"nR", "x<5"), not where it ends: cut there, the rest of the secret would be kept.
# A '|' before a blank is a table's cell border ("= Ttw…!| Dịch vụ |"): the value ends there, or
# the next pass, reading the row after the marker, would read a table this one did not.
_BARE = (r"""((?:[^\s"'`<|]|\|(?![ \t\n]|$)|(?<=[A-Za-z0-9])(?:["`]|'(?!(?:t|s|re|ll|ve|d|m)(?![A-Za-z0-9])))(?=[A-Za-z0-9])"""
         r"""|<(?![A-Za-z/!?]))+)""")
# (the label may close a subscript: os.environ["DB_PASSWORD"] = "…"; a YAML type tag may stand
# before the value: "password: !!str …"; a string may carry its language's prefix: Python's
# b"…", r"…", f"…", u'…', C#'s $"…" and @"…", Objective-C's @"…")
_STRING_PREFIX = r"""(?:[bBrRuUfF]{1,2}|[@$]{1,2})?"""
_ASSIGN_VALUE = lazy(
    r"""(?:\\?["']\]?)?""" + _OP + r"""[ \t]*(?:!![A-Za-z_]{1,20}[ \t]+)?"""
    r"""(?:\\(["'])((?:\\\\\\["']|(?!\\["']).)+?)\\\2"""
    r"""|""" + _STRING_PREFIX + r""""([^"\n]*)\"|""" + _STRING_PREFIX + r"""'([^'\n]*)'|`([^`\n]*)`"""
    r"""|""" + _BARE + ")")
_VALUE = lazy(
    r"""\\(["'])((?:\\\\\\["']|(?!\\["']).)+?)\\\1"""  # \"value\" inside a JSON string (\\\" a quote in it)
    r"""|"([^"\n]*)\"|'([^'\n]*)'|`([^`\n]*)`"""  # quoted
    r"""|""" + _BARE)                       # bare


# ---- labelled values ------------------------------------------------------------------------
# One scan of the lower-cased text for the stems a label can contain ("pass", "token", "key",
# "kennwort", ...); each hit is widened to its identifier, classified (memoised) and, if it is a
# secret label, the value after the separator is checked and redacted.
_LABEL_CACHE: dict[str, tuple] = {}


def _script(c: str) -> int:
    """Which of the scripts `_WIDE` holds c is written in (Hebrew and Arabic, Thai, Hangul, or
    Chinese and Japanese)."""
    o = ord(c)
    return 0 if o < 0x0700 else 1 if o < 0x0e80 else 2 if 0xac00 <= o < 0xd7b0 else 3


def _script_end(text: str, i: int, b: int, stem: str) -> int:
    """Where a label found at i ends, at the latest b: where a script that glues its words begins
    after a name in Latin letters ("passwordは"), or another such script after the label's own
    ("…توكنรหัสไวไฟคือ…": the Thai password word is a label of its own, not the Arabic one's tail)."""
    own = _script(stem[0]) if _WIDE.match(stem) is not None else -1
    for wide in _WIDE.finditer(text, i, b):
        if _script(wide.group()) != own:
            return wide.start()
    return b


def _keywords(text: str, low: str, spans: _Spans, skip: list, stems: list) -> None:
    covered = {it[0]: it[1] for it in spans.items}  # values already redacted by the token rules
    # ... whose ends no label reaches back over: the next pass reads a marker's "]" there
    # ("…m2dz" of a webhook URL glued to "κλειδί_api: …" is no part of the label); nor over the
    # ends of the values labels redact below, as they come ("Authorization: SSWS …C9κλειδί_api: …")
    ends = set(covered.values())
    starts = sorted(covered)  # ... and no label starts inside one: the next pass reads a marker there
    counted = len(spans.items)
    words: dict = {}  # each word after a password word is judged once, however many precede it
    idchars = _IDCHARS
    cache = _LABEL_CACHE
    last = -1
    repeat = ("", -1)  # the last label whose value was redacted, and where that value ends
    pw_char = -1  # the next character a password needs (_PW_CHAR): one search, reused while ahead
    digit = -1 - _BEFORE_REACH  # a digit a password written before its word needs, looked for the same way
    for i, stem in _stems(low, stems, skip):
        if i < last or i < spans.skip_to:
            continue
        if len(spans.items) > counted:
            ends.update(e for _, e, _ in spans.items[counted:])
            counted = len(spans.items)
        k = bisect.bisect_right(starts, i) - 1
        if k >= 0 and covered[starts[k]] > i:
            continue  # ("…sfsklíčparola=…": "klíč" begins in the token, "parola" is the label)
        a = i
        while a > 0 and text[a - 1] in idchars and a not in ends:
            a -= 1
            if i - a > 48:
                break
        b = _IDRUN.match(text, i).end()
        if not text.isascii():
            b = _script_end(text, i, b, stem)
        last = b
        if b - a > 48 or (a > 0 and text[a - 1] == "/" and text[a - 2:a] != "//"):
            continue  # inside a long token (base64, key material) or a path ('/forgot-password'), not a label
        ident = text[a:b]
        if ident == repeat[0] and a < repeat[1]:
            continue  # the same label inside its own bare value just redacted ("key=key=key…")
        info = cache.get(ident)  # (_label_info's own memo, read inline: no call per label when known)
        if info is None:
            info = _label_info(ident)
        if a > 1 and text[a - 1] == " " and text[a - 2].isalnum() and (info[0] == _WEAK or (info[0] == _SEC and ident in _TOKEN_WORDS)):
            info = _spaced_key(text, a, ident, info)  # "API key: …", "WPA2 key: …", "Next page token: …"
        done = False
        if info[0] == _NOT and ident[-1:] in ("s", "S") and len(ident) > 4:
            plural = _label_info(ident[:-1])  # "passwords:", "api_tokens": a list of them, read as a list only
            if plural[0] == _PWD or plural[0] == _SEC:
                done = _list_of(text, a, b, plural, spans)
        if info[0] != _NOT:
            n = len(spans.items)
            if a > 0 and (text[a - 1] == "*" or text[a - 1] == "`"):
                done = _emphasised(text, low, a, b, info, spans, covered)
            else:
                done = _value_after(text, low, a, b, info, spans, covered)
                if not done and a > 4 and text[a - 1] in " =(" and (info[0] == _PWD or info[0] == _SEC):
                    done = _value_before(text, a, info, spans)
                if not done and (text[b:b + 1] in (",", ")", "]") or text.endswith((", ", ", $", ", @"), 0, a)) and (
                        info[0] == _PWD or info[0] == _SEC):
                    done = _unpacked(text, a, b, info, spans)
            if len(spans.items) > n and text[spans.items[-1][0] - 1] not in "\"'`":
                repeat = (ident, spans.items[-1][1])  # a bare value: it runs on over what follows
        if not done and stem in _KEY_WORDS:
            _key_elsewhere(text, low, i, stem, spans)
        elif not done and stem in _PW_STEMS:
            if digit < i - _BEFORE_REACH:  # (the first digit at or after the window's start)
                dm = _DIGIT.search(text, i - _BEFORE_REACH)
                digit = dm.start() if dm is not None else len(text)
            if pw_char < i:
                pm = _PW_CHAR.search(text, i)
                pw_char = pm.start() if pm is not None else len(text)
            before, after = digit < i, pw_char < i + _PROSE_REACH  # (else no word after it can be a password)
            word = after_word(low, i, _PROSE_KW) if before or after else (-1, -1)
            if word[0] >= 0:
                if before:
                    _prose_before(text, low, i, word[0], spans, words)
                if after:
                    _prose_kw(text, low, i, word, spans, words)


_WIDE_CHAR = lazy(r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u0e00-\u0e7f]")


def _before_wide(v: str) -> str:
    """A bare value up to the text of a script without spaces glued after it ("24時間で失効します"
    is "24", "12文字以上" is "12"): the sentence goes on there, the value does not."""
    wide = _WIDE_CHAR.search(v)
    return v[:wide.start()] if wide is not None else v


_QUALIFIER_BEFORE = lazy(r"(?<![a-z])(?:api|secret|private|access)[- \t]?$")
_KEY_SEP = lazy(r"[ \t\u3000]*(?:[:=：＝]|(?:est|è|é|es|jest|je|ist|är|er|is|это|yra|este|és)(?=[ \t]))[ \t\u3000]*")


def _key_elsewhere(text: str, low: str, i: int, stem: str, spans: _Spans) -> None:
    """A key's or a token's word in another language at i ("clé API : …", "chave de API: …",
    "API-kulcs: …", "API密钥：…", "APIキー: …", "API 키: …"), then a colon or its language's
    "is": the value after it is judged as an English "API key: …" would be."""
    e, past = after_word(low, i, _KEY_WORDS[stem])
    if e < 0:
        return
    if past == e or not low[e:past].strip(" \t\u3000"):  # no particle ("は", "是"): a sign or an "is"
        sm = _KEY_SEP.match(low, e)
        if sm is None or sm.end() == e:
            return
        past = sm.end()
    # judged as "API key" when a qualifier stands beside the word ("clé API", "API-kulcs"), else
    # as "token" (a token's or a secret key's word) or as a bare "key", which wants a random value
    label = _KEY_WORDS_KIND[stem]
    if " " in low[i:e] or _QUALIFIER_BEFORE.search(low, max(0, i - 10), i) is not None:
        label = "api_key"
    vm = _VALUE.match(text, past)
    if vm is None or _WIDE_CHAR.match(text, past):
        return  # (a sentence goes on in a script without spaces: "APIキーは管理画面から発行")
    g = vm.lastindex if vm.lastindex != 1 else 2
    v = vm.group(g)
    if g == 6:
        v = _before_wide(v)
    if v:
        _check_value(text, _label_info(label), ":", g != 6, v, vm.start(g), spans, "label-elsewhere")


_WORD_BEFORE = lazy(r"[A-Za-z0-9-]{1,14}$")
_TOKEN_WORDS = frozenset(("token", "Token", "TOKEN"))
# names unpacked on the left of an assignment, up to its "=": "username, password = " (Go's ":=")
# (Perl's and PHP's sigils and parentheses too: "my ($user, $pass) = ('admin', '…');", "[$u, $p] = […]")
_NAMES = lazy(r"[ \t]*(?:(?:my|our|local|var|let|const|val|list)[ \t]*)?[(\[]?[ \t]*[$@]?[A-Za-z_][\w.]*"
              r"(?:[ \t]*,[ \t]*[$@]?[A-Za-z_][\w.]*)+[ \t]*[)\]]?[ \t]*:?")
_ITEM = lazy(r"""[ \t]*[(\[]?[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|[^\s,"'()\[\]]+)[ \t]*(?:,|[)\]]?[ \t]*;?[ \t]*$)""")


def _unpacked(text: str, a: int, b: int, info: tuple, spans: _Spans) -> bool:
    """A label among names unpacked from literals: 'user, password = "admin", "S3cret!"' gives
    the label the literal in its place; a bare item there is a variable and stays."""
    bol = text.rfind("\n", 0, a) + 1
    eol = text.find("\n", b)
    if eol < 0:
        eol = len(text)
    eq = text.find("=", b, eol)
    if eq < 0 or text[eq + 1:eq + 2] == "=" or _NAMES.fullmatch(text, bol, eq) is None:
        return False
    k = text.count(",", bol, a)
    pos = eq + 1
    for _ in range(k + 1):
        im = _ITEM.match(text, pos, eol)
        if im is None:
            return False
        pos = im.end()
    if text.count(",", bol, eq) != text.count(",", eq, eol) or im.lastindex is None:
        return False  # as many items as names, and the label's is a literal
    g = im.lastindex
    return _check_value(text, info, "=", True, im.group(g), im.start(g), spans, "label-unpacked")


def _unpacked_into(text: str, vs: int) -> bool:
    """Is the value at vs the right side of names unpacked on a line of their own (within 160
    characters): "username, password = split"?"""
    bol = text.rfind("\n", 0, vs) + 1
    eq = text.rfind("=", bol, vs)
    return (bol >= vs - 160 and eq > bol and not text[eq + 1:vs].strip(" \t")
            and _NAMES.fullmatch(text, bol, eq) is not None)


def _spaced_key(text: str, a: int, ident: str, info: tuple) -> tuple:
    """A bare "key" or "token" whose word before it, written apart, says what it is ("API key",
    "secret key", "WPA2 key", "Wi-Fi key"; "page token", "next token"): judged as the joined label
    (api_key; wpa2_key, a password; page_token, a cursor), not as the bare word."""
    wm = _WORD_BEFORE.search(text, max(0, a - 15), a - 1)
    if wm is None:
        return info
    word = wm.group().replace("-", "").lower()
    if word in KEY_QUALIFIERS or word in WIFI_WORDS or (info[0] == _SEC and word in PAGING_WORDS):
        return _label_info(word + "_" + ident)
    return info


# The stems a label can hold, lower-cased (an identifier's, a column's name). None is the start of
# another, so at most one stands at any position. "pat" counts only where no letter follows
# ("GITHUB_PAT", not "path"). The scan also finds the stems of SECRET_WORDS_ELSEWHERE (SCAN_STEMS):
# words of prose, looked for in a sentence, not in a name or a table's header.
LABEL_STEMS = ("pass", "pw", "psk", "pat", "secret", "sig", "sleutel", "schlüssel", "schlussel", "senha",
               "salasana", "token", "key", "kennwort", "kodeord", "auth", "appid", "adgangskode", "cred",
               "contrase", "clave", "dockerc", "lösenord", "losenord", "wachtwoord", "mdp", "nøkkel", "nokkel",
               "nyckel", "nøgle", "nogle", "hasło", "haslo", "heslo", "jelszó", "jelszo",
               "парол", "密码", "密碼", "口令", "パスワード", "비밀번호", "암호",
               # (the second word of kata_laluan, kata_sandi, mat_khau: PASSWORD_WORDS joins them)
               "laluan", "sandi", "khau", "khẩu", "geheim", "segret", "sekret",
               # (other languages' words as identifiers write them: HEAD_FIRST_*)
               "parol", "chiave", "chave", "klucz", "klyuch", "kljuch", "kluch", "cle_", "cle-", "_cle", "-cle",
               "schluessel", "kodikos",
               "kleidi", "miftah", "kelid")
SCAN_STEMS = tuple(dict.fromkeys((*LABEL_STEMS, *(stem for stem, _, _ in SECRET_WORDS_ELSEWHERE))))
_STEM_AT_END = frozenset(("pat",))
_STEM = lazy("|".join(re.escape(w) + ("(?![a-z])" if w in _STEM_AT_END else "") for w in LABEL_STEMS))
_ASCII_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def _stems(low: str, found: list, skip: list):
    """(position, stem) of each stem `_STEM.finditer` would match in `low` outside the (sorted)
    skip ranges, as `patterns.skipping` runs it: leftmost first, none overlapping the one before,
    none running into a skipped range. `found` holds every occurrence of every stem, as
    (position, stem): the engine's one pass over the text finds them with the prefilter's words."""
    segments = []  # the ranges searched, between the skipped ones
    pos = 0
    for a, b in skip:
        if b <= pos:
            continue
        if a > pos:
            segments.append((pos, a))
        pos = b
    segments.append((pos, len(low)))
    found.sort()
    k, (start, end) = 0, segments[0]
    last = 0
    for i, w in found:
        while i >= end and k + 1 < len(segments):
            k += 1
            start, end = segments[k]
        e = i + len(w)
        if i < start or e > end or i < last:
            continue
        if w in _STEM_AT_END and e < end and low[e] in _ASCII_LOWER:
            continue
        last = e
        yield i, w


def _label_info(ident: str) -> tuple:
    """(class, kind, core, is_flag, lower-cased core) for an identifier, memoised."""
    info = _LABEL_CACHE.get(ident)
    if info is not None:
        return info
    if len(_LABEL_CACHE) > 4096:
        _LABEL_CACHE.clear()
    core = ident.strip(".-")
    cls = _label_class(core) if core else _NOT
    info = (cls, "password" if cls == _PWD else "secret", core, ident[:1] == "-", core.lower())
    _LABEL_CACHE[ident] = info
    return info


# _pw_shape is 0 for a word without a digit (str.isdigit, which some non-ASCII characters pass)
# or one of "!@#$%^&*?~": where none follows a password word within the reach of _prose_after
# (a keyword of at most 12 characters, then 90), runs of plain words ("password: " x N) are
# not judged one by one.
_PW_CHAR = lazy(r"[0-9!#$%&*?@^~\x80-\U0010ffff]")
_DIGIT = lazy(r"\d")
_PROSE_REACH = 12 + 90
_PW_STEMS = frozenset(stem for stem, _, kind in SECRET_WORDS_ELSEWHERE if kind == "password")
# a key's or a token's word in another language: its forms (SECRET_WORDS_ELSEWHERE) by stem
_KEY_WORDS = {stem: lazy(forms) for stem, forms, kind in SECRET_WORDS_ELSEWHERE if kind != "password"}
_KEY_WORDS_KIND = {stem: kind for stem, _, kind in SECRET_WORDS_ELSEWHERE if kind != "password"}


_IDRUN = lazy(rf"[\w.\-{_MARKS}]{{0,49}}")
_NAME_BEFORE = lazy(r"(?:key|name|id)[\"']?\s*[:=]\s*[\"']?$", re.I)
# (the blanks around the comma are one run when there is no comma: "\s*,?\s*" would split a run of
# blanks in two every way there is, quadratic in its length when no "value" follows)
_VALUE_FIELD = lazy(r"""[\"']?\s*(?:,\s*)?(?:\r?\n[ \t-]*)?[\"']?value[\"']?\s*[:=]\s*""")


def _name_before(text: str, a: int) -> bool:
    """`key: "` / `name=` right before a: the label is the *name* of a pair ({"key": "token", ...}).
    A plain look at the last characters rules out most labels before the regex runs."""
    lo = max(0, a - 24)
    j = a - 1  # the last character before a, past spaces, quotes and spaces
    while j >= lo and text[j].isspace():
        j -= 1
    while j >= lo and text[j] in "\"'":
        j -= 1
    while j >= lo and text[j].isspace():
        j -= 1
    return j >= lo and text[j] in ":=" and _NAME_BEFORE.search(text, lo, a) is not None


# a quoted literal compared with the label that follows: '"…" == password', '"…".equals(token)'
_VALUE_FIRST = lazy(r"""(["'])([^"'\s\\]{4,128})\1(?:[ \t]*[!=]==?[ \t]*|\.equals(?:IgnoreCase)?\()$""")


def _value_before(text: str, a: int, info: tuple, spans: _Spans) -> bool:
    """The literal on the left of a comparison whose right side is the label ('if ("…" ==
    password)', Yoda style, or Java's '"…".equals(password)'): the same value as 'password == "…"'."""
    j = a - 1
    while j > 0 and text[j] == " ":
        j -= 1
    if text[j] != "=" and not (text[j] == "(" and text.endswith(("equals(", "IgnoreCase("), 0, j + 1)):
        return False
    m = _VALUE_FIRST.search(text, max(0, a - 150), a)
    return m is not None and _check_value(text, info, "=", True, m.group(2), m.start(2), spans, "label-compared")


def _value_after(text, low, a, b, info, spans, covered=None, rule: str = "label-assignment") -> bool:
    cls, kind, ident, flag, lident = info
    c = text[b:b + 1]
    if c == " " or c == "\t":
        # a label, blanks and a word ("token is …", "token ABCD…"): one look past the blanks instead
        # of two regular expressions that fail
        j = b + 1
        if text[j:j + 1] in (" ", "\t"):
            j = _BLANKS.match(text, j).end()  # (a long run is skipped in C, not a blank at a time)
        op = text[j:j + 1] in _OP_AFTER_BLANKS
    else:
        op = c in _OP_START
    fm = _ASSIGN_VALUE.match(text, b) if op else None
    if fm is not None:  # fast path: label, separator and value in one match
        sep = fm.group(1)
        g = fm.lastindex
        if sep == ":" and ((a > 0 and text[a - 1] == ":") or ("." in ident and fm.end(1) == fm.start(g))):
            return False  # arn:aws:...:secret:name, urn:..., io.jsonwebtoken:jjwt (Maven)
        if g == 6 and " " in fm.group(6):
            return False  # `command substitution`: the value is produced elsewhere
        if g == 7 and sep == ":" and fm.end(1) == fm.start(7) and _glued_name(text, a, fm.group(7), fm.end(7)):
            return False
        if g == 2:
            g = 3
        if g in (4, 5) and "{" in fm.group(g) and text[fm.start(g) - 2:fm.start(g) - 1] in ("f", "F", "$"):
            return False  # an f-string, an interpolated C# string: the value is built, not written
        if covered and covered.get(fm.start(g), -1) >= fm.end(g):
            return True  # a vendor token, already redacted
        quoted = g != 7
        v = fm.group(g)
        if not quoted and not v.isascii() and _WIDE_CHAR.match(v) is None:
            v = _before_wide(v)  # ("パスワード:12文字以上" is "12"; a value all in such a script stays whole)
        return _check_value(text, info, sep, quoted, v, fm.start(g), spans, rule)
    if op:
        am = _ASSIGN.match(text, b)
        if am is not None:
            # A separator whose value the fast path could not read: _ASSIGN_VALUE is _ASSIGN followed
            # by _VALUE's alternatives, so _VALUE fails after this separator too and no rule below
            # applies, but for a title's colon at the end of its line ("Wifi password:" / "Hytta2024").
            e = am.end()
            if text[e:e + 1] not in ("\n", "\r") or am.group(1) != ":":
                return False
            return _value_below(text, a, e, info, spans)
    n = len(text)
    pos = b
    sep = None
    prev = text[a - 1] if a > 0 else ""
    if prev == ">" and text.startswith("</", b):
        # the label is an element's text, its value the next element's: a plist's
        # <key>Password</key><string>…</string>, Hadoop's <name>….secret.key</name><value>…</value>
        em = _NEXT_ELEMENT.match(text, b)
        if em is None:
            return False
        v = em.group(2).strip()
        return bool(v) and _check_value(text, info, "=", True, v, text.find(v, em.start(2)), spans, "label-element-pair")
    if prev == "<" or prev == " " or prev == '"' or prev == "'":
        done = _in_tag(text, low, a, b, info, spans)
        if done is not None:
            return done
    if prev == '"' or prev == "'":
        if text.endswith(("(", "( "), max(0, a - 3), a - 1):
            # a call's name and value: define('DB_PASSWORD', '...'), setProperty("X_TOKEN", "...")
            dm = _PHP_DEFINE.match(text, pos)
            if dm is not None and text[dm.end():dm.end() + 1] in ("\"", "'"):
                pos = dm.end()  # (a bare argument is a variable or a keyword: 'prompt("Password", hide_input=True)')
                sep = "="
                rule = "label-call"
    if sep is None and _name_before(text, a):
        # {"key": "token", "value": "..."} / - name: DB_PASSWORD\n  value: ...
        vf = _VALUE_FIELD.match(text, pos)
        if vf is not None:
            pos = vf.end()
            sep = "="
            rule = "label-name-value"
    if sep is None and text[pos:pos + 1] in (" ", "\t"):
        # a directive: the label, blanks and a quoted literal ending the statement or the line
        # (nginx's 'ssl_password "…";', Apache's 'SetEnv DB_PASS "…"', C's '#define API_KEY "…"')
        dm = _DIRECTIVE.match(text, pos)
        if dm is None and ("_" in ident or ident.isupper()):  # (an identifier, not a word: 'pass "Big Crush"')
            dm = _DIRECTIVE_LINE.match(text, pos)
        if dm is not None:
            pos = dm.end()
            sep = "="
            rule = "label-directive"
    if sep is None:
        if (flag or lident in SPACED_LABELS) and text[b - 1] != ".":
            # "--password X", netrc "password X" (not the end of a sentence: "… to pass.  X")
            j = _BLANKS.match(text, pos).end()
            if j == pos or j >= n:
                return False
            pos = j
            sep = " "
            rule = "label-flag"
        elif cls == _SEC and (im := _IS.match(text, pos)) is not None:
            # a sentence: "the staging api key is Kq7z…", "our travis token was …" (passwords have
            # their own prose rule); the value is judged as after a colon
            pos = im.end()
            sep = ":"
            rule = "label-is"
        else:
            return False
    if pos >= n:
        return False
    return _value_at(text, pos, info, sep, spans, rule)


_IS = lazy(r"[ \t]+(?:is|was)(?:[ \t]+now)?[ \t]+")

# a tag's head up to the quote of the attribute that names the element's content ("key", "name")
_ATTR = r"""\s+[\w:.-]+(?:\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|[^\s"'<>=]+))?"""
_NAMING_HEAD = lazy(r"""<[ \t]*[\w:.-]+(?:""" + _ATTR + r""")*\s+(?:key|name)\s*=\s*""")
_TAG_REST = lazy(r"""(?:[^<>"']|"[^"\n]*"|'[^'\n]*')*>""")  # to the tag's end, over quoted values
_VALUE_ATTR = lazy(r"""(?<![\w:.-])value[ \t]*=[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')""")
_TAG_REACH = 400


def _in_tag(text: str, low: str, a: int, b: int, info: tuple, spans: _Spans) -> bool | None:
    """A label inside an XML or HTML tag: the tag's name (<password>, < the_password value="…"/>)
    or the value of its key or name attribute (<entry key="password">, <add key="…Password"
    value="…"/>, <sometag value="…" name="the_password"/>). The element's value is its value
    attribute, wherever it stands in the tag, or else the text the element holds
    (<password>…</password>). None when the label is not in a tag's head."""
    lt = text.rfind("<", max(0, a - _TAG_REACH), a)
    if lt < 0:
        return None
    q = text[a - 1]
    if text[lt + 1:a].strip(" \t"):
        if q not in "\"'" or text[b:b + 1] != q or _NAMING_HEAD.fullmatch(low, lt, a - 1) is None:
            return None  # (any other attribute's value, or text that only holds a '<')
        tm = _TAG_REST.match(text, b + 1, b + _TAG_REACH)
    elif q in "< \t":
        tm = _TAG_REST.match(text, b, b + _TAG_REACH)
    else:
        return None
    if tm is None:
        return None
    gt = tm.end() - 1
    cls, kind, ident = info[0], info[1], info[2]
    vm = _VALUE_ATTR.search(text, lt, gt)
    if vm is not None:
        g = 1 if vm.group(1) is not None else 2
        v = vm.group(g)
        return bool(v) and _check_value(text, info, "=", True, v, vm.start(g), spans, "label-attribute")
    end = text.find("<", gt + 1)
    if text[gt - 1] == "/" or end <= gt + 1 or not text.startswith("</", end):
        return False  # an empty element, or a tag in prose ("the <password> element")
    v = text[gt + 1:end].strip()
    if not v:
        return False
    off = text.find(v, gt + 1, end)
    name = spans.value_filter(v, cls, True)
    if name:
        return spans.let_go(off, off + len(v), ident, name, False)
    spans.add(off, off + len(v), kind, text, "label-element")
    return True


def _glued_name(text: str, a: int, v: str, e: int) -> bool:
    """A label glued to a word by ':' that names, not holds: a version ('db-pass:latest', a secret
    manager's entry) or one symbol in quotes ('"passwd:gecos"', a library's function name)."""
    if v == "latest":
        return True
    q = text[a - 1] if a > 0 else ""
    return (q == '"' or q == "'") and text.startswith(q, e) and v.isalpha() and v.islower()


def _value_at(text: str, pos: int, info: tuple, sep: str, spans: _Spans, rule: str) -> bool:
    """Read the value (quoted or bare) that starts at pos and judge it; True when it is dealt with."""
    vm = _VALUE.match(text, pos)
    if vm is None:
        return False
    g = vm.lastindex
    quoted = g != 6
    if g == 1:
        g = 2
    return _check_value(text, info, sep, quoted, vm.group(g), vm.start(g), spans, rule)


# What may stand before a label that is the title of the line below: a list, quote or heading
# mark and a few words ("- Wifi password:", "## Router admin password:"), not code ("if not
# password:", "case Password:")
_TITLE_HEAD = lazy(r"[ \t]*(?:[-*+>#]+[ \t]+)?((?:[^\W\d_]+[ \t]+){0,4})[*_]*")
# the value alone on the next line: indentation, then one token (quoted or bare) and the end of the line
_BELOW = lazy(r"\r?\n[ \t]*(?:([\"'`])([^\s\"'`]{6,64})\1|([^\s\"'`]{6,64}))[ \t]*(?:\r?\n|$)")


def _value_below(text: str, a: int, e: int, info: tuple, spans: _Spans) -> bool:
    """A password alone on the line below a label that ends its own line ("Wifi password:" then
    "Hytta2024", "**Password**" then "Hytta2024"): the way people jot logins down in notes.

    Only a label that is the line's title (a few words before it, no code) and only a value
    that looks like a password (a digit or a symbol; _pw_shape) on a line of its own: a word,
    a sentence, a YAML mapping or a list below a "password:" key stays as it is.
    """
    if info[0] != _PWD and info[0] != _SEC:
        return False
    bm = _BELOW.match(text, e)
    if bm is None:
        return False
    g = 2 if bm.lastindex == 2 else 3
    v = bm.group(g)
    if v[-1] in ":;,{[(" or v[0] == "*" or "(" in v or "=" in v:
        return False  # the next key, Markdown, or code ("sys.exit(1)", "x=1")
    bol = text.rfind("\n", 0, a) + 1
    hm = _TITLE_HEAD.fullmatch(text, bol, a)
    if hm is None or not CODE_WORDS.isdisjoint(hm.group(1).lower().split()):
        return False
    key = (v, "below")  # (the verdicts' keys are 4-tuples: this one cannot collide)
    shape = spans.verdicts.get(key)
    if shape is None:
        shape = spans.verdicts[key] = _pw_shape(v)
    if shape < 1:
        return False
    return _check_value(text, info, ":", g == 2, v, bm.start(g), spans, "label-below")


def _emphasised(text, low, a, b, info, spans, covered) -> bool:
    """A label in Markdown emphasis or code: '**Password**: X', '**Password:** X', '`token`: X'.

    The closing marks stand between the label and its separator (or between the separator and
    the value); a label whose marks do not close where it ends is read as any other.
    """
    mark = text[a - 1]
    k = 1
    while k < 3 and a - k > 0 and text[a - k - 1] == mark:
        k += 1
    closer = mark * k
    if text.startswith(closer, b):
        if text[b + k:b + k + 1] in ("\n", "\r"):
            return _value_below(text, a - k, b + k, info, spans)  # "**Password**" / "Hytta2024"
        return _value_after(text, low, a, b + k, info, spans, covered)
    if text[b:b + 1] == ":" and text.startswith(closer, b + 1):
        j = _BLANKS.match(text, b + 1 + k).end()
        if text[j:j + 1] in ("\n", "\r"):
            return _value_below(text, a - k, j, info, spans)  # "**Password:**" / "Hytta2024"
        return j < len(text) and _value_at(text, j, info, ":", spans, "label-assignment")
    return _value_after(text, low, a, b, info, spans, covered)


# a literal that ends where what is appended to it begins (a separator), then a concatenation
_PREFIX_ENDS = frozenset(":=/?&@;, ")
_CONCAT = lazy(r"""[ \t]*(?:\+|\.|&|\|\|)[ \t]*[\w$(]""")


def _check_value(text, info, sep, quoted, v, vs, spans, rule: str) -> bool:
    """Redact the value v found at vs after a label; True when the label's value is dealt with.

    The verdict depends on the value, the separator and the label alone, so a document that
    repeats "password: X" reaches it once; only the look at what follows a bare lower-case word
    and an Authorization value read the text around it.
    """
    key = (v, sep, quoted, info)
    verdict = spans.verdicts.get(key)
    if verdict is None:
        verdict = spans.verdicts[key] = _value_verdict(v, sep, quoted, info)
    word, action = verdict
    if word >= 0:
        after = text[vs + word:vs + word + 3]
        if (after[:1] == " " and (after[1:2].isalpha() or after[1:3] in ("= ", "| ")
                                  or text.startswith(_MARK, vs + word + 1))) or (
                info[3] and _SENTENCE_GOES_ON.match(text, vs + word) is not None):
            # (after a flag, a word the sentence goes on from at the next line or after a comma:
            # "the --ftp-password command" / "switches", "--proxy-password respectively, and")
            if info[0] == _PWD and sep in (":", "=") and passphrase(text, vs, spans, rule):
                return True  # "Wifi password: plaid fence tulip orbit"
            if word == 4 and info[0] == _PWD:
                return _app_password(text, vs, vs + 60, spans)  # "password: vkbq pmzt hxle wryd"
            # prose ("treat it like a password: never commit it"), or a type ("password: Unused =
            # False", "password: Secret | None")
            return spans.let_go(vs, vs + word, info[2], "prose_after_label", False)
    if action.__class__ is str:
        if len(v) > _MAX_VALUE:
            spans.skip_to = vs + len(v)  # (read once, however it was judged)
        # (a value already redacted is dealt with: no other reading of the label may take its place)
        return spans.let_go(vs, vs + len(v), info[2], action, action == "already_redacted")
    if action is _AUTH:
        _auth_value(text, vs, spans)
        return True
    off, n = action
    digits = n - 2 if v.startswith(("0x", "0X"), off) else n
    if info[0] != _PWD and digits in (8, 16, 40) and _HEX_ID.fullmatch(v, off, off + n) and _OPENPGP.search(_line_of(text, vs).lower()):
        # an OpenPGP key id or fingerprint ("gpg --recv-keys …", "user.signingkey …"): public
        return spans.let_go(vs + off, vs + off + n, info[2], "openpgp_key_id", True)
    if not quoted and text.startswith(_CODE_AFTER, vs + off + n) and _typed_name(v[off:off + n]):
        # a type or a variable in code: "key: X25519PrivateKey | None", "sig=p0_type_char + …"
        return spans.let_go(vs + off, vs + off + n, info[2], "type_or_variable_in_code", True)
    if _plain_label_holds(text, v[off:off + n], vs + off, spans):
        # a type or a shared setting ("password: ReadableBuffer" beside "salt: ReadableBuffer")
        return spans.let_go(vs + off, vs + off + n, info[2], "held_by_a_plain_label", True)
    if quoted and v[off + n - 1] in _PREFIX_ENDS and _CONCAT.match(text, vs + off + n + 1) is not None:
        # the head of a string being built: '"application:" + appKey + ":" + appSecret'
        return spans.let_go(vs + off, vs + off + n, info[2], "string_being_built", True)
    if (not quoted and (sep == "=" or sep == ":=") and text.find(",", max(0, vs - 160), vs) >= 0
            and _IDENTIFIER.fullmatch(v, off, off + n) and _unpacked_into(text, vs)):
        # unpacked in code: "username, password = split" names a variable
        return spans.let_go(vs + off, vs + off + n, info[2], "unpacked_variable", True)
    spans.add(vs + off, vs + off + n, info[1], text, rule)
    if n > _MAX_VALUE:
        spans.skip_to = vs + off + n  # a long value is read once: labels inside it are part of it
    return True


_SPACE = lazy(r"\s")
_DIRECTIVE = lazy(r"""[ \t]+(?=(["'])[^"'\n]+\1[ \t]*;)""")
_DIRECTIVE_LINE = lazy(r"""[ \t]+(?=(["'])[^"'\n]+\1[ \t]*(?:\r?\n|$))""")
_NEXT_ELEMENT = lazy(r"</[\w:.-]{1,60}>\s{0,200}<([\w:.-]{1,60})(?:\s[^<>]{0,200})?>([^<]*)</\1>")
# an item of a list: "- …", "* …", "+ …", quoted or bare (a comment after it begins at a blank and
# '#': a '#' inside the value is part of it, "- Kq7#x9…")
_LIST_ITEM = lazy(r"""\r?\n([ \t]*)[-*+][ \t]+(?:(["'])([^"'\n]*)\2|([^\s"'#](?:[^\n#]|(?<![ \t])#)*?))"""
                  r"""(?:[ \t]*(?=\r?\n|$)|[ \t]+(?=#))""")
# ... that names what its value is for: "- NAS: …", "- Router = …", "- Bank — …" (a name of words)
_NAMED_ITEM = lazy(r"[^\W\d_][\w .'()/&-]{0,39}?[ \t]*(?::|=|[–—])[ \t]+(?=\S)")
_ARRAY_ITEM = lazy(r"""\s*(["'])([^"'\n]*)\1\s*([,\]])""")
_MAX_ITEMS = 100  # items read under one label: the cost stays linear
_LIST_OPENS = lazy(r"""["']?[ \t]*[:=][ \t]*(?:(\[)|(?=\r?\n))""")


def _list_below(text: str, a: int, e: int, info: tuple, spans: _Spans, heading: bool = False) -> bool:
    """The items of a list under a label that ends its line ("passwords:" then "  - …"): each
    is the label's value, or, where the item names what it is for ("- NAS: …"), the value
    after that name. Only for a password's or a secret's label. Under a heading (`tables.list_under`),
    the list may start at any indent."""
    if info[0] != _PWD and info[0] != _SEC:
        return False
    bol = text.rfind("\n", 0, a) + 1
    indent = 0 if heading else a - bol - len(text[bol:a].lstrip(" \t-\"'"))
    pos, found = e, False
    for _ in range(_MAX_ITEMS):
        m = _LIST_ITEM.match(text, pos)
        if m is None or len(m.group(1)) < indent:
            break
        g = 3 if m.group(3) is not None else 4
        v, vs = m.group(g), m.start(g)
        named = _NAMED_ITEM.match(v) if g == 4 else None
        if named is not None:
            v, vs = v[named.end():], vs + named.end()
        if v and not (heading and (_SPACE.search(v) or v.isalpha() or v.isdigit())):
            # (under a heading, an item of words is prose, and a word or a number alone says
            # something about the passwords: "- Rotate: quarterly", "- Length: 16")
            _check_value(text, info, ":", g == 3, v, vs, spans, "label-list-item")
            found = True
        pos = m.end()
    return found


def _list_of(text: str, a: int, b: int, info: tuple, spans: _Spans) -> bool:
    """A label named for several secrets ("passwords", "api_tokens") holds a list: a YAML list
    below it or an array after it, or a list under it where it heads one ("## Passwords", a line
    of its own); a single value after it is a name ("vaultSecrets: cmp2-qat")."""
    m = _LIST_OPENS.match(text, b)
    if m is None:
        start = list_under(text, a, b)
        return start >= 0 and _list_below(text, a, start, info, spans, heading=True)
    if m.group(1):
        return _list_after(text, m.end(), info, spans)
    return _list_below(text, a, m.end(), info, spans)


def _list_after(text: str, pos: int, info: tuple, spans: _Spans) -> bool:
    """The quoted items of an array after a label ("passwords": ["…", "…"]): each is its value."""
    found = False
    for _ in range(_MAX_ITEMS):
        m = _ARRAY_ITEM.match(text, pos)
        if m is None:
            break
        if m.group(2):
            _check_value(text, info, ":", True, m.group(2), m.start(2), spans, "label-list-item")
            found = True
        pos = m.end()
        if m.group(3) == "]":
            break
    return found
_SENTENCE_GOES_ON = lazy(r"(?:[,;][ \t]+|[ \t]*\r?\n[ \t]*)[a-z]")


def _column_label(name: str):
    """A table's column header read as a label: its _label_info, or None when it names no secret."""
    info = _label_info(name)
    return info if info[0] != _NOT else None


def _cell(text: str, info: tuple, s: int, e: int, spans: _Spans, rule: str) -> None:
    """Judge a table cell under a secret's header as that label's value: the cell bounds it, as
    quotes would ('`…`' and '**…**' around it are Markdown, not part of it)."""
    for mark in ("`", "**", "*"):
        if e - s > 2 * len(mark) and text.startswith(mark, s) and text.endswith(mark, s, e):
            s, e = s + len(mark), e - len(mark)
            break
    v = text[s:e]
    if _SPACE.search(v) is None:  # (a sentence in a cell: "see the vault", "same as above")
        _check_value(text, info, ":", True, v, s, spans, rule)


def _csv_exports(text: str, low: str, spans: _Spans) -> None:
    """The secret columns of each CSV header in the text (a password manager's export "name,url,
    username,password", '"Password"', "host,user,pwd", "Name;Benutzer;Passwort", "id, account,
    secret , last_used"), their cells judged as the values of that column's label: a header on
    a line cut into three fields or more by commas or semicolons."""
    _stem_tables(text, low, spans, lambda b, e: low.count(",", b, e) >= 2 or low.count(";", b, e) >= 2,
                 csv_cells, "csv-column")


# what follows a type or a variable in code: a union, a default, a return type, a sum, the next parameter
_CODE_AFTER = (" | ", " = ", " -> ", " + ", ",\n", ",\r\n", ")")


_MAX_SHARED = 64  # distinct values looked for per document: a bounded cost
_SHARED_REACH = 4000  # how far from the value its other holders are looked for
_SHARED_LOOKS = 8  # other copies looked at per value


def _plain_label_holds(text: str, v: str, vs: int, spans: _Spans) -> bool:
    """Is the value at vs also the value of a label that names no secret, nearby?

    A type or an enum is everyone's value: "password: Incomplete" beside "user: Incomplete",
    "password: ReadableBuffer, salt: ReadableBuffer"; and a variable is used as one elsewhere
    ("password = ident" after "ident.split(':')"). A secret is its own label's value; a
    label that holds it too is about it ("password_confirmation", "old_password"), so only a
    label without a secret word ("user", "salt", "func") counts, and only for a value that
    reads as a name (_name_like): a password typed twice goes twice. Looked for within a few
    thousand characters, for a bounded number of distinct values per document.
    """
    held = spans.shared.get(v)
    if held is not None:
        return held
    if not _name_like(v):
        held = spans.shared[v] = False
        return held
    if spans.searched >= _MAX_SHARED:
        return False
    spans.searched += 1
    held = spans.shared[v] = _plain_holder(text, v, vs)
    return held


def _plain_holder(text: str, v: str, vs: int) -> bool:
    lo, hi = max(0, vs - _SHARED_REACH), min(len(text), vs + len(v) + _SHARED_REACH)
    i = text.find(v, lo, hi)
    looks = 0
    while i >= 0 and looks < _SHARED_LOOKS:
        if i != vs and _bounded(text, i, i + len(v)):
            looks += 1
            after = text[i + len(v):i + len(v) + 2]
            if after[:1] in ("(", "[") or (after[:1] == "." and after[1:2].isalpha()):
                return True  # the same name called, indexed or its member read: a variable ("ident.split(")
            j = i
            while j > lo and text[j - 1] in " \t\"'`":
                j -= 1
            if j > lo and text[j - 1] in ":=":
                b = j - 1
                while b > lo and text[b - 1] in " \t\"'`":
                    b -= 1
                k = _name_start(text, lo, b)
                if k < b and _STEM.search(text[k:b].lower()) is None:
                    return True
            elif lo < j < i and text[j - 1] in _IDCHARS:
                # a flag's argument: "--edit-key USER-ID" beside "--passwd USER-ID" names what
                # the option takes, as a manual writes it
                k = _name_start(text, lo, j)
                if text[k] == "-" and text[k - 1:k] in ("", " ", "\t", "\n", "'", '"', "`", "[") and (
                        _STEM.search(text[k:j].lower()) is None):
                    return True
        i = text.find(v, i + len(v), hi)
    return False


def _name_start(text: str, lo: int, end: int) -> int:
    """Where the name (a label, a flag) that ends at `end` starts: at most 64 characters back, not
    before `lo`."""
    k = end
    while k > lo and text[k - 1] in _IDCHARS and end - k < 64:
        k -= 1
    return k


_HEX_ID = lazy(r"(?:0x)?[0-9A-Fa-f]+")
_OPENPGP = lazy(r"gpg|pgp|keyserver|signingkey|fingerprint")


_AUTH = object()  # the value is an Authorization header's: <scheme> <credentials>


def _value_verdict(v, sep, quoted, info) -> tuple:
    """(length of a bare lower-case word whose next characters may make it prose, or -1;
    then the name of what lets the value go (a reading of the pair, or a filter of
    filters.VALUE), _AUTH, or the (offset, length) in v of the value to redact)."""
    cls, _, _, flag, lident = info
    word = -1
    if not quoted:
        # connection strings / query strings: stop at the next "; key=" or "& key="
        if ";" in v or "&" in v or "," in v:
            cm = _NEXT_PAIR.search(v)
            if cm:
                v = v[:cm.start()]
        if sep == ":" and v.endswith(":"):
            return word, "next_key"
        raw = v
        v = v.rstrip(",;)]}>:")  # (the end of a call or a signature: "pwd=None):")
        if (close := _TYPOGRAPHIC_CLOSE.search(v)) is not None and "\u2018" not in v and "\u201c" not in v:
            v = v[:close.start()]  # a manual's or a word processor's quotes: "‘--password=PASSWORD’."
        if v[:1] == "{" and len(v) < len(raw) and _OPEN_BRACE_WORD.fullmatch(v):
            return word, "object_or_field"  # the brace closes after all, or an object goes on: "{name}", "{token1: x}"
        if v.isalpha() and (v.islower() or v.istitle()):
            word = len(v)  # ("password: Unicode password.": prose, when a word follows)
    if not v:
        return word, "empty"
    if not quoted and v[-1] == "." and v[:-1].lower() in NOT_A_VALUE:
        return word, "field_description"  # a field's description: "password: Required. The user's password."
    if cls != _PWD and (stand_in := _SQUASH.sub("", v.lower()).rstrip("0123456789")) and stand_in in (
            _SQUASH.sub("", lident), _last_word(lident)):
        return word, "stand_in_named_after_label"  # a test's stand-in named after its label: token="token123", api_key: apikey1
    if _spells_label(v, lident):
        return word, "spells_label"  # the value spells its label: 'utf_8_sig': 'UTF-8-SIG', SECRET_KEY = 'AWSSecretKey'
    if "-" in v and _named_id(v, info[2]):
        return word, "id_named_after_label"  # "ExportToken": "export-token-cu4lg26o…": an id named after what it is
    # Authorization: <scheme> <credentials>
    if lident.endswith("authorization") or (cls == _SEC and v.lower() in AUTH_SCHEMES):
        return word, _AUTH
    off = 0
    if v[:5].lower() == "pass:" and len(v) > 5:
        v = v[5:]
        off = 5
    if sep == " ":
        if v[0] == "-" or (flag and cls != _PWD and _OPTION_SPEC.match(v)):
            return word, "next_flag"  # the next flag, or a flag's spec of fields ("--secret id=npm_token,src=…")
        if v.rstrip(".,;:!?)").lower() in FLAG_NOUNS:
            return word, "prose_about_flag"  # prose about the flag: "use the --password flag.", "the --token option"
        if not flag and _pw_shape(v) < (2 if lident == "pass" else 1):
            return word, "pass_as_a_verb"  # ("pass force_zip64 to use …": 'pass' the verb wants a strong value)
    elif v[0] == "-" and not quoted and _FLAG_LIST.fullmatch(v):
        return word, "list_of_flags"  # "Command line keys: -quiet,-verbose,-fix": options, listed
    if cls == _SEC and lident.endswith("auth") and not (_b64_creds(v) or _entropy_ok(v, 20)):
        return word, "auth_not_a_credential"
    name = value_filter(v, cls, quoted)  # (this verdict is itself memoised: no second table)
    return word, name or (off, len(v))


_SQUASH = lazy(r"[^a-z0-9]+")
_TYPOGRAPHIC_CLOSE = lazy("[\u2019\u201d][.,;:!?)\\]]*$")


def _last_word(lident: str) -> str:
    """The last word of a lower-cased label ("api_token" -> "token")."""
    return _SQUASH.split(lident)[-1]


def _named_id(v: str, ident: str) -> bool:
    """Does the value open with its whole label spelled out and a dash ('"ExportToken":
    "export-token-cu4l…"')? A service names its ids after what they are. (A vendor's prefix may
    be the label's first word, 'DNKEY_TOKEN = "dnkey-…"', never the whole label.)"""
    sl = _SQUASH.sub("", ident.lower())
    if len(sl) < 6:
        return False
    i = v.find("-")
    while 0 < i <= 3 * len(sl):
        if _SQUASH.sub("", v[:i].lower()) == sl:
            return True
        i = v.find("-", i + 1)
    return False
_NAME_OF_WORDS = lazy(r"[A-Za-z_-]+")


def _spells_label(v: str, lident: str) -> bool:
    """Is the value its own label's name? An enum's member or a field's name, not a secret.

    'utf_8_sig': 'UTF-8-SIG' spells the label; a value of letters alone ('AWSSecretKey' for
    SECRET_KEY, 'challengePassword' for CHALLENGE_PASSWORD, a forward reference "_RSAPrivateKey"
    for private_key) may also hold the label or be held by it. A value with a digit must spell
    it exactly: 'Password123' is a weak password.
    """
    sv, sl = _SQUASH.sub("", v.lower()), _SQUASH.sub("", lident)
    if sv == sl:
        return True
    return _NAME_OF_WORDS.fullmatch(v) is not None and min(len(sv), len(sl)) >= 6 and (sv in sl or sl in sv)


_OPTION_SPEC = lazy(r"[a-z][a-z_-]*=[^,\s]*(?:,|$)")
_FLAG_LIST = lazy(r"--?[A-Za-z][\w-]*(?:, ?--?[A-Za-z0-9][\w-]*)+")
# (or, at the end of a bare value, the first word of a next key that has a space in it:
# "Password=x;Persist Security Info=true" is read up to the space)
_NEXT_PAIR = lazy(r"[;&,][A-Za-z_][A-Za-z0-9_ .-]{0,40}=|;[A-Z][a-z]{2,}$")
_AUTH_VALUE = lazy(r"(?:([A-Za-z][A-Za-z-]{1,20})[ \t]+)?([A-Za-z0-9._~+/=:\-][A-Za-z0-9._~+/=:@\-]{7,})")


def _auth_value(text: str, pos: int, spans: _Spans) -> None:
    m = _AUTH_VALUE.match(text, pos)
    if m is None:
        return
    scheme = (m.group(1) or "").lower()
    v = m.group(2)
    if scheme and scheme not in AUTH_SCHEMES and scheme not in ("sharedkey", "hmac", "aws4-hmac-sha256", "zoho-oauthtoken", "klaviyo-api-key"):
        return
    if not scheme and (_is_reference(v, False) or _is_compound_name(v)):
        return  # a variable ("self._expected_authorization") or a header's name ("x-amz-content-sha256")
    _credential_token(text, m.start(2), v, scheme, spans, "authorization-value")


def _credential_token(text, s, v, scheme, spans, rule: str) -> None:
    v = v.rstrip(".,;")
    if not v or _MARK in v or _placeholder(v, v.lower()):
        return  # (nothing left after the punctuation: "Authorization: Bearer ........")
    if scheme == "basic":
        if _b64_placeholder(v) or _B64_TEXT.fullmatch(v) is None:
            return  # base64 of "username:password"; or not base64 at all: "basic functionality.0Cm…" is prose
        if _b64_creds(v) or _entropy_ok(v, 16):
            spans.add(s, s + len(v), "basic_auth", text, rule)
        return
    if _entropy_ok(v, 12) or (len(v) >= 20 and not v.isalpha()):
        spans.add(s, s + len(v), "bearer_token", text, rule)


def _auth_headers(text: str, low: str, spans: _Spans) -> None:
    for scheme in ("bearer", "basic"):
        i = low.find(scheme)
        while i >= 0:
            e = i + len(scheme)
            if (i == 0 or not (low[i - 1].isalnum() or low[i - 1] in "_-")) and e < len(low) and low[e] in " \t":
                vm = _CRED_CHARS.match(text, e + 1 if low[e + 1:e + 2] not in (" ", "\t") else e + 2)
                if vm is not None:
                    _credential_token(text, vm.start(), vm.group(), scheme, spans, "auth-header")
            i = low.find(scheme, e)


_B64_TEXT = lazy(r"[A-Za-z0-9+/]+={0,2}")
_CRED_CHARS = lazy(r"[A-Za-z0-9._~+/=\-]{8,}")


def _line_of(text: str, pos: int) -> str:
    lo = max(0, pos - 300)
    a = text.rfind("\n", lo, pos) + 1
    if a == 0:
        a = lo
    b = text.find("\n", pos, pos + 300)
    return text[a:b if b >= 0 else min(len(text), pos + 300)]


# ---- Terraform variable defaults ----------------------------------------------------------------
# variable "db_password" { type = string  default = "…" }: the label is the variable's quoted name
# and the value its default a few lines further down, so neither the label scan nor a token's
# context window sees them as a pair. A variable Terraform is told is `sensitive` holds a secret
# whatever its name.
_TF_VARIABLE = lazy(r'variable[ \t]+"([A-Za-z0-9_.-]{1,64})"[ \t]*\{')
_TF_DEFAULT = lazy(r'(?<![\w.])default[ \t]*=[ \t]*"((?:[^"\\\n]|\\.)+)"')
_TF_SENSITIVE = lazy(r'(?<![\w.])sensitive[ \t]*=[ \t]*true\b')
_TF_REACH = 800  # a variable block is a few lines; its default is looked for this far at most


def _terraform(text: str, low: str, spans: _Spans) -> None:
    for m in _TF_VARIABLE.finditer(text):
        stop = text.find("variable", m.end(), m.end() + _TF_REACH)
        stop = stop if stop >= 0 else min(len(text), m.end() + _TF_REACH)
        dm = _TF_DEFAULT.search(text, m.end(), stop)
        if dm is None:
            continue
        info = _label_info(m.group(1))
        if info[0] == _NOT:
            if _TF_SENSITIVE.search(text, m.end(), stop) is None:
                continue
            info = (_SEC,) + info[1:]
        _check_value(text, info, "=", True, dm.group(1), dm.start(1), spans, "terraform-variable")


def _markdown_tables(text: str, low: str, spans: _Spans) -> None:
    """The cells under a secret's column in each Markdown table whose header names one."""
    for info, s, e in markdown_cells(text, lambda hb, he: _HEADER_STEM.search(low, hb, he) is not None, _column_label):
        _cell(text, info, s, e, spans, "table-column")


def _delimited_tables(text: str, low: str, spans: _Spans) -> None:
    """The cells under a secret's column in each table cut by tabs or pipes with no Markdown
    delimiter row (a TSV export, the rows the HTML and DOCX readers write)."""
    _stem_tables(text, low, spans, lambda b, e: low.find("|", b, e) >= 0 or low.find("\t", b, e) >= 0,
                 delimited_cells, "delimited-table")


def _stem_tables(text: str, low: str, spans: _Spans, cut: Callable[[int, int], bool],
                 cells_of: Callable, rule: str) -> None:
    """The cells under a secret's column of each header line that `cut(start, end)` accepts,
    read by `cells_of` (csv_cells, delimited_cells): a header is looked for where the scan found
    a secret's word (spans.stems), a line at its first such word only, and never among rows
    already read."""
    done = -1  # the end of the rows last read: a header among them is not read again
    tried = -1  # the end of the last line looked at
    for i, stem in spans.stems:  # (in order)
        if i <= done or i < tried or (stem in _STEM_AT_END and low[i + len(stem):i + len(stem) + 1] in _ASCII_LOWER):
            continue
        tried = low.find("\n", i)
        tried = len(low) if tried < 0 else tried
        if not cut(low.rfind("\n", 0, i) + 1, tried):
            continue
        cells, done = cells_of(text, i, _column_label)
        for info, cs, ce in cells:
            _cell(text, info, cs, ce, spans, rule)


# a table's header may name its password column in any language (| Lozinka |, | Şifre |, | Κωδικός |)
_HEADER_STEM = lazy(_STEM.src + "|" + "|".join(re.escape(w) for w in SCAN_STEMS if w not in LABEL_STEMS))


# a comment line (#, //, --, ;) and the assignment on the line right below it: its name and where
# its value starts
_COMMENTED = lazy(r"(?m)^[ \t]*(?:#|//|-- |;)[ \t]*([^\W\d_][^\n]{0,159}+)\n[ \t]*(?:export[ \t]+)?"
                  r"([^\W\d][\w.-]{0,63})[ \t]*([=:])[ \t]*(?=\S)")
# the secret's word in the comment: a password's (prose.py's words), or a secret's, a token's or a
# key's that says which ("API key", "secret key", "clé API": a bare "key" is a dict's or a spec's)
_COMMENT_KEY = lazy(r"(?<![^\W\d_])(?:(?:api|secret|access|private|signing)[ -]?key|client[ -]secret|token|secret|"
                   + "|".join(forms for _, forms, kind in SECRET_WORDS_ELSEWHERE if kind == "token")
                   + r")(?![^\W\d_])|(?<![^\W\d_])api(?![^\W\d_]).{0,12}(?:"
                   + "|".join(stem for stem, _, kind in SECRET_WORDS_ELSEWHERE if kind == "key")
                   + r")|(?:" + "|".join(stem for stem, _, kind in SECRET_WORDS_ELSEWHERE if kind == "key")
                   + r").{0,12}(?<![^\W\d_])api(?![^\W\d_])")
# a key under a comment that names one is long and made of key characters only: not a version
# ("2023-10-01"), an image ("postgres:16-alpine"), a name ("orders-prod2")
_COMMENT_KEY_MIN = 20
_KEYLIKE = lazy(r"[A-Za-z0-9_\-+/=]+")
_HAS_LETTER_AND_DIGIT = lazy(r"[A-Za-z].*\d|\d.*[A-Za-z]")
_LINE_REST = lazy(r"[ \t]*[,;]?[ \t]*(?:(?:#|//)[^\n]*)?\r?(?:\n|$)")  # the end of a setting's line
# a part of the name that says the value is something else (DB_USER under "# database password")
_NOT_SECRET_PART = frozenset("user username usuario utilisateur benutzer login host hostname server port url uri "
                             "endpoint name id email mail path file dir timeout ttl enabled region level mode size "
                             "length count".split())


def _commented(text: str, low: str, spans: _Spans) -> None:
    """A setting whose comment above it says what it is: "# Парола за базата данни" over
    "PAROLA_BD=…", "# מפתח API לשירות המיילים" over "MAFTEACH_API=…" — the name in a script or a
    transliteration the label rules cannot read. As the name says nothing, the value must: a
    password only a password looks like (prose.strong), a key of _COMMENT_KEY_MIN key characters
    or more, then judged as "API key: …" is; and not when the name says it is something else (a
    user, a host, a port)."""
    if not spans.stems:
        return  # (no secret's word anywhere: none in a comment)
    for m in _COMMENTED.finditer(text):
        comment = low[m.start(1):m.end(1)]
        name = m.group(2)
        vm = _VALUE.match(text, m.end())
        if vm is None or _LINE_REST.match(text, vm.end()) is None:
            continue  # (an expression: "cleartext = asn1code + hash_value" is code, not a setting)
        if _label_info(name)[0] != _NOT or not _NOT_SECRET_PART.isdisjoint(
                c.lower() for c in _components(name)):
            continue  # (a label the label rules read, or a user, a host, a port)
        g = vm.lastindex if vm.lastindex != 1 else 2
        v, vs = vm.group(g), vm.start(g)
        if any(after_word_start(comment, k.start()) and k.group() not in ("pass", "pw", "pwd")
               for k in _PROSE_KW.finditer(comment)):
            if "." not in v and strong(v, _pw_shape(v)) and not spans.value_filter(v, _PWD, g != 6):  # (de_DE.UTF-8)
                spans.add(vs, vs + len(v), "password", text, "comment-label")
        elif _COMMENT_KEY.search(comment) is not None:
            if len(v) >= _COMMENT_KEY_MIN and _KEYLIKE.fullmatch(v) and _HAS_LETTER_AND_DIGIT.search(v):
                _value_at(text, m.end(), _label_info("api_key"), m.group(3), spans, "comment-label")


def _bundler(text: str, low: str, spans: _Spans) -> None:
    """Bundler's per-host credentials (BUNDLE_GEMS__EXAMPLE__COM: "user:password")."""
    for m in _BUNDLER.finditer(text):
        _value_after(text, low, m.start(), m.end(), (_PWD, "password", m.group(), False, m.group().lower()), spans,
                     rule="bundler-credentials")


_BUNDLER = lazy(r"(?<![A-Za-z0-9_])BUNDLE_[A-Z0-9_]+__[A-Z0-9]+(?![A-Za-z0-9_])")
