"""Remembered facts: short things a person or a model asks the brain to keep.

`llm brain remember`, `SecondBrain.remember`, the `brain_remember` tool and the MCP server's
`remember` all end here. A fact passes ingest's gate first (its text, tags and labels in one
scope), then is kept twice in one transaction: as a row
of `facts` (its text, tags, project, who stored it and in which turn when known, and when) and
as one chunk with path `fact:<id>`, source `remember` and role `fact`, so recall, its filters,
the fragment and the tool find it and cite it as `fact:<id>` like any passage. The chunk is
embedded with the rest of the backlog. Forgetting the chunk (`llm brain forget --fact ID`, or
`--source remember`) forgets the fact (store.Brain.forget); its id is never given again.

A newer fact may supersede an older one (`remember --supersedes ID`): the older stays, marked
with the newer's id and when, and recall leaves it out unless asked for the history
(`RecallOptions.history`), where it comes after the current facts. Forgetting the newer fact
makes the older current again. Only a current fact can be superseded (remember's docstring).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Iterable

from typing import TYPE_CHECKING

from .store import Brain, BrainError, ChunkRow, now_iso, text_sha

if TYPE_CHECKING:
    from .ingest.gate import Gate

SOURCE = "remember"
ROLE = "fact"
PREFIX = "fact:"
HIGHEST_ID = "fact_highest_id"  # meta key: the highest fact id ever given


@dataclass
class Fact:
    id: int
    text: str
    tags: list[str] = field(default_factory=list)
    project: str | None = None
    origin: str | None = None  # who stored it: cli, api, llm:brain_remember, mcp:<client>
    turn: str | None = None  # the tool call or turn that stored it, when the caller knows one
    created: str | None = None
    stored: bool = True  # False when the same fact was already there (nothing new was stored)
    embedding: dict | None = None  # set by SecondBrain.remember: what embedding did, or why not
    superseded_by: int | None = None  # the newer fact that replaced this one
    superseded: str | None = None  # when it was replaced
    supersedes: int | None = None  # set by remember(supersedes=): the older fact this one replaced

    @property
    def citation(self) -> str:
        return f"{PREFIX}{self.id}"

    def as_dict(self) -> dict:
        return {"citation": self.citation, **asdict(self)}


def tidy(text: str) -> str:
    """The text as stored: no trailing spaces on a line, no blank lines at either end."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines()).strip()


def fact_key(text: str) -> str:
    """Two texts that differ only in spacing and line breaks are the same fact."""
    return text_sha(" ".join(text.split()))


def split_tags(tags: Iterable[str]) -> list[str]:
    """Trimmed, without empties or repeats, in the order given. A tag may hold a
    comma-separated list ("billing, 2026"), as a model writes tags into one string."""
    out: list[str] = []
    for raw in tags:
        for tag in str(raw).split(","):
            tag = " ".join(tag.split())
            if tag and tag not in out:
                out.append(tag)
    return out


