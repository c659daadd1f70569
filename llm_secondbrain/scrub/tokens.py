"""The token scan: private-key armour, vendor shapes, and random tokens that their context names.

One scan finds every run of token characters of 20 or more; each run is classified by its first
two characters against the catalogue's vendor shapes, then by structural shapes judged in code
(JWT, Discord, Telegram, Azure, Mailchimp, AWS secret keys, a generic ``prefix_<random>``), and
finally as a high-entropy token that follows a secret word ("token", "key", "nøkkel", ...) in the
nearby text or has a known service's name as its label ("cloudflare: '…'"; not a digest-length
hex, which beside "github" is a commit). Private-key armour is found first, and the token rules
are kept out of key bodies and certificates.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .catalogue import (BENIGN_BEFORE, CONTEXT_WORDS, CONTEXT_WORDS_ELSEWHERE, DIGEST_BEFORE, DIGEST_LENGTHS, HEX_CONTEXT_WORDS,
                        HOLDER_LABELS, HOLDER_TAGS, ID_PREFIXES, NOT_SECRET_CONTEXT, REFERENCE_BEFORE, SERVICES,
                        SHAPES, VENDOR_SEPARATORS, FUSED_SECRET_ENDINGS)
from .filters import (CONTEXT_TOKEN, TOKEN, _CASE_HUMP, _HAS_DIGIT, _HEX, _MARK, _MARK_REACH, _NOT, _classes, _code_name,
                      _entropy_ok, _is_compound_name, _placeholder_body, _wordy, first_release, in_code_position)
from .labels import _IDCHARS, _label_class, _label_info, _named_id
from .patterns import lazy, skipping as _skipping
from .personal import bitlocker_key

if TYPE_CHECKING:
    from .engine import _Spans


def build() -> None:
    """The vendor shapes of the catalogue, by their first two characters: the token scan looks
    up each run's first two characters and tries only the shapes there (longer patterns first,
    so "sk-ant-" wins over "sk-")."""
    global _DISPATCH, _JOINED
    table: dict[str, list[tuple[str, re.Pattern, str, bool, int, str]]] = {}
    for shape in SHAPES:
        for prefix in shape.prefixes:
            rx = lazy(re.escape(prefix) + shape.body)
            table.setdefault(prefix[:2], []).append((prefix, rx, shape.kind, shape.entropy, len(prefix), shape.id))
    for rules in table.values():
        rules.sort(key=lambda r: -len(r[1].src))
    _DISPATCH = table
    prefixes = {prefix for rules in table.values() for prefix, *_ in rules}
    _JOINED = re.compile(r"[-_.~+/](?=" + "|".join(sorted(map(re.escape, prefixes), key=len, reverse=True)) + ")")


_DISPATCH: dict = {}
_JOINED: re.Pattern  # a joiner ("-_.~+/") before a vendor shape's prefix

# runs of token characters worth classifying (no '=' / ':' so that "key=value" splits)
_CAND = lazy(r"[A-Za-z0-9_\-.~+/]{20,}")
_CERT_BLOCK = lazy(r"-----BEGIN ([A-Z0-9 ]*(?:CERTIFICATE|PUBLIC KEY|PUBLIC KEY BLOCK|CERTIFICATE REQUEST|X509 CRL|DH PARAMETERS|EC PARAMETERS))-----")
_DISCORD = lazy(r"[MNO][A-Za-z0-9_-]{22,28}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}")
_AZURE_SECRET = lazy(r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")
_AZURE_REFRESH = lazy(r"[01]\.A[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_.*-]{20,}")  # Microsoft identity platform
_SALESFORCE = lazy(r"(?<![A-Za-z0-9])00D[A-Za-z0-9]{12}![A-Za-z0-9._]{79,}[A-Za-z0-9_]")
_MAILCHIMP = lazy(r"[0-9a-f]{32}-us\d{1,2}")
_ATLAS = lazy(r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}")
_TELEGRAM = lazy(r"\d{5,16}:A[A-Za-z0-9_-]{32,40}(?![A-Za-z0-9_-])")
_FACEBOOK_APP = lazy(r"\d{15,16}\|[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])")
_GENERIC_PREFIXED = lazy(
    r"([A-Za-z][A-Za-z0-9]{1,11})[_-](?:[A-Za-z0-9]{1,10}[_-]){0,2}([A-Za-z0-9]{30,}[A-Za-z0-9_-]*)")
_B64ISH = lazy(r"[A-Za-z0-9+/]{40}")


# ---- private keys ---------------------------------------------------------------------------
# (an OpenVPN static key, the shared secret behind tls-auth, comes in the same armour)
_PEM_BEGIN = lazy(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V1)-----|---- BEGIN (SSH2 (?:ENCRYPTED )?PRIVATE KEY) ----")
_PEM_BODY = lazy(r"(?:\\[nr]|[A-Za-z0-9+/=:,\- \t\r\n])*")
_PEM_PLAIN = lazy(r"[A-Za-z0-9+/=:,\- \t\r\n]*")  # _PEM_BODY without escaped newlines: one tight loop
_PEM_JUDGED = 40000
_PUTTY = lazy(r"Private-Lines:\s*(\d+)[ \t]*(?:\\r|\r)?(?:\\n|\n)")
_B64_LINE = lazy(r"[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*(?:\\r|\r)?(?:\\n|\n|$)")


def _public_blocks(text: str, skip: list) -> None:
    """Certificates and public keys are not secrets: keep token rules out of them."""
    for m in _CERT_BLOCK.finditer(text):
        end = text.find("-----END " + m.group(1) + "-----", m.end(), m.end() + 40000)
        skip.append((m.start(), end if end > 0 else min(len(text), m.end() + 4000)))


def _key_material(body: str) -> bool:
    """Base64 lines, not prose: an armour around 'anything' or a sentence is an example."""
    pieces = body.replace("\\n", "\n").split()
    if ":" in body:
        pieces = [p for p in pieces if ":" not in p]  # skip Proc-Type: …
    chars = sum(map(len, pieces))
    return chars >= 32 and chars >= 12 * len(pieces)


def _private_keys(text: str, spans: _Spans) -> None:
    ends: dict[str, int] = {}  # END marker -> next position (or -1): one search per marker
    consumed = -1
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < consumed:
            continue
        label = m.group(1) or m.group(2)
        start = m.end()
        end_marker = ("-----END " + label + "-----") if m.group(1) else "---- END SSH2"
        stop = ends.get(end_marker, -2)
        if stop != -1 and stop < start:
            stop = ends[end_marker] = text.find(end_marker, start)
        if stop < 0 or not _key_material(text[start:min(stop, start + _PEM_JUDGED)]):
            # a truncated paste, or an END behind prose: take the base64-looking lines that
            # follow, however many. (An armour that opens as key material is redacted whole to
            # its END, however long: its first _PEM_JUDGED characters decide.)
            stop = _PEM_PLAIN.match(text, start).end()
            if text.startswith("\\", stop):
                stop = _PEM_BODY.match(text, start).end()  # escaped newlines ("\\n"): the slower loop
            # give back trailing words of prose: stop at the last base64 line
            cut = text.rfind("\n\n", start, stop)
            if cut > start:
                stop = cut
        consumed = stop
        body = text[start:stop]
        # trim whitespace and escaped newlines around the body
        i, j = 0, len(body)
        while True:
            while i < j and body[i] in " \t\r\n":
                i += 1
            if body.startswith(("\\n", "\\r"), i):
                i += 2
                continue
            break
        while True:
            while j > i and body[j - 1] in " \t\r\n":
                j -= 1
            if j - 2 >= i and body[j - 2:j] in ("\\n", "\\r"):
                j -= 2
                continue
            break
        if j <= i or body.startswith(_MARK, i) or not _key_material(body[i:j]):
            continue
        spans.add(start + i, start + j, "private_key", text, "private-key")
    if "PuTTY-User-Key-File" in text:
        for m in _PUTTY.finditer(text):
            pos = m.end()
            n = min(int(m.group(1)), 200)
            s = pos
            for _ in range(n):
                lm = _B64_LINE.match(text, pos)
                if not lm:
                    break
                pos = lm.end()
            if pos > s:
                e = pos
                while e > s and text[e - 1] in "\r\n":
                    e -= 1
                if text[e - 2:e] == "\\n":
                    e -= 2
                spans.add(s, e, "private_key", text, "putty-private-key")


# ---- token candidates -----------------------------------------------------------------------
def _tokens(text: str, low: str, spans: _Spans, skip: list) -> None:
    has_digit = _HAS_DIGIT.search
    if skip:
        it = _skipping(_CAND, text, skip)
    else:
        it = _CAND.finditer(text)
    for m in it:
        s, e = m.span()
        tok = m.group()
        url_user = False
        if tok[0] == "/" and tok[1:2] == "/" and s > 0 and text[s - 1] == ":" and "." not in tok:
            s += 2  # "https://ghp_…@github.com": a token as the URL's user (not a host) starts after the slashes
            tok = tok[2:]
            url_user = text.startswith("@", e)
        if _vendor(text, s, e, spans):
            continue
        if has_digit(tok) is None:
            continue  # (a vendor's random body holds a digit: a run without one is a word or a path)
        if any(_vendor(text, j.end(), e, spans) for j in _JOINED.finditer(text, s, e - 9)):
            continue
        if url_user:
            _url_user(text, s, e, tok, spans)
            continue
        _shapes(text, low, s, e, tok, spans)


def _vendor(text: str, s: int, e: int, spans: _Spans) -> bool:
    """Does a vendor shape of the catalogue start at s, in the run of token characters ending at e?
    Tried at the run's start and after each joiner inside it ("-_.~+/", `_JOINED`): a token glued to a word
    ("deploy-AKIA…", a file named "backup-ghp_….md") is the same token, and a scan that only
    looked at the start of the run let it through."""
    rules = _DISPATCH.get(text[s:s + 2])
    if rules is None:
        return False
    for prefix, rx, kind, check, plen, rule in rules:
        if not text.startswith(prefix, s):
            continue  # (a plain comparison first: most rules of a bucket differ in the prefix)
        vm = rx.match(text, s)
        if vm is None:
            continue
        ve = vm.end()
        if check and (not _entropy_ok(text[s:ve], 20) or _is_compound_name(text[s + plen:ve])):
            continue  # (a short, common prefix: "sk-ecdsa-sha2-nistp256-cert-v01" is an SSH key type)
        if not _placeholder_body(text[s + plen:ve]):
            # part of the same token: redact to its end
            ce = e
            while ce > ve and text[ce - 1] in ".-/~":
                ce -= 1
            spans.add(s, max(ve, ce), kind, text, rule)
        return True
    return False


def _url_user(text: str, s: int, e: int, tok: str, spans: _Spans) -> None:
    """A long random user name in a URL is a token standing in for user and password (git clone
    https://<PAT>@dev.azure.com/…). 32 hex digits are left: that is how Sentry writes the public
    key of a DSN, which is meant to be shipped inside apps."""
    if _entropy_ok(tok, 20) and not (len(tok) < 40 and _HEX.fullmatch(tok)) and not _code_name(tok):
        spans.add(s, e, "url_credentials", text, "url-user-token")


def _shapes(text, low, s, e, tok, spans) -> None:
    # trim sentence punctuation
    while e > s and text[e - 1] in ".-/~":
        e -= 1
    n = e - s
    if n < 20:
        return
    if n != len(tok):
        tok = text[s:e]
    if n == 55 and tok[6] == "-" and bitlocker_key(tok):  # (the shape needs no label: here, not in personal)
        spans.add(s, e, "bitlocker_key", text, "bitlocker-key")
        return
    if "Q~" in tok:
        am = _AZURE_SECRET.search(tok)
        if am:
            spans.add(s + am.start(), s + am.end(), "azure_client_secret", text, "azure-client-secret")
            return
    c0 = tok[0]
    if c0 in "MNO" and tok.count(".") == 2 and _DISCORD.fullmatch(tok):
        spans.add(s, e, "discord_bot_token", text, "discord-bot-token")
        return
    if ".atlasv1." in tok and _ATLAS.search(tok):
        spans.add(s, e, "terraform_cloud_token", text, "terraform-cloud-token")
        return
    if s > 0 and text[s - 1] == "|":
        fm = _FACEBOOK_APP.match(text, max(0, s - 17))
        if fm is None:
            fm = _FACEBOOK_APP.match(text, max(0, s - 16))
        if fm is not None and fm.end() >= e:
            spans.add(fm.start(), fm.end(), "facebook_app_token", text, "facebook-app-token")  # app id|app secret
            return
    if s >= 16 and text[s - 1] == "!":
        # Salesforce access token / session id: the 15-character org id ("00D…"), "!", the
        # opaque token; the token scan starts after the "!", so the org id is looked for before it
        sm = _SALESFORCE.match(text, s - 16)
        if sm is not None and sm.end() >= e:
            spans.add(sm.start(), sm.end(), "salesforce_token", text, "salesforce-token")
            return
    if c0 == "A" and s > 0 and text[s - 1] == ":":
        b = s - 1
        while b > 0 and text[b - 1].isdigit() and s - b < 18:
            b -= 1
        tm = _TELEGRAM.match(text, b)
        if tm is not None and tm.end() > s:
            spans.add(b, tm.end(), "telegram_bot_token", text, "telegram-bot-token")
            return
    if spans.filler.get(tok):
        return  # a filler value seen before: every rule below would add it as [s, e), which add() refuses
    if c0 in "01" and tok[1:3] == ".A" and _AZURE_REFRESH.fullmatch(tok):
        spans.add(s, e, "azure_refresh_token", text, "azure-refresh-token")
        return
    if n >= 35 and tok[32:35] == "-us" and _MAILCHIMP.fullmatch(tok):
        spans.add(s, e, "mailchimp_key", text, "mailchimp-key")
        return
    if "/" in tok and "." in tok:
        return  # path or URL
    # AWS secret access key next to an access key id
    if n == 40 and _B64ISH.fullmatch(tok) and _entropy_ok(tok, 40) and not tok.islower() and _wordy(tok) < 0.4:
        w = text[max(0, s - 400):e + 400]
        if ("AKIA" in w or "ASIA" in w or "aws" in low[max(0, s - 200):s]) and not _id_valued(text, low, s):
            spans.add(s, e, "aws_secret_access_key", text, "aws-secret-access-key")
            return
    c0 = tok[0]
    if c0 in "/.~-+":
        return
    # generic vendor shape: short lowercase/uppercase prefix, separator, long random body
    prev = text[s - 1] if s else " "
    if prev in REFERENCE_BEFORE:
        return  # a URL anchor or path segment, a variable, a crypt hash ("$2a$06$…"), a handle
    gm = _GENERIC_PREFIXED.fullmatch(tok)
    if gm is not None and not low.endswith(DIGEST_BEFORE, max(0, s - 8), s):
        pre, body = gm.group(1), gm.group(2)
        lp = pre.lower()
        if lp not in ID_PREFIXES and not lp.startswith(("sha", "md5", "blake", "crc", "node", "python", "linux", "release", "build", "commit", "data", "image")):
            up, lo, dg = _classes(body)
            if dg and ((up and lo) or (_HEX.fullmatch(body) and len(body) >= 32)) and _wordy(body) < 0.5 and "EXAMPLE" not in body and not (
                    _code_name(tok) or in_code_position(text, s, e, tok) or _id_valued(text, low, s)):
                spans.add(s, e, "api_token", text, "generic-prefixed-token")  # (not a name in code: "NpyDatetime_ConvertDatetime64ToDatetimeStruct")
                return
    # context: a secret word shortly before, no hash / id / public word
    _contextual(text, low, s, e, tok, spans)


def _id_valued(text: str, low: str, s: int) -> bool:
    """Is the token at s the value of an id's label ('"JobRunId": "jr_…"', '--request-id …')?
    A service's object and request ids look random and are shown in every answer: not secrets."""
    lab = _label_before(text, low, max(0, s - 80), s)
    return bool(lab) and _ID_LABEL.search(lab) is not None


_WINDOW = 160


def _window_start(s: int, items: list) -> tuple[int, list[tuple[int, int, str]]]:
    """Where the context before s starts: 160 characters, a redacted value counting as its
    marker; and the redacted values inside it (start, end, kind), last first.

    A second pass sees "[REDACTED:jwt]" where the first saw a 300-character token; measuring both
    alike keeps a word that was out of reach out of reach, so scrubbing stays idempotent.
    """
    budget, pos, inside = _WINDOW, s, []
    for a, b, kind in reversed(items):
        if b > pos:
            continue
        if pos - b >= budget:
            break
        inside.append((a, b, kind))
        budget -= pos - b
        budget -= len(kind) + 11  # "[REDACTED:" + kind + "]": what the next pass reads there
        pos = a
        if budget <= 0:
            return a, inside
    return max(0, pos - budget), inside


def _contextual(text, low, s, e, tok, spans) -> None:
    n = len(tok)
    up, lo, dg = _classes(tok)
    if first_release(TOKEN, tok, n, up, lo, dg):
        return  # (a path, a name, an id: see filters.TOKEN)
    is_hex = _HEX.fullmatch(tok) is not None
    prev = text[s - 1] if s else " "
    if prev == ":":
        # the second half of 'id==:secret' (a Tableau token) whose first half was just redacted
        last = spans.items[-1] if spans.items else None
        if last is not None and s - 4 < last[1] < s and not text[last[1]:s - 1].strip("="):
            spans.add(s, e, "secret", text, "token-second-half")
        return
    if prev in REFERENCE_BEFORE or low.endswith(BENIGN_BEFORE, max(0, s - 8), s) or _MIME_WORD_END.match(text, e):
        return  # (the end of a MIME encoded word: "=?utf-8?b?…?=")
    if prev == "\\" and ((tok[0] == "f" and tok[1:2] in ("B", "I", "R", "P", "5")) or (tok[0] == "x" and _HEX2.match(tok, 1))):
        return  # a manual page's font change glued to a word: "\\fBarch/i386/Makefile"; a byte escape: "\\x1bListResponse"
    if not _in_context(text, low, s, e, tok, is_hex, up and lo, spans, spans.items):
        spans.declined.append((s, e, tok, is_hex, up and lo))


def rejudge(text: str, low: str, spans: _Spans) -> None:
    """Judge again, with every span the readers found since, the tokens whose context let them
    stand: a second pass reads those spans as markers (on one line, of their own length), so
    the first must measure the window over them as well, or scrubbing is not idempotent (a
    seed phrase on three lines kept "Backup phrase:" out of a token's window; its marker does
    not)."""
    items = sorted(spans.items)
    for s, e, tok, is_hex, mixed_case in spans.declined:
        if not any(x < e and s < y for x, y, _ in items):
            _in_context(text, low, s, e, tok, is_hex, mixed_case, spans, items)


def _in_context(text, low, s, e, tok, is_hex, mixed_case, spans, items) -> bool:
    """Redact the token at [s, e) if the window before it makes it a secret; True when it did."""
    a, inside = _window_start(s, items)
    opened = low.rfind("[redacted:", max(0, a - _MARK_REACH), a + len(_MARK))  # (its opening may straddle a)
    if opened >= 0 and low.find("]", opened, s) >= a:
        a = opened  # (a window that starts inside a marker takes all of it, as the first pass took the value)
    # stay within the last three lines, a redacted value's own line breaks not counted (the next
    # pass reads its marker on one line)
    nl, lines = s, 0
    while lines < 3 and (nl := low.rfind("\n", a, nl)) >= 0:
        lines += not any(x <= nl < y for x, y, _ in inside)
    if lines == 3:
        a = nl
    view, low_view = _as_marked(text, low, a, s, inside)
    # A document that repeats a line repeats its tokens in the same context: the verdict depends
    # on the token and on the window's text alone, so each distinct pair is judged once.
    key = (tok, low_view, view)
    secret = spans.context.get(key)
    if secret is None:
        n = len(view)
        rule = _secret_context(view + tok, low_view + low[s:e], 0, n, tok, is_hex, mixed_case)
        secret = spans.context[key] = rule if rule and not first_release(CONTEXT_TOKEN, tok, mixed_case) else ""
    # (and, read outside the memo as it looks past the token, not a name called or typed in code)
    if secret and not in_code_position(text, s, e, tok) and not _named_elsewhere(text, s, tok, spans):
        spans.add(s, e, "secret", text, secret)
        return True
    return False


def _as_marked(text: str, low: str, a: int, s: int, inside: list) -> tuple[str, str]:
    """The window [a, s) as the next pass reads it: each redacted value in it as its marker.
    Judged on the raw value, a password glued to a label ("…8n1!publicToken = '…'") would lend
    the next token its label where the next pass sees only "[REDACTED:password] = '…'"."""
    marked = sorted((x, y, kind) for x, y, kind in inside if x >= a)
    if not marked:
        return text[a:s], low[a:s]
    parts, lows, pos = [], [], a
    for x, y, kind in marked:
        parts += (text[pos:x], f"[REDACTED:{kind}]")
        lows += (low[pos:x], f"[redacted:{kind}]")
        pos = y
    parts.append(text[pos:s])
    lows.append(low[pos:s])
    return "".join(parts), "".join(lows)


_NAMES_CHECKED = 64  # distinct tokens looked for elsewhere per document: a bounded cost
_NAME_REACH = 65536  # how far from the token its other uses are looked for
_DECLARED = ("class ", "def ", "struct ", "typedef ", "enum ", "union ", "interface ", "type ")


def _named_elsewhere(text: str, s: int, tok: str, spans: _Spans) -> bool:
    """Is the identifier at s called, declared or its member read elsewhere nearby
    ('class N10ssl_ctx_st4DOLLAR_18E(Structure):', 'N10…._fields_')? Then it is a name in
    code, wherever else it stands. (A secret is a literal: nobody calls it.)"""
    if "_" not in tok or _IDENT_FULL.fullmatch(tok) is None:
        return False
    known = spans.shared.get("name:" + tok)
    if known is not None:
        return known
    if spans.searched >= _NAMES_CHECKED:
        return False
    spans.searched += 1
    lo, hi = max(0, s - _NAME_REACH), min(len(text), s + len(tok) + _NAME_REACH)
    i = text.find(tok, lo, hi)
    named = False
    while i >= 0 and not named:
        after = text[i + len(tok):i + len(tok) + 1]
        named = after == "(" or (after == "." and text[i + len(tok) + 1:i + len(tok) + 2].isalpha()) or (
            text.endswith(_DECLARED, max(0, i - 10), i))
        i = text.find(tok, i + len(tok), hi)
    spans.shared["name:" + tok] = named
    return named


def _secret_context(text: str, low: str, a: int, s: int, tok: str, is_hex: bool, mixed_case: bool) -> str:
    """Does the window low[a:s] before the token make it a secret: a secret word (not a hash or
    id word), or a service's name as its label? The rule that says so, or ''. Reads nothing
    outside [a, s) but the token."""
    # words only: neither a marker nor another long token (whose letters may spell "sha" or
    # "key" by chance, and which a second pass sees as a marker) counts as context
    window = low[a:s]
    if "[redacted:" in window:
        window = _MARK_RE.sub(" ", window)
    window = _without_random_runs(window)
    if _CTX_BAD_RE.search(window) is not None:
        return ""  # "sha256", "commit", "fingerprint", ...: a hash or an id
    vendor = not _names_a_secret(window)
    if vendor and not _vendor_label(low, a, s, tok, is_hex, mixed_case):
        return ""  # no secret word nor a service's name as the label; or "sha256", "commit", ...
    # a value of a non-secret label right before ("client_id=...", "trace_id: ..."): an id, even
    # beside a service's name ("AUTH0_CLIENT_ID=…"), where a service's own name labels its key
    lab = _label_before(text, low, a, s)
    if vendor:
        return "" if lab and _ID_LABEL.search(lab) else "service-name-context"
    if lab and (_label_class(lab) == _NOT or ("-" in tok and _named_id(tok, lab))) and (
            not _closes_a_secrets_phrase(low, a, s, lab)):
        # (a secret word further back, a password on the line before, does not make a service's
        # own name a plain label: 'HASLO_BD=…' over 'webexbot = "…"')
        return "service-name-context" if _a_service(lab) and _vendor_label(
            low, a, s, tok, is_hex, mixed_case) else ""
    if is_hex and not any(w in window[-80:] for w in HEX_CONTEXT_WORDS):
        return ""
    return "secret-word-context"


_PAIR_BREAK = ":=\n,;|"


def _closes_a_secrets_phrase(low: str, a: int, s: int, lab: str) -> bool:
    """Does the label end a phrase that a secret's word opens on its own line, with no pair
    between them ("API-Schlüssel für den SMS-Dienst: …", "API-nyckel för SMS-tjänsten: …")? It
    names what the secret is for, as "the SMS service" does in English, and is no field of its
    own; after a pair ("api_key: …, client-id: …", "--key k --upload-id …") or on the next line
    it is."""
    start = low.rfind(lab.lower(), a, s)
    if start <= a or not lab[:1].isalpha():
        return False  # (a flag, "--upload-id", or what is left of an operator, ".=")
    head = low[a:start]
    phrase = head[max(*(head.rfind(c) for c in _PAIR_BREAK), head.rfind(" -")) + 1:]  # (nor a flag's pair)
    return bool(phrase.strip()) and _names_a_secret(_without_random_runs(phrase))


def _label_before(text: str, low: str, a: int, s: int) -> str:
    """The label of the pair whose value starts at s ("client_id=", "NextToken": ), or "".

    A plain word before ':' is left out: in a chat log it is the speaker ("Ola: …"); a quoted one
    is a key of JSON or YAML ('"ID": …', '"Sid": …'), never a speaker."""
    j = s
    while j > a and low[j - 1] in " \t\"'`\n":  # (the value may open the next line)
        j -= 1
    if j > a and low[j - 1] == "(":
        # a value passed to a call or opened in parentheses takes the label the call is assigned
        # to: "iv = bytes.fromhex('…')", "challenge = ('…'"
        cm = _CALL_BEFORE.search(low, max(a, j - 80), j)
        if cm is not None:
            j = cm.start() + 1
    if j > a and low[j - 1] == ">":
        tm = _TAG_BEFORE.search(low, a, j)  # an element: "<clientToken>…" (not one that only holds or marks up)
        return text[tm.start(1):tm.end(1)] if tm is not None and tm.group(1) not in HOLDER_TAGS else ""
    if j <= a or low[j - 1] not in ":=":
        fm = _FLAG_BEFORE.search(low, a, j) if j < s else None
        return fm.group(1) if fm is not None else ""  # a command's option: "--change-token …"
    k = j - 1
    while k > a and low[k - 1] in " \t\"'":
        k -= 1
    b = k
    while k > a and low[k - 1] in _IDCHARS:
        k -= 1
    lab = text[k:b]
    if b - k >= 20 and _entropy_ok(lab, 20) and _wordy(lab) < 0.5 and not _code_name(lab):
        return ""  # the end of a random token, not a label ("…B3SZ=NMmk…": a value glued to a value)
    if b > k and (low[j - 1] == "=" or not lab.isalpha() or _CASE_HUMP.search(lab)):
        return lab
    if b > k and low[b:b + 1] in "\"'" and not low.endswith(FUSED_SECRET_ENDINGS, k, b) and low[k:b] not in HOLDER_LABELS:
        return lab  # (a fused "querykey" is a secret's label the table does not know; a "value"
        # holds whatever its neighbours name: '"arn": "…:stream-key/…", "value": "sk_…"')
    return ""
_TAG_BEFORE = lazy(r"<([a-z_][\w.-]{0,60})(?:\s[^<>]{0,200})?>$")
_MIME_WORD_END = lazy(r"[/+=]*\?=")
_IDENT_FULL = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL_BEFORE = lazy(r"[=:][ \t]*(?:[a-z_][\w.]{0,60})?[ \t]*\($")
_FLAG_BEFORE = lazy(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)$")
_ID_LABEL = lazy(r"(?i:^id$|[_.-](?:id|ids|url|uri|name|host|domain|region|user|username|email|account))$|"
                  r"[a-z0-9](?:Id|ID|Ids|Url|URL|Uri|Name|Host|Domain|Region|User|Email)$")
_SERVICE_TUPLE = tuple(SERVICES)
_SERVICE_HEADS = frozenset(n[:5] for n in SERVICES if len(n) >= 5)


def _vendor_label(low: str, a: int, s: int, tok: str, is_hex: bool, mixed_case: bool) -> bool:
    """Is the token right after a service's name, as its label or first argument? A hex token
    of a digest's length in one case is a hash (`github: <commit>`), not a key, except in the
    service's login (`sonar.login`, `$sonarLogin`): that field says who signs in, and a hex
    string of a digest's length there is the token that does. A definition on a command line
    (`-Dsonar.login=…`) names what follows its `-D`."""
    j = s
    while j > a and s - j <= 6 and low[j - 1] in VENDOR_SEPARATORS:
        j -= 1
    if j == s or s - j > 6:
        return False
    # the identifier that ends at j (at most 41 characters, not before a): one match of the
    # reversed text instead of a step per character
    k = j - _IDENT_REVERSED.match(low[max(a, j - 41):j][::-1]).end()
    ident = low[k:j]
    if ident.startswith("-d"):
        ident = ident[2:]
    # the name, or a name that starts with it ("webexbot", "mailgun_eu")
    if not ident or not any(_service(part) for part in _IDENT_PARTS.split(ident)):
        return False
    return not (is_hex and not mixed_case and len(tok) in DIGEST_LENGTHS and "login" not in ident)


def _service(word: str) -> bool:
    """A service's name, or a name that starts with one ("webexbot", lower-cased)?"""
    return word in SERVICES or (len(word) > 5 and word[:5] in _SERVICE_HEADS and word.startswith(_SERVICE_TUPLE))


def _a_service(label: str) -> bool:
    """Is a label nothing but a service's name ("webexbot", not "STRIPE_PUBLISHABLE_KEY")?"""
    return all(_service(part) for part in _IDENT_PARTS.split(label.lower().strip("\"'`")) if part)


_IDENT_PARTS = lazy(r"[_.\-]")
_IDENT_REVERSED = lazy(r"[\w.\-]*")  # \w is exactly str.isalnum() or "_"
# in the lower-cased window; with what is glued after it up to a blank or a quote ("…R6=gpg", "…R6>gpg"):
# the bare value a label takes whole, which the next pass sees as a marker
_TOKEN_RUN = lazy(r"""[a-z0-9_\-.~+/]{20,}[^\s"'`<]*""")
_ASCII_DIGIT = lazy(r"[0-9]")


def _without_random_runs(window: str) -> str:
    """The window with each long run of token characters that holds a digit blanked (a token,
    whose letters may spell "key" or "sha" by chance). One pass over maximal runs: a lookahead
    for the digit at every position would rescan a digitless run once per character."""
    def blank(m) -> str:
        e = m.end()
        if _ASCII_DIGIT.search(m.group()) or (e < len(window) and window[e].isdecimal()):
            return " "
        return m.group()

    return _TOKEN_RUN.sub(blank, window)
_HEX2 = lazy(r"[0-9a-fA-F]{2}")


_MARK_RE = lazy(r"\[redacted:[a-z0-9_]*\]")
_CTX_GOOD_RE = lazy("|".join(map(re.escape, CONTEXT_WORDS + CONTEXT_WORDS_ELSEWHERE)))  # one scan instead of a word at a time
# (inside a longer word too: "sha256sum", "x509cert"; but "pgp" is no PGP key's in PostgreSQL's
# "PGPASSWORD" or ".pgpass")
_CTX_BAD_RE = lazy("|".join(re.escape(w) + ("(?!ass)" if w == "pgp" else "") for w in NOT_SECRET_CONTEXT))
# the context words a label can end in: inside a longer name they may name something else
_CTX_LABEL_WORDS = frozenset(("token", "secret", "key", "passw", "credential"))
_VERSION_TAIL = lazy(r"[_-]*v?\d+$")
_PASSWORD_REST = lazy(r"(?:ord|d|ort)?")  # (or nothing: "passwagwoord" is "passw" and more of its name)


def _names_a_secret(window: str) -> bool:
    """Does a secret word in the lower-cased window name a secret, not open another name?

    "token", "key", "secret" also open names that are no secret's label: PyExc_KeyError,
    keyDetails, tokenizer, PBKDF2PasswordHasher, key_spec. A word that ends its name (a bare
    "key", "apiKey", "scalewaykey", "api_tokens", "GITHUB_TOKEN_V2", "com.x.credentials.y")
    counts; one followed by more of the name counts only when the whole name is a secret's
    label, judged as the label rules judge one ("secret_key_base", "secretkey").
    """
    for m in _CTX_GOOD_RE.finditer(window):
        word = m.group()
        if word not in _CTX_LABEL_WORDS:
            return True  # "bearer", "webhook", "dsn", "nøkkel", ...
        a, b, n = m.start(), m.end(), len(window)
        while a > 0 and window[a - 1] in _IDCHARS and window[a - 1] != ".":
            a -= 1
        if word == "passw":
            b = _PASSWORD_REST.match(window, b).end()  # "password", "passwd", "passwort"
        e = b
        while e < n and window[e] in _IDCHARS and window[e] != ".":
            e += 1
        rest = _VERSION_TAIL.sub("", window[b:e])
        if rest in ("", "s") or _label_info(window[a:e])[0] != _NOT:
            return True
    return False
