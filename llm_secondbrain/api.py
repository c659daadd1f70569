"""The Python API, for people wiring the brain into their own agents.

    from llm_secondbrain import SecondBrain
    with SecondBrain.open() as brain:          # or SecondBrain.open("path/to/brain.db")
        brain.ingest(["~/notes"], project="notes")
        for hit in brain.recall("what did we decide about invoicing?", k=5):
            print(hit.citation, hit.score, hit.text[:80])

The CLI, the `brain:` fragment loader and the `brain_recall` tool are thin callers of this.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from . import config
from .recall import DEFAULT_FUSION, DEFAULT_K, DEFAULT_POOL, DEFAULT_RRF_K, Filters, Hit, RecallResult
from .recall import recall as _recall
from .store import Brain, open_brain


class SecondBrain:
    """An open brain plus the settings it runs with (model, Ollama URL, chunk sizes)."""

    def __init__(self, brain: Brain, settings: config.Settings):
        self.brain = brain
        self.settings = settings

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, create: bool = True,
             settings: config.Settings | None = None) -> "SecondBrain":
        settings = settings or config.load(db=path)
        if path is not None and settings.db_path != Path(os.path.expanduser(str(path))):
            settings = config.replace(settings, db_path=Path(os.path.expanduser(str(path))))
        return cls(open_brain(settings.db_path, create=create), settings)

    def close(self) -> None:
        self.brain.close()

    def __enter__(self) -> "SecondBrain":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------

    def ingest(self, paths: list[str], *, embed: bool = True, **options):
        """Ingest files and folders (see `llm brain ingest --help` for the options); embeds
        what was staged unless embed=False. Returns the IngestReport."""
        from .ingest import ingest

        report = ingest(self.brain, [str(p) for p in paths], self.settings, **options)
        if embed:
            self.embed()
        return report

    def embed(self, **options):
        """Embed every pending chunk (raises ollama.EmbedError subclasses when it cannot)."""
        from .embed import embed_pending

        return embed_pending(self.brain, self.settings, **options)

    # -- reading -------------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        k: int = DEFAULT_K,
        mode: str = "hybrid",
        *,
        project: str | None = None,
        source: str | None = None,
        path: str | None = None,
        since: str | None = None,
        until: str | None = None,
        pool: int = DEFAULT_POOL,
        rrf_k: int = DEFAULT_RRF_K,
        weights: dict[str, float] | None = None,
        fusion: str = DEFAULT_FUSION,
        exact: bool = False,
    ) -> list[Hit]:
        """The top `k` hits for `query`; see `search` for the degradation notes too."""
        return self.search(query, k, mode, project=project, source=source, path=path,
                           since=since, until=until, pool=pool, rrf_k=rrf_k, weights=weights,
                           fusion=fusion, exact=exact).hits

    def search(self, query: str, k: int = DEFAULT_K, mode: str = "hybrid", *,
               project=None, source=None, path=None, since=None, until=None,
               pool: int = DEFAULT_POOL, rrf_k: int = DEFAULT_RRF_K,
               weights: dict[str, float] | None = None,
               fusion: str = DEFAULT_FUSION, exact: bool = False) -> RecallResult:
        """Like `recall`, returning a RecallResult: the hits, the mode actually used and, when
        dense retrieval was unavailable, one-line notes saying why (it never raises for that:
        it answers lexically). Hybrid fuses by `fusion` ("zscore" or "rrf"); without `weights`
        the lexical weight follows the query (see recall.adaptive_weights)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        notes: list[str] = []
        filters = Filters(project=project, source=source, path=path, since=since, until=until)
        result = _recall(
            self.brain.conn, query, k=k, mode=mode, filters=filters,
            query_vector=self._query_vector(query, notes), pool=pool, rrf_k=rrf_k,
            weights=weights, fusion=fusion, exact=exact,
        )
        result.notes = notes + result.notes
        return result

    def _query_vector(self, query: str, notes: list[str]) -> Callable[[], bytes | None]:
        def vector() -> bytes | None:
            from .embed import check_fingerprint, read_fingerprint
            from .ollama import EmbedError, get_embedder, normalise

            stored = read_fingerprint(self.brain)
            embedded = self.brain.conn.execute(
                "SELECT 1 FROM chunks WHERE embedded = 1 LIMIT 1").fetchone()
            if stored is None or not embedded or not self.brain.has_vectors_table():
                notes.append("no vectors yet: answering lexically (run: llm brain embed)")
                return None
            try:
                with get_embedder(self.settings) as embedder:
                    check_fingerprint(self.brain, embedder)
                    raw = embedder.embed_query(query)
                vec = normalise(raw)
            except EmbedError as e:
                notes.append(f"{e.message.rstrip('.')}: answering lexically")
                return None
            except ValueError as e:
                notes.append(f"the query embedding is unusable ({e}): answering lexically")
                return None
            if stored["embed_dim"] and len(vec) != stored["embed_dim"]:
                notes.append(
                    f"the model returned {len(vec)} dimensions but the brain holds "
                    f"{stored['embed_dim']}: answering lexically (run: llm brain reembed)")
                return None
            from array import array

            return array("f", vec).tobytes()

        return vector


FRAGMENT_BUDGET = 6000  # characters: enough for several notes, never a flood


def context_text(result: RecallResult, budget: int = FRAGMENT_BUDGET) -> str:
    """Hits as plain text for a model: each with its citation inside the text, since `llm`
    never shows a fragment's or tool's source to the model. Stops at `budget` characters."""
    if not result.hits:
        return "The second brain holds nothing that matches."
    parts: list[str] = []
    used = 0
    for rank, hit in enumerate(result.hits, start=1):
        header = f"[{rank}] {hit.citation}" + (f" (project {hit.project})" if hit.project else "")
        room = budget - used - len(header) - 2
        if room < 80:
            break
        body = hit.text if len(hit.text) <= room else hit.text[: room - 1] + "…"
        block = f"{header}\n{body}"
        parts.append(block)
        used += len(block) + 2
    return "\n\n".join(parts)
