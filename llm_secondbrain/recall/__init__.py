"""Dense, lexical and hybrid retrieval over the brain; reciprocal-rank fusion; query sanitising.

Three lanes feed one ranking:
- dense: KNN over vec_chunks with the query's embedding (meaning);
- lexical: FTS5 BM25 over a sanitised MATCH string (words);
- literal: chunks that contain an identifier from the query verbatim (INV/2026/00037, an IBAN
  however it is spaced). These rank first: near misses share most of their words and much of
  their meaning with the exact one, so neither of the other lanes can separate them reliably.
Hybrid fuses dense and lexical scores after putting each lane on a common scale (z-scores over
the lane's top `pool`, shifted so a chunk the lane did not find contributes 0); weighted RRF is
kept as an option (`fusion="rrf"`). Fusion is per document (file, or file and ref): a
document's best chunk carries its best score from each lane, so a title in one chunk and the
answer in the next add up. Literal hits are ordered among themselves by that fused score, so the
one that also answers the rest of the question comes first; an identifier-like token that more
than LITERAL_MAX_FILES files hold (p53, CD4) is a term, not an identifier, and is not promoted.

How much the lexical lane counts depends on the query (`adaptive_weights`):
- a natural-language question ("what did we decide about invoicing?") is matched by the words it
  shares with other questions and with notes on the same subject rather than with its answer,
  which rarely repeats the question's words; the embedding model was trained on exactly such
  question -> answer pairs. For a question the lexical lane only breaks near-ties in dense
  (weight `QUESTION_LEXICAL_WEIGHT`);
- a claim, a sentence that states something and ends with a full stop ("Cdk5 regulates
  neuronal death."), fuses both lanes with equal weight and, where the lexical lane weighs its
  words, promotes no literal token (with `--mode dense` alone it still does): every
  word of it is evidence, and the gene or compound it names is a term the claim is about, held
  by the abstracts that disagree with it as much as by the one that answers it (SciFact train:
  0.731 -> 0.743 nDCG@10 over the rules below; a claim with a code-like term used to take
  the code rule's weight 3.0, and its rare terms' holders went first);
- anything else (keywords, a title, a phrase) fuses both lanes with equal weight, more for
  keywords with code: there a shared rare word is real evidence.
Function words are dropped from the lexical query (`content_words`): in a small personal brain
"what", "did" and "about" are rare enough to outscore the words that matter.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..options import DEFAULT_POOL, RecallOptions
from ..segment import title

DEFAULT_WEIGHTS = {"dense": 1.0, "lexical": 1.0}
CLAIM_LEXICAL_WEIGHT = 1.0  # a stated claim (SciFact train: 0.6/1.0/1.5 -> 0.740/0.743/0.738)
CLAIM_MIN_WORDS = 4
QUESTION_LEXICAL_WEIGHT = 0.05  # natural language: lexical only breaks near-ties among dense's hits
PROSE_LEXICAL_WEIGHT = 0.6  # other prose (jbranchaud-til: 0.3/0.6/1.0 -> semantic 0.916/0.934/0.923)
CODE_LEXICAL_WEIGHT = 3.0  # keywords with code, which MiniLM barely reads (til exact: 1/2/3 -> 0.958/0.960/0.967)
NATURAL_MIN_WORDS = 6
NATURAL_SHARE = 0.25
MAX_QUERY_TERMS = 64
LEXICAL_BUDGET = 10_000  # postings one lexical query may score (bounded_words)
MAX_CODE_GROUPS = 8  # groups a spaced identifier may have (IBANs have up to 8)
MAX_CODE_SPANS = 8
LITERAL_POOL = 1000
# An identifier names one thing, so a handful of files hold it (the invoice, the dispute, the
# payment). A token that more files hold is a term of the subject (p53, CD4, IL-10): it is left
# to the other lanes, which weigh it like any rare word. Near misses do not count: they do not
# contain the identifier. (SciFact train: promoting such terms cost 0.008 nDCG@10.)
LITERAL_MAX_FILES = 5
LITERAL_BONUS = 1.0  # literal hits score this much above the best other score
# all-MiniLM-L6-v2: the best cosine below which no hit is about the query (chosen on a negative
# set: SciFact queries against personal notes and the reverse; see bench/bench_til.py)
DENSE_FLOOR = 0.30
STEM_CHARS = 5  # snippet: words match on their first letters (rebase, rebasing)
SNIPPET_CHARS = 200
SCALES = {
    "hybrid": "weighted sum of each lane's z-score over its pool (0 = the pool's last); "
              "a literal hit adds a bonus above every other score",
    "rrf": "weighted reciprocal rank fusion: sum of w / (rrf_k + rank)",
    "dense": "cosine similarity to the query (-1..1)",
    "lexical": "BM25, negated (higher is better)",
}

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
QUESTION_OPENERS = frozenset("""
what when where who whom whose which why how is are was were do does did can could should
would will shall has have had may might must am isn aren wasn weren don doesn didn can't
hva hvem hvor hvorfor hvordan hvilken hvilke hvilket når
""".split())


@dataclass
class Filters:
    project: str | None = None
    source: str | None = None
    path: str | None = None  # a glob, matched against the stored absolute path
    since: str | None = None  # ISO date or datetime, compared with the chunk's ts
    until: str | None = None
    format: str | None = None  # the reader a source was read with (files.format)
    exclude_source: str | None = None
    role: str | None = None  # user / assistant: who wrote a conversation chunk

    def sql(self, alias: str = "c") -> tuple[str, list]:
        clauses, params = [], []
        if self.project is not None:
            clauses.append(f"{alias}.project = ?")
            params.append(self.project)
        if self.source is not None:
            clauses.append(f"{alias}.source = ?")
            params.append(self.source)
        if self.exclude_source is not None:
            clauses.append(f"{alias}.source IS NOT ?")
            params.append(self.exclude_source)
        if self.role is not None:
            clauses.append(f"{alias}.role = ?")
            params.append(self.role)
        if self.path:
            pattern = self.path if self.path.startswith(("/", "*")) else "*" + self.path
            clauses.append(f"{alias}.path GLOB ?")
            params.append(pattern)
        if self.since:
            clauses.append(f"coalesce({alias}.ts, {alias}.created) >= ?")
            params.append(self.since)
        if self.until:
            # already the end of its day when a date was given (dates.parse, end=True)
            clauses.append(f"coalesce({alias}.ts, {alias}.created) < ?")
            params.append(self.until)
        if self.format:
            clauses.append(f"{alias}.path IN (SELECT path FROM files WHERE format = ?)")
            params.append(self.format)
        return " AND ".join(clauses), params

    def __bool__(self) -> bool:
        return bool(self.sql()[0])

    @classmethod
    def of(cls, options: RecallOptions) -> "Filters":
        """The filtering fields of the options (each Filters field is a RecallOptions field)."""
        return cls(**{f.name: getattr(options, f.name) for f in dataclasses.fields(cls)})


@dataclass
class Hit:
    id: int
    text: str
    path: str | None
    line: int | None
    line_end: int | None
    project: str | None
    source: str | None
    ts: str | None
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)
    meta: dict | None = None  # what the format knows: page, chapter, message id, heading
    snippet: str = ""  # the part of the chunk that matched: the literal token's line, or the best line
    match_line: int | None = None  # the line of the file that snippet is on

    @property
    def citation(self) -> str:
        """The one form every face cites a hit by: `path:line` of the matching line, inside
        its page (`path#page=N:line`), its chapter (`path#chapter-N`) or its message
        (`path#<message id>`) where the format has them."""
        meta = self.meta or {}
        line = self.match_line or self.line
        at = f":{line}" if line else ""
        if "page" in meta:
            return f"{self.path}#page={meta['page']}{at}"
        if "chapter" in meta:
            return f"{self.path}#chapter-{meta['chapter']}"
        if "message_id" in meta:
            return f"{self.path}#{meta['message_id']}"
        return f"{self.path}{at}" if at else str(self.path)

    def as_dict(self) -> dict:
        return {
            "id": self.id, "path": self.path, "line": self.line, "line_end": self.line_end,
            "match_line": self.match_line, "citation": self.citation, "project": self.project,
            "source": self.source, "ts": self.ts, "score": self.score, "ranks": self.ranks,
            "contributions": self.contributions, "meta": self.meta, "snippet": self.snippet,
            "text": self.text,
        }


@dataclass
class RecallResult:
    hits: list[Hit]
    mode: str  # the mode actually used, after any degradation
    notes: list[str] = field(default_factory=list)  # one-line reasons for degrading
    weights: dict[str, float] = field(default_factory=dict)  # hybrid: the lane weights used
    fusion: str | None = None  # hybrid: "zscore" or "rrf"
    why: str | None = None  # hybrid: why these weights (the fusion rule that applied)
    relevant: bool = True  # False: no hit clears the relevance floor ("nothing matches")
    scale: str = ""  # what the scores are: SCALES[...]
    stale: set[int] = field(default_factory=set)  # hits whose file changed since it was ingested


# --- query analysis ----------------------------------------------------------------------------


def fts_query(query: str) -> str | None:
    """Every word quoted and OR-joined: no operator, column name or stray quote in the user's
    text can reach FTS5's query parser."""
    seen, terms = set(), []
    for word in _WORD.findall(query):
        word = word.strip("_")
        key = word.lower()
        if not word or key in seen:
            continue
        seen.add(key)
        terms.append('"' + word.replace('"', '""') + '"')
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return " OR ".join(terms) if terms else None


