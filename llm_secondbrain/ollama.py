"""The Ollama HTTP client, the embedders the backlog and recall use, and the `llm` model.

Three layers, each usable alone:

- `OllamaClient`: `POST /api/embed` in batches, falling back (once per client) to one
  `POST /api/embeddings` per text on servers older than 0.3.4; transient faults (connection
  reset, 5xx, timeouts) are retried a bounded number of times with backoff; every failure
  becomes one of the typed exceptions below with a one-line message for the user.
- Embedders (`get_embedder(settings)`): what the brain calls. They know the model's
  fingerprint name and its asymmetric prefixes (nomic models: `search_document: ` /
  `search_query: `; others none), so chunks and queries are embedded the same way every time.
  `SECONDBRAIN_EMBED_MODEL=llm:<id>` routes through any `llm` embedding model instead.
- `SecondBrainEmbeddingModel`: an `llm.EmbeddingModel` registered under `secondbrain/<model>`
  (never `ollama/...`, which belongs to llm-ollama).

This module knows nothing about chunks or SQLite.
"""
from __future__ import annotations

import json
import math
import numbers
import random
import sys
import time
from array import array
from typing import Iterable, Sequence

import click
import httpx
import llm

from .config import DEFAULT_EMBED_MODEL, Settings

NOMIC_DOC_PREFIX = "search_document: "
NOMIC_QUERY_PREFIX = "search_query: "
LLM_PREFIX = "llm:"
MODEL_ID_PREFIX = "secondbrain/"
DEFAULT_BATCH = 32
BACKOFF_BASE_S = 0.2
BACKOFF_MAX_S = 4.0


# ---------------------------------------------------------------------------------------------
# Errors. Each is a click.ClickException, so any click CLI (ours, `llm embed`) shows it as one
# line and exits 1 instead of printing a traceback.


class EmbedError(click.ClickException):
    """Embedding failed; the message is one line meant for the user."""

    def __init__(self, message: str):
        super().__init__(message.splitlines()[0] if message else "embedding failed")

    def __str__(self) -> str:
        return self.message


class OllamaUnreachable(EmbedError):
    """Nothing answers at the configured URL (or it keeps timing out)."""

    def __init__(self, url: str, detail: str | None = None):
        self.url = url
        self.detail = detail
        super().__init__(
            f'Ollama is not reachable at {url} — start it with "ollama serve" or set OLLAMA_URL'
        )


class BadURL(EmbedError):
    """OLLAMA_URL cannot be a server's address (a port that is not a number, a bracket left open)."""

    def __init__(self, url: str, detail: str):
        super().__init__(f"OLLAMA_URL is not a usable URL ({_short(detail, 60)}): {url}")


def shown_url(url: str) -> str:
    """`url` as a message may show it: a user name and password in it (a proxy's, a hosted
    server's) replaced, as the scrubber would."""
    scheme, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    if "@" not in host:
        return url
    return f"{scheme}{sep}[REDACTED:url_credentials]@{host.rpartition('@')[2]}{slash}{path}"


class ModelMissing(EmbedError):
    def __init__(self, model: str, url: str):
        self.model = model
        super().__init__(
            f'embedding model "{model}" is not installed in Ollama at {url} — run: ollama pull {model}'
        )


class InputRejected(EmbedError):
    """The server refused this input (not the server's fault, not transient): quarantine it."""

    def __init__(self, reason: str):
        self.reason = _short(reason)
        super().__init__(f"the embedding server rejected an input: {self.reason}")


class ServerError(EmbedError):
    """The server kept failing or answered something we cannot use."""


class UnknownEmbedModel(EmbedError):
    pass


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def canonical_model(name: str) -> str:
    """Ollama treats `x` and `x:latest` as one model; so does the fingerprint."""
    name = name.strip()
    return name[: -len(":latest")] if name.endswith(":latest") else name


def is_nomic(name: str) -> bool:
    return "nomic-embed-text" in name.lower()


# ---------------------------------------------------------------------------------------------
# The HTTP client.


