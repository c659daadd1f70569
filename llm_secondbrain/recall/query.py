"""Query analysis: what the query is (a question, a claim, prose, keywords with code) and which
of its spans are code-like or identifiers, read from its text alone; no SQL here."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..cjk import RUN as _CJK_RUN

CLAIM_MIN_WORDS = 4
NATURAL_MIN_WORDS = 6
NATURAL_SHARE = 0.25
MAX_QUERY_TERMS = 64
MAX_CODE_GROUPS = 8  # groups a spaced identifier may have (IBANs have up to 8)
MAX_CODE_SPANS = 8

_WORD = re.compile(r"\w+", re.UNICODE)
# A token people type as one identifier: letters/digits joined by / - . _ : #
_TOKEN = re.compile(r"[^\W_]+(?:[/\-._:#][^\W_]+)*", re.UNICODE)
_SEP = re.compile(r"[/\-._:#]")

# Function words: English, plus the few Norwegian ones people type in questions. Only dropped
# from the lexical query when something else is left.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other ought our ours
ourselves out over own same she should so some such than that the their theirs them themselves
then there these they this those through to too under until up very was we were what when
where which while who whom whose why will with would you your yours yourself yourselves
s t d ll m re ve don doesn didn isn aren wasn weren won wouldn shouldn couldn can't let
hva hvem hvor hvorfor hvordan hvilken hvilke hvilket når er var har det den de og i på til
som med av for om jeg vi du meg oss min mitt mine vår vårt våre
""".split())
def words(text: str) -> list[str]:
    """The words of `text` as the index has them: runs of letters and digits, with every
    Chinese, Japanese or Korean character a word of its own (cjk.py)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        if _CJK_RUN.search(word):
            out += [piece for part in re.split(f"({_CJK_RUN.pattern})", word) if part
                    for piece in (list(part) if _CJK_RUN.fullmatch(part) else [part])]
        else:
            out.append(word)
    return out


QUESTION_OPENERS = frozenset("""
what when where who whom whose which why how is are was were do does did can could should
would will shall has have had may might must am isn aren wasn weren don doesn didn can't
hva hvem hvor hvorfor hvordan hvilken hvilke hvilket når
""".split())



def quoted(term: str) -> str:
    """`term` as one FTS5 string: no operator, column name or stray quote in it can reach
    FTS5's query parser."""
    return '"' + term.replace('"', '""') + '"'


def content_terms(query: str) -> list[str]:
    """The query's content words (`content_words`), lower-cased, each once, at most
    MAX_QUERY_TERMS: the words the relevance floor weighs."""
    terms = dict.fromkeys(w.lower() for w in words(content_words(query)) if w.strip("_"))
    return list(terms)[:MAX_QUERY_TERMS]


def fts_query(query: str) -> str | None:
    """Every word quoted and OR-joined: no operator, column name or stray quote in the user's
    text can reach FTS5's query parser."""
    seen, terms = set(), []
    for word in words(query):
        word = word.strip("_")
        key = word.lower()
        if not word or key in seen:
            continue
        seen.add(key)
        terms.append(quoted(word))
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return " OR ".join(terms) if terms else None


def content_words(query: str) -> str:
    """The query without function words, for the lexical lane; the query itself when nothing
    else is left ("to be or not to be" still finds Hamlet). Words inside a code-like span keep
    their place (`autocomplete="off"`, `--dry-run`): there a function word is the token. A
    compound written as prose (`catch-all`) keeps one only inside its phrase."""
    code = {w.lower() for span in code_spans(query) if not _prose_compound(span, query)
            for w in words(span)}
    found = [w for w in words(query) if w.strip("_")]
    kept = [w for w in found if w.lower() not in STOPWORDS or w.lower() in code]
    return " ".join(kept) if kept else query