def content_words(query: str) -> str:
    """The query without function words, for the lexical lane; the query itself when nothing
    else is left ("to be or not to be" still finds Hamlet). Words inside a code-like span keep
    their place (`autocomplete="off"`, `--dry-run`): there a function word is the token. A
    compound written as prose (`catch-all`) keeps one only inside its phrase."""
    code = {w.lower() for span in code_spans(query) if not _prose_compound(span, query)
            for w in _WORD.findall(span)}
    words = [w for w in _WORD.findall(query) if w.strip("_")]
    kept = [w for w in words if w.lower() not in STOPWORDS or w.lower() in code]
    return " ".join(kept) if kept else query


def lexical_match(conn, query: str) -> str | None:
    """The lane's FTS5 query: the content words outside code spans (rarest first within
    LEXICAL_BUDGET), OR each code span as one phrase, its stopwords kept: a note holding
    `rel="noopener"` as written scores that phrase's rarity, and the span's words are not
    counted twice (once alone, once in the phrase). A compound written as prose keeps its
    content words among the others (`_phrase_needed`)."""
    spans = code_spans(query)
    prose = _BACKTICKS.sub(" ", query)
    for span in spans:
        if not _prose_compound(span, query):
            prose = prose.replace(span, " ")
    words = fts_query(bounded_words(conn, content_words(prose))) if _WORD.search(prose) else None
    phrases = [_phrase_fts(span) for span in spans if _phrase_needed(span, query)]
    parts = [p for p in [words, *phrases] if p]
    return " OR ".join(dict.fromkeys(parts)) if parts else None


