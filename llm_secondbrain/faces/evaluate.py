"""Score recall on the user's own golden queries: hit@1, MRR@10, nDCG@10 and recall@10.

A golden file is JSON lines, `{"id", "query", "answers": [paths], "class"?}`. Hits are ranked
by note: the ranked chunks collapse to notes by each note's first hit, the top 10 notes count,
relevance is binary (a note is relevant when one of `answers` names it). An answer is a path
relative to wherever the notes were ingested from, so it matches a stored absolute path as a
suffix at a folder boundary (`git/rebase.md` matches `/home/me/til/git/rebase.md`, never
`/home/me/til/git/interactive-rebase.md`).
"""
from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:
    from ..api import SecondBrain

K = 10
ALL = "all"
METRICS = ("hit@1", "MRR@10", "nDCG@10", "recall@10")


def read_queries(lines: Iterable[str], negatives: bool = False) -> list[dict]:
    """Parse a golden file's lines; a malformed line is a ValueError naming the file (when
    `lines` is an open file: a golden file and its negatives are read in one run) and the line
    number, so a typo in a hand-written file is found at once. `negatives`: a file of questions
    the brain cannot answer (`answers` empty or absent)."""
    name = getattr(lines, "name", None)
    if name is not None:
        from ..scrub import scrub

        name = scrub(str(name))
    out, seen = [], {}
    for number, line in _numbered(lines, name):
        where = _where(name, f"line {number}")
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: not JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("query"), str) or not row["query"].strip():
            raise ValueError(f"{where}: needs a \"query\" string")
        answers = row.get("answers")
        if negatives:
            if answers:
                raise ValueError(f"{where}: a negative has no \"answers\"")
            answers = []
        elif not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise ValueError(f"{where}: needs \"answers\", a list of paths")
        raw_id = str(row.get("id", number))
        qid, cls = _printable(raw_id, str(row.get("class") or ALL), row["query"], answers)
        if raw_id in seen:  # the per-query figures and the negatives answered are named by id
            raise ValueError(f"{_where(name, f'lines {seen[raw_id]} and {number}')}: both have the id {qid!r} "
                             "(give each its own)")
        seen[raw_id] = number
        out.append({"id": qid, "query": row["query"], "answers": answers, "class": cls})
    if negatives and not out:  # as an empty queries file is an error, not a run that scores nothing
        raise ValueError(f"no questions in the negatives file{f' {name}' if name else ''}")
    return out


def _where(name: str | None, lines: str) -> str:
    return f"{name}, {lines}" if name else lines


def _numbered(lines: Iterable[str], name: str | None) -> Iterator[tuple[int, str]]:
    """The lines with their numbers; a byte that is not UTF-8 is a ValueError naming its line,
    where the decoder named a position in the block it was decoding."""
    lines, number = iter(lines), 0
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except UnicodeDecodeError as e:  # the block starts inside the line after the last read
            bad = number + 1 + e.object[:e.start].count(b"\n")
            raise ValueError(f"{_where(name, f'line {bad}')}: not UTF-8 text") from None
        number += 1
        yield number, line


def _printable(qid: str, cls: str, query: str, answers: list[str]) -> tuple[str, str]:
    """A query's id and class, which the report prints (the table, --json, --per-query, the
    negatives answered), scrubbed in one scope with the rest of its line: a value the query
    labels ("my router password is …") is redacted where the id repeats it bare."""
    from ..scrub import scrub_document

    (qid, cls), _, _ = scrub_document([qid, cls], [], hints=[query, *answers])
    return qid, cls


def answer_matches(answer: str, path: str | None) -> bool:
    """True when the stored `path` is the file `answer` names (a suffix at a folder boundary)."""
    if not path:
        return False
    answer = answer.replace(os.sep, "/").lstrip("./")
    path = path.replace(os.sep, "/")
    return path == answer or path.endswith("/" + answer)


def collapse_to_notes(paths: Iterable[str | None]) -> list[str]:
    """Chunks' paths, best first -> notes, each at its first (best) chunk."""
    return list(dict.fromkeys(p for p in paths if p))


def score_one(ranked_notes: list[str], answers: list[str], k: int = K) -> dict[str, float]:
    """The four metrics of one query over its top `k` notes (binary relevance). Each answer
    is credited once: a second stored copy of it (the same folder ingested from two places)
    is not a second hit, so the figures stay within 0..1."""
    top = ranked_notes[:k]
    unmatched = list(answers)
    rel = []
    for note in top:
        answer = next((a for a in unmatched if answer_matches(a, note)), None)
        if answer is not None:
            unmatched.remove(answer)
        rel.append(answer is not None)
    found = len(answers) - len(unmatched)
    first = next((i for i, r in enumerate(rel) if r), None)
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(rel) if r)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(answers), k)))
    return {
        "hit@1": float(bool(rel) and rel[0]),
        "MRR@10": 0.0 if first is None else 1 / (first + 1),
        "nDCG@10": dcg / idcg,
        "recall@10": found / len(answers),
    }