def names(query: str) -> list[str]:
    """The words the query writes as names, as the word index reads them: with a capital past
    their first letter (GraphQL, CUDA, gRPC), capitalised anywhere but at the start of a
    sentence (Kubernetes, Redis; in a query with CJK text, where sentences have no capitals,
    anywhere), or inside a code span (`kubectl rollout`). Function words are not names."""
    spans = {w.lower() for span in code_spans(query) if not _prose_compound(span, query)
             for w in words(span)}
    cjk = bool(_CJK_RUN.search(query))
    out = []
    for m in _WORD.finditer(query):
        for word in words(m.group()):
            if len(word) < 2 or _CJK_RUN.match(word) or word.isdigit() or word.lower() in STOPWORDS:
                continue
            opens = not query[:m.start()].strip() or query[:m.start()].rstrip()[-1] in ".!?。！？"
            if (any(ch.isupper() for ch in word[1:]) or word.lower() in spans
                    or (word[0].isupper() and (cjk or not opens))):
                out.append(word)
    return list(dict.fromkeys(out))


def is_question(query: str) -> bool:
    """A natural-language question: ends with '?' or opens with a question word or auxiliary
    ("what did we decide", "how do I", "is the VPN down")."""
    text = query.strip()
    if not text:
        return False
    if text.endswith(("?", "？")):
        return True
    words = _WORD.findall(text.lower())
    return len(words) >= 3 and words[0] in QUESTION_OPENERS


def is_claim(query: str) -> bool:
    """A statement written as a sentence: it ends with a full stop, is not a question and has
    at least CLAIM_MIN_WORDS words ("ATF4 is a general endoplasmic reticulum stress marker.").
    People searching type keywords or questions without one; a full stop says the query is a
    proposition to be checked against the notes, every word of it part of the meaning."""
    text = query.strip()
    return (text.endswith(".") and not text.endswith("..") and not is_question(text)
            and len(_WORD.findall(text)) >= CLAIM_MIN_WORDS)


def is_natural(query: str) -> bool:
    """A sentence rather than keywords: a question, or prose whose function words make up at
    least NATURAL_SHARE of its words (prose runs at 40-50%, keyword queries near 0), such as
    requests ("show me how to ...", "turn X into Y"). Code spans do not count as words."""
    if is_question(query):
        return True
    words = _WORD.findall(_BACKTICKS.sub(" ", query).lower())
    function = sum(w in STOPWORDS for w in words)
    return len(words) >= NATURAL_MIN_WORDS and function >= NATURAL_SHARE * len(words)


@dataclass(frozen=True)
class Evidence:
    """What the query is, as far as fusion cares (FUSION_RULES names these flags)."""

    question: bool  # a question (is_question)
    claim: bool  # a statement ending with a full stop (is_claim)
    natural: bool  # a question or a request in words (is_natural)
    code: bool  # code (code_spans, a bare name aside) or a token the brain holds rarely

    @classmethod
    def of(cls, query: str, token: bool = False) -> "Evidence":
        code = token or any(not _bare_name(span, query) and not _prose_compound(span, query)
                            for span in code_spans(query))
        return cls(question=is_question(query), claim=is_claim(query), natural=is_natural(query),
                   code=code)

    def holds(self, flags: tuple[str, ...]) -> bool:
        return all(getattr(self, f.lstrip("!")) != f.startswith("!") for f in flags)



def _is_identifier(token: str) -> bool:
    if len(token) < 3:
        return False
    has_digit = any(ch.isdigit() for ch in token)
    has_alpha = any(ch.isalpha() for ch in token)
    if has_digit:
        return has_alpha or bool(_SEP.search(token))
    # snake_case and SCREAMING_CASE names (ERR_SSL_PROTOCOL_ERROR, max_chars) and a word in
    # capitals people type as a name (ENOENT, SIGTERM, PYTHONPATH): the literal lane promotes
    # it only where few notes hold it, so HTTP or JSON stays a word
    return ("_" in token.strip("_") and len(token) >= 5) or (
        len(token) >= 4 and token.isalpha() and token.isupper())


def _code_letters(token: str) -> bool:
    """A short all-capitals group people type beside a number: OPS 1234, SK 4035, ... NO."""
    return 2 <= len(token) <= 4 and token.isalpha() and token.isupper()


