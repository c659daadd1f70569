"""The `llm brain ...` commands: parse, call the façade, format. No storage or retrieval logic
here; every failure a user can cause becomes one line on stderr and exit code 1 (`BrainGroup`)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from . import config
from .options import click_options, from_click


class BrainGroup(click.Group):
    """The group's one error boundary: expected failures are one line and exit 1, never a
    traceback. ClickExceptions (usage errors, EmbedError) pass through as click shows them."""

    def invoke(self, ctx: click.Context):
        from .sources import SourceError
        from .store import DB_ERRORS, BrainError

        try:
            return super().invoke(ctx)
        except click.ClickException:
            raise
        except (BrainError, SourceError, ValueError) as e:
            raise _fail(str(e)) from None
        except DB_ERRORS as e:
            raise _fail(f"brain database error: {e}") from None
        except OSError as e:
            raise _fail(f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")) from None


def _fail(message: str) -> click.ClickException:
    return click.ClickException(message.splitlines()[0] if message else "failed")


def db_option(fn):
    return click.option(
        "-d", "--database", "--db", "db_path", type=click.Path(dir_okay=False), default=None,
        envvar="SECONDBRAIN_DB",
        help="The brain file (default: $SECONDBRAIN_DB or ~/.secondbrain/brain.db)",
    )(fn)


def json_option(fn):
    return click.option("--json", "as_json", is_flag=True, help="Output as JSON")(fn)


def _open(db_path: str | None, *, create: bool = False, settings: config.Settings | None = None):
    from .api import SecondBrain

    return SecondBrain.open(create=create, settings=settings or config.load(db=db_path))


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@click.group(name="brain", cls=BrainGroup)
def brain():
    """A personal second brain: scrubbed notes, hybrid recall.

    Ingest folders, files and standard input into one SQLite file, with every secret
    redacted before it is stored, then recall by meaning or by exact token.
    """


@brain.command(name="path")
@db_option
def path_cmd(db_path):
    """Print the path of the brain file in use."""
    click.echo(str(config.load(db=db_path).db_path))


@brain.command(name="recall", context_settings={"ignore_unknown_options": True})
@click.argument("query", nargs=-1, required=True)
@click_options
@json_option
@click.option("--explain", is_flag=True, help="Show each lane's rank and contribution")
@db_option
def recall_cmd(query, as_json, explain, db_path, **values):
    """Find what the brain knows about QUERY, by meaning and by exact token.

    Exact identifiers in the query (INV/2026/00037, an IBAN however it is spaced, an
    error code) put the chunks that contain them first. Without Ollama or vectors it
    answers lexically and says so on stderr. A query that starts with - works as it is
    (llm brain recall --dry-run) or after -- .
    """
    options = from_click(values)
    with _open(db_path) as sb:
        result = sb.search(" ".join(query), options)
    for note in result.notes:
        click.echo(note, err=True)
    if explain and not as_json and result.mode == "hybrid":
        weights = ", ".join(f"{lane} {w:g}" for lane, w in result.weights.items())
        click.echo(f"[hybrid: {result.fusion} fusion; weights {weights} ({result.why})]")
    if not result.relevant or not result.hits:
        if not as_json:  # --json: no lines is the answer, as before
            click.echo("nothing in the brain matches", err=True)
        return
    for rank, hit in enumerate(result.hits, start=1):
        if as_json:
            click.echo(json.dumps({"rank": rank, "mode": result.mode, "scale": result.scale,
                                   **hit.as_dict()}))
            continue
        click.echo(f"{rank:>2}. {hit.score:.4f}  {hit.citation}  [{hit.project}]")
        click.echo(f"    {hit.snippet}")
        if explain:
            parts = [f"{lane} #{r}" + (f" +{hit.contributions[lane]:.4f}" if lane in hit.contributions else "")
                     for lane, r in sorted(hit.ranks.items())]
            click.echo(f"    [{result.mode}] " + ", ".join(parts))


@brain.command(name="ingest")
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
@json_option
@db_option
def ingest_cmd(paths, project, source, name, include, exclude, max_size, strip_emails, no_embed,
               no_progress, as_json, db_path):
    """Ingest files, folders (recursively) and - (standard input).

    Every text is scrubbed of secrets, cut into paragraph chunks and stored once.
    Unchanged files are skipped; changed files replace only the chunks that changed;
    files that vanished from an ingested folder are removed. Sources are never modified.
    """
    from .sources import check_target

    settings = config.load(db=db_path)
    if strip_emails:
        settings = config.replace(settings, strip_emails=True)
    for target in paths:
        check_target(target)
    with _open(db_path, create=True, settings=settings) as sb:
        report = sb.ingest(
            list(paths), embed=not no_embed, progress=not no_progress, project=project,
            source=source, name=name, include=include, exclude=exclude,
            max_bytes=int(max_size * 1024 * 1024), stdin=sys.stdin if "-" in paths else None,
        )
    embedding = report.embedding or {}
    if embedding.get("error"):
        click.echo(f"{embedding['pending']} chunks stored, embedding pending "
                   f"({embedding['error'].rstrip('.')}); run: llm brain embed", err=True)
    elif embedding.get("model"):
        from .embed import EmbedReport

        click.echo(EmbedReport(**embedding).summary(), err=True)
    click.echo(json.dumps(report.as_dict()) if as_json else report.summary())


@brain.command(name="stats")
@json_option
@db_option
def stats_cmd(as_json, db_path):
    """Show what the brain holds: chunks by project and source, embedding state, size."""
    with _open(db_path) as sb:
        stats = sb.stats()
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


@brain.command(name="sources")
@click.option("--project", help="Only this project")
@json_option
@db_option
def sources_cmd(project, as_json, db_path):
    """List what the brain holds: each file or stdin source, its project, chunks and when it
    was last ingested."""
    with _open(db_path) as sb:
        rows = sb.sources()
    for row in rows:
        if project is not None and row["project"] != project:
            continue
        if as_json:
            click.echo(json.dumps(row))
        else:
            click.echo(f"{row['path']}\t{row['project']}\t{row['chunks']} chunks\t{row['ingested']}")


@brain.command(name="forget")
@click.argument("paths", nargs=-1)
@click.option("--project", help="Forget every chunk of this project")
@click.option("--source", help="Forget every chunk of this source")
@json_option
@db_option
def forget_cmd(paths, project, source, as_json, db_path):
    """Remove chunks everywhere (text, search index, vectors) by PATH, --project or --source.

    A PATH is a file or a folder (everything under it), typed as you like: it is resolved
    the same way ingest stores it. Combined options must all match.
    """
    from .sources import resolve

    if not paths and project is None and source is None:
        raise _fail("say what to forget: a PATH, --project or --source")
    resolved = [p if p == "-" or not _looks_like_path(p) else resolve(p) for p in paths]
    with _open(db_path) as sb:
        chunks, files = sb.forget(paths=resolved, project=project, source=source)
    if as_json:
        click.echo(json.dumps({"chunks_removed": chunks, "sources_removed": files}))
    else:
        click.echo(f"forgot {chunks} chunks from {files} sources")


@brain.command(name="vacuum")
@db_option
def vacuum_cmd(db_path):
    """Compact the brain file after many deletes, changed files or a reembed."""
    with _open(db_path) as sb:
        before, after = sb.vacuum()
    click.echo(f"{_human_size(before)} -> {_human_size(after)}")


@brain.command(name="scrub")
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
    fn = json_option(fn)
    fn = click.option("--no-progress", is_flag=True, help="Hide the progress bar (shown on a terminal)")(fn)
    fn = click.option("--retry-failed", is_flag=True,
                      help="First put chunks that failed before back in the queue")(fn)
    fn = click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True,
                      help="Chunks per request to the embedding server")(fn)
    return db_option(fn)


def _run_embed(db_path, *, reembed: bool, as_json: bool, no_progress: bool, **kwargs) -> None:
    with _open(db_path) as sb:
        # EmbedError is a click.ClickException: one line on stderr, exit code 1.
        run = sb.reembed if reembed else sb.embed
        report = run(progress=not no_progress, **kwargs)
    click.echo(json.dumps(report.as_dict()) if as_json else report.summary())


@brain.command(name="embed")
@_embed_options
def embed_cmd(db_path, **kwargs):
    """Embed pending chunks with the configured model.

    SECONDBRAIN_EMBED_MODEL names an Ollama model (default nomic-embed-text, at
    OLLAMA_URL) or llm:<model id> for any llm embedding model. Safe to interrupt:
    the next run continues. Chunks that cannot be embedded are set aside (--retry-failed).
    """
    _run_embed(db_path, reembed=False, **kwargs)


@brain.command(name="reembed")
@_embed_options
def reembed_cmd(db_path, **kwargs):
    """Rebuild every vector with the current model (after changing SECONDBRAIN_EMBED_MODEL
    or the prefixes). Safe to interrupt: running it again continues where it stopped."""
    _run_embed(db_path, reembed=True, **kwargs)


def _looks_like_path(name: str) -> bool:
    """stdin sources are stored under their --name verbatim; anything else is a filesystem path."""
    return Path(name).is_absolute() or Path(name).exists() or "/" in name or name.startswith(".")


@brain.command(name="eval")
@click.argument("queries_file", metavar="QUERIES.jsonl", type=click.File("r", encoding="utf-8"))
@click.option("--mode", "modes", multiple=True, type=click.Choice(["hybrid", "dense", "lexical"]),
              help="Score this mode (repeatable; default: all three)")
@click.option("--per-query", is_flag=True, help="With --json: every query's figures and top notes too")
@json_option
@db_option
def eval_cmd(queries_file, modes, per_query, as_json, db_path):
    """Score recall on your own golden queries: hit@1, MRR@10, nDCG@10, recall@10 per mode.

    QUERIES.jsonl holds one {"id", "query", "answers": [paths], "class"} per line (class is
    optional). Hits are ranked by note; an answer matches a stored path that ends with it.
    """
    from .evaluate import evaluate, read_queries, table

    queries = read_queries(queries_file)
    if not queries:
        raise _fail("no queries in the file")
    with _open(db_path) as sb:
        report = evaluate(sb, queries, modes or ("hybrid", "dense", "lexical"))
    if not per_query:
        report.pop("queries")
    click.echo(json.dumps(report, indent=2) if as_json else table(report))
