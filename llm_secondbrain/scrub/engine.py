"""Redact secrets before anything is stored or printed: the driver.

Every replacement reads ``[REDACTED:<kind>]`` so a chunk still makes sense, and the report
names kinds and counts only, never values, so it can be printed and logged safely.

How it works (pure stdlib ``re`` and one Aho-Corasick pass, linear time):

1. A prefilter built from the catalogue: ``text.lower()`` is computed once, and each rule of
   ``catalogue.DETECTORS`` runs only when the text holds one of its keywords (every keyword of
   the catalogue is found in one Aho-Corasick pass over the text).
2. Detectors collect ``(start, end, kind)`` spans on the *original* text: private-key armour and
   the token scan (``tokens``: vendor shapes, structural shapes, random tokens named by their
   context); a secret label and its value wherever the text's structure puts it (``labels``);
   passwords in prose (``prose``); then the catalogue's detectors in order: tables, CSV exports,
   Authorization headers, URLs, commands, cookies, Kubernetes Secrets, Terraform variables,
   webhooks, the short shapes, and what personal notes keep (``personal``: seed phrases, backup
   codes, PINs and door codes). The lines around text written otherwise (``fold``: an invisible
   character, a full-width form, an escape, inline HTML around a value) are read a second time
   as a person reads them, and what is found there is redacted in the original over every
   character that wrote it.
3. Named filters (``filters``) decide the close calls: a labelled value that is a reference,
   template, variable, type, call, placeholder or documented default goes free, and no span is
   kept whose value is filler or counting ('xxxx…', 'AIzaaaa…', 'abcdef…123', '…EXAMPLE').
4. A value found once is redacted everywhere in the document (whole-token copies, and copies
   glued inside a longer word for values of 12 characters or more with a digit), unless it is
   a lower-case word or a documented default password ('postgres', 'changeme'). A redaction
   that stops inside a run of token characters goes on to the run's end, and a token a line
   break cut goes on at the start of the next line (fail closed).
5. A way out of a false positive: a line holding ``secondbrain:allow`` keeps its values, and
   ``allow`` patterns (``load_allow_patterns``, one regex a line) keep values found by labels,
   context or prose, never a vendor-shaped or private key. Every kept value is counted under
   "allowed" in the report, so nothing is let through silently.
6. Spans are merged and replaced in one pass.

``explain`` runs the same rules and says, for each redaction, which rule made it, and for each
labelled value let go, which filter let it go.

Brains remember the identity of the rules each file was scrubbed under (``rules_identity()`` in
this package: a hash of its files, computed, never typed), and re-scrub when it changes.
"""
from __future__ import annotations

import bisect
import re
import threading
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from . import filters, fold, labels, prose, structures, tokens
from .catalogue import DEFAULT_PASSWORDS, DETECTORS, TOKEN_RULES, Pattern
from .filters import _HAS_DIGIT, _MARK, _MARK_REACH, _bounded, _code_name
from .patterns import lazy
from .personal import personal


_READY = False
_INIT_LOCK = threading.Lock()
_PLAN: list = []  # (rule, reader) for each detector of the catalogue, in order
_PREFILTER = None  # which detectors' keywords a text holds (the private keys' words last), and its label stems


