"""Fusion: lane weights by the query's shape (a table of rules), z-score and RRF fusion, the
literal lane's promotion and the per-note cap."""
from __future__ import annotations

import math
from typing import Sequence

from ..options import DEFAULT_POOL
from .query import Evidence

DEFAULT_WEIGHTS = {"dense": 1.0, "lexical": 1.0}
CLAIM_LEXICAL_WEIGHT = 1.0  # a stated claim (SciFact train: 0.6/1.0/1.5 -> 0.740/0.743/0.738)
QUESTION_LEXICAL_WEIGHT = 0.05  # natural language: lexical only breaks near-ties among dense's hits
PROSE_LEXICAL_WEIGHT = 0.6  # other prose (jbranchaud-til: 0.3/0.6/1.0 -> semantic 0.916/0.934/0.923)
CODE_LEXICAL_WEIGHT = 3.0  # keywords with code, which MiniLM barely reads (til exact: 1/2/3 -> 0.958/0.960/0.967)
LITERAL_BONUS = 1.0  # literal hits score this much above the best other score
WORDS_HELD = 0.6  # the share of the query's word weight a lexical hit must hold for its lane's full weight
WORDS_POWER = 3  # ... below it, the weight falls with this power of the share held


def held_weight(weight: float, held: float) -> float:
    """The lexical lane's weight when its best passages hold `held` of the query's word weight
    (floor.coverage). The lane's scores are z-scores over its own pool: a paraphrase that shares
    only "file" and "lines" with its answer still puts some passage far above the rest, and
    fusion read that as strong evidence. Its words count as much as they answer the query
    together (vault tune paraphrases 0.611 -> 0.681, vault2 0.733 / 0.749 -> 0.760 / 0.766,
    jbranchaud-til 0.963 -> 0.960; a power of 1 kept til at 0.963 and moved the vaults by half
    as much). Not in a claim, whose words each speak alone (SciFact test 0.745 -> 0.737 with it)."""
    return weight * min(1.0, held / WORDS_HELD) ** WORDS_POWER


# Hybrid's lane weights, first matching rule wins: (flags that must hold, "!flag" must not;
# weights; why, shown by --explain). Tokens that few notes hold are decided before fusion, by the
# literal lane (`literal`), whatever rule applies, except in a claim. Measured on four kinds of
# notes (jbranchaud-til, the bench vault's tune half, tldr-zh, manpages-ja) and SciFact train:
# code comes before prose, so a statement around a flag or a name from code leans on words
# (vault mixed 0.791 -> 0.886, til unchanged); a question leans on meaning whatever it holds
# (til mixed 0.988 with it, 0.961 with code first).
FUSION_RULES: tuple[tuple[tuple[str, ...], dict[str, float], str], ...] = (
    (("question",), {"dense": 1.0, "lexical": QUESTION_LEXICAL_WEIGHT},
     "question: meaning leads, words break ties"),
    (("claim",), {"dense": 1.0, "lexical": CLAIM_LEXICAL_WEIGHT},
     "claim: meaning and words weigh equally, no token decides alone"),
    (("code",), {"dense": 1.0, "lexical": CODE_LEXICAL_WEIGHT},
     "code or a rare token: words lead, meaning breaks ties"),
    (("natural",), {"dense": 1.0, "lexical": PROSE_LEXICAL_WEIGHT},
     "request or statement in words: meaning leads, words count"),
    ((), {"dense": 1.0, "lexical": 1.0}, "keywords: lanes weigh equally"),
)


def adaptive_weights(query: str, token: bool = False) -> tuple[dict[str, float], str]:
    """Lane weights for `query` from FUSION_RULES, and the rule's reason (for --explain);
    `token`: the literal lane found a rare token of the query in the brain."""
    evidence = Evidence.of(query, token)
    for flags, weights, why in FUSION_RULES:
        if evidence.holds(flags):
            return dict(weights), why
    return dict(DEFAULT_WEIGHTS), "default"



def zscore(lanes: dict[str, Sequence[tuple[int, float]]], weights: dict[str, float],
           pool: int = DEFAULT_POOL, groups: dict[int, tuple] | None = None) -> dict[int, dict]:
    """Score fusion on a common scale: each lane's scores (higher is better) become z-scores
    over the lane's top `pool` and are shifted so the pool's last one is 0; a chunk a lane did
    not find (or found below its top `pool`) gets 0 from it. score(c) = sum_l w_l * z'_l(c).
    A lane whose best hit stands far above the rest of its pool speaks loudly; a lane whose
    scores are all alike barely moves the ranking.

    Each chunk is scored on its own evidence, so a note is as good as its best passage: a long
    note does not add the dense score of one part to the lexical score of another. With
    `groups` (chunk id -> note) each lane's statistics are taken over its notes, each at its
    best chunk, so a long note does not crowd the pool."""
    fused: dict[int, dict] = {}
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
