"""Environment variables -> one settings object, with local-first defaults.

Everything that names a place (the brain file, the Ollama server) or a model is configurable,
so the same brain can be copied between machines and pointed at a bigger box for compute.
Nothing here touches the disk or the network: reading settings must stay free.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DB = "~/.secondbrain/brain.db"
DEFAULT_OLLAMA_URL = "http://localhost:11434"
DEFAULT_EMBED_MODEL = "nomic-embed-text"
DEFAULT_MAX_CHARS = 1600  # about 400 tokens of English prose
DEFAULT_MIN_CHARS = 20
DEFAULT_FRAGMENT_CHARS = 6000  # the fragment's and tool's answer: several notes, never a flood

_TRUE = {"1", "true", "yes", "on"}


def _int_env(env: dict, name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


MAX_TIMEOUT_S = 86_400.0  # (a socket takes no timeout past what a C time_t holds; a day is plenty)


def _float_env(env: dict, name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of seconds, got {raw!r}")
    return value


def _positive(value: float, name: str) -> float:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value:g}")
    return value


def normalise_ollama_url(raw: str) -> str:
    """Accept what people put in OLLAMA_HOST (`0.0.0.0:11434`, `box:11434`) as well as full URLs."""
    raw = raw.strip().rstrip("/")
    if not raw:
        return DEFAULT_OLLAMA_URL
    if "://" not in raw:
        raw = "http://" + raw
    scheme, rest = raw.split("://", 1)
    host = rest.split("/", 1)[0]
    if host.startswith("0.0.0.0"):
        # 0.0.0.0 is a listen address; a client must talk to loopback.
        rest = "127.0.0.1" + rest[len("0.0.0.0"):]
    if ":" not in host.split("]")[-1]:
        rest = rest.replace(host, host + ":11434", 1)
    return f"{scheme}://{rest}"


@dataclass(frozen=True)
class Settings:
    db_path: Path
    ollama_url: str
    embed_model: str
    max_chars: int
    min_chars: int
    strip_emails: bool
    doc_prefix: str | None = None
    query_prefix: str | None = None
    timeout: float = 120.0
    retries: int = 3
    fragment_chars: int = DEFAULT_FRAGMENT_CHARS
    # Whether SECONDBRAIN_EMBED_MODEL was set: if not, a brain is embedded and queried with
    # the model that built its vectors (its fingerprint), and `embed_model` is only the
    # default for a brain that has none yet.
    embed_model_set: bool = True
    progress_seconds: float = 5.0  # between progress lines when stderr is not a terminal
    max_chars_set: bool = True  # SECONDBRAIN_MAX_CHARS given: else the chunk size follows the model
    scrub_allow: str | None = None  # a file of allow patterns, one regex a line
    read_seconds: float = 60.0  # the longest one document may take to read (ingest/worker.py)
    call_seconds: float = 10.0  # the longest an MCP call runs before it answers with a timeout
    extra: dict = field(default_factory=dict)


# Characters per chunk that a model's context reads whole (about 4 characters a token, less for
# code): a longer chunk's tail is never embedded. Matched as a prefix of the model's name.
_MODEL_CHARS = (
    ("all-minilm", 1000), ("all-mpnet", 1500), ("paraphrase-multilingual", 500),  # 256/384/128 pieces
    ("mxbai-embed-large", 1600), ("bge-", 1600), ("snowflake-arctic-embed", 1600),  # 512 tokens
    ("nomic-embed-text", 1600), ("granite-embedding", 1600),  # 8192 / 512 tokens
)


def max_chars_for(model: str) -> int:
    """The default chunk size for an embedding model: what its context reads whole (MiniLM
    truncates at 256 word pieces, about 1,000 characters), capped at DEFAULT_MAX_CHARS so a
    long-context model still gets chunks small enough to cite one passage."""
    name = model.lower().split("/")[-1]
    for prefix, chars in _MODEL_CHARS:
        if name.startswith(prefix):
            return min(chars, DEFAULT_MAX_CHARS)
    return DEFAULT_MAX_CHARS


def load(env: dict | None = None, db: str | os.PathLike | None = None) -> Settings:
    """Read settings from `env` (default: the process environment); `db` overrides SECONDBRAIN_DB."""
    env = dict(os.environ if env is None else env)
    db_raw = str(db) if db is not None else env.get("SECONDBRAIN_DB") or DEFAULT_DB
    ollama = env.get("OLLAMA_URL") or env.get("OLLAMA_HOST") or DEFAULT_OLLAMA_URL
    embed_model = (env.get("SECONDBRAIN_EMBED_MODEL") or DEFAULT_EMBED_MODEL).strip()
    max_chars = _int_env(env, "SECONDBRAIN_MAX_CHARS", max_chars_for(embed_model))
    min_chars = _int_env(env, "SECONDBRAIN_MIN_CHARS", DEFAULT_MIN_CHARS)
    if min_chars >= max_chars:
        raise ValueError("SECONDBRAIN_MIN_CHARS must be smaller than SECONDBRAIN_MAX_CHARS")
    return Settings(
        db_path=Path(os.path.expanduser(db_raw)),
        ollama_url=normalise_ollama_url(ollama),
        embed_model=embed_model,
        embed_model_set=bool((env.get("SECONDBRAIN_EMBED_MODEL") or "").strip()),
        max_chars_set=bool(env.get("SECONDBRAIN_MAX_CHARS", "").strip()),
        progress_seconds=_float_env(env, "SECONDBRAIN_PROGRESS_SECONDS", 5.0),
        max_chars=max_chars,
        min_chars=min_chars,
        strip_emails=env.get("SECONDBRAIN_STRIP_EMAILS", "").strip().lower() in _TRUE,
        doc_prefix=env.get("SECONDBRAIN_DOC_PREFIX"),
        query_prefix=env.get("SECONDBRAIN_QUERY_PREFIX"),
        timeout=min(_positive(_float_env(env, "SECONDBRAIN_OLLAMA_TIMEOUT", 120.0), "SECONDBRAIN_OLLAMA_TIMEOUT"),
                    MAX_TIMEOUT_S),
        retries=_int_env(env, "SECONDBRAIN_OLLAMA_RETRIES", 3),
        fragment_chars=_int_env(env, "SECONDBRAIN_FRAGMENT_CHARS", DEFAULT_FRAGMENT_CHARS),
        read_seconds=_positive(_float_env(env, "SECONDBRAIN_READ_SECONDS", 60.0), "SECONDBRAIN_READ_SECONDS"),
        call_seconds=_positive(_float_env(env, "SECONDBRAIN_CALL_SECONDS", 10.0), "SECONDBRAIN_CALL_SECONDS"),
        scrub_allow=os.path.expanduser(env["SECONDBRAIN_SCRUB_ALLOW"])
        if env.get("SECONDBRAIN_SCRUB_ALLOW", "").strip() else None,
    )


def replace(settings: Settings, **changes) -> Settings:
    import dataclasses

    return dataclasses.replace(settings, **changes)
