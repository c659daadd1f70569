"""The `llm brain ...` commands: parse, call, format. No storage or retrieval logic here."""
from __future__ import annotations

import contextlib
import functools
import json
import sys
from pathlib import Path

import click

from . import config


def _fail(message: str) -> click.ClickException:
    return click.ClickException(message.splitlines()[0] if message else "failed")


def db_option(fn):
    return click.option(
        "--db", "db_path", type=click.Path(dir_okay=False), default=None,
        help="Brain file to use (default: $SECONDBRAIN_DB or ~/.secondbrain/brain.db)",
    )(fn)


def friendly_errors(fn):
    """Turn our expected failures into one line on stderr and exit code 1, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .sources import SourceError
        from .store import DB_ERRORS, BrainError

        try:
            return fn(*args, **kwargs)
        except (BrainError, SourceError, ValueError) as e:
            raise _fail(str(e)) from None
        except DB_ERRORS as e:
            raise _fail(f"brain database error: {e}") from None
        except OSError as e:
            raise _fail(f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")) from None

    return wrapper


def _settings(db_path: str | None) -> config.Settings:
    return config.load(db=db_path)


@contextlib.contextmanager
def _open(settings: config.Settings, *, create: bool = True):
    from .store import open_brain

    brain = open_brain(settings.db_path, create=create)
    try:
        yield brain
    finally:
        brain.close()


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def register(cli: click.Group) -> None:
    @cli.group(name="brain")
    def brain_group():
        """A personal second brain: scrubbed notes, hybrid recall.

        Ingest folders, files and standard input into one SQLite file, with every secret
        redacted before it is stored, then recall by meaning or by exact token.
        """

    @brain_group.command(name="path")
    @db_option
    @friendly_errors
    def path_cmd(db_path):
        """Print the path of the brain file in use."""
        click.echo(str(_settings(db_path).db_path))

    @brain_group.command(name="recall")
    @click.argument("query")
    @click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many hits")
    @click.option("--mode", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid",
                  show_default=True, help="Meaning and words fused, meaning only, or words only")
    @click.option("--project", help="Only chunks of this project")
    @click.option("--source", help="Only chunks of this source")
    @click.option("--path", "path_glob", help="Only chunks whose file path matches this glob")
    @click.option("--since", help="Only chunks dated on or after this ISO date")
    @click.option("--until", help="Only chunks dated on or before this ISO date")
    @click.option("--pool", type=click.IntRange(min=1), default=None,
                  help="Candidates taken from each channel before fusion")
    @click.option("--rrf-k", type=click.IntRange(min=1), default=None, help="RRF constant (with --fusion rrf)")
    @click.option("--fusion", type=click.Choice(["zscore", "rrf"]), default="zscore", show_default=True,
                  help="Hybrid: fuse normalised scores, or reciprocal ranks")
    @click.option("--lexical-weight", type=click.FloatRange(min=0), default=None,
                  help="Hybrid: weight of the lexical channel against dense's 1 (default: 1, or "
                       "0.05 for a question)")
    @click.option("--exact", is_flag=True, help="Dense: scan every vector exactly (no in-memory index)")
    @click.option("--json", "as_json", is_flag=True, help="One JSON object per line per hit")
    @click.option("--explain", is_flag=True, help="Show each channel's rank and contribution")
    @db_option
    @friendly_errors
    def recall_cmd(query, k, mode, project, source, path_glob, since, until, pool, rrf_k, fusion,
                   lexical_weight, exact, as_json, explain, db_path):
        """Find what the brain knows about QUERY, by meaning and by exact token.

        Exact identifiers in the query (INV/2026/00037, an IBAN however it is spaced, an
        error code) put the chunks that contain them first. Without Ollama or vectors it
        answers lexically and says so on stderr.
        """
        from .api import SecondBrain
        from .recall import DEFAULT_POOL, DEFAULT_RRF_K

        with SecondBrain.open(create=False, settings=_settings(db_path)) as brain:
            result = brain.search(
                query, k, mode, project=project, source=source, path=path_glob, since=since,
                until=until, pool=pool or DEFAULT_POOL, rrf_k=rrf_k or DEFAULT_RRF_K,
                fusion=fusion, exact=exact,
                weights=None if lexical_weight is None else {"dense": 1.0, "lexical": lexical_weight},
            )
        for note in result.notes:
            click.echo(note, err=True)
        if explain and not as_json and result.mode == "hybrid":
            weights = ", ".join(f"{lane} {w:g}" for lane, w in result.weights.items())
            click.echo(f"[hybrid: {result.fusion} fusion; weights {weights} ({result.why})]")
        for rank, hit in enumerate(result.hits, start=1):
            if as_json:
                click.echo(json.dumps({"rank": rank, **hit.as_dict()}))
                continue
            click.echo(f"{rank:>2}. {hit.score:.4f}  {hit.citation}  [{hit.project}]")
            snippet = " ".join(hit.text.split())
            click.echo(f"    {snippet[:200]}{'…' if len(snippet) > 200 else ''}")
            if explain:
                parts = [f"{lane} #{r}" + (f" +{hit.contributions[lane]:.4f}" if lane in hit.contributions else "")
                         for lane, r in sorted(hit.ranks.items())]
                click.echo(f"    [{result.mode}] " + ", ".join(parts))
        if not result.hits and not as_json:
            click.echo("no matches", err=True)

    @brain_group.command(name="ingest")
    @click.argument("paths", nargs=-1, required=True)
    @click.option("--project", help="Project name stored on every chunk (default: the folder's name)")
    @click.option("--source", help="Source name stored on every chunk (default: files / stdin)")
    @click.option("--name", help="Name for standard input; re-ingesting a name replaces it")
    @click.option("--include", multiple=True, help="Only ingest files matching this glob (repeatable)")
    @click.option("--exclude", multiple=True, help="Skip files and folders matching this glob (repeatable)")
    @click.option("--max-size", type=click.FloatRange(min=0, min_open=True), default=20.0,
                  show_default=True, help="Skip files larger than this many MB")
    @click.option("--strip-emails", is_flag=True, default=None,
                  help="Redact e-mail addresses too (or set SECONDBRAIN_STRIP_EMAILS=1)")
    @click.option("--no-embed", is_flag=True, help="Only store; embed later with: llm brain embed")
    @click.option("--no-progress", is_flag=True, help="Hide the embedding progress bar")
    @click.option("--json", "as_json", is_flag=True, help="Print the summary as a JSON object")
    @db_option
    @friendly_errors
    def ingest_cmd(paths, project, source, name, include, exclude, max_size, strip_emails, no_embed,
                   no_progress, as_json, db_path):
        """Ingest files, folders (recursively) and - (standard input).

        Every text is scrubbed of secrets, cut into paragraph chunks and stored once.
        Unchanged files are skipped; changed files replace only the chunks that changed;
        files that vanished from an ingested folder are removed. Sources are never modified.
        """
        from .ingest import ingest
        from .sources import check_target

        settings = _settings(db_path)
        if strip_emails:
            settings = config.replace(settings, strip_emails=True)
        for target in paths:
            check_target(target)
        with _open(settings) as brain:
            report = ingest(
                brain, list(paths), settings, project=project, source=source, name=name,
                include=include, exclude=exclude, max_bytes=int(max_size * 1024 * 1024),
                stdin=sys.stdin if "-" in paths else None,
            )
            summary = report.as_dict()
            if not no_embed:
                summary["embedding"] = _embed_after_ingest(brain, settings, progress=not no_progress)
        click.echo(json.dumps(summary) if as_json else report.summary())

    @brain_group.command(name="stats")
    @click.option("--json", "as_json", is_flag=True, help="Output as JSON")
    @db_option
    @friendly_errors
    def stats_cmd(as_json, db_path):
        """Show what the brain holds: chunks by project and source, embedding state, size."""
        with _open(_settings(db_path), create=False) as brain:
            stats = brain.stats()
        if as_json:
            click.echo(json.dumps(stats, indent=2))
            return
        click.echo(f"brain:    {stats['path']} ({_human_size(stats['size_bytes'])})")
        click.echo(
            f"chunks:   {stats['chunks']} in {stats['files']} sources "
            f"({stats['embedded']} embedded, {stats['pending']} pending, {stats['failed']} failed)"
        )
        click.echo(f"facts:    {stats['facts']}")
        model = stats["embed_model"]
        click.echo(f"model:    {model} ({stats['embed_dim']} dimensions)" if model else "model:    none yet")
        for label in ("projects", "sources"):
            if stats[label]:
                click.echo(f"{label}:")
                for key, count in stats[label].items():
                    click.echo(f"  {key or '(none)'}: {count}")

    @brain_group.command(name="sources")
    @click.option("--project", help="Only this project")
    @click.option("--json", "as_json", is_flag=True, help="One JSON object per line")
    @db_option
    @friendly_errors
    def sources_cmd(project, as_json, db_path):
        """List what the brain holds: each file or stdin source, its project, chunks and when
        it was last ingested."""
        with _open(_settings(db_path), create=False) as brain:
            rows = brain.sources()
        for row in rows:
            if project is not None and row["project"] != project:
                continue
            if as_json:
                click.echo(json.dumps(row))
            else:
                click.echo(f"{row['path']}\t{row['project']}\t{row['chunks']} chunks\t{row['ingested']}")

    @brain_group.command(name="forget")
    @click.argument("paths", nargs=-1)
    @click.option("--project", help="Forget every chunk of this project")
    @click.option("--source", help="Forget every chunk of this source")
    @click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON")
    @db_option
    @friendly_errors
    def forget_cmd(paths, project, source, as_json, db_path):
        """Remove chunks everywhere (text, search index, vectors) by PATH, --project or --source.

        A PATH is a file or a folder (everything under it), typed as you like: it is resolved
        the same way ingest stores it. Combined options must all match.
        """
        from .sources import resolve

        if not paths and project is None and source is None:
            raise _fail("say what to forget: a PATH, --project or --source")
        resolved = [p if p == "-" or not _looks_like_path(p) else resolve(p) for p in paths]
        with _open(_settings(db_path), create=False) as brain:
            chunks, files = brain.forget(paths=resolved, project=project, source=source)
        if as_json:
            click.echo(json.dumps({"chunks_removed": chunks, "sources_removed": files}))
        else:
            click.echo(f"forgot {chunks} chunks from {files} sources")

    @brain_group.command(name="vacuum")
    @db_option
    @friendly_errors
    def vacuum_cmd(db_path):
        """Compact the brain file after many deletes, changed files or a reembed."""
        with _open(_settings(db_path), create=False) as brain:
            before, after = brain.vacuum()
        click.echo(f"{_human_size(before)} -> {_human_size(after)}")

    @brain_group.command(name="scrub")
    @click.argument("file", type=click.File("r", encoding="utf-8", errors="replace"), default="-")
    @click.option("--report", is_flag=True, help="Also print, on stderr, what kinds were redacted")
    @click.option("--strip-emails", is_flag=True, default=None, help="Redact e-mail addresses too")
    def scrub_cmd(file, report, strip_emails):
        """Preview scrubbing: print FILE (or stdin) with secrets redacted. Stores nothing."""
        from .scrub import scrub_report

        if strip_emails is None:
            strip_emails = config.load().strip_emails
        text, counts = scrub_report(file.read(), strip_emails=bool(strip_emails))
        sys.stdout.write(text)
        if report:
            total = sum(counts.values())
            kinds = ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())) or "nothing"
            click.echo(f"redacted {total}: {kinds}", err=True)

    def _embed_options(fn):
        fn = click.option("--json", "as_json", is_flag=True, help="Print the summary as a JSON object")(fn)
        fn = click.option("--no-progress", is_flag=True, help="Hide the progress bar (shown on a terminal)")(fn)
        fn = click.option("--retry-failed", is_flag=True,
                          help="First put chunks that failed before back in the queue")(fn)
        fn = click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True,
                          help="Chunks per request to the embedding server")(fn)
        return fn

    def _run_embed(db_path, *, reembed, **kwargs):
        from .embed import embed_pending

        as_json = kwargs.pop("as_json")
        progress = not kwargs.pop("no_progress")
        settings = _settings(db_path)
        with _open(settings, create=False) as brain:
            # EmbedError is a click.ClickException: one line on stderr, exit code 1.
            report = embed_pending(brain, settings, reembed=reembed, progress=progress, **kwargs)
        click.echo(json.dumps(report.as_dict()) if as_json else report.summary())

    @brain_group.command(name="embed")
    @_embed_options
    @db_option
    @friendly_errors
    def embed_cmd(db_path, **kwargs):
        """Embed pending chunks with the configured model.

        SECONDBRAIN_EMBED_MODEL names an Ollama model (default nomic-embed-text, at
        OLLAMA_URL) or llm:<model id> for any llm embedding model. Safe to interrupt:
        the next run continues. Chunks that cannot be embedded are set aside (--retry-failed).
        """
        _run_embed(db_path, reembed=False, **kwargs)

    @brain_group.command(name="reembed")
    @_embed_options
    @db_option
    @friendly_errors
    def reembed_cmd(db_path, **kwargs):
        """Rebuild every vector with the current model (after changing SECONDBRAIN_EMBED_MODEL
        or the prefixes). Safe to interrupt: running it again continues where it stopped."""
        _run_embed(db_path, reembed=True, **kwargs)


def _embed_after_ingest(brain, settings: config.Settings, *, progress: bool) -> dict:
    """Embed what ingest staged. Without Ollama (or with any embedding problem) the chunks are
    stored all the same: say so in one line and how to finish, and let ingest succeed."""
    from .embed import embed_pending, pending_count
    from .ollama import EmbedError

    if not pending_count(brain):
        return {"pending": 0}
    try:
        report = embed_pending(brain, settings, progress=progress)
    except EmbedError as e:
        pending = pending_count(brain)
        click.echo(
            f"{pending} chunks stored, embedding pending ({e.message.rstrip('.')}); "
            "run: llm brain embed", err=True,
        )
        return {"pending": pending, "error": e.message}
    click.echo(report.summary(), err=True)
    return report.as_dict()


def _looks_like_path(name: str) -> bool:
    """stdin sources are stored under their --name verbatim; anything else is a filesystem path."""
    return Path(name).is_absolute() or Path(name).exists() or "/" in name or name.startswith(".")
