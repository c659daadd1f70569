"""Recall's options, declared once.

The CLI's `recall` options, the Python API's keyword arguments, the fragment and tool (and the
MCP server's JSON schema) are all made from `RecallOptions`: a new option is one field here,
and no face can drift from the others. Each field's metadata says how a person meets it
(`help`, the CLI flag and its short alias) and whether it is a tuning knob for benchmarks
(`bench`), which the faces a model calls never offer.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

MODES = ("hybrid", "dense", "lexical")
FORMATS = ("text", "pdf", "docx", "html", "epub", "mail", "notebook")  # the readers' (ingest.readers)
FUSIONS = ("zscore", "rrf")
DEFAULT_K = 10
DEFAULT_POOL = 200  # candidates per lane; z statistics over their files (SciFact train: 50 -> 200 +0.002)
DEFAULT_RRF_K = 60
DEFAULT_FUSION = "zscore"
DEFAULT_PER_NOTE = 3  # chunks of one note among the hits: results spread over notes
MAX_K = 1000
MAX_POOL = 4096  # candidates a lane can take: sqlite-vec answers at most 4,096 neighbours a query
MAX_PER_NOTE = 100


def _opt(default: Any, help: str, *, flags: tuple[str, ...] = (), bench: bool = False,
         choices: tuple[str, ...] | None = None, minimum: float | None = None,
         maximum: float | None = None) -> Any:
    return field(default=default, metadata={
        "help": help, "flags": flags, "bench": bench, "choices": choices, "minimum": minimum,
        "maximum": maximum,
    })


@dataclass(frozen=True)
class RecallOptions:
    """What to recall and how; every face fills one of these."""

    k: int = _opt(DEFAULT_K, "How many hits", flags=("-k", "-n"), minimum=1, maximum=MAX_K)
    mode: str = _opt("hybrid", "Meaning and words fused, meaning only, or words only",
                     choices=MODES)
    project: str | None = _opt(None, "Only chunks of this project")
    source: str | None = _opt(None, "Only chunks of this source (files, stdin, llm, ...)")
    exclude_source: str | None = _opt(None, "Leave out chunks of this source (llm: your llm conversations)")
    role: str | None = _opt(None, "Only conversation chunks written by this role (user, assistant)")
    path: str | None = _opt(None, "Only chunks whose file path matches this glob")
    format: str | None = _opt(None, f"Only chunks of sources of this format ({', '.join(FORMATS)})")
    kind: str | None = _opt(None, "Only these kinds of source, comma-separated: note, document, email, "
                                  "webpage, conversation, fact")
    exclude_kind: str | None = _opt(None, "Leave out these kinds of source (email,webpage: mail and web "
                                          "pages, which anyone can write to you)")
    since: str | None = _opt(None, "Only chunks dated on or after this date (2026-03-01, "
                                   "2026-03-01T14:30, 7d, yesterday; bare dates in your time zone)")
    until: str | None = _opt(None, "Only chunks dated on or before this date (same forms as --since)")
    no_dates: bool = _opt(False, "Read no time phrase in the query (last week, in March) as a date "
                                 "window; --since/--until do the same")
    history: bool = _opt(False, "Also show remembered facts a newer fact superseded (after the current "
                                "ones, each with its dates)")
    per_note: int = _opt(DEFAULT_PER_NOTE, "At most this many chunks of one note",
                         flags=("--per-note",), minimum=1, maximum=MAX_PER_NOTE)
    pool: int = _opt(DEFAULT_POOL, "Candidates taken from each lane before fusion",
                     bench=True, minimum=1, maximum=MAX_POOL)
    fusion: str = _opt(DEFAULT_FUSION, "Hybrid: fuse normalised scores, or reciprocal ranks",
                       bench=True, choices=FUSIONS)
    rrf_k: int = _opt(DEFAULT_RRF_K, "RRF constant (with --fusion rrf)", bench=True, minimum=1)
    lexical_weight: float | None = _opt(
        None, "Hybrid: weight of the lexical lane against dense's 1 (default: chosen per query)",
        bench=True, minimum=0)
    exact: bool = _opt(False, "Dense: scan every stored vector exactly (no in-memory copy)",
                       bench=True)

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or self.k < 1:
            raise ValueError("k must be a whole number of at least 1")
        if self.k > MAX_K:
            raise ValueError(f"k must be at most {MAX_K}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, not {self.fusion!r}")
        if self.pool < 1 or self.rrf_k < 1 or self.per_note < 1:
            raise ValueError("pool, rrf_k and per_note must be at least 1")
        if self.pool > MAX_POOL:
            raise ValueError(f"pool must be at most {MAX_POOL}")
        if self.per_note > MAX_PER_NOTE:
            raise ValueError(f"per-note must be at most {MAX_PER_NOTE}")
        if self.lexical_weight is not None and not 0 <= self.lexical_weight < math.inf:
            raise ValueError("lexical_weight must be a number, at least 0")
        from . import dates
        from .recall import kind

        if isinstance(self.format, str):  # (the README's table writes PDF, DOCX: the ids are lower-case)
            object.__setattr__(self, "format", self.format.strip().lower())
            if self.format not in FORMATS:
                raise ValueError(f"no format {self.format!r}: formats are {', '.join(FORMATS)}")
        for name in ("kind", "exclude_kind"):  # spelled as people do (e-mail, web page); ids kept
            if getattr(self, name) is not None:
                object.__setattr__(self, name, ",".join(kind.parse(getattr(self, name))))
        # Compared with stored UTC instants; a bare --until date includes its whole day.
        if self.since is not None:
            object.__setattr__(self, "since", dates.parse(self.since))
        if self.until is not None:
            object.__setattr__(self, "until", dates.parse(self.until, end=True))

    def replace(self, **changes: Any) -> "RecallOptions":
        return dataclasses.replace(self, **changes)

    @classmethod
    def build(cls, **values: Any) -> "RecallOptions":
        """From keyword arguments where None means "the default" (as click and JSON give
        them); an unknown name is a one-line error, not a TypeError."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown recall option: {', '.join(unknown)}")
        return cls(**{k: v for k, v in values.items() if v is not None})


