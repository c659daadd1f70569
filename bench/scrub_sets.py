"""The texts the scrubber is measured on, loaded the same way by every scrub benchmark.

Each set yields ``Doc`` records: an id unique across sets, the text, and for labelled sets the
secrets that must go (``secrets``) or ``None`` for a text that must stay as it is. A set that is
not on this machine is skipped (``available()`` says which are).

Sets
  own          the shared corpus (../shared/secrets): positives, negatives, optional e-mails
  peer         gitleaks' and trufflehog's fixtures in note-like context (../shared/secrets/peer):
               the development half of the scanners' fixtures
  scanners     fixtures written here from the public rules and tests of scanners the corpora
               above do not use (bench/data/scanners/, see its README): unseen by the rules
  languages    secrets in notes, chats, mail and settings in 38 languages (bench/data/languages/;
               which texts are held out is each record's "held", as its README says)
  otherwise    secrets written with invisible characters, full-width forms, escapes and wraps
               (bench/data/otherwise/; every other text held out, as its README says)
  notes        real notes: jbranchaud-til (1,872) and tldr-zh (1,161) archives
  machine      real documents on this machine: the Python standard library's sources, the
               Python documentation's topics (pydoc_data), man pages rendered to text, package
               READMEs (site-packages METADATA) and /usr/share/doc texts; no secret in them
  synthetic    the personal-notes recall set (bench/data/notes) and SciFact abstracts

Held out: every set that is split carries ``held`` = True for about a third of its documents
(by a hash of the id, so the split never moves). Rules are tuned on the rest; figures are
reported on the held-out third.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared"))
SECRETS = os.path.join(SHARED, "secrets")
DATA = os.path.join(SHARED, "data")
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "out", "scrub_cache")

# how many of each machine source are read (a deterministic sample: the smallest hashes)
MAN_PAGES = 1500
STDLIB_FILES = 900
DOC_FILES = 700


@dataclass
class Doc:
    id: str
    text: str
    set: str
    source: str = ""
    secrets: list[str] | None = None  # must not survive (None: a negative, must stay unchanged)
    strict: bool = True  # a negative that must not change at all (not a 'borderline' one)
    placeholder: bool = False  # a scanner's positive that is really a placeholder
    held: bool = False
    extra: dict = field(default_factory=dict)


def held_out(doc_id: str) -> bool:
    """A fixed third of every split set: decided by the id alone."""
    return int(hashlib.sha1(doc_id.encode()).hexdigest()[:8], 16) % 3 == 0


def _jsonl(path: str) -> list[dict]:
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    if not os.path.exists(path):
        return []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _secrets_of(rec: dict) -> list[str]:
    out = [rec["secret"]] if rec.get("secret") else []
    for key in ("secret_parts", "also"):
        v = rec.get(key)
        if isinstance(v, list):
            out += [x for x in v if x]
        elif isinstance(v, str) and v:
            out.append(v)
    return out


def own() -> Iterator[Doc]:
    for name in ("positives", "negatives", "optional_emails"):
        for i, rec in enumerate(_jsonl(os.path.join(SECRETS, name + ".jsonl"))):
            doc_id = f"own/{name}/{i}"
            if name == "positives":
                yield Doc(doc_id, rec["text"], "own", rec.get("kind", ""), _secrets_of(rec))
            elif name == "negatives":
                yield Doc(doc_id, rec["text"], "own", rec.get("kind", ""),
                          strict=rec.get("difficulty", "normal") != "borderline")
            else:
                yield Doc(doc_id, rec["text"], "own", "email", extra={"email": rec})


def peer() -> Iterator[Doc]:
    folder = os.path.join(SECRETS, "peer")
    for rec in _jsonl(os.path.join(folder, "positives.jsonl")):
        yield Doc("peer/" + rec["id"], rec["text"], "peer", rec.get("source", ""), _secrets_of(rec),
                  placeholder=bool(rec.get("placeholder_like")), extra={"rule": rec.get("rule")})
    for rec in _jsonl(os.path.join(folder, "negatives.jsonl")):
        yield Doc("peer/" + rec["id"], rec["text"], "peer", rec.get("source", ""),
                  strict=rec.get("difficulty", "normal") == "normal", extra={"rule": rec.get("rule")})


def scanners() -> Iterator[Doc]:
    """bench/data/scanners/*.jsonl: {"id", "scanner", "text", "secret" or "secrets" (positives);
    "difficulty": "borderline" marks a negative that is not a strict one}."""
    folder = os.path.join(HERE, "data", "scanners")
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        for rec in _jsonl(os.path.join(folder, name)):
            secrets = rec.get("secrets") or ([rec["secret"]] if rec.get("secret") else None)
            doc_id = "scanners/" + rec["id"]
            yield Doc(doc_id, rec["text"], "scanners", rec.get("scanner", name[:-6]), secrets,
                      strict=rec.get("difficulty", "normal") != "borderline",
                      placeholder=bool(rec.get("placeholder")), held=held_out(doc_id),
                      extra={"rule": rec.get("rule", "")})


def languages() -> Iterator[Doc]:
    """bench/data/languages/*.jsonl: {"id", "lang", "text", "secrets" (empty: a negative),
    "held"}: secrets in notes written in 38 languages (see its README)."""
    folder = os.path.join(HERE, "data", "languages")
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl"):
            for rec in _jsonl(os.path.join(folder, name)):
                yield Doc("languages/" + rec["id"], rec["text"], "languages", rec["lang"],
                          rec["secrets"] or None, held=bool(rec["held"]))


def otherwise() -> Iterator[Doc]:
    """bench/data/otherwise/set.jsonl: {"id", "kind", "text", "secrets" (empty: a negative),
    "held"}: secrets written with invisible characters, full-width forms, escapes, wraps (see its
    README)."""
    path = os.path.join(HERE, "data", "otherwise", "set.jsonl")
    if os.path.exists(path):
        for rec in _jsonl(path):
            yield Doc("otherwise/" + rec["id"], rec["text"], "otherwise", rec["kind"],
                      rec["secrets"] or None, held=bool(rec["held"]))


def structured() -> Iterator[Doc]:
    """bench/data/structured/set.jsonl: {"id", "structure", "text", "secrets" (empty: a
    negative)}: secrets inside inline HTML, Markdown, mail quoting, diffs, shells, logs, CSV,
    configuration, chats and wrapped lines (see its README). All of it development data."""
    path = os.path.join(HERE, "data", "structured", "set.jsonl")
    if os.path.exists(path):
        for rec in _jsonl(path):
            yield Doc("structured/" + rec["id"], rec["text"], "structured", rec["structure"],
                      rec["secrets"] or None, held=False)


def _tar(path: str) -> Iterator[tuple[str, str]]:
    if not os.path.exists(path):
        return
    with tarfile.open(path, "r:gz") as tar:
        for m in tar:
            if m.isfile():
                yield m.name, tar.extractfile(m).read().decode("utf-8", "replace")


def notes() -> Iterator[Doc]:
    for name in ("jbranchaud-til", "tldr-zh"):
        for member, text in _tar(os.path.join(DATA, name, "notes.tar.gz")):
            doc_id = f"notes/{name}/{member}"
            yield Doc(doc_id, text, "notes", name, held=held_out(doc_id))


def _sample(paths: list[str], n: int) -> list[str]:
    """The n paths with the smallest hashes: a sample that does not move when files are added."""
    return sorted(sorted(paths, key=lambda p: hashlib.sha1(p.encode()).hexdigest())[:n])


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if path.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            return None
    if b"\0" in raw[:4096]:
        return None
    return raw.decode("utf-8", "replace")


def _man_text(path: str) -> str | None:
    """A man page as a reader sees it: rendered to plain text (cached under bench/out)."""
    key = hashlib.sha1(path.encode()).hexdigest()[:16]
    cached = os.path.join(CACHE, "man", key + ".txt")
    if os.path.exists(cached):
        with open(cached, encoding="utf-8") as f:
            return f.read()
    try:
        raw = subprocess.run(["man", "-l", path], capture_output=True, timeout=30,
                             env={**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "",
                                  "LANG": "C.UTF-8"}).stdout
        text = subprocess.run(["col", "-bx"], input=raw, capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    out = text.decode("utf-8", "replace")
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    with open(cached, "w", encoding="utf-8") as f:
        f.write(out)
    return out


def _stdlib() -> str:
    return sysconfig.get_paths()["stdlib"]


def machine() -> Iterator[Doc]:
    """Real documents on this machine (no secrets in them): every redaction is a verdict to give."""
    lib = _stdlib()
    py = []
    for root, dirs, files in os.walk(lib):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
        py += [os.path.join(root, f) for f in files if f.endswith(".py")]
    for path in _sample(py, STDLIB_FILES):
        text = _read(path)
        if text:
            doc_id = "machine/stdlib/" + os.path.relpath(path, lib)
            source = "stdlib-tests" if doc_id.startswith("machine/stdlib/test/") else "stdlib"
            yield Doc(doc_id, text, "machine", source, held=held_out(doc_id))
    try:
        from pydoc_data.topics import topics
    except ImportError:
        topics = {}
    for name in sorted(topics):
        doc_id = "machine/pydoc/" + name
        yield Doc(doc_id, topics[name], "machine", "pydoc", held=held_out(doc_id))
    man = []
    for section in "12345678":
        folder = f"/usr/share/man/man{section}"
        if os.path.isdir(folder):
            man += [os.path.join(folder, f) for f in os.listdir(folder)]
    for path in _sample(man, MAN_PAGES):
        text = _man_text(path)
        if text and text.strip():
            doc_id = "machine/man/" + os.path.basename(path)
            yield Doc(doc_id, text, "machine", "man", held=held_out(doc_id))
    seen = set()
    for site in sorted({p for p in sys.path if p.endswith("site-packages")} | {sysconfig.get_paths()["purelib"]}):
        if not os.path.isdir(site):
            continue
        for d in sorted(os.listdir(site)):
            meta = os.path.join(site, d, "METADATA")
            if d.endswith(".dist-info") and os.path.exists(meta) and d not in seen:
                seen.add(d)
                text = _read(meta)
                if text:
                    doc_id = "machine/readme/" + d
                    yield Doc(doc_id, text, "machine", "readme", held=held_out(doc_id))
    docs = []
    for root, dirs, files in os.walk("/usr/share/doc"):
        dirs.sort()
        for f in files:
            low = f.lower()
            if low.startswith(("readme", "news", "todo", "authors")) or low.endswith(
                    (".md", ".txt", ".rst", ".md.gz", ".txt.gz", ".rst.gz")):
                docs.append(os.path.join(root, f))
    for path in _sample(docs, DOC_FILES):
        text = _read(path)
        if text and text.strip():
            doc_id = "machine/doc/" + os.path.relpath(path, "/usr/share/doc")
            yield Doc(doc_id, text, "machine", "doc", held=held_out(doc_id))


def synthetic() -> Iterator[Doc]:
    for rec in _jsonl(os.path.join(HERE, "data", "notes", "corpus.jsonl")):
        doc_id = "synthetic/notes/" + str(rec.get("id") or rec.get("_id"))
        yield Doc(doc_id, rec.get("text", ""), "synthetic", "notes")
    for i, rec in enumerate(_jsonl(os.path.join(DATA, "scifact", "corpus.jsonl"))):
        if i >= 2000:
            break
        yield Doc("synthetic/scifact/" + rec["_id"], rec.get("title", "") + "\n\n" + rec.get("text", ""),
                  "synthetic", "scifact")


SETS = {"own": own, "peer": peer, "scanners": scanners, "languages": languages, "otherwise": otherwise,
        "structured": structured, "notes": notes,
        "machine": machine, "synthetic": synthetic}


def load(names=None) -> list[Doc]:
    """Every document of the named sets (all sets by default) that is on this machine."""
    docs = []
    for name in names or SETS:
        docs += list(SETS[name]())
    return docs