def bounded_words(conn, text: str, budget: int = LEXICAL_BUDGET) -> str:
    """The words of `text`, rarest first, while their postings add up to at most `budget`
    (the rarest word always stays). FTS5 scores every chunk that holds any query word, so in a
    big brain one very common word costs a scan of most of the index; such words carry little
    BM25 weight (idf), so leaving them out keeps the lane fast and barely moves its ranking.
    Small brains never reach the budget."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text) if w.strip("_")))
    if len(words) < 2:
        return text
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_chunks_vocab USING fts5vocab(main, 'fts_chunks', 'row')"
    )
    df = {}
    for word in words:
        row = conn.execute("SELECT doc FROM temp.fts_chunks_vocab WHERE term = ?", (word,)).fetchone()
        df[word] = row[0] if row else 0  # a stemmed form is not found: kept, at worst slower
    if sum(df.values()) <= budget:
        return text
    kept, total = [], 0
    for word in sorted(words, key=lambda w: df[w]):
        if kept and total + df[word] > budget:
            break
        kept.append(word)
        total += df[word]
    return " ".join(kept)


def is_question(query: str) -> bool:
    """A natural-language question: ends with '?' or opens with a question word or auxiliary
    ("what did we decide", "how do I", "is the VPN down")."""
    text = query.strip()
    if not text:
        return False
    if text.endswith("?"):
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
    code: bool  # it holds a code-like span (code_spans)

    @classmethod
    def of(cls, query: str) -> "Evidence":
        return cls(question=is_question(query), claim=is_claim(query), natural=is_natural(query),
                   code=bool(code_spans(query)))

    def holds(self, flags: tuple[str, ...]) -> bool:
        return all(getattr(self, f.lstrip("!")) != f.startswith("!") for f in flags)


# Hybrid's lane weights, first matching rule wins: (flags that must hold, "!flag" must not;
# weights; why, shown by --explain). Code-like tokens that few notes hold are decided before
# fusion, by the literal lane (`literal`), whatever rule applies, except in a claim.
FUSION_RULES: tuple[tuple[tuple[str, ...], dict[str, float], str], ...] = (
    (("question",), {"dense": 1.0, "lexical": QUESTION_LEXICAL_WEIGHT},
     "question: meaning leads, words break ties"),
    (("claim",), {"dense": 1.0, "lexical": CLAIM_LEXICAL_WEIGHT},
     "claim: meaning and words weigh equally, no token decides alone"),
    (("natural",), {"dense": 1.0, "lexical": PROSE_LEXICAL_WEIGHT},
     "request or statement in words: meaning leads, words count"),
    (("code",), {"dense": 1.0, "lexical": CODE_LEXICAL_WEIGHT},
     "keywords with code: words lead, meaning breaks ties"),
    ((), {"dense": 1.0, "lexical": 1.0}, "keywords: lanes weigh equally"),
)


def adaptive_weights(query: str) -> tuple[dict[str, float], str]:
    """Lane weights for `query` from FUSION_RULES, and the rule's reason (for --explain)."""
    evidence = Evidence.of(query)
    for flags, weights, why in FUSION_RULES:
        if evidence.holds(flags):
            return dict(weights), why
    return dict(DEFAULT_WEIGHTS), "default"