def _init() -> None:
    """Build the token dispatch, the prefilter and the detectors' plan, once (the patterns
    compile when first used: patterns.Lazy)."""
    global _READY, _PLAN, _PREFILTER
    with _INIT_LOCK:
        if _READY:
            return
        tokens.build()
        readers = {
            "login-pair": prose._pairs, "chat-answer": prose._chat_answers, "app-password": prose._app_passwords,
            "table-column": labels._markdown_tables, "csv-column": labels._csv_exports,
            "delimited-table": labels._delimited_tables,
            "auth-header": labels._auth_headers, "url-credentials": structures._url_creds,
            "oracle-connect": structures._oracle, "cli-p-flag": structures._cli_p,
            "cli-user-password": structures._cli_user, "redis-cli-password": structures._cli_redis,
            "echo-to-password-reader": structures._cli_echo, "ldap-bind-password": structures._cli_ldap,
            "powershell-securestring": structures._argument_reader(structures._PS_SECURE, 1, "password", "powershell-securestring"),
            "htpasswd-batch": structures._argument_reader(structures._CLI_HTPASSWD, 1, "cli_password", "htpasswd-batch"),
            "net-user": structures._argument_reader(structures._CLI_NETUSER, 2, "cli_password", "net-user"),
            "net-use": structures._argument_reader(structures._CLI_NETUSE, 1, "cli_password", "net-use"),
            "irc-identify": structures._irc_identify,
            "openssl-k": structures._argument_reader(structures._OPENSSL_K, 1, "cli_password", "openssl-k"),
            "freerdp-password": structures._argument_reader(structures._FREERDP_P, 1, "cli_password", "freerdp-password"),
            "lftp-user": structures._argument_reader(structures._LFTP_U, 1, "cli_password", "lftp-user"),
            "session-cookie": structures._cookies, "bundler-credentials": labels._bundler,
            "comment-label": labels._commented,
            "k8s-secret": structures._k8s, "terraform-variable": labels._terraform,
            "webhook-url": structures._webhooks, "credential-call": structures._credential_calls,
            "sql-identified-by": structures._identified_by, "personal": personal, "email": structures._emails,
        }
        _PLAN = [(rule, _pattern_reader(rule) if isinstance(rule, Pattern) else readers[rule.id]) for rule in DETECTORS]
        private_keys = next(r.keywords for r in TOKEN_RULES if r.id == "private-key")
        _PREFILTER = _Prefilter([_words(rule.keywords) for rule in DETECTORS] + [_words(private_keys)],
                                labels.SCAN_STEMS)
        _READY = True


def _pattern_reader(rule: Pattern):
    """A Pattern rule as a reader: each match's group, kept when every validator accepts it (a
    pattern of alternatives whose group is another in each: the last that took part)."""
    rx = lazy(rule.pattern)
    group, kind, rule_id = rule.group, rule.kind, rule.id
    checks = tuple(filters.VALIDATORS[name] for name in rule.validators)

    def read(text: str, low: str, spans: _Spans) -> None:
        for m in rx.finditer(text):
            g = group if m.start(group) >= 0 else m.lastindex
            v = m.group(g)
            if all(check(v) for check in checks):
                spans.add(m.start(g), m.end(g), kind, text, rule_id)
    return read


def _words(keywords: tuple) -> tuple[frozenset, tuple]:
    """A rule's keywords as (the words any one of which will do, the groups whose words must all
    be there)."""
    return (frozenset(k for k in keywords if k.__class__ is str),
            tuple(frozenset(k) for k in keywords if k.__class__ is not str))


