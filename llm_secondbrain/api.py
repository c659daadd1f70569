"""The Python API, and the one façade every face calls (CLI, fragment, tool, MCP).

    from llm_secondbrain import SecondBrain
    with SecondBrain.open() as brain:          # or SecondBrain.open("path/to/brain.db")
        report = brain.ingest(["~/notes"], project="notes")
        for hit in brain.recall("what did we decide about invoicing?", k=5):
            print(hit.citation, hit.score, hit.text[:80])

The faces only parse and format: whatever one face can do, the others do the same way.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from . import config
from .options import RecallOptions
from .recall import Hit, RecallResult
from .store import CLOSED, Brain, BrainError, open_brain, reading

if TYPE_CHECKING:
    from .ingest import IngestReport
    from .ingest.upkeep import Forgotten, UpdateReport

Paths = str | os.PathLike | Iterable[str | os.PathLike]  # one path, or several


class SecondBrain:
    """An open brain plus the settings it runs with (model, Ollama URL, chunk sizes)."""

    def __init__(self, brain: Brain, settings: config.Settings):
        self.brain = brain
        self.settings = settings

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, create: bool = True,
             settings: config.Settings | None = None) -> "SecondBrain":
        if path is not None:
            path = _path(path)  # SecondBrain.open(123) made a brain file named "123"
        settings = settings or config.load(db=path)
        if path is not None and settings.db_path != Path(os.path.expanduser(str(path))):
            settings = config.replace(settings, db_path=Path(os.path.expanduser(str(path))))
        return cls(open_brain(settings.db_path, create=create), settings)

    def close(self) -> None:
        self.brain.close()

    def __enter__(self) -> "SecondBrain":
        if self.brain.closed:  # a second `with` block on the same brain
            raise BrainError(CLOSED)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------

    def ingest(self, paths: Paths, *, embed: bool = True, progress: bool = False,
               remember: bool = True, **options: Any):
        """Ingest files, folders and '-' (see `llm brain ingest --help` for the options), and
        with llm_logs=True the conversations llm logged (logs_db=, include_brain_turns=,
        since=), then embed what was staged unless embed=False. `on_skip(name, reason)` hears
        of every file left out, by the name the brain may show.

        Returns the IngestReport; its `embedding` says what embedding did, or why it is
        pending (Ollama down: the chunks are stored all the same and `embed()` finishes
        later). Raises only for what stops the ingest itself; Ctrl-C raises IngestInterrupted
        carrying the report of what was stored. Each file or folder is remembered as a root
        with these options (`update` replays them); `remember=False` is for a one-off."""
        from .embed import pending_count
        from .ingest import Gate, IngestInterrupted, ingest
        from .ingest import roots

        targets = _paths(paths)
        settings = self.model_settings()
        report = ingest(self.brain, targets, settings, **options)
        if remember:
            gate = Gate(settings)
            labels = {k: gate.label(v) if k in ("project", "source") else v for k, v in options.items()}
            roots.record(self.brain, targets, labels, strip_emails=self.settings.strip_emails)
        if embed:
            try:
                report.embedding = self.embed_pending_quietly(progress=progress)
            except KeyboardInterrupt:
                report.embedding = {"pending": pending_count(self.brain), "error": "interrupted"}
                raise IngestInterrupted(report) from None
        return report

    def embed_pending_quietly(self, *, progress: bool = False) -> dict:
        """Embed what is pending; an embedding failure becomes part of the answer instead of
        an exception, because the text is stored and a later `embed` finishes the job."""
        from .embed import pending_count
        from .ollama import EmbedError

        if not pending_count(self.brain):
            return {"pending": 0}
        try:
            return self.embed(progress=progress).as_dict()
        except EmbedError as e:
            return {"pending": pending_count(self.brain), "error": e.message}

    def embed(self, **options: Any):
        """Embed every pending chunk (raises ollama.EmbedError subclasses when it cannot)."""
        from .embed import embed_pending

        return embed_pending(self.brain, self.model_settings(), **options)

    def reembed(self, **options: Any):
        """Rebuild every vector with the current model; resumable."""
        from .embed import embed_pending

        return embed_pending(self.brain, self.model_settings(), reembed=True, **options)

    def model_settings(self) -> config.Settings:
        """The settings embedding and recall run with: the model (and prefixes) that built this
        brain's vectors, unless SECONDBRAIN_EMBED_MODEL names one. A brain made with
        all-minilm must not answer lexically in every shell that lacks the variable."""
        import json

        from .embed import REEMBED_KEY, read_fingerprint

        settings = self.settings
        if settings.embed_model_set:
            return settings
        built = read_fingerprint(self.brain)
        if built is None:
            target = self.brain.get_meta(REEMBED_KEY)  # a reembed under way
            if target is None:
                return settings
            built = json.loads(target)
        return config.replace(
            settings, embed_model=built["embed_model"],
            max_chars=settings.max_chars if settings.max_chars_set else config.max_chars_for(built["embed_model"]),
            doc_prefix=settings.doc_prefix if settings.doc_prefix is not None else built.get("doc_prefix"),
            query_prefix=settings.query_prefix if settings.query_prefix is not None else built.get("query_prefix"),
        )

    def update(self, paths: Paths | None = None, *, embed: bool = True,
               progress: bool = False, on_skip=None) -> UpdateReport:
        """Re-ingest every root (or the roots named) with the options it was ingested with,
        then embed what is pending. Returns an ingest.upkeep.UpdateReport: per root and in
        total."""
        from .ingest import upkeep

        paths = None if paths is None else _paths(paths)
        report = upkeep.update(self.brain, self.model_settings(), paths, on_skip=on_skip)
        if embed:
            report.total.embedding = self.embed_pending_quietly(progress=progress)
        return report

    def roots(self) -> list[dict]:
        """The roots `update` replays: path, options, what was forgotten inside it, last
        explicit ingest, last update."""
        from .ingest import roots

        return [root.as_dict() for root in roots.all_roots(self.brain)]

    def remove_root(self, path: str | os.PathLike) -> None:
        """Stop tracking a root; its chunks stay until `forget`."""
        from .ingest import roots
        from .ingest.sources import resolve

        path = _path(path)
        if not roots.remove(self.brain, path if path == roots.LLM_LOGS else resolve(path)):
            raise ValueError(f"not a root: {path} (see: llm brain roots)")

    def refresh(self, paths: Paths) -> IngestReport:
        """Bring these files (or folders) in line with the disk, each with its root's options:
        re-ingest what changed, remove what is gone. Returns the IngestReport."""
        from .ingest import roots, upkeep

        known = roots.all_roots(self.brain)
        report, touched = upkeep.reconcile(self.brain, self.model_settings(), _paths(paths), known)
        roots.mark_updated(self.brain, touched)
        return report

    def forget(self, *, paths: Paths = (), project: str | None = None, source: str | None = None) -> Forgotten:
        """Remove chunks everywhere by path (a file or a folder, typed as a user types it; a
        stdin --name), project or source. What is forgotten inside an ingested root stays out
        of it (until it is ingested explicitly again). ValueError for what the brain does not
        hold."""
        from .ingest import upkeep

        return upkeep.forget(self.brain, self.settings, paths=_paths(paths), project=project, source=source)

    def remember(self, text: str, tags: str | Iterable[str] = (), project: str | None = None,
                 origin: str | None = "api", turn: str | None = None, *, embed: bool = True,
                 supersedes: int | None = None):
        """Store `text` as a fact (scrubbed first; the same fact twice is stored once) that
        recall finds and cites as `fact:<id>`; returns the facts.Fact. It is embedded at once
        when the embedding server answers, else it waits in the backlog (`fact.embedding`
        says which) and is found by its words meanwhile. `supersedes=ID` marks the fact of
        that id as replaced by this one: recall leaves it out unless asked for `history`, and
        forgetting this fact makes it current again. `tags="home"` is one tag, not four
        letters; "home, keys" is two, as the brain_remember tool's tags are."""
        from . import facts
        from .ingest import Gate

        if isinstance(tags, str):
            tags = [tags]
        _text("project", project)
        settings = self.model_settings()
        fact = facts.remember(self.brain, Gate(settings), text, max_chars=settings.max_chars, tags=tags,
                              project=project, origin=origin, turn=turn, supersedes=supersedes)
        if embed:
            fact.embedding = self.embed_pending_quietly()
        return fact

    def facts(self) -> list:
        """Every remembered fact (facts.Fact), oldest first."""
        from . import facts

        return facts.facts(self.brain)

    def forget_fact(self, fact_id: int) -> None:
        """Remove one fact everywhere; BrainError when there is no such fact."""
        from . import facts

        facts.forget(self.brain, fact_id)

    def vacuum(self) -> tuple[int, int]:
        return self.brain.vacuum()

    # -- reading -------------------------------------------------------------------------------

    def stats(self) -> dict:
        """What the brain holds, and which model answers queries (`query_model`; None
        when recall answers lexically, with `query_note` saying why)."""
        from .scrub import rules_identity

        stats = self.brain.stats()
        stats["scrub_rules"] = rules_identity()
        settings = self.model_settings()
        stats["query_model"], stats["query_note"] = settings.embed_model, None
        if stats["embed_model"] is None:
            stats["query_model"], stats["query_note"] = None, "no vectors yet: recall answers by words"
        elif settings.embed_model != stats["embed_model"]:
            stats["query_model"] = None
            stats["query_note"] = (f"SECONDBRAIN_EMBED_MODEL={settings.embed_model} is not the model that "
                                   f"built the vectors: recall answers by words until llm brain reembed")
        return stats

    def sources(self) -> list[dict]:
        return self.brain.sources()

    def recall(self, query: str, options: RecallOptions | None = None, **kwargs: Any) -> list[Hit]:
        """The top hits for `query`; keyword arguments are RecallOptions fields (k, mode,
        project, source, path, since, until, ...). See `search` for the degradation notes."""
        return self.search(query, options, **kwargs).hits

    def search(self, query: str, options: RecallOptions | None = None, *, fresh: bool = False,
               **kwargs: Any) -> RecallResult:
        """Like `recall`, returning a RecallResult: the hits, the mode actually used and, when
        dense retrieval was unavailable, one-line notes saying why (it never raises for that:
        it answers lexically). Hits whose file changed or vanished since it was ingested are
        in `stale`, with a note; `fresh=True` re-ingests those files and recalls again.

        A time phrase in the query ("last week", "in March", "since May": recall.when) is a
        date window in the user's time zone, searched with the phrase taken out
        (`result.when`), unless the options give since/until (the phrase is then a word of
        the query) or no_dates. When nothing in the window clears the relevance floor the
        phrase may have been content ("the March madness note"): the whole query is searched
        over every date, and `result.when.fallback` and a note say so."""
        import dataclasses

        if not isinstance(query, str):
            raise ValueError("the query must be text")
        if not query.strip():
            raise ValueError("the query is empty: say what to look for")
        if kwargs:
            options = RecallOptions.build(**{**_as_dict(options), **kwargs})
        options = self._as_stored(_checked(options or RecallOptions()))
        self._check_labels(options)
        when = None
        if not (options.no_dates or options.since or options.until):
            from .recall.when import find

            when = find(query)
        if when is None:
            return self._search(query, options, fresh)
        from .recall.query import STOPWORDS, _WORD

        asked = any(w.lower() not in STOPWORDS for w in _WORD.findall(when.rest))
        result = self._search(when.rest or query, options.replace(since=when.since, until=when.until), fresh)
        if not asked:  # "what did I do yesterday": the window is the question
            result.relevant = bool(result.hits)
        if result.relevant and result.hits:
            result.when = when
            return result
        result = self._search(query, options, fresh)
        result.when = dataclasses.replace(when, fallback=True)
        result.notes.append(f"nothing dated {when.phrase} ({when.shown}) matches: searched every date")
        return result

    def _search(self, query: str, options: RecallOptions, fresh: bool) -> RecallResult:
        from .recall import recall
        from .recall.stale import stale_hits, stale_note

        vector, notes = (None, [])
        if options.mode != "lexical":
            vector, notes = self.query_vector(query)
        result = reading(lambda: recall(self.brain.conn, query, options, vector))
        result.stale, files = stale_hits(self.brain, result.hits)
        if fresh and files:
            self.refresh(sorted(files))
            if options.mode != "lexical":
                self.embed_pending_quietly()
                vector, notes = self.query_vector(query)
            result = reading(lambda: recall(self.brain.conn, query, options, vector))
            result.stale, files = stale_hits(self.brain, result.hits)
        result.notes = notes + result.notes + ([stale_note(len(files))] if files else [])
        return result

    def _as_stored(self, options: RecallOptions) -> RecallOptions:
        """A project or source as the brain stores it: scrubbed, as ingest stored the label
        (`--project pw=…` is kept as 'pw=[REDACTED:password]', and found by what was typed)."""
        labels = {name: getattr(options, name) for name in ("project", "source", "exclude_source")
                  if getattr(options, name) is not None}
        if not labels:
            return options
        from .ingest.gate import Gate

        gate = Gate(self.settings)
        return options.replace(**{name: gate.label(value) or value for name, value in labels.items()})

    def _check_labels(self, options: RecallOptions) -> None:
        """A project, source or role the brain does not hold is a typo more often than a
        question: it is named with the ones the brain holds, not answered with "nothing"."""
        for option in ("project", "source", "role"):
            value = getattr(options, option)
            if value is None or self.brain.conn.execute(
                    f"SELECT 1 FROM chunks WHERE {option} = ? LIMIT 1", (value,)).fetchone():
                continue
            known = [r[0] for r in self.brain.conn.execute(
                f"SELECT DISTINCT {option} FROM chunks WHERE {option} IS NOT NULL ORDER BY 1 LIMIT 20")]
            raise ValueError(f"no {option} named {value!r} in this brain"
                             + (f"; {option}s: {', '.join(known)}" if known else ""))

    def query_vector(self, query: str) -> tuple[bytes | None, list[str]]:
        """The query's embedding as stored vectors are (float32, unit length), or None with a
        one-line reason why meaning cannot take part."""
        from .embed import check_fingerprint, read_fingerprint
        from .ollama import EmbedError, serialize, shared_embedder

        stored = read_fingerprint(self.brain)
        embedded = self.brain.conn.execute(
            "SELECT 1 FROM chunks WHERE embedded = 1 LIMIT 1").fetchone()
        if stored is None or not embedded or not self.brain.has_vectors_table():
            return None, ["no vectors yet: answering lexically (run: llm brain embed)"]
        from .ingest import Gate

        try:
            embedder = shared_embedder(self.model_settings())
            check_fingerprint(self.brain, embedder)
            # the query leaves this machine (or this process) scrubbed, like everything else
            vector = serialize(embedder.embed_query(Gate(self.settings).shown(query)))
        except EmbedError as e:
            return None, [f"{e.message.rstrip('.')}: answering lexically"]
        except ValueError as e:
            return None, [f"the query embedding is unusable ({e}): answering lexically"]
        if stored["embed_dim"] and len(vector) // 4 != stored["embed_dim"]:
            return None, [
                f"the model returned {len(vector) // 4} dimensions but the brain holds "
                f"{stored['embed_dim']}: answering lexically (run: llm brain reembed)"]
        return vector, []