def _is_identifier(token: str) -> bool:
    if len(token) < 3:
        return False
    has_digit = any(ch.isdigit() for ch in token)
    has_alpha = any(ch.isalpha() for ch in token)
    if has_digit:
        return has_alpha or bool(_SEP.search(token))
    # snake_case and SCREAMING_CASE names: ERR_SSL_PROTOCOL_ERROR, max_chars
    return "_" in token.strip("_") and len(token) >= 5


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
    head = r"(?<![\w])" if span[0].isalnum() or span[0] == "_" else ""
    tail = r"(?![\w])" if span[-1].isalnum() or span[-1] == "_" else ""
    # smart case, as in vim and ripgrep: a capital letter means the case matters (-N is not -n)
    return re.compile(head + body + tail, 0 if any(ch.isupper() for ch in span) else re.I)


def _phrase_fts(span: str) -> str | None:
    """The span's words as one FTS5 phrase, stopwords kept (`rel="noopener"` -> "rel noopener")."""
    words = [w for w in _WORD.findall(span) for w in w.split("_") if w]
    return '"' + " ".join(words).replace('"', '""') + '"' if words else None


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


# --- the lanes -----------------------------------------------------------------------------


def _filtered(sql: str, filters: Filters | None, params: list) -> tuple[str, list]:
    if filters:
        where, fparams = filters.sql("c")
        return sql + " AND " + where, params + fparams
    return sql, params


def lexical(conn, query: str, pool: int, filters: Filters | None = None) -> list[tuple[int, float]]:
    """(id, bm25) of the best `pool` chunks, best first (FTS5's bm25 is negative: lower is
    better). Function words are left out of the query when anything else is left."""
    match = lexical_match(conn, query)
    if not match:
        return []
    if not filters:
        # No join: FTS5 then ranks inside the index (ORDER BY rank), many times faster on
        # common words than sorting a joined result.
        return conn.execute(
            "SELECT rowid, rank FROM fts_chunks WHERE fts_chunks MATCH ? ORDER BY rank LIMIT ?",
            (match, pool),
        ).fetchall()
    sql, params = _filtered(
        "SELECT c.id, bm25(fts_chunks) FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
        "WHERE fts_chunks MATCH ?", filters, [match],
    )
    return conn.execute(sql + " ORDER BY bm25(fts_chunks) LIMIT ?", params + [pool]).fetchall()


def dense(conn, vector: bytes, pool: int, filters: Filters | None = None,
          exact: bool = False) -> list[tuple[int, float]]:
    """KNN by L2 distance over unit vectors: (id, distance), nearest first."""
    return _dense_plan(conn, vector, pool, filters, exact)[0]()