class OllamaClient:
    """Talks to one Ollama server about one embedding model."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = BACKOFF_BASE_S,
        transport: httpx.BaseTransport | None = None,
    ):
        self.url = url.rstrip("/")
        self.where = shown_url(self.url)  # (messages: without a user name and password in it)
        self.model = model
        self.retries = max(0, int(retries))
        self.backoff = backoff
        self.legacy = False  # set once /api/embed turns out not to exist on this server
        self._answered = False  # after one success, a refused connection is a restart: retry
        timeout_cfg = httpx.Timeout(timeout, connect=min(10.0, timeout))
        # httpx builds a TLS context with every CA certificate when a client is made (~35 ms
        # of CPU, most of a one-shot recall's embedding); a plain-http server never uses one,
        # and the client follows no redirect to another scheme.
        tls = self.url.lower().startswith("https:")
        if transport is None and self.url.lower().startswith("http:"):
            from .plainhttp import PlainHTTP

            transport = PlainHTTP(timeout_cfg)  # no httpcore import for one local POST
        try:
            self._http = httpx.Client(
                base_url=self.url, timeout=timeout_cfg, transport=transport, trust_env=False,
                verify=tls,
            )
        except httpx.InvalidURL as e:
            raise BadURL(self.where, str(e)) from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "OllamaClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- public --------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, as the server returns them (Ollama's /api/embed
        normalises; the legacy endpoint does not: callers normalise)."""
        texts = list(texts)
        if not texts:
            return []
        if not self.legacy:
            response = self._post("/api/embed", {"model": self.model, "input": texts})
            if response is not None:
                return self._vectors(response.get("embeddings"), len(texts))
            self.legacy = True  # remembered for this client (the run)
        vectors = []
        for text in texts:
            response = self._post("/api/embeddings", {"model": self.model, "prompt": text})
            if response is None:
                raise ServerError(
                    f"the server at {self.where} has neither /api/embed nor /api/embeddings — is it Ollama?"
                )
            vectors.extend(self._vectors([response.get("embedding")], 1))
        return vectors

    def version(self) -> str | None:
        data = self._request("GET", "/api/version", None)
        return data.get("version") if isinstance(data, dict) else None

    # -- plumbing ------------------------------------------------------------------------------

    def _vectors(self, raw, expected: int) -> list[list[float]]:
        if not isinstance(raw, list) or len(raw) != expected:
            got = len(raw) if isinstance(raw, list) else "no"
            raise ServerError(
                f"the embedding server at {self.where} returned {got} vectors for {expected} inputs"
            )
        for v in raw:
            if not isinstance(v, list):
                raise ServerError(f"the embedding server at {self.where} returned a malformed vector")
        return raw

    def _post(self, path: str, payload: dict) -> dict | None:
        """POST JSON; None when the endpoint does not exist (plain-text 404)."""
        return self._request("POST", path, payload)

    def _request(self, method: str, path: str, payload: dict | None) -> dict | None:
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, json=payload)
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as e:
                raise BadURL(self.where, str(e)) from None
            except httpx.ConnectError as e:
                # Nothing listening: say so at once on the first call; mid-run it is more
                # likely a restart, worth a few retries.
                if not self._answered or attempt >= self.retries:
                    raise OllamaUnreachable(self.where, str(e)) from None
            except httpx.TimeoutException:
                if attempt >= self.retries:
                    if not self._answered:
                        raise OllamaUnreachable(self.where, "timed out") from None
                    raise ServerError(
                        f"the embedding server at {self.where} timed out {attempt + 1} times "
                        f"(raise SECONDBRAIN_OLLAMA_TIMEOUT or use a smaller --batch-size)"
                    ) from None
            except httpx.TransportError as e:  # reset, dropped connection, protocol error
                if attempt >= self.retries:
                    raise ServerError(
                        f"the embedding server at {self.where} dropped the connection "
                        f"{attempt + 1} times: {_short(str(e) or type(e).__name__, 80)}"
                    ) from None
            else:
                result = self._interpret(response, path)
                if result is not _RETRY:
                    self._answered = True
                    return result
                if attempt >= self.retries:
                    raise ServerError(
                        f"the embedding server at {self.where} failed {attempt + 1} times "
                        f"(HTTP {response.status_code}: {_error_text(response, 80)})"
                    )
            delay = min(BACKOFF_MAX_S, self.backoff * (2 ** attempt))
            time.sleep(delay * (0.75 + random.random() / 2))
            attempt += 1

    def _interpret(self, response: httpx.Response, path: str):
        status = response.status_code
        if 200 <= status < 300:
            try:
                data = response.json()
            except (ValueError, UnicodeDecodeError):
                raise ServerError(f"the server at {self.where} answered {path} with something that is not JSON") from None
            if not isinstance(data, dict):
                raise ServerError(f"the server at {self.where} answered {path} with unexpected JSON")
            return data
        error = _json_error(response)
        if status == 404:
            if error is None:  # plain-text "404 page not found": no such endpoint
                return None
            if "not found" in error.lower() or "pull" in error.lower():
                raise ModelMissing(self.model, self.where)
            raise InputRejected(error)
        if status >= 500 or status in (408, 429):
            if error and _is_input_problem(error):
                raise InputRejected(error)
            return _RETRY
        if status in (401, 403):
            raise ServerError(f"the server at {self.where} refused access (HTTP {status}); check OLLAMA_URL")
        # Other 4xx: the request (that is, this input) is what the server objects to.
        raise InputRejected(error or f"HTTP {status}")


