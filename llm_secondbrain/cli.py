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
    @click.option("--json", "as_json", is_flag=True, help="Print the summary as a JSON object")
    @db_option
    @friendly_errors
    def ingest_cmd(paths, project, source, name, include, exclude, max_size, strip_emails, as_json, db_path):
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
                stdin=click.get_text_stream("stdin") if "-" in paths else None,
            )
        if as_json:
            click.echo(json.dumps(report.as_dict()))
        else:
            click.echo(report.summary(), err=False)

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


def _looks_like_path(name: str) -> bool:
    """stdin sources are stored under their --name verbatim; anything else is a filesystem path."""
    return Path(name).is_absolute() or Path(name).exists() or "/" in name or name.startswith(".")
