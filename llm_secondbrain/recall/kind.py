"""What kind of source a chunk comes from (note, document, e-mail, web page, conversation,
fact), derived in one place from what the brain stores: its source label (`chunks.source`:
remember, llm) and the reader its file was read with (`files.format`). `chunks.source` alone
is a free label a user may set (`--source work`), so the format decides for files.

`KINDS` is the table, first match wins; the Python derivation and the SQL the filters use are
both made from it, so they cannot disagree."""
from __future__ import annotations

KINDS: list[tuple[str, str, dict]] = [
    # (id, how a person reads it, what the chunk has)
    ("fact", "fact", {"source": ("remember",)}),
    ("conversation", "conversation", {"source": ("llm",)}),
    ("email", "e-mail", {"format": ("mail",)}),
    ("webpage", "web page", {"format": ("html",)}),
    ("document", "document", {"format": ("pdf", "docx", "epub", "notebook")}),
    ("note", "note", {}),  # text, Markdown, standard input: what a person wrote down
]
NAMES = {kid: label for kid, label, _ in KINDS}
_ALIASES = {"mail": "email", "web": "webpage", "page": "webpage", "html": "webpage", "chat": "conversation",
            "doc": "document", "notes": "note", "facts": "fact", "emails": "email", "webpages": "webpage",
            "documents": "document", "conversations": "conversation"}


def kind_of(source: str | None, fmt: str | None) -> str:
    """The kind id of a chunk with this source label and file format."""
    for kid, _, rule in KINDS:
        if all((source if field == "source" else fmt) in values for field, values in rule.items()):
            return kid
    return "note"


def parse(value: str | None) -> tuple[str, ...] | None:
    """`--kind email,webpage` (spelled as people do: e-mail, web page, mail) -> kind ids; a
    kind the brain does not know is a one-line error listing the ones it does."""
    if value is None:
        return None
    found = []
    for part in str(value).split(","):
        key = "".join(ch for ch in part.lower() if ch.isalnum())
        if not key:
            continue
        key = _ALIASES.get(key, key)
        if key not in NAMES:
            raise ValueError(f"no kind {part.strip()!r}: kinds are {', '.join(NAMES)}")
        found.append(key)
    if not found:
        raise ValueError(f"say which kind: {', '.join(NAMES)}")
    return tuple(dict.fromkeys(found))


def sql(alias: str = "c") -> str:
    """The kind of chunk `alias` as an SQL expression (a CASE over KINDS)."""
    fmt = f"(SELECT f.format FROM files f WHERE f.path = {alias}.path)"
    cases = []
    for kid, _, rule in KINDS:
        if not rule:
            continue
        tests = [f"{alias}.source IN ({', '.join(repr(v) for v in values)})" if field == "source"
                 else f"{fmt} IN ({', '.join(repr(v) for v in values)})" for field, values in rule.items()]
        cases.append(f"WHEN {' AND '.join(tests)} THEN '{kid}'")
    return f"(CASE {' '.join(cases)} ELSE 'note' END)"


def kinds(conn, ids: list[int]) -> dict[int, str]:
    """Chunk id -> kind id."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {cid: kind_of(source, fmt) for cid, source, fmt in conn.execute(
        f"SELECT c.id, c.source, f.format FROM chunks c LEFT JOIN files f ON f.path = c.path "
        f"WHERE c.id IN ({marks})", ids)}
