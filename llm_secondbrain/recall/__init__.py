"""Dense, lexical and hybrid retrieval over the brain; reciprocal-rank fusion; query sanitising.

Three lanes feed one ranking:
- dense: KNN over vec_chunks with the query's embedding (meaning);
- lexical: FTS5 BM25 over a sanitised MATCH string (words);
- literal: chunks that contain an identifier from the query verbatim (INV/2026/00037, an IBAN
  however it is spaced). These rank first: near misses share most of their words and much of
  their meaning with the exact one, so neither of the other lanes can separate them reliably.
Hybrid fuses dense and lexical scores after putting each lane on a common scale (z-scores over
the lane's top `pool`, shifted so a chunk the lane did not find contributes 0); weighted RRF is
kept as an option (`fusion="rrf"`). Each chunk is scored on its own evidence, so a note is as
good as its best passage: a 25 KB note no longer adds the meaning of one part to the words of
another (the note's title is indexed with every chunk, so a paragraph deep in it still matches
its subject). Literal hits are ordered among themselves by that fused score, so the one that
also answers the rest of the question comes first; an identifier-like token that more than
LITERAL_MAX_FILES files hold (p53, CD4) is a term, not an identifier, and is not promoted.

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
- a statement or keywords with code (a flag, a dotted or snake_case name, a backticked span;
  not a product name such as GitHub written in a sentence) or with a token the brain holds
  rarely lean on words (`CODE_LEXICAL_WEIGHT`): there a shared rare word is real evidence;
- other prose leans on meaning, keywords weigh both lanes equally;
- outside a claim, the lexical lane's weight falls when none of its best passages holds
  WORDS_HELD of the query's word weight (`held_weight`): a paraphrase that shares one stray word
  with an unrelated note must not let that note lead.
Function words are dropped from the lexical query (`content_words`): in a small personal brain
"what", "did" and "about" are rare enough to outscore the words that matter.

The package, one job per module: query (what the query is, its code-like spans and identifiers),
lanes (dense, lexical, literal; filters; documents), fusion (the rules, z-score, RRF, promotion,
the per-note cap), links (a short note that links to another gives way to it), floor (relevance
on the brain's own scale, and where a model's passages stop), present (hits, snippets), vindex
(the dense search: sign bits, exact scan), stale (hits whose file changed). `recall()` below
drives them.
"""
from __future__ import annotations

from ..facts import superseded_chunks
from ..options import RecallOptions
from .floor import COVER_DEPTH, FLOOR_SD, NAME_FLOOR_SD, coverage, relevant, tail
from .inject import flags as instruction_flags
from .kind import kinds as kind_of_chunks
from .links import followed, lent
from .fusion import (
    CLAIM_LEXICAL_WEIGHT, CODE_LEXICAL_WEIGHT, DEFAULT_WEIGHTS, FUSION_RULES, LITERAL_BONUS,
    PROSE_LEXICAL_WEIGHT, QUESTION_LEXICAL_WEIGHT, WORDS_HELD, adaptive_weights, held_weight, per_note, promote,
    rrf, zscore,
)
from .lanes import (
    LEXICAL_BUDGET, LITERAL_MAX_FILES, LITERAL_POOL, Filters, _lanes, bounded_words, dense,
    documents, lexical, lexical_match, literal,
)
from .present import SCALES, Hit, RecallResult, _hits, snippet
from .query import (
    STOPWORDS, Evidence, code_pattern, code_spans, content_words, fts_query, identifiers, is_claim,
    is_natural, is_question, literal_pattern, literal_terms,
)

__all__ = [
    "CLAIM_LEXICAL_WEIGHT", "CODE_LEXICAL_WEIGHT", "DEFAULT_WEIGHTS", "FLOOR_SD", "FUSION_RULES", "NAME_FLOOR_SD",
    "LEXICAL_BUDGET", "LITERAL_BONUS", "LITERAL_MAX_FILES", "LITERAL_POOL", "PROSE_LEXICAL_WEIGHT",
    "QUESTION_LEXICAL_WEIGHT", "SCALES", "STOPWORDS", "Evidence", "Filters", "Hit", "RecallResult",
    "adaptive_weights", "bounded_words", "code_pattern", "code_spans", "content_words", "dense",
    "documents", "fts_query", "identifiers", "is_claim", "is_natural", "is_question", "lexical",
    "lexical_match", "literal", "literal_pattern", "literal_terms", "per_note", "promote", "recall",
    "relevant", "rrf", "snippet", "zscore",
]