class _Prefilter:
    """One pass over a lower-cased text: which rules' keywords it holds, and where the stems a
    label or a secret's word in prose can hold stand (``labels.SCAN_STEMS``).

    A word looked for with ``in`` is a scan of the text, and most words are absent from most
    texts: looking for each of the catalogue's ~60 words in turn scanned a text ~60 times, and
    asking each of ~30 rules in turn cost as much again in a short text; the label stems were one
    more scan, a regular expression that tried its alternatives at every letter. One
    Aho-Corasick automaton finds every word of two characters or more and every stem in one
    pass; the single characters (',', '(', '@', '|') are looked for with ``in`` (a memchr, found
    at once where they are common); then only the rules that name a word found are asked
    whether all they need is there. The words written with letters outside ASCII have an
    automaton of their own, run only on a text that holds one of those letters: in one
    automaton they made every step of the scan twice as slow, on English text as well.
    """

    def __init__(self, rules: list[tuple], stems: tuple):
        import ahocorasick

        self.rules = rules  # (anyof, groups) for each rule, by its index
        naming: dict[str, set] = {}  # word -> the indices of the rules that name it
        for i, (anyof, groups) in enumerate(rules):
            for w in anyof.union(*groups):
                naming.setdefault(w, set()).add(i)
        self.naming = {w: tuple(sorted(ix)) for w, ix in naming.items()}
        self.chars = tuple(sorted(w for w in naming if len(w) == 1))
        self.automaton, self.wide = ahocorasick.Automaton(), ahocorasick.Automaton()
        for w in sorted({w for w in naming if len(w) > 1}.union(stems)):
            (self.automaton if w.isascii() else self.wide).add_word(w, (w, w in naming, w in stems))
        self.automaton.make_automaton()
        self.wide.make_automaton()
        # the characters outside ASCII those words hold: a text with none of them needs no wide scan
        self.wide_chars = re.compile("[" + re.escape("".join(sorted({c for w in self.wide.keys() for c in w
                                                                      if not c.isascii()}))) + "]")

    def scan(self, low: str) -> tuple[list[int], list[tuple[int, str]]]:
        """The indices, in order, of the rules whose keywords `low` holds; and (position, stem) of
        every occurrence of every label stem."""
        found = set()
        stems = []
        wide = not low.isascii() and self.wide_chars.search(low) is not None
        for automaton in (self.automaton, self.wide) if wide else (self.automaton,):
            for end, (w, word, stem) in automaton.iter(low):
                if word:
                    found.add(w)
                if stem:
                    stems.append((end + 1 - len(w), w))
        for c in self.chars:
            if c in low:
                found.add(c)
        if not found:
            return [], stems
        named = set()
        for w in found:
            named.update(self.naming[w])
        out = []
        for i in sorted(named):
            anyof, groups = self.rules[i]
            if not anyof.isdisjoint(found) or any(g <= found for g in groups):
                out.append(i)
        return out, stems


# --------------------------------------------------------------------------------------------
# the scrubber
# --------------------------------------------------------------------------------------------
class _Spans:
    """The spans found in one document, and the verdicts on its values.

    A document that repeats a line ("password: X" a thousand times) repeats its values: each
    verdict that depends on the value alone (or on a token and the text of its context window)
    is reached once per document (and forgotten with it). When explaining, every span is also
    kept with the rule that found it (``trace``), and every labelled value let go with the name
    of what let it go (``released``).
    """
    __slots__ = ("items", "filler", "filtered", "verdicts", "context", "shared", "searched", "skip_to", "trace",
                 "released", "stems", "low", "declined")

    def __init__(self, explain: bool = False):
        self.items: list[tuple[int, int, str]] = []
        self.filler: dict[str, str] = {}  # the filler filter's verdict, by value
        self.filtered: dict[tuple, str] = {}  # filters.value_filter, by value, label class and quoting
        self.verdicts: dict[tuple, tuple] = {}  # _value_verdict, by value, separator and label
        self.context: dict[tuple, str] = {}  # _secret_context, by token and context window
        self.shared: dict[str, bool] = {}  # _plain_label_holds, by value
        self.searched = 0  # values _plain_label_holds looked for in the text (at most _MAX_SHARED)
        self.skip_to = 0  # the end of the last long labelled value read (no label is looked for inside it)
        self.trace: list | None = [] if explain else None  # (start, end, kind, rule)
        self.released: list | None = [] if explain else None  # (start, end, label, filter)
        self.stems: list[tuple[int, str]] = []  # where the scan found a secret's word (labels.SCAN_STEMS), in order
        self.low = ""  # the text the spans are of, lower-cased (_lower), once read
        self.declined: list[tuple] = []  # tokens whose context let them stand (tokens.rejudge)

    def add(self, s: int, e: int, kind: str, text: str, rule: str) -> None:
        if e <= s:
            return
        v = text[s:e]
        if _MARK in v:
            return
        m = text.rfind(_MARK, max(0, s - _MARK_REACH), s - 1 + len(_MARK))  # (one that opens before s)
        if m >= 0 and text.find("]", m) >= s:
            return  # (nor a part of one: "[REDACTED:password][10:02]" trimmed of its "[", the
            # "password]" a reader of "user:password" takes from "echo '[REDACTED:password]' | chpasswd")
        if kind != "private_key":
            filler = self.filler.get(v)
            if filler is None:
                filler = self.filler[v] = filters.first_release(filters.FILLER, v)
            if filler:
                # filler and placeholders ("xxxx…", "AIzaaaa…", "…EXAMPLE") are no secret
                if self.released is not None:
                    self.released.append((s, e, rule, filler))
                return
        self.items.append((s, e, kind))
        if self.trace is not None:
            self.trace.append((s, e, kind, rule))

    def let_go(self, s: int, e: int, label: str, name: str, answer: bool) -> bool:
        """Note (when explaining) that the value at [s, e) of `label` was let go by `name`; `answer`."""
        if self.released is not None:
            self.released.append((s, e, label, name))
        return answer

    def value_filter(self, v: str, cls: int, quoted: bool) -> str:
        """filters.value_filter (the filter that lets a labelled value go, or ''), once per distinct
        (value, label class, quoted) in the document."""
        key = (v, cls, quoted)
        name = self.filtered.get(key)
        if name is None:
            name = self.filtered[key] = filters.value_filter(v, cls, quoted)
        return name


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few code points change length when lower-cased
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low