_RETRY = object()


def _json_error(response: httpx.Response) -> str | None:
    ctype = response.headers.get("content-type", "")
    if "json" not in ctype:
        try:
            data = json.loads(response.text)
        except ValueError:
            return None
    else:
        try:
            data = response.json()
        except ValueError:
            return None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return None


def _error_text(response: httpx.Response, limit: int) -> str:
    return _short(_json_error(response) or response.text or response.reason_phrase, limit)


def _is_input_problem(error: str) -> bool:
    low = error.lower()
    return any(s in low for s in ("context length", "input length", "too long", "exceeds"))


# ---------------------------------------------------------------------------------------------
# Vectors.


def _unit(vector: Sequence[float], dim: int | None = None) -> list[float]:
    """The one vector validator: a finite, non-zero vector of `dim` numbers, scaled to unit
    length. Raises ValueError with a reason a person can act on. Plain Python (a few dozen
    microseconds a vector): NumPy installed costs every `llm` command its import time."""
    if isinstance(vector, (str, bytes, dict)) or not isinstance(vector, Iterable):
        raise ValueError("vector holds something that is not a number")
    values = []
    for x in vector:  # strings, booleans, nested lists are not numbers
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise ValueError("vector holds something that is not a number")
        values.append(float(x))
    if dim is not None and len(values) != dim:
        raise ValueError(f"wrong dimension: got {len(values)}, expected {dim}")
    try:
        norm = math.sqrt(math.fsum(x * x for x in values))
    except (OverflowError, ValueError):  # fsum of infinities of both signs, or of a NaN
        norm = math.nan
    if not math.isfinite(norm):
        raise ValueError("vector is not finite (NaN or infinity)")
    if norm == 0.0:
        raise ValueError("vector is all zeros")
    return [x / norm for x in values]


def normalise(vector: Sequence[float]) -> list[float]:
    """L2-normalise; raises ValueError for a zero or non-finite vector."""
    return _unit(vector)


def serialize(vector: Sequence[float], dim: int | None = None) -> bytes:
    """A vector as the brain stores it: unit length, float32 little-endian (sqlite-vec's format)."""
    packed = array("f", _unit(vector, dim))
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


# ---------------------------------------------------------------------------------------------
# Embedders: what the backlog and recall call.