def recall(conn, query: str, options: RecallOptions | None = None,
           query_vector: bytes | None = None) -> RecallResult:
    """Rank chunks for `query`. `query_vector` is the serialised, normalised query embedding,
    or None when dense is unavailable (the caller notes why): the search then answers lexically.

    Hybrid fuses the lanes by `options.fusion` ("zscore", the default, or "rrf"), with lane
    weights from FUSION_RULES unless `lexical_weight` is given; chunks holding a rare literal
    term of the query come first (`promote`); at most `per_note` chunks of one note are kept."""
    options = options or RecallOptions()
    filters = Filters.of(options)
    holders = literal(conn, query, filters)
    if options.lexical_weight is not None:
        weights, why = {**DEFAULT_WEIGHTS, "lexical": options.lexical_weight}, "weights given"
    else:
        weights, why = adaptive_weights(query, token=bool(holders))
    lanes, used, dense_how, cosines = _lanes(conn, query, options, query_vector, filters)
    if used == "hybrid" and options.lexical_weight is None and not is_claim(query):
        held = coverage(conn, query, [cid for cid, _ in lanes["lexical"][:COVER_DEPTH]], spaced=True)
        if held < WORDS_HELD:
            weights = {**weights, "lexical": held_weight(weights["lexical"], held)}
            why += f"; its best passages hold {held:.0%} of its words: lexical x{weights['lexical']:.2f}"
    replaced = superseded_chunks(conn)  # remembered facts a newer fact replaced
    if replaced and not options.history:
        lanes = {lane: [(cid, s) for cid, s in found if cid not in replaced] for lane, found in lanes.items()}
        holders = {cid: v for cid, v in holders.items() if cid not in replaced}
        cosines = {cid: c for cid, c in cosines.items() if cid not in replaced}
    ids = [cid for found in lanes.values() for cid, _ in found]
    groups = documents(conn, ids + list(holders))  # every chunk that can be ranked: the lanes' and the holders'
    if used in ("dense", "lexical"):
        scored = [(cid, {"score": score, "ranks": {used: r}, "contributions": {}})
                  for r, (cid, score) in enumerate(lanes.get(used, []), 1)]
    else:
        if options.fusion == "rrf":
            fused = rrf({lane: [cid for cid, _ in found] for lane, found in lanes.items()},
                        options.rrf_k, weights)
        else:
            fused = zscore(lanes, weights, options.pool, groups=groups)
        # ties (a chunk found only below both pools) keep the better lane rank
        scored = sorted(fused.items(), key=lambda kv: (-kv[1]["score"], min(kv[1]["ranks"].values())))
    # In a claim the rare term is its subject (abstracts that disagree hold it too): where the
    # lexical lane weighs it with the claim's other words, it decides nothing alone. Dense alone
    # weighs no word, so there the literal lane still speaks for it.
    if "lexical" not in lanes or not is_claim(query):
        scored = promote(scored, holders, by_title=not is_natural(query))
    if replaced and options.history:  # newer facts first: the replaced ones after every current hit
        scored = [s for s in scored if s[0] not in replaced] + [s for s in scored if s[0] in replaced]
    scored = followed(conn, scored, groups, holders, options.k * options.per_note)
    scored = per_note(scored, groups, options.per_note)
    hits = _hits(conn, scored[:options.k], query)
    via = {cid: entry["via"] for cid, entry in scored if "via" in entry}  # (links.followed)
    if via:
        shown = {hit.id: rank for rank, hit in enumerate(hits, start=1)}
        for hit in hits:
            if shown.get(via.get(hit.id)):
                hit.ranks = {**hit.ranks, "link": shown[via[hit.id]]}  # --explain: "link #2", the hit linking to it
    result = RecallResult(hits, used, relevant=relevant(conn, query, lanes, holders, filters),
                          dense=dense_how)
    if result.relevant:
        words = dict(lanes.get("lexical", []))
        result.strong = tail(conn, query, [lent(cosines, h.id, via) for h in hits],
                             [lent(words, h.id, via) for h in hits], [h.id in holders for h in hits])
    kinds = kind_of_chunks(conn, [hit.id for hit in result.hits])
    for hit in result.hits:
        hit.kind, hit.flags = kinds.get(hit.id), instruction_flags(hit.text)
        if hit.id in replaced:
            newer, when = replaced[hit.id]
            hit.superseded_by, hit.superseded = f"fact:{newer}", when
    result.scale = SCALES["rrf" if used == "hybrid" and options.fusion == "rrf" else used]
    if used == "hybrid":
        result.weights = weights
        result.fusion = options.fusion
        result.why = why
    return result