# Recall options that name something (matched as text in SQL): a list there reached SQLite as
# "Error binding parameter 0 - probably unsupported type".
_TEXT_OPTIONS = ("project", "source", "exclude_source", "role", "path", "format")


def _path(path: Any) -> str:
    """A path as the brain's code takes it: text, from a str or a Path."""
    if isinstance(path, (str, os.PathLike)):
        text = os.fspath(path)
        if isinstance(text, str):
            return text
    raise ValueError(f"a path must be text or a Path, not {type(path).__name__}")


def _paths(paths: Paths) -> list[str]:
    """One path or many: a lone "notes" is one folder, not the files n, o, t, e and s."""
    if isinstance(paths, (str, os.PathLike)):
        return [_path(paths)]
    if not isinstance(paths, Iterable):
        raise ValueError(f"paths must be a path or a list of paths, not {type(paths).__name__}")
    return [_path(p) for p in paths]


def _text(name: str, value: Any) -> None:
    """An option that names something is text (or None); anything else is said in one line."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be text, not {type(value).__name__}")


def _checked(options: RecallOptions) -> RecallOptions:
    """The options recall can use: a Path given as the path filter is its text."""
    if isinstance(options.path, os.PathLike):
        options = options.replace(path=os.fspath(options.path))
    for name in _TEXT_OPTIONS:
        _text(name, getattr(options, name))
    return options


def _as_dict(options: RecallOptions | None) -> dict:
    import dataclasses

    return dataclasses.asdict(options) if options is not None else {}


def context_text(result: RecallResult, budget: int) -> str:
    """Hits as text for a model: quoted as data in a fence the passages cannot close, each
    with its citation (`llm` never shows a fragment's or tool's source to the model), kind,
    date and a mark where it reads as instructions (recall.wrap). At most `budget` characters
    of passages."""
    from .recall.wrap import wrap

    return wrap(result, budget)