def _dense_plan(conn, vector: bytes, pool: int, filters: Filters | None,
                exact: bool) -> tuple[Callable[[], list[tuple[int, float]]], bool]:
    """Do what dense retrieval needs from SQLite now; return the search itself, and whether it
    runs without the connection (so the lexical lane can use it meanwhile).

    The fast path searches the process's in-memory index of the vectors (vindex); when that
    is not built yet, the query scans vec0 exactly and the index is built in the background for
    the next ones. `exact=True` always scans vec0. With filters the candidate ids go into the
    search itself: vec0 applies other WHERE clauses after its top-k, which would silently
    return fewer than k hits."""
    if not exact:
        from . import vindex

        index = vindex.warm(conn, len(vector) // 4)
        if index is not None:
            allowed = None
            if filters:
                where, params = filters.sql("c")
                allowed = vindex.ids_array(conn.execute(f"SELECT c.id FROM chunks c WHERE {where}", params))
            import numpy as np

            query = np.frombuffer(vector, np.float32)
            return (lambda: index.search(query, pool, allowed)), True
    if filters:
        where, params = filters.sql("c")
        sql = ("SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? "
               f"AND rowid IN (SELECT c.id FROM chunks c WHERE {where}) ORDER BY distance")
        args = [vector, pool, *params]
    else:
        sql = "SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance"
        args = [vector, pool]
    return (lambda: conn.execute(sql, args).fetchall()), False


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


def literal(conn, query: str, filters: Filters | None = None) -> dict[int, tuple[int, bool, int]]:
    """Chunks that contain a literal term of the query as written: id -> (how many of the
    terms it holds, whether its note is about one: the note's title or file name names it,
    how often the terms occur in it), best-BM25 first. A term held by more than LITERAL_MAX_FILES files is a word of the
    subject, not a token someone looks for (p53, `xargs`), and promotes nothing."""
    out: dict[int, tuple[int, bool, int]] = {}
    for _, pattern, prefilter in literal_terms(query):
        loose = re.compile(pattern.pattern, re.I)
        sql, params = _filtered(
            "SELECT c.id, c.text, c.path, c.ref, c.title FROM fts_chunks "
            "JOIN chunks c ON c.id = fts_chunks.rowid WHERE fts_chunks MATCH ?", filters, [prefilter],
        )
        holders, files = [], set()
        for cid, text, path, ref, head in conn.execute(sql + " ORDER BY bm25(fts_chunks) LIMIT ?",
                                                       params + [LITERAL_POOL]):
            if not loose.search(text):
                continue
            files.add(_group_key(cid, path, ref))  # how rare the term is ignores case
            count = len(pattern.findall(text))
            if count:
                name = os.path.basename(path or "")
                about = bool(pattern.search(f"{head or title(text) or ''}\n{name}"))
                holders.append((cid, about, count))
        if len(files) > LITERAL_MAX_FILES:
            continue
        for cid, about, count in holders:
            held, was_about, seen = out.get(cid, (0, False, 0))
            out[cid] = (held + 1, was_about or about, seen + count)
    return out


def _group_key(cid: int, path: str | None, ref: str | None) -> tuple:
    """The document a chunk belongs to: its file (and ref, e.g. one logged conversation);
    a chunk from stdin without either is a document of its own."""
    return (path, ref) if (path or ref) else (None, cid)


def documents(conn, ids) -> dict[int, tuple]:
    """Chunk id -> its document key (`_group_key`)."""
    ids = list(dict.fromkeys(ids))
    out: dict[int, tuple] = {}
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        for cid, path, ref in conn.execute(
                f"SELECT id, path, ref FROM chunks WHERE id IN ({','.join('?' * len(part))})", part):
            out[cid] = _group_key(cid, path, ref)
    return out


# --- fusion ------------------------------------------------------------------------------------


def zscore(lanes: dict[str, Sequence[tuple[int, float]]], weights: dict[str, float],
           pool: int = DEFAULT_POOL, groups: dict[int, tuple] | None = None) -> dict[int, dict]:
    """Score fusion on a common scale: each lane's scores (higher is better) become z-scores
    over the lane's top `pool` and are shifted so the pool's last one is 0; a chunk a lane did
    not find (or found below its top `pool`) gets 0 from it. score(d) = sum_c w_c * z'_c(d).
    A lane whose best hit stands far above the rest of its pool speaks loudly; a lane whose
    scores are all alike barely moves the ranking.

    With `groups` (chunk id -> document) the fusion is per document, the unit a person looks
    for: each lane's statistics are taken over its documents (each at its best chunk, so a
    long file does not crowd the pool), and a document's best chunk carries the document's
    whole evidence - its best dense score and its best lexical score, even when those come
    from different chunks (a title in one chunk, the answer in the next). The document's
    other chunks keep their own scores, which are never higher."""
    fused: dict[int, dict] = {}
    best: dict[tuple, dict[str, float]] = {}  # document -> lane -> its best contribution
    for lane, scored in lanes.items():
        if not scored:
            continue
        weight = weights.get(lane, 1.0)
        top_items = scored[:pool]
        if groups is not None:
            seen: set = set()
            top_items = [(cid, s) for cid, s in top_items
                         if not (groups.get(cid, (None, cid)) in seen or seen.add(groups.get(cid, (None, cid))))]
        top = [score for _, score in top_items]
        mean = math.fsum(top) / len(top)
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in top) / len(top))
        floor = min(top)
        for rank, (cid, score) in enumerate(scored, start=1):
            entry = fused.setdefault(cid, {"score": 0.0, "ranks": {}, "contributions": {}})
            lift = (score - floor) / sd if sd > 0 else 1.0
            contribution = weight * max(lift, 0.0) if rank <= pool else 0.0
            entry["score"] += contribution
            entry["ranks"][lane] = rank
            entry["contributions"][lane] = contribution
            if groups is not None:
                lanes_best = best.setdefault(groups.get(cid, (None, cid)), {})
                lanes_best[lane] = max(lanes_best.get(lane, 0.0), contribution)
    if groups is not None:
        heads: dict[tuple, int] = {}
        for cid, entry in fused.items():
            g = groups.get(cid, (None, cid))
            if g not in heads or entry["score"] > fused[heads[g]]["score"]:
                heads[g] = cid
        for g, cid in heads.items():
            entry = fused[cid]
            entry["contributions"] = dict(best[g])
            entry["score"] = sum(best[g].values())
    return fused