def json_schema(*, include_bench: bool = False, query: bool = True) -> dict:
    """A JSON schema of the options (for MCP tools and other machine callers)."""
    props: dict[str, dict] = {}
    if query:
        props["query"] = {"type": "string", "description": "What to look for: words, a question or an exact token"}
    for f in dataclasses.fields(RecallOptions):
        if f.metadata["bench"] and not include_bench:
            continue
        kind = {"int": "integer", "float": "number", "bool": "boolean"}.get(
            str(f.type).split(" |")[0], "string")
        prop: dict[str, Any] = {"type": kind, "description": f.metadata["help"]}
        if f.metadata["choices"]:
            prop["enum"] = list(f.metadata["choices"])
        if f.metadata["minimum"] is not None:
            prop["minimum"] = f.metadata["minimum"]
        if f.metadata["maximum"] is not None:
            prop["maximum"] = f.metadata["maximum"]
        if f.default is not None:
            prop["default"] = f.default
        props[f.name] = prop
    return {"type": "object", "properties": props, "required": ["query"] if query else []}


def click_options(fn):
    """Decorate a click command with one option per field (defaults left to RecallOptions)."""
    import click

    for f in reversed(dataclasses.fields(RecallOptions)):
        flags = f.metadata["flags"] or ("--" + f.name.replace("_", "-"),)
        kind = str(f.type).split(" |")[0]
        kwargs: dict[str, Any] = {"default": None, "help": f.metadata["help"]}
        if kind == "bool":
            kwargs = {"is_flag": True, "default": None, "help": f.metadata["help"]}
        elif f.metadata["choices"]:
            kwargs["type"] = click.Choice(f.metadata["choices"])
            kwargs["help"] += f" (default: {f.default})"
        elif kind == "int":
            kwargs["type"] = click.IntRange(min=f.metadata["minimum"])  # (a maximum: RecallOptions says it in one line)
            kwargs["help"] += f" (default: {f.default})"
        elif kind == "float":
            kwargs["type"] = click.FloatRange(min=f.metadata["minimum"])
        fn = click.option(*flags, f.name, **kwargs)(fn)
    return fn


def from_click(values: dict) -> RecallOptions:
    """Pop the option fields out of a click command's keyword arguments."""
    names = [f.name for f in dataclasses.fields(RecallOptions)]
    return RecallOptions.build(**{n: values.pop(n) for n in names if n in values})