# ---- driver -----------------------------------------------------------------------------------
def _collect(text: str, strip_emails: bool, spans: _Spans) -> list[tuple[int, int, str]]:
    if not _READY:
        _init()
    low = _lower(text)
    holding, stems = _PREFILTER.scan(low)
    skip: list = []
    if holding and holding[-1] == len(_PLAN):  # (the private keys' words: the last rule of the prefilter)
        tokens._private_keys(text, spans)
        skip.extend((s, e) for s, e, _ in spans.items)
        tokens._public_blocks(text, skip)
        skip.sort()
    tokens._tokens(text, low, spans, skip)
    found = len(spans.items)
    labels._keywords(text, low, spans, skip, stems)
    spans.stems = stems  # (sorted by labels._keywords)
    spans.low = low
    plan = _PLAN
    labelled = len(spans.items)
    for i in holding:
        if i < len(plan):
            rule, read = plan[i]
            if not rule.optional or {"strip_emails": strip_emails}[rule.optional]:
                read(text, low, spans)
    glued = _glued_labels(text, spans.items[labelled:], stems)
    if glued:
        labels._keywords(text, low, spans, skip, glued)
    if spans.declined and len(spans.items) > found:
        tokens.rejudge(text, low, spans)
    return spans.items


def _glued_labels(text: str, late: list, stems: list) -> list:
    """The label words glued after a value a reader found once the labels were read
    ("…/webhook/…m2dzκλειδί_api: …"): read there, the label ran back into the value and was no
    label; the next pass reads it after the value's marker, so this one reads it again after
    the value (labels._keywords stops a label at a redacted value's end)."""
    out = []
    idchars = labels._IDCHARS
    for _, e, _ in late:
        if text[e - 1] not in idchars:
            continue  # (a label there never ran back into the value)
        run = e
        while run < len(text) and run - e <= 48 and text[run] in idchars:
            run += 1
        k = bisect.bisect_left(stems, (e, ""))  # (sorted by labels._keywords)
        while k < len(stems) and stems[k][0] <= run:
            out.append(stems[k])
            k += 1
    return out


def _found(text: str, strip_emails: bool, explain: bool = False) -> tuple[list, _Spans]:
    """What the rules find in `text`, and in its folded view where it has one (``fold``: a
    secret written with invisible characters, full-width forms, escapes or inline HTML), as
    spans of `text`; with the trace and releases of both readings when explaining."""
    found = _Spans(explain)
    items = _collect(text, strip_emails, found)
    seen = fold.view(text)
    if seen is None:
        return items, found
    also = _Spans(explain)
    items = items + seen.back(_collect(seen.text, strip_emails, also))
    if explain:
        found.trace += seen.back(also.trace)
        found.released += seen.back(also.released)
    return items, found