def aggregate(scored: list[tuple[str, dict[str, float]]]) -> dict[str, dict]:
    """(class, metrics) per query -> macro means per class and over all queries."""
    groups: dict[str, list[dict]] = {}
    for cls, metrics in scored:
        groups.setdefault(cls, []).append(metrics)
        if cls != ALL:
            groups.setdefault(ALL, []).append(metrics)
    return {cls: {"n": len(rows), **{m: sum(r[m] for r in rows) / len(rows) for m in METRICS}}
            for cls, rows in groups.items()}


def evaluate(sb: "SecondBrain", queries: list[dict], modes: Iterable[str], *,
             negatives: list[dict] = (), filters: dict | None = None) -> dict:
    """Score every mode on `queries`: {"modes": {mode: {class: metrics}}, "queries": {mode:
    [{id, class, top, ...metrics}]}}. Each query asks for one chunk per note, so the ten hits
    are the ten best notes at their best chunks - the README's collapse, done by recall.
    `filters` (project, path, source) narrow every search as they narrow recall. With
    `negatives`, "negatives": {mode: {"n", "nothing", "answered": [ids]}}: how many questions
    the brain cannot answer got "nothing matches", and which did not. A mode that answered
    lexically (no vectors, Ollama down) is in "notes": {mode: why}, and said on stderr."""
    filters = {k: v for k, v in (filters or {}).items() if v is not None}
    out: dict = {"modes": {}, "queries": {}}
    lexical_modes: dict[str, list[str]] = {}  # why -> the modes that answered lexically for it
    for mode in modes:
        rows, scored, lexically = [], [], []
        for q in queries:
            result = sb.search(q["query"], mode=mode, k=K, per_note=1, **filters)
            if mode != "lexical" and result.mode == "lexical":  # no query vector: the search said why first
                lexically.append(result.notes[0] if result.notes else "no query vector: answering lexically")
            notes = collapse_to_notes(h.path for h in result.hits)
            metrics = score_one(notes, q["answers"])
            scored.append((q["class"], metrics))
            rows.append({"id": q["id"], "class": q["class"], "mode": result.mode,
                         "relevant": result.relevant, "top": notes[:3], **metrics})
        out["modes"][mode] = aggregate(scored)
        out["queries"][mode] = rows
        if lexically:
            share = "" if len(lexically) == len(queries) else f" ({len(lexically)} of {len(queries)} queries)"
            out.setdefault("notes", {})[mode] = lexically[0] + share
            lexical_modes.setdefault(lexically[0], []).append(mode + share)
        if negatives:
            answered = [q["id"] for q in negatives
                        if (r := sb.search(q["query"], mode=mode, k=K, **filters)).relevant and r.hits]
            out.setdefault("negatives", {})[mode] = {
                "n": len(negatives), "nothing": len(negatives) - len(answered), "answered": answered}
    _say_lexical(lexical_modes)
    return out


def _say_lexical(lexical_modes: dict[str, list[str]]) -> None:
    """On stderr, once per reason: these modes' figures are lexical ones under another name,
    which a user comparing modes must know (`recall --mode dense` says the same)."""
    import click

    for why, modes in lexical_modes.items():
        click.echo(f"{why} - the {' and '.join(modes)} figures are lexical", err=True)


def table(report: dict) -> str:
    """The per-mode, per-class figures as a Markdown table."""
    lines = ["| mode | class | n | " + " | ".join(METRICS) + " |",
             "|---|---|---:|" + "---:|" * len(METRICS)]
    for mode, classes in report["modes"].items():
        order = sorted(classes, key=lambda c: (c == ALL, c))
        for cls in order:
            row = classes[cls]
            lines.append(f"| {mode} | {cls} | {row['n']} | "
                         + " | ".join(f"{row[m]:.3f}" for m in METRICS) + " |")
    for mode, neg in report.get("negatives", {}).items():
        lines.append(f"{mode}: {neg['nothing']} of {neg['n']} unanswerable questions got nothing"
                     + (f" (answered: {', '.join(neg['answered'])})" if neg["answered"] else ""))
    return "\n".join(lines)