def identifiers(query: str) -> list[str]:
    """Identifier-like tokens of the query, longest first. Spaced groups are joined when they
    read as one code: digit groups after a token with digits (`NO93 8601 1117 947` ->
    `NO9386011117947`), and capital-letter groups with digit groups (`OPS 1234` -> `OPS1234`,
    `LA 482 913 605 NO` -> `LA482913605NO`)."""
    tokens = _TOKEN.findall(query)
    found: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        j = i + 1
        if not _SEP.search(tok) and (any(ch.isdigit() for ch in tok) or _code_letters(tok)):
            # a spaced code has a few groups: bounding the run keeps this linear in the query
            while j < len(tokens) and j - i < MAX_CODE_GROUPS and (
                    (tokens[j].isdigit() and len(tokens[j]) <= 6) or _code_letters(tokens[j])):
                j += 1
            # letter groups at the end belong only after digits (`... 605 NO`, not `OPS AB`)
            while j > i + 1 and not tokens[j - 1].isdigit() and not any(
                    ch.isdigit() for ch in "".join(tokens[i:j - 1])):
                j -= 1
        joined = "".join(tokens[i:j])
        digits = sum(ch.isdigit() for ch in joined)
        if j - i > 1 and _is_identifier(joined) and digits >= 3:
            found.append(joined)
            i = j
            continue
        if _is_identifier(tok):
            found.append(tok)
        i += 1
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=len, reverse=True)[:8]


# --- code-like spans ---------------------------------------------------------------------------

_BACKTICKS = re.compile(r"`([^`\n]+)`")
_QUOTED_PHRASE = re.compile(r"(?<![\w=])([\"'])([^\"'\n]*\s[^\"'\n]*)\1(?!\w)")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_CODE_CHARS = re.compile(r"[\w][=.:/\\_$()\[\]{}<>@~*+!|&^%#-]+[\w\"'(\[{<]|^-{1,2}\w|^[:\\$.@#~'\"]\S|[\"=]|\w'$")
_HYPHENATED = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_TRAIL = re.compile(r"(?:'s|[?!,;.:]+)$")


def _code_like(token: str) -> bool:
    """A token people type as code rather than prose: punctuation inside a word (`Model.objects`,
    `sslmode=require`, `look-ahead`, `__bool__`), a flag (`--no-cli-pager`), a quoted value
    (`step="any"`), camelCase (`getUserById`), or letters mixed with digits."""
    if sum(ch.isalnum() for ch in token) < 1 or len(token) < 2:
        return False
    if _CAMEL.search(token) or _CODE_CHARS.search(token):
        return True
    return any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)


def _bare_name(span: str, query: str) -> bool:
    """A word with capitals inside, written as prose (GitHub, PostgreSQL, PyYAML, iOS; not in
    backticks): code-like by shape, but in a sentence it names a product, and unless the brain
    holds it rarely (then the literal lane finds it) it says nothing about code."""
    return span.isalpha() and f"`{span}`" not in query and span != span.lower()


def _prose_compound(span: str, query: str) -> bool:
    """A hyphenated compound of words written as prose (`thirteen-letter`, `catch-all`, not in
    backticks): code-like by shape, but people also write it with a space or run it apart."""
    return bool(_HYPHENATED.fullmatch(span)) and f"`{span}`" not in query


def _phrase_needed(span: str, query: str) -> bool:
    """Is the span matched as one phrase? Code always is; a prose compound only when it holds a
    function word (`merge-with`, `built-in`), which the word list would drop. A compound of
    content words is its words: the tokenizer splits it anyway, and a note that says "the
    letter, thirteen places on" should still count (jbranchaud-til lexical semantic 0.714 ->
    0.719, SciFact train 0.690 -> 0.695)."""
    return not _prose_compound(span, query) or any(w.lower() in STOPWORDS for w in _WORD.findall(span))


def code_spans(query: str) -> list[str]:
    """The code-like spans of the query, kept whole: backticked and quoted phrases as written,
    then each other code-like word (sentence punctuation and a possessive 's trimmed)."""
    spans = [m.group(1).strip() for m in _BACKTICKS.finditer(query)]
    rest = _BACKTICKS.sub(" ", query)
    spans += [m.group(2).strip() for m in _QUOTED_PHRASE.finditer(rest)]
    rest = _QUOTED_PHRASE.sub(" ", rest)
    for token in rest.split():
        token = _TRAIL.sub("", token) if not token.startswith(":") or len(token) > 2 else token
        token = token.strip("(),") if token.count("(") != token.count(")") else token
        if _code_like(token):
            spans.append(token)
    spans = [sp for sp in spans if any(ch.isalnum() for ch in sp)]
    return list(dict.fromkeys(spans))[:MAX_CODE_SPANS]