class Embedder:
    """Base: subclasses implement `_embed(texts)`; prefixes are applied here."""

    name: str
    doc_prefix: str
    query_prefix: str

    def _embed(self, texts: list[str]) -> list[list[float]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def embed_documents(self, texts: Iterable[str]) -> list[list[float]]:
        return self._embed([self.doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> list[float]:
        return self._embed([self.query_prefix + text])[0]

    def fingerprint(self) -> dict:
        return {"embed_model": self.name, "doc_prefix": self.doc_prefix, "query_prefix": self.query_prefix}

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class OllamaEmbedder(Embedder):
    def __init__(self, settings: Settings, model: str, *, transport: httpx.BaseTransport | None = None):
        self.model = canonical_model(model)
        self.name = self.model
        self.url = settings.ollama_url
        self.doc_prefix, self.query_prefix = _prefixes(settings, self.model)
        self.client = OllamaClient(
            settings.ollama_url, model, timeout=settings.timeout, retries=settings.retries,
            backoff=float(settings.extra.get("backoff", BACKOFF_BASE_S)), transport=transport,
        )

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self.client.embed(texts)

    def close(self) -> None:
        self.client.close()


class LLMEmbedder(Embedder):
    """Any `llm` embedding model, by id (`SECONDBRAIN_EMBED_MODEL=llm:<id>`)."""

    def __init__(self, settings: Settings, model_id: str):
        try:
            self.model = llm.get_embedding_model(model_id)
        except llm.UnknownModelError:
            raise UnknownEmbedModel(
                f"unknown llm embedding model {model_id!r} (see: llm embed-models list)"
            ) from None
        self.name = LLM_PREFIX + self.model.model_id
        self.doc_prefix, self.query_prefix = _prefixes(settings, self.model.model_id)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        try:
            return [list(v) for v in self.model.embed_multi(texts, batch_size=len(texts) or None)]
        except EmbedError:
            raise
        except Exception as e:  # another plugin's failure: one line, stop the run
            raise ServerError(f"embedding model {self.model.model_id} failed: {_short(str(e) or type(e).__name__, 120)}") from None


def _prefixes(settings: Settings, model: str) -> tuple[str, str]:
    nomic = is_nomic(model)
    doc = settings.doc_prefix if settings.doc_prefix is not None else (NOMIC_DOC_PREFIX if nomic else "")
    query = settings.query_prefix if settings.query_prefix is not None else (NOMIC_QUERY_PREFIX if nomic else "")
    return doc, query


_shared: dict[tuple, Embedder] = {}


def shared_embedder(settings: Settings) -> Embedder:
    """One embedder (one HTTP client, one connection pool, one TLS context) per process and
    configuration, kept for the queries that follow: recall in a chat or an agent embeds a
    query per call, and a new client per query costs more than the query."""
    key = (settings.ollama_url, settings.embed_model, settings.doc_prefix, settings.query_prefix,
           settings.timeout, settings.retries)
    embedder = _shared.get(key)
    if embedder is None:
        if len(_shared) >= 4:  # a test suite or a long session that changes servers
            _shared.pop(next(iter(_shared))).close()
        embedder = _shared[key] = get_embedder(settings)
    return embedder


def get_embedder(settings: Settings, *, transport: httpx.BaseTransport | None = None) -> Embedder:
    """The embedder `SECONDBRAIN_EMBED_MODEL` names: an Ollama model, or `llm:<model id>`."""
    name = (settings.embed_model or DEFAULT_EMBED_MODEL).strip()
    if name.startswith(LLM_PREFIX):
        model_id = name[len(LLM_PREFIX):].strip()
        if not model_id:
            raise UnknownEmbedModel("SECONDBRAIN_EMBED_MODEL=llm: needs a model id after the colon")
        return LLMEmbedder(settings, model_id)
    return OllamaEmbedder(settings, name, transport=transport)


# ---------------------------------------------------------------------------------------------
# The model registered with `llm`.


class SecondBrainEmbeddingModel(llm.EmbeddingModel):
    """An Ollama embedding model under an id of our own. Vectors come back L2-normalised.
    No task prefix is added: `llm embed` does not say whether a text is a query or a document;
    add `search_query: ` / `search_document: ` yourself for nomic models."""

    batch_size = DEFAULT_BATCH
    supports_text = True
    supports_binary = False

    def __init__(self, ollama_model: str):
        self.ollama_model = ollama_model
        self.model_id = MODEL_ID_PREFIX + ollama_model

    def embed_batch(self, items: Iterable[str], *, key: str | None = None):
        from . import config

        settings = config.load()
        with OllamaClient(settings.ollama_url, self.ollama_model, timeout=settings.timeout,
                          retries=settings.retries) as client:
            vectors = client.embed(list(items))
        for v in vectors:
            try:
                yield normalise(v)
            except ValueError as e:
                raise ServerError(f"{self.model_id}: {e}") from None


def registered_models(env_model: str | None) -> list[str]:
    """The Ollama model names we register: the default, and the configured one if plain."""
    names = [DEFAULT_EMBED_MODEL]
    if env_model:
        env_model = canonical_model(env_model)
        if env_model and not env_model.startswith(LLM_PREFIX) and env_model not in names:
            names.append(env_model)
    return names