# ---- a secret found once is a secret everywhere in the document ---------------------------------
# The longest value looked for elsewhere: the automaton's cost per copy grows with the value's
# length, and a periodic value (an adversary's "password=password=…") is copied at every period.
# A longer value is redacted whole where it was found; its copies are left to the other rules.
_PROPAGATED_MAX = 1600


def _propagates(v: str) -> bool:
    """Only values a rule was sure of are searched for elsewhere: not words, defaults or filler."""
    if v.isalpha() and (v.islower() or v.isupper() or v.istitle()):
        return False  # a dictionary-like word ("Unicode" after ":param password:")
    return v.lower() not in DEFAULT_PASSWORDS and not _code_name(v)  # (filler never became a span)


# a copy this long, with a digit, is the secret even glued inside a longer word ('somSG.…where');
# a shorter one, or one of letters only ('IAmSensitive' in 'IAmSensitiveBytes'), only as a whole token
_GLUED_MIN = 12


def _everywhere(text: str, items: list) -> list:
    """Add every other copy of each redacted value ("wifi password: X ... connect with X"): a whole
    token, or any copy of a long one. Every value is looked for, however many a document holds
    (a mailbox, a long conversation): one Aho-Corasick pass over the text finds the copies of all
    of them at once, so the cost stays linear where a search per value would not. (A short text
    with few values is searched value by value: building an automaton costs more there.)"""
    values: dict[str, str] = {}  # each value looked for, and the kind of its first span
    for s, e, k in items:
        v = text[s:e]
        if v not in values and 6 <= e - s <= _PROPAGATED_MAX and "\n" not in v:
            values[v] = k
    if not values:
        return items
    have = set(items)
    out = list(items)
    judged: dict[str, bool] = {}  # _propagates, asked only of a value with a copy no span holds yet
    for end, v in _copies(text, values):
        s, e = end + 1 - len(v), end + 1
        span = (s, e, values[v])
        if span in have:
            continue  # (most values have no other copy: they are never judged)
        ok = judged.get(v)
        if ok is None:
            ok = judged[v] = _propagates(v)
        if not ok:
            continue
        glued = len(v) >= _GLUED_MIN and not v.isalpha() and _HAS_DIGIT.search(v) is not None
        if glued or _bounded(text, s, e):
            have.add(span)
            out.append(span)
    return out


_FIND_BUDGET = 1 << 16  # characters times values under which each value is looked for with str.find


def _copies(text: str, values: dict):
    """(index of the last character, value) of every occurrence of every value, overlapping too."""
    if len(text) * len(values) <= _FIND_BUDGET:
        for v in values:
            i = text.find(v)
            while i >= 0:
                yield i + len(v) - 1, v
                i = text.find(v, i + 1)
        return
    import ahocorasick  # (C, linear time; imported only by a text that has a secret worth searching)

    automaton = ahocorasick.Automaton()
    for v in values:
        automaton.add_word(v, v)
    automaton.make_automaton()
    yield from automaton.iter(text)


# ---- a way out of a false positive ---------------------------------------------------------------
ALLOW_MARKER = "secondbrain:allow"
# kinds found by labels, context and prose rather than by a vendor's or a structure's shape. An
# allow *pattern* may release only these: a vendor-shaped key, a private key or a structural token
# is redacted whatever the patterns say; only the inline marker, written on the very line, keeps
# one (and it is counted as "allowed"). Where spans overlap, a shape's name wins over these.
_RULE_KINDS = frozenset(("secret", "password", "api_token", "k8s_secret", "cli_password",
                         "connection_string", "url_credentials", "session_cookie", "bearer_token",
                         "basic_auth", "email", "seed_phrase", "recovery_code", "pin"))