def code_pattern(span: str) -> re.Pattern[str]:
    """Matches the span as written, not inside a longer word; any run of spaces may be any
    whitespace and `=` or `:` may have spaces around them."""
    parts = []
    for piece in re.split(r"(\s+|\s*[=:]\s*)", span):
        if not piece:
            continue
        if piece.isspace():
            parts.append(r"\s+")
        elif piece.strip() in ("=", ":") and piece != piece.strip():
            parts.append(r"\s*" + re.escape(piece.strip()) + r"\s*")
        else:
            parts.append(re.escape(piece))
    body = "".join(parts)
    # a word ends where a word character does not follow; CJK text has no such ends (cjk.py)
    head = r"(?<![\w])" if _word_edge(span[0]) else ""
    tail = r"(?![\w])" if _word_edge(span[-1]) else ""
    # smart case, as in vim and ripgrep: a capital letter means the case matters (-N is not -n)
    return re.compile(head + body + tail, 0 if any(ch.isupper() for ch in span) else re.I)


def _word_edge(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not _CJK_RUN.match(ch)


def _phrase_fts(span: str) -> str | None:
    """The span's words as one FTS5 phrase, stopwords kept (`rel="noopener"` -> "rel noopener")."""
    parts = [w for w in words(span) for w in w.split("_") if w]
    return quoted(" ".join(parts)) if parts else None


_SEP_CLASS = r"[\s/\-._:#]"


def literal_pattern(identifier: str) -> re.Pattern[str]:
    """Matches the identifier case-insensitively however people space or punctuate it, but not
    inside a longer identifier: whitespace may appear between any two characters (IBANs,
    account numbers), a separator of the query may be any one separator or a space
    (`OPS-1234` finds `OPS 1234`), and a letter-digit boundary may gain a space or a hyphen
    (`EL48213` finds `EL 48213`, `OPS1234` finds `OPS-1234`)."""
    parts: list[str] = []
    prev = ""
    for ch in identifier:
        if _SEP.fullmatch(ch):
            parts.append(_SEP_CLASS)
            prev = ""
            continue
        if prev:
            boundary = prev.isdigit() != ch.isdigit() and prev.isalnum() and ch.isalnum()
            parts.append(r"[\s\-]?" if boundary else r"\s?")
        parts.append(re.escape(ch))
        prev = ch
    return re.compile(rf"(?<![^\W_]){''.join(parts)}(?![^\W_])", re.I)


def _literal_fts(identifier: str) -> str:
    """A cheap FTS pre-filter for chunks that may hold the identifier: its words as a phrase,
    the words run together, its letter and digit runs as a phrase (`EL 48213`), and the first
    four characters as a prefix (for a compact identifier the chunk may have spaced)."""
    words = [w for w in _WORD.findall(identifier) if w.strip("_")]
    words = [p for w in words for p in w.split("_") if p]
    phrases = [" ".join(words)]
    compact = "".join(words)
    if len(words) > 1:
        phrases.append(compact)
    runs = re.findall(r"\d+|[^\W\d_]+", compact)
    if len(runs) > 1:
        phrases.append(" ".join(runs))
    parts = ['"' + p + '"' for p in dict.fromkeys(phrases)]
    if len(compact) >= 8 and len(words) == 1:
        parts.append('"' + compact[:4] + '"*')
    return " OR ".join(parts)



def literal_terms(query: str) -> list[tuple[str, re.Pattern[str], str]]:
    """(term, pattern, FTS pre-filter) for each identifier (however spaced) and each other
    code-like span of the query (as written)."""
    terms = [(i, literal_pattern(i), _literal_fts(i)) for i in identifiers(query)]
    compact = [re.sub(r"\s", "", t).lower() for t, _, _ in terms]
    for span in code_spans(query):
        prefilter = _phrase_fts(span)
        if _prose_compound(span, query):
            continue  # built-in, auto-starting: prose, left to the lexical lane
        if prefilter and not any(re.sub(r"\s", "", span).lower() in c for c in compact):
            terms.append((span, code_pattern(span), prefilter))
    return terms