def remember(brain: Brain, gate: "Gate", text: str, *, max_chars: int, tags: Iterable[str] = (),
             project: str | None = None, origin: str | None = None,
             turn: str | None = None, supersedes: int | None = None) -> Fact:
    """Store `text` as a fact (through the gate) and its chunk, in one transaction; returns the
    Fact. The same fact again returns the stored one, with the new tags added to it. With
    `supersedes`, the fact of that id is marked as replaced by this one (checked before
    anything is stored).

    A fact already superseded by another is refused, naming the newer: marking it again would
    leave the newer current beside this one (two answers to one question), and quietly
    superseding the newer instead would replace a fact the caller has not seen, perhaps
    one a model stored. Remembering the newer's text again is the same step retried: it
    passes and changes nothing (the newer stays superseded if it since was)."""
    if not isinstance(text, str):
        raise ValueError("a fact must be text")
    if supersedes is not None:
        if isinstance(supersedes, bool) or not isinstance(supersedes, int):
            raise ValueError("supersedes is the id of a fact (a whole number, from: llm brain facts)")
        if not _held(brain, supersedes):
            raise BrainError(f"no fact {supersedes} to supersede (list them with: llm brain facts)")
    body, tag_list, (project, origin, turn) = gate.fact(text, split_tags(tags), [project, origin, turn])
    body = tidy(body)
    if not body:
        raise ValueError("nothing to remember: the text is empty")
    if len(body) > max_chars:
        raise ValueError(
            f"a fact is at most {max_chars} characters (this one has {len(body)}); "
            "store longer text as a note: llm brain ingest - --name NAME")
    tag_list = split_tags(tag_list)
    project, origin, turn = (" ".join(v.split()) or None if v else None for v in (project, origin, turn))
    key = fact_key(body)
    conn = brain.conn
    with brain.write():
        row = conn.execute(f"SELECT {COLUMNS} FROM facts WHERE sha = ?", (key,)).fetchone()
        if row and row[0] == supersedes:
            raise ValueError(f"fact:{supersedes} says the same: a fact cannot supersede itself")
        newer = (conn.execute("SELECT superseded_by FROM facts WHERE id = ?", (supersedes,)).fetchone()
                 or (None,))[0]
        retried = newer is not None and row is not None and newer == row[0]
        if newer is not None and not retried:
            raise BrainError(f"fact {supersedes} was already superseded by fact {newer}; "
                             f"to replace that one, use --supersedes {newer}")
        if row:
            fact = _fact(row, stored=False)
            added = [t for t in tag_list if t not in fact.tags]
            if added:
                fact.tags += added
                conn.execute("UPDATE facts SET tags = ? WHERE id = ?", (json.dumps(fact.tags), fact.id))
        else:
            created = now_iso()
            fact_id = _next_id(brain)
            conn.execute(
                "INSERT INTO facts(id, text, source, created, tags, origin, turn, project, sha) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (fact_id, body, SOURCE, created, json.dumps(tag_list), origin, turn, project, key))
            fact = Fact(id=fact_id, text=body, tags=tag_list, project=project,
                        origin=origin, turn=turn, created=created)
        _stage(brain, gate, fact)
        if supersedes is not None:
            if not retried:  # (a retry changes nothing, the date neither)
                # the newer is current, even if it was once superseded itself
                conn.execute("UPDATE facts SET superseded_by = NULL, superseded = NULL WHERE id = ?",
                             (fact.id,))
                conn.execute("UPDATE facts SET superseded_by = ?, superseded = ? WHERE id = ?",
                             (fact.id, now_iso(), supersedes))
                fact.superseded_by = fact.superseded = None
            fact.supersedes = supersedes
    return fact


def _next_id(brain: Brain) -> int:
    """An id no fact of this brain has had: a model may still hold `fact:N` of a forgotten fact
    and must not cite or supersede a newer one by it (SQLite alone reuses the highest id once
    it is deleted). The highest id given is kept in `meta`, inside the caller's transaction."""
    highest = max(brain.conn.execute("SELECT coalesce(max(id), 0) FROM facts").fetchone()[0],
                  int(brain.get_meta(HIGHEST_ID) or 0))
    brain.set_meta(HIGHEST_ID, str(highest + 1))
    return highest + 1


def superseded_chunks(conn) -> dict[int, tuple[int, str | None]]:
    """The chunks of superseded facts: chunk id -> (the newer fact's id, when it was replaced)."""
    return {cid: (newer, when) for cid, newer, when in conn.execute(
        "SELECT c.id, f.superseded_by, f.superseded FROM facts f JOIN chunks c ON c.path = f.path "
        "WHERE f.superseded_by IS NOT NULL")}


def _stage(brain: Brain, gate: "Gate", fact: Fact) -> None:
    """(Re)stage a fact's chunk: even a known fact's, so its chunk is there whatever happened
    to it before."""
    brain.stage(path=fact.citation, chunks=[ChunkRow(
        fact.text, None, None, meta={"tags": fact.tags} if fact.tags else None)],
        project=fact.project, source=SOURCE, ts=fact.created, role=ROLE, replace=True, rules=gate.rules)
    chunk_id = brain.conn.execute("SELECT id FROM chunks WHERE path = ?", (fact.citation,)).fetchone()[0]
    brain.conn.execute("UPDATE facts SET path = ?, chunk_id = ? WHERE id = ?",
                       (fact.citation, chunk_id, fact.id))


def restage(brain: Brain, gate: "Gate") -> None:
    """Every fact through the gate again (the scrub rules changed): its row and its chunk."""
    for row in brain.conn.execute(f"SELECT {COLUMNS} FROM facts ORDER BY id").fetchall():
        old = _fact(row)
        body, tags, (project, origin, turn) = gate.fact(old.text or "", old.tags,
                                                            [old.project, old.origin, old.turn])
        fact = Fact(id=old.id, text=tidy(body), tags=split_tags(tags), project=project, origin=origin,
                    turn=turn, created=old.created, superseded_by=old.superseded_by, superseded=old.superseded)
        with brain.write():
            brain.conn.execute("UPDATE facts SET text = ?, tags = ?, project = ?, origin = ?, turn = ? "
                               "WHERE id = ?", (fact.text, json.dumps(fact.tags), fact.project,
                                                fact.origin, fact.turn, fact.id))
            _stage(brain, gate, fact)


def facts(brain: Brain) -> list[Fact]:
    """Every remembered fact, oldest first."""
    rows = brain.conn.execute(f"SELECT {COLUMNS} FROM facts ORDER BY id").fetchall()
    return [_fact(row) for row in rows]


def forget(brain: Brain, fact_id: int) -> None:
    """Remove a fact everywhere: its row, its chunk, its search entry and vector. A fact it
    superseded is current again (store.Brain.forget)."""
    if not _held(brain, fact_id):
        raise BrainError(f"no fact {fact_id} (list them with: llm brain facts)")
    with brain.write():
        brain.forget(paths=[f"{PREFIX}{fact_id}"])
        brain.conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))


def _held(brain: Brain, fact_id: int) -> bool:
    """Is there a fact of this id? (An id past SQLite's integers is none: it was an OverflowError.)"""
    return -2**63 <= fact_id < 2**63 and brain.conn.execute(
        "SELECT 1 FROM facts WHERE id = ?", (fact_id,)).fetchone() is not None


COLUMNS = "id, text, tags, project, origin, turn, created, superseded_by, superseded"


def _fact(row: tuple, stored: bool = True) -> Fact:
    fid, text, tags, project, origin, turn, created, superseded_by, superseded = row
    return Fact(id=fid, text=text, tags=json.loads(tags) if tags else [], project=project,
                origin=origin, turn=turn, created=created, stored=stored,
                superseded_by=superseded_by, superseded=superseded)