def load_allow_patterns(path: str) -> list[re.Pattern]:
    """Compile an allow file: one regular expression a line; blank lines and '#' lines are skipped.

    A value the rules would redact stays when one of the patterns matches inside it (and is
    counted as "allowed"). Raises ValueError naming the file and line of a bad expression.
    """
    patterns = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            src = line.rstrip("\r\n")
            if not src.strip() or src.lstrip().startswith("#"):
                continue
            try:
                patterns.append(re.compile(src))
            except re.error as e:
                raise ValueError(f"{path}:{lineno}: bad allow pattern {src!r}: {e}") from None
    return patterns


def _allowed(text: str, s: int, e: int, kind: str, allow) -> bool:
    """Is the value at [s, e) released by the line's marker or by an allow pattern?"""
    bol = text.rfind("\n", 0, s) + 1
    eol = text.find("\n", s)
    if ALLOW_MARKER in text[bol:eol if eol >= 0 else len(text)]:
        return True
    if allow and kind in _RULE_KINDS:
        v = text[s:e]
        return any(p.search(v) for p in allow)
    return False


def _release(text: str, items: list, allow, counts) -> list:
    """Drop the allowed spans, counting each under "allowed" so nothing is let through silently."""
    if not allow and ALLOW_MARKER not in text:
        return items
    kept = []
    for s, e, k in items:
        if _allowed(text, s, e, k, allow):
            if counts is not None:
                counts["allowed"] += 1
        else:
            kept.append((s, e, k))
    return kept


def spans(text: str, *, strip_emails: bool = False, allow: Sequence[re.Pattern] | None = None,
          counts: Counter | None = None) -> list[tuple[int, int, str]]:
    """What scrubbing `text` replaces: sorted, non-overlapping (start, end, kind) spans, with
    released values counted under "allowed" in `counts`. (`scrub.document` cuts one set of
    spans, found over a whole document, back into the document's parts.)"""
    if not isinstance(text, str) or not text:
        return []
    items, found = _found(text, strip_emails)
    if not items:
        return []
    items = _wrapped(text, _with_copies(text, items, found))
    return _release(text, _merge(items) if len(items) > 1 else items, allow, counts)


def _with_copies(text: str, items: list, found: _Spans) -> list:
    """The spans and every copy of their values (`_everywhere`, then `_run_on`); and what the
    copies change, read as the next pass reads them as markers: a label glued after a copy
    ("…2026!xκλειδί_api: …") and a token whose context let it stand ("…2026!xcommit 9fceb…",
    where "commit" went with the copy) are read again, and the copies of what that finds
    added."""
    out = _run_on(text, _everywhere(text, items))
    if out == items:
        return out
    have = set(items)
    found.items = list(out)
    low = found.low
    glued = _glued_labels(text, [it for it in out if it not in have], found.stems)
    if glued:
        labels._keywords(text, low, found, [], glued)
    if found.declined:
        tokens.rejudge(text, low, found)
    if len(found.items) > len(out):
        out = _run_on(text, _everywhere(text, found.items))
    return out


_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_RUN_ON = lazy(r"[A-Za-z0-9+/=_\-]+(?:[.~][A-Za-z0-9+/=_\-]+)*")


def _run_on(text: str, items: list) -> list:
    """A redaction that stops inside a run of token characters goes on to the run's end: a
    rule that read a value to a cap, or to a "=" ("…]=whvswm=f93nhbhw", "…]AfFcSJAAAADUlE…"),
    cut the same token, and what it could not read must not be kept. Fail closed; the second
    scrub of the result then finds nothing more, as a first one must."""
    out = []
    for s, e, k in items:
        if 0 < e < len(text) and text[e] in _RUN and text[e - 1] in _RUN and (text[e] == "=" or text[e - 1] != "="):
            e = _RUN_ON.match(text, e).end()
        out.append((s, e, k))
    return out