def rrf(lanes: dict[str, Sequence[int]], rrf_k: int, weights: dict[str, float]) -> dict[int, dict]:
    """Weighted reciprocal-rank fusion: score(d) = sum_c w_c / (rrf_k + rank_c(d))."""
    fused: dict[int, dict] = {}
    for lane, ids in lanes.items():
        weight = weights.get(lane, 1.0)
        for rank, cid in enumerate(ids, start=1):
            entry = fused.setdefault(cid, {"score": 0.0, "ranks": {}, "contributions": {}})
            contribution = weight / (rrf_k + rank)
            entry["score"] += contribution
            entry["ranks"][lane] = rank
            entry["contributions"][lane] = contribution
    return fused


def snippet(text: str, patterns: Sequence[re.Pattern[str]], words: Sequence[str]) -> tuple[str, int]:
    """(the part of a chunk that matched, the index of its line in the chunk): the line of the
    first literal term found, else the line sharing most content words with the query (a
    word matches on its first STEM_CHARS letters, so `rebasing` finds `rebase`), else the
    first line that holds a word. A long line is cut to SNIPPET_CHARS around the match."""
    lines = text.split("\n")
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            index = text.count("\n", 0, m.start())
            return _window(lines[index], m.start() - (text.rfind("\n", 0, m.start()) + 1)), index
    stems = {w.lower()[:STEM_CHARS] for w in words if len(w) > 1}
    best, index, at = 0, None, 0
    for i, line in enumerate(lines):
        found = [m for m in _WORD.finditer(line) if m.group().lower()[:STEM_CHARS] in stems]
        shared = len({m.group().lower()[:STEM_CHARS] for m in found})
        if shared > best:
            best, index, at = shared, i, found[0].start()
    if index is None:
        index = next((i for i, line in enumerate(lines) if _WORD.search(line)), 0)
    return _window(lines[index], at), index