# the rest of a token a line break cut: at the start of the next line, a run of token characters
# that ends its line or a word, with a digit in it or both cases
_WRAPPED = lazy(r"\r?\n([A-Za-z0-9+/_\-]{4,}={0,2})(?=[ \t]*(?:\r?\n|$)|[ \t]+[^\s:=])")
# ... and its head, at the end of the line before (a quoted-printable soft break '=' after it)
_WRAPPED_HEAD = lazy(r"(?<![^\s:=\"'`(])([A-Za-z0-9+/_\-]{4,})=?[ \t]*\r?$")
_WRAP_MIN = 16  # the shortest value read as a token a line break may have cut ...
_WRAP_WIDTH = 60  # ... unless its line is as long as the lines a mail or a terminal wraps


def _wrapped(text: str, items: list) -> list:
    """A token hard-wrapped at the end of a line (a mail's 76 columns, a terminal's width, a
    quoted-printable soft break '=') goes on at the start of the next: that run is redacted too
    (fail closed: the part a rule could not read must not be kept). Only after a value that ran
    to the line's end, of 16 characters or more, and only a run that holds a digit
    or both cases and is no key of its own ('DB_HOST=…', 'Note: …'). A shorter value counts when
    its line is as long as wrapped lines are: a token that began near the line's end
    ('… facturación: sk_live_2o3kt' / 'MgYKCIKXqNsmvukXxVP'). The other way round, a value found
    at the start of a line ('R7vT4pN8…', found by its context) takes the head a wrapped line
    before it ends with ('… as promised: ghp_Zk3q9LmW2x')."""
    more = []
    for s, e, k in items:
        bol = text.rfind("\n", 0, s) + 1
        if text[e:e + 1] in ("\n", "\r") and (e - s >= _WRAP_MIN or e - bol > _WRAP_WIDTH):
            m = _WRAPPED.match(text, e)
            if m is not None and _randomish(m.group(1)):
                more.append((m.start(1), m.end(1), k))
        if bol == s and s > 0:  # the value opens its line: the line before may end with its head
            prev = text.rfind("\n", 0, s - 1) + 1
            m = _WRAPPED_HEAD.search(text, prev, s - 1)
            if m is not None and s - 1 - prev > _WRAP_WIDTH and _randomish(m.group(1)):
                more.append((m.start(1), m.end(1), k))
    return items + more if more else items  # (the spans it adds come last: explain names them)


def _randomish(run: str) -> bool:
    """A run a token's piece may be: a digit in it, or both cases in 8 characters or more."""
    return any(c.isdigit() for c in run) or (len(run) >= 8 and run.lower() != run and run.upper() != run)


# control characters but the blanks (tab, line feed, vertical tab, form feed, carriage return)
# and NEL, C1 controls, and lone UTF-16 surrogates
_UNSTORABLE = lazy("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` with each character that must not be stored or shown replaced by U+FFFD, one
    character for one (so every span found in it still fits). A lone UTF-16 surrogate (a
    notebook's "\\ud800", a PDF's broken ToUnicode map) cannot be written as UTF-8: the brain
    would refuse the write of every file in its batch. A control character (ESC, BEL, NUL) in a
    mail, a web page or a file's name would reach the terminal that shows a hit, where
    "ESC ] 52" writes the clipboard and "ESC [ 2J" clears the screen. Scrubbing is the gate all
    stored and printed text passes, so it is made here."""
    return text if _UNSTORABLE.search(text) is None else _UNSTORABLE.sub("\ufffd", text)


def _redact(text: str, strip_emails: bool, allow, counts) -> str:
    text = storable(text)
    items = spans(text, strip_emails=strip_emails, allow=allow, counts=counts)
    return apply(text, items, counts) if items else text


class Redaction(NamedTuple):
    start: int
    end: int
    kind: str
    rules: tuple[str, ...]  # the rules that found it ("propagated": a copy of a value found elsewhere,
    # "allowed": kept in clear by the allow marker or an allow pattern)


class Release(NamedTuple):
    start: int
    end: int
    found_by: str  # the label whose value it is, or the rule that found it
    filter: str  # what let it go (a filter of filters.py, or a reading of the pair in labels.py)


def explain(text: str, *, strip_emails: bool = False,
            allow: Sequence[re.Pattern] | None = None) -> tuple[list[Redaction], list[Release]]:
    """Why scrubbing `text` gives what it gives: each redaction with the rules that found it, and
    each value a rule found and let go with the filter's name. Positions only, never values: the
    answer may be printed. (The same rules as `spans`, run with their trace kept.)"""
    if not isinstance(text, str) or not text:
        return [], []
    items, found = _found(text, strip_emails, explain=True)
    released = sorted(Release(*r) for r in found.released)
    if not items:
        return [], released
    items = _with_copies(text, items, found)
    wrapped = _wrapped(text, items)
    found.trace += [(s, e, k, "line-wrap") for s, e, k in wrapped[len(items):]]
    merged = _merge(wrapped) if len(wrapped) > 1 else wrapped
    kept = set(_release(text, merged, allow, None))
    trace = sorted(found.trace)
    out = []
    j, active = 0, []  # the trace entries that may still overlap a span (spans come in order)
    for s, e, kind in merged:
        while j < len(trace) and trace[j][0] < e:
            active.append(trace[j])
            j += 1
        active = [t for t in active if t[1] > s]
        rules = sorted({r for ts, te, _, r in active if ts < e}) or ["propagated"]
        if (s, e, kind) not in kept:
            rules = ["allowed"]
        out.append(Redaction(s, e, kind, tuple(rules)))
    return out, released



def _merge(items: list) -> list:
    """Sorted, non-overlapping spans; where rules overlap, the vendor's name wins over "secret"."""
    items = sorted(items)
    merged = []
    cur_s, cur_e, cur_k = items[0]
    for s, e, k in items[1:]:
        if s <= cur_e:
            if e > cur_e:
                cur_e = e
            if cur_k in _RULE_KINDS and k not in _RULE_KINDS:
                cur_k = k
        else:
            merged.append((cur_s, cur_e, cur_k))
            cur_s, cur_e, cur_k = s, e, k
    merged.append((cur_s, cur_e, cur_k))
    return merged


def _marker(kind: str, value: str) -> str:
    """The marker of a redacted value: "[REDACTED:<kind>]", unless it would repeat 8 characters of
    the value it hides ("thisismypassword" as [REDACTED:password], "rubygems_…" as
    [REDACTED:rubygems_token]): then "[REDACTED:secret]". A marker says what kind of secret went,
    never a piece of it."""
    marker = "[REDACTED:" + kind + "]"
    if len(value) >= 8 and any(marker[i:i + 8] in value for i in range(len(marker) - 7)):
        return "[REDACTED:secret]"
    return marker


def apply(text: str, merged: list, counts: Counter | None = None) -> str:
    """Replace each span with its marker, counting the kinds in `counts`."""
    out = []
    last = 0
    for s, e, k in merged:
        out.append(text[last:s])
        marker = _marker(k, text[s:e])
        out.append(marker)
        last = e
        if counts is not None:
            counts[marker[10:-1]] += 1
    out.append(text[last:])
    return "".join(out)


def scrub_report(text: str, *, strip_emails: bool = False,
                 allow: Sequence[re.Pattern] | None = None) -> tuple[str, Counter]:
    """Return the scrubbed text and a Counter of redacted kinds (never the values).

    ``allow``: compiled patterns (see ``load_allow_patterns``); values they release, and values on
    a line marked ``secondbrain:allow``, stay in clear and are counted under "allowed".
    """
    counts: Counter = Counter()
    return _redact(text, strip_emails, allow, counts), counts


def scrub(text: str, *, strip_emails: bool = False, allow: Sequence[re.Pattern] | None = None) -> str:
    """Redact every secret the rules know; idempotent, never raises on any str."""
    return _redact(text, strip_emails, allow, None)