def _window(line: str, at: int) -> str:
    """`line` trimmed, or SNIPPET_CHARS of it around position `at`, marked where cut."""
    if len(line) <= SNIPPET_CHARS:
        return line.strip()
    start = max(0, min(at - SNIPPET_CHARS // 3, len(line) - SNIPPET_CHARS))
    part = line[start:start + SNIPPET_CHARS].strip()
    return ("…" if start else "") + part + ("…" if start + SNIPPET_CHARS < len(line) else "")


def _hits(conn, scored: list[tuple[int, dict]], query: str) -> list[Hit]:
    if not scored:
        return []
    ids = [cid for cid, _ in scored]
    rows = {
        r[0]: r
        for r in conn.execute(
            "SELECT id, text, path, line_start, line_end, project, source, coalesce(ts, created), meta "
            f"FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids,
        )
    }
    patterns = [pattern for _, pattern, _ in literal_terms(query)]
    words = content_words(query).split()
    hits = []
    for cid, info in scored:
        r = rows.get(cid)
        if r is None:
            continue
        part, index = snippet(r[1], patterns, words)
        hits.append(Hit(
            id=r[0], text=r[1], path=r[2], line=r[3], line_end=r[4], project=r[5], source=r[6],
            ts=r[7], score=round(info["score"], 6), ranks=info.get("ranks", {}),
            contributions={k: round(v, 6) for k, v in info.get("contributions", {}).items()},
            meta=json.loads(r[8]) if r[8] else None,
            snippet=part, match_line=(r[3] + index) if r[3] else None,
        ))
    return hits


def per_note(scored: list[tuple[int, dict]], groups: dict[int, tuple], limit: int) -> list[tuple[int, dict]]:
    """At most `limit` chunks of one note, in order: a long note that matches everywhere
    must not fill the page and hide the next best notes."""
    taken: dict[tuple, int] = {}
    out = []
    for cid, entry in scored:
        key = groups.get(cid, (None, cid))
        if taken.get(key, 0) < limit:
            taken[key] = taken.get(key, 0) + 1
            out.append((cid, entry))
    return out


def _lanes(conn, query: str, options: RecallOptions, vector: bytes | None,
           filters: Filters) -> tuple[dict[str, list[tuple[int, float]]], str]:
    """Each lane's (id, score) candidates, higher is better (dense: cosine; lexical: -bm25),
    and the mode actually used. The lanes run one after the other: on real queries the
    lexical lane takes a millisecond or two, too little to be worth a thread kept in the
    caller's process. A dense search from the in-memory copy runs with BLAS bounded to one
    thread for that call only (`vindex.one_blas_thread`), in every mode."""
    fetch = max(options.pool, options.k * options.per_note)
    lanes: dict[str, list[tuple[int, float]]] = {}
    used = options.mode
    if used in ("hybrid", "dense"):
        if vector is None:
            used = "lexical"
        else:
            from .vindex import one_blas_thread

            search, _ = _dense_plan(conn, vector, fetch, filters, options.exact)
            with one_blas_thread():
                found = search()
            lanes["dense"] = [(cid, 1 - d * d / 2) for cid, d in found]  # cosine of unit vectors
    if used in ("hybrid", "lexical"):
        lanes["lexical"] = [(cid, -score) for cid, score in lexical(conn, query, fetch, filters)]
        if used == "hybrid" and not lanes["lexical"]:
            used = "dense"  # no lexical match: dense alone
            del lanes["lexical"]
    return lanes, used


def promote(scored: list[tuple[int, dict]], holders: dict[int, tuple[int, bool, int]],
            by_title: bool = True) -> list[tuple[int, dict]]:
    """Chunks holding a rare literal term first: those holding more of the query's terms,
    then (`by_title`) those about the term (their note's title or file name names it, then
    they use it more often), then by fused score. A query that is little more than the token has nothing else to tell the note about
    it from one that lists it; a sentence around the token has, and fusion already weighs it.
    A bonus above every other score keeps the scores sorted; the rest follow in their order."""
    if not holders:
        return scored
    position = {cid: i for i, (cid, _) in enumerate(scored)}
    info = dict(scored)
    def order(cid: int) -> tuple:
        held, about, count = holders[cid]
        return (-held, *((not about, -count) if by_title else ()), position.get(cid, math.inf))

    first = sorted(holders, key=order)
    top = max((abs(e["score"]) for _, e in scored), default=0.0)
    bonus = LITERAL_BONUS + math.ceil(top)
    head = []
    for rank, cid in enumerate(first, start=1):
        entry = dict(info.get(cid, {"score": 0.0, "ranks": {}, "contributions": {}}))
        entry["score"] = entry["score"] + bonus
        entry["ranks"] = {**entry.get("ranks", {}), "literal": rank}
        entry["contributions"] = {**entry.get("contributions", {}), "literal": bonus}
        head.append((cid, entry))
    return head + [(cid, e) for cid, e in scored if cid not in holders]


def relevant(conn, query: str, lanes: dict[str, list[tuple[int, float]]], holders: dict,
             filters: Filters | None = None) -> bool:
    """Does any hit clear the relevance floor? A literal term found does, and so does a chunk
    holding every content word of the query. Otherwise, with meaning available, the best
    cosine must reach DENSE_FLOOR: unrelated text shares some common words with almost any
    query, so a partial lexical match proves nothing. Without meaning any lexical match counts
    (a lexical search cannot tell more)."""
    if holders:
        return True
    if "dense" in lanes and lanes["dense"] and lanes["dense"][0][1] >= DENSE_FLOOR:
        return True
    words = list(dict.fromkeys(w.lower() for w in content_words(query).split()))[:MAX_QUERY_TERMS]
    if "dense" not in lanes:
        return bool(lanes.get("lexical"))
    if not words:
        return False
    match = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
    sql, params = _filtered("SELECT 1 FROM fts_chunks JOIN chunks c ON c.id = fts_chunks.rowid "
                            "WHERE fts_chunks MATCH ?", filters, [match])
    return conn.execute(sql + " LIMIT 1", params).fetchone() is not None


def recall(conn, query: str, options: RecallOptions | None = None,
           query_vector: bytes | None = None) -> RecallResult:
    """Rank chunks for `query`. `query_vector` is the serialised, normalised query embedding,
    or None when dense is unavailable (the caller notes why): the search then answers lexically.

    Hybrid fuses the lanes by `options.fusion` ("zscore", the default, or "rrf"), with lane
    weights from FUSION_RULES unless `lexical_weight` is given; chunks holding a rare literal
    term of the query come first (`promote`); at most `per_note` chunks of one note are kept."""
    options = options or RecallOptions()
    filters = Filters.of(options)
    if options.lexical_weight is not None:
        weights, why = {**DEFAULT_WEIGHTS, "lexical": options.lexical_weight}, "weights given"
    else:
        weights, why = adaptive_weights(query)
    lanes, used = _lanes(conn, query, options, query_vector, filters)
    ids = [cid for found in lanes.values() for cid, _ in found]
    if used in ("dense", "lexical"):
        scored = [(cid, {"score": score, "ranks": {used: r}, "contributions": {}})
                  for r, (cid, score) in enumerate(lanes.get(used, []), 1)]
    else:
        if options.fusion == "rrf":
            fused = rrf({lane: [cid for cid, _ in found] for lane, found in lanes.items()},
                        options.rrf_k, weights)
        else:
            fused = zscore(lanes, weights, options.pool, groups=documents(conn, ids))
        # ties (a chunk found only below both pools) keep the better lane rank
        scored = sorted(fused.items(), key=lambda kv: (-kv[1]["score"], min(kv[1]["ranks"].values())))
    holders = literal(conn, query, filters)
    # In a claim the rare term is its subject (abstracts that disagree hold it too): where the
    # lexical lane weighs it with the claim's other words, it decides nothing alone. Dense alone
    # weighs no word, so there the literal lane still speaks for it.
    if "lexical" not in lanes or not is_claim(query):
        scored = promote(scored, holders, by_title=not is_natural(query))
    scored = per_note(scored, documents(conn, [cid for cid, _ in scored]), options.per_note)
    result = RecallResult(_hits(conn, scored[:options.k], query), used,
                          relevant=relevant(conn, query, lanes, holders, filters))
    result.scale = SCALES["rrf" if used == "hybrid" and options.fusion == "rrf" else used]
    if used == "hybrid":
        result.weights = weights
        result.fusion = options.fusion
        result.why = why
    return result
