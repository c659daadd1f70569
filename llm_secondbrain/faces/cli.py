"""The `llm brain ...` commands: parse, call the façade, format. No storage or retrieval logic
here; every failure a user can cause becomes one line on stderr and exit code 1 (the group's
error boundary, group.py). This module loads only when a `brain` command runs."""
from __future__ import annotations

import contextlib
import difflib
import json
import sys

import click

from .. import config
from ..options import click_options, from_click
from ..wording import plural
from .group import _fail, brain


def db_option(fn):
    return click.option(
        "-d", "--database", "--db", "db_path", type=click.Path(dir_okay=False), default=None,
        envvar="SECONDBRAIN_DB",
        help="The brain file (default: $SECONDBRAIN_DB or ~/.secondbrain/brain.db)",
    )(fn)


def json_option(fn):
    return click.option("--json", "as_json", is_flag=True, help="Output as JSON")(fn)


@contextlib.contextmanager
def _open(db_path: str | None, *, create: bool = False, settings: config.Settings | None = None):
    """The brain for one command; what closing it could not finish is said on stderr."""
    from ..api import SecondBrain

    sb = SecondBrain.open(create=create, settings=settings or config.load(db=db_path))
    try:
        yield sb
    finally:
        sb.close()
        for note in sb.brain.notes:
            click.echo(note, err=True)


# Skips that are the point of a folder walk, not news: counted in the summary, not named.
QUIET_SKIPS = {"binary"}


def _say_skip(name: str, reason: str) -> None:
    if reason not in QUIET_SKIPS:
        click.echo(f"skipped {name}: {reason}", err=True)


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@brain.command(name="path")
@click.option("--datasette", is_flag=True, help="Print the command that opens the brain in Datasette")
@db_option
def path_cmd(datasette, db_path):
    """Print the path of the brain file in use, and how to open it in Datasette.

    \b
    Example:
        llm brain path
        llm brain path --datasette
    """
    path = config.load(db=db_path).db_path
    if not datasette:
        click.echo(str(path))
        return
    import shlex

    # Datasette reads every table, the vec0 one too: it needs sqlite-vec loaded, which takes
    # the plugin and a Python whose sqlite3 can load extensions.
    click.echo(f"datasette install datasette-sqlite-vec && datasette {shlex.quote(str(path))}")


class QueryCommand(click.Command):
    """A command whose words may look like options: `llm brain recall --no-same-owner` searches
    for that flag (click's ignore_unknown_options). A typo of one of the command's own options
    would be searched for too and, matching nothing, say only that nothing matches; so an
    unknown long option before `--` that is close to one of ours is refused the way click
    refuses one, saying how to search for it.

    Close is difflib's ratio of at least CLOSE over the names without their `--`, or one of
    ours extended (--json-out). Click's own 0.6 over whole names would refuse --force (0.8 to
    --source, mostly the shared dashes) and --rm; without the dashes --projet, --jsno,
    --sources and --no-date are still refused, --force (0.73), --no-same-owner,
    --force-with-lease, --dry-run and every short form (-rf) are searched for."""

    CLOSE = 0.75

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:  # (shell completion: no errors)
            before = args[:args.index("--")] if "--" in args else args
            opts, words, _ = self.make_parser(ctx).parse_args(args=list(before))
            for param in self.params:  # (the words an argument took)
                if isinstance(param, click.Argument) and isinstance(opts.get(param.name), tuple):
                    words += opts[param.name]
            for word in words:
                if word.startswith("--"):
                    self._refuse_if_close(ctx, word.split("=", 1)[0])
        return super().parse_args(ctx, args)

    def _refuse_if_close(self, ctx: click.Context, option: str) -> None:
        ours = {name[2:]: name for param in self.get_params(ctx)
                for name in (*param.opts, *param.secondary_opts) if name.startswith("--")}
        close = [ours[name] for name in difflib.get_close_matches(option[2:], ours, cutoff=self.CLOSE)
                 or [name for name in ours if option[2:].startswith(name + "-")]]
        if close:
            meant = (f"Did you mean {close[0]}?" if len(close) == 1
                     else f"(Possible options: {', '.join(close)})")
            raise click.NoSuchOption(option, ctx=ctx, message=(
                f"No such option: {option}. {meant} To search for {option} itself, put it after "
                f"--: {ctx.command_path} ... -- {option}"))


@brain.command(name="recall", cls=QueryCommand, context_settings={"ignore_unknown_options": True})
@click.argument("query", nargs=-1, required=True)
@click_options
@json_option
@click.option("--explain", is_flag=True, help="Show each lane's rank and contribution")
@click.option("--fresh", is_flag=True, help="First re-ingest the hits' files that changed since they were ingested")
@db_option
def recall_cmd(query, as_json, explain, fresh, db_path, **values):
    """Find what the brain knows about QUERY, by meaning and by exact token.

    Exact identifiers in the query (INV/2026/00037, an IBAN however it is spaced, an
    error code) put the chunks that contain them first. Without Ollama or vectors it
    answers lexically and says so on stderr. --path takes a glob, a file or a folder.

    A word that starts with - is searched for as it is (--dry-run, -rf) unless it is close
    to one of recall's own options: --projet is refused as a typo of --project. After a
    lone -- every word is searched for as it is, the last example's --sources too.

    \b
    Examples:
        llm brain recall "what did we decide about invoicing?"
        llm brain recall INV/2026/00037 --json
        llm brain recall "backup schedule" --project ops --since 30d -n 5
        llm brain recall "what did I decide last week about the boiler" --explain
        llm brain recall rsync -- --sources

    A time phrase in the query (yesterday, last week, this month, in March 2026, since May,
    before 2025, two weeks ago) limits the search to those dates in your time zone and is
    taken out of the query; when nothing dated then matches, every date is searched.
    --since/--until (the phrase then stays a word of the query) and --no-dates turn it off.
    """
    if values.get("path"):
        values["path"] = _path_filter(values["path"])
    options = from_click(values)
    with _open(db_path) as sb:
        result = sb.search(" ".join(query), options, fresh=fresh)
    for note in result.notes:
        click.echo(note, err=True)
    if explain and not as_json and result.when:
        click.echo(_when_line(result.when))
    if explain and not as_json and result.mode == "hybrid":
        weights = ", ".join(f"{lane} {w:g}" for lane, w in result.weights.items())
        click.echo(f"[hybrid: {result.fusion} fusion; weights {weights} ({result.why})]")
    if explain and not as_json and result.dense:
        click.echo(f"[dense: {result.dense}]")
    if not result.relevant or not result.hits:
        if not as_json:  # --json: no lines is the answer, as before
            click.echo("nothing in the brain matches", err=True)
        return
    when = result.when.as_dict() if as_json and result.when else None  # (once: it scrubs what was searched)
    for rank, hit in enumerate(result.hits, start=1):
        if as_json:
            click.echo(json.dumps({"rank": rank, "mode": result.mode, "scale": result.scale,
                                   **hit.as_dict(), "stale": hit.id in result.stale, "when": when}))
            continue
        click.echo(f"{rank:>2}. {hit.score:.4f}  {hit.citation}" + (f"  [{hit.project}]" if hit.project else ""))
        click.echo(f"    {hit.snippet}")
        if hit.superseded_by:
            click.echo(f"    (remembered {hit.ts}; superseded by {hit.superseded_by} on {hit.superseded})")
        if hit.flags:
            click.echo(f"    (reads like instructions to a model: {', '.join(hit.flags)}; marked so for models)")
        if explain:
            parts = [f"{lane} #{r}" + (f" +{hit.contributions[lane]:.4f}" if lane in hit.contributions else "")
                     for lane, r in sorted(hit.ranks.items())]
            click.echo(f"    [{result.mode}] " + ", ".join(parts))


def _when_line(when) -> str:
    """--explain's account of the time phrase read from the query."""
    if when.fallback:
        return f"[time: {when.phrase!r} = {when.shown} (your time zone): nothing there matched, searched every date]"
    return f"[time: {when.phrase!r} = {when.shown} (your time zone); searched for {when.as_dict()['searched']!r}]"


def _a_number(value: float) -> float:
    """A float option's value, refused when it is no number (click's ranges let NaN through)."""
    if value != value:
        raise click.BadParameter("must be a number")
    return value


@brain.command(name="ingest")
@click.argument("paths", nargs=-1)
@click.option("--project", help="Project name stored on every chunk (default: the folder's name)")
@click.option("--source", help="Source name stored on every chunk (default: files / stdin)")
@click.option("--name", help="Name for standard input; re-ingesting a name replaces it")
@click.option("--include", multiple=True, help="Only ingest files matching this glob (repeatable)")
@click.option("--exclude", multiple=True, help="Skip files and folders matching this glob (repeatable)")
@click.option("--max-size", type=click.FloatRange(min=0, min_open=True, max=4096), default=20.0,
              show_default=True, callback=lambda ctx, param, value: _a_number(value),
              help="Skip files larger than this many MB (at most 4096)")
@click.option("--strip-emails", is_flag=True, default=None,
              help="Redact e-mail addresses too (or set SECONDBRAIN_STRIP_EMAILS=1)")
@click.option("--no-embed", is_flag=True, help="Only store; embed later with: llm brain embed")
@click.option("--no-progress", is_flag=True, help="Hide the embedding progress bar")
@click.option("--llm-logs", is_flag=True, help="Ingest the conversations llm has logged (incremental)")
@click.option("--logs-db", type=click.Path(dir_okay=False),
              help="With --llm-logs: read this logs file (default: llm logs path)")
@click.option("--include-brain-turns", is_flag=True,
              help="With --llm-logs: keep turns that used brain: fragments or brain_recall")
@click.option("--since", help="With --llm-logs: only conversations active on or after this ISO date")
@json_option
@db_option
def ingest_cmd(paths, project, source, name, include, exclude, max_size, strip_emails, no_embed,
               no_progress, llm_logs, logs_db, include_brain_turns, since, as_json, db_path):
    """Ingest files, folders (recursively) and - (standard input), and with --llm-logs
    every conversation llm has logged (incremental: only new turns are read).

    Every text is scrubbed of secrets, cut into paragraph chunks and stored once.
    Unchanged files are skipped; changed files replace only the chunks that changed;
    files that vanished from an ingested folder are removed. Sources are never modified.
    A file keeps its project unless --project says otherwise. Ctrl-C stops cleanly and
    says what was stored.

    \b
    Examples:
        llm brain ingest ~/notes
        llm brain ingest ~/work/docs --project work --exclude '*.log'
        pbpaste | llm brain ingest - --name meeting-2026-03-01
        llm brain ingest --llm-logs
    """
    from ..ingest import IngestInterrupted
    from ..progress import Ticker
    from ..ingest.sources import check_target

    if not paths and not llm_logs:
        raise _fail("say what to ingest: PATHS, - (standard input) or --llm-logs")
    if (logs_db or include_brain_turns or since) and not llm_logs:
        raise _fail("--logs-db, --include-brain-turns and --since go with --llm-logs")
    settings = config.load(db=db_path)
    if strip_emails:
        settings = config.replace(settings, strip_emails=True)
    for target in paths:
        check_target(target)
    ticker = None if no_progress else Ticker("ingesting", every=settings.progress_seconds)
    seen = 0

    def on_file(path: str) -> None:
        nonlocal seen
        seen += 1
        if ticker is not None:
            ticker.show(f"{seen:,} files read or checked")

    try:
        with _open(db_path, create=True, settings=settings) as sb:
            report = sb.ingest(
                list(paths), embed=not no_embed, progress=not no_progress, project=project,
                source=source, name=name, include=include, exclude=exclude, on_file=on_file, on_skip=_say_skip,
                max_bytes=int(max_size * 1024 * 1024), stdin=sys.stdin if "-" in paths else None,
                llm_logs=llm_logs, logs_db=logs_db, include_brain_turns=include_brain_turns,
                since=since,
            )
    except IngestInterrupted as stop:
        if ticker is not None:
            ticker.close()
        click.echo(f"interrupted; stored so far: {stop.report.summary()}", err=True)
        sys.exit(130)
    if ticker is not None:
        ticker.close()
    if include and report.files_seen == 0:
        click.echo(f"no file matched --include {' '.join(include)}", err=True)
    embedding = report.embedding or {}
    if embedding.get("error"):
        click.echo(f"{plural(embedding['pending'], 'chunk')} stored, embedding pending "
                   f"({embedding['error'].rstrip('.')}); run: llm brain embed", err=True)
    elif embedding.get("model"):
        from ..embed import EmbedReport

        click.echo(EmbedReport(**embedding).summary(), err=True)
    click.echo(json.dumps(report.as_dict()) if as_json else report.summary())


@brain.command(name="stats")
@json_option
@db_option
def stats_cmd(as_json, db_path):
    """Show what the brain holds: chunks by project, source and format, embedding state,
    size, and the model that answers queries.

    \b
    Example:
        llm brain stats --json
    """
    with _open(db_path) as sb:
        stats = sb.stats()
    if as_json:
        click.echo(json.dumps(stats, indent=2))
        return
    click.echo(f"brain:    {stats['path']} ({_human_size(stats['size_bytes'])})")
    click.echo(
        f"chunks:   {stats['chunks']} in {plural(stats['files'], 'document')} "
        f"({stats['embedded']} embedded, {stats['pending']} pending, {stats['failed']} failed)"
    )
    click.echo(f"facts:    {stats['facts']}")
    model = stats["embed_model"]
    click.echo(f"model:    {model} ({stats['embed_dim']} dimensions)" if model else "model:    none yet")
    if stats["query_model"]:
        click.echo(f"queries:  embedded with {stats['query_model']}")
    else:
        click.echo(f"queries:  {stats['query_note']}")
    for label, by in (("projects", "project"), ("sources", "source"), ("formats", "format")):
        if stats[label]:
            click.echo(f"chunks by {by}:")
            for key, count in stats[label].items():
                click.echo(f"  {key or '(none)'}: {count}")


@brain.command(name="sources")
@click.option("--project", help="Only this project")
@json_option
@db_option
def sources_cmd(project, as_json, db_path):
    """List what the brain holds: each file or stdin source, its project, chunks, when it
    was last ingested and its format.

    \b
    Examples:
        llm brain sources --project work
        llm brain sources --json | jq -r .path
    """
    with _open(db_path) as sb:
        rows = sb.sources()
    for row in rows:
        if project is not None and row["project"] != project:
            continue
        if as_json:
            click.echo(json.dumps(row))
        else:
            click.echo(f"{row['path']}\t{row['project'] or '-'}\t{plural(row['chunks'], 'chunk')}\t{row['ingested']}"
                       f"\t{row['format'] or ''}")


@brain.command(name="forget")
@click.argument("paths", nargs=-1)
@click.option("--project", help="Forget every chunk of this project")
@click.option("--source", help="Forget every chunk of this source")
@click.option("--fact", "fact_ids", type=int, multiple=True,
              help="Forget this remembered fact (its id, from: llm brain facts)")
@json_option
@db_option
def forget_cmd(paths, project, source, fact_ids, as_json, db_path):
    """Remove chunks everywhere (text, search index, vectors) by PATH, --project or --source,
    or a remembered fact by --fact ID.

    A PATH is a file or a folder (everything under it), typed as you like: it is resolved
    the same way ingest stores it; a name given to standard input works too. A file or
    folder inside an ingested folder stays out of it from now on (update and watch pass it
    by; ingesting it again brings it back); forgetting a whole ingested folder stops
    tracking it. Forgetting what the brain does not hold is an error. Combined options must
    all match.

    \b
    Examples:
        llm brain forget ~/notes/old-job
        llm brain forget --project scratch
    """
    if fact_ids:
        if paths or project is not None or source is not None:
            raise _fail("--fact forgets facts only: give it without a PATH, --project or --source")
        with _open(db_path) as sb:
            for fact_id in fact_ids:
                sb.forget_fact(fact_id)
        ids = ", ".join(f"fact:{i}" for i in fact_ids)
        click.echo(json.dumps({"facts_removed": list(fact_ids)}) if as_json else f"forgot {ids}")
        return
    if not paths and project is None and source is None:
        raise _fail("say what to forget: a PATH, --project, --source or --fact")
    with _open(db_path) as sb:
        gone = sb.forget(paths=paths, project=project, source=source)
    if as_json:
        click.echo(json.dumps({"chunks_removed": gone.chunks, "sources_removed": gone.files,
                               "kept_out_of_roots": gone.excluded, "roots_removed": gone.roots_removed}))
        return
    click.echo(f"forgot {plural(gone.chunks, 'chunk')} from {plural(gone.files, 'source')}")
    for name in gone.excluded:
        click.echo(f"{name} stays out of its root from now on (ingest it again to bring it back)")
    for root in gone.roots_removed:
        click.echo(f"{root} is no longer a root")


@brain.command(name="vacuum")
@db_option
def vacuum_cmd(db_path):
    """Compact the brain file after many deletes, changed files or a reembed.

    \b
    Example:
        llm brain vacuum
    """
    with _open(db_path) as sb:
        before, after = sb.vacuum()
    click.echo(f"{_human_size(before)} -> {_human_size(after)}")


@brain.command(name="scrub")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.option("--report", is_flag=True, help="Also print, on stderr, what kinds were redacted")
@click.option("--strip-emails", is_flag=True, default=None, help="Redact e-mail addresses too")
@click.option("--explain", is_flag=True,
              help="Instead of the text, print each redaction (line:column, rule, kind, length) and each "
                   "labelled value let go (line:column, label, filter); never a value")
def scrub_cmd(file, report, strip_emails, explain):
    """Preview scrubbing: print FILE (or stdin) with secrets redacted. Stores nothing.

    A document (PDF, DOCX, HTML, EPUB, e-mail, notebook) is shown as ingest would store
    it: read by its reader and scrubbed as one document, then printed as its title and
    each section (page, heading, chapter, message) under a `---` line naming it. Its
    --explain positions are lines and columns of that text before redaction. A file
    ingest would skip (corrupt, binary, a missing extra) is an error, never printed.

    \b
    Examples:
        llm brain scrub ~/notes/servers.md --report
        llm brain scrub --explain ~/notes/servers.md
        llm brain scrub ~/docs/manual.pdf
    """
    from ..ingest import Gate
    from ..scrub import scrub_report

    settings = config.load()
    if strip_emails:
        settings = config.replace(settings, strip_emails=True)
    gate = Gate(settings)
    if file == "-":
        name, source, sections = None, click.get_text_stream("stdin", encoding="utf-8", errors="replace").read(), None
    else:
        name, source, sections = _read_for_preview(file, settings, gate)
    if explain:
        _explain(source if sections is None else _layout(sections), settings.strip_emails, gate.allow)
        return
    if sections is None:
        text, counts = scrub_report(source, strip_emails=settings.strip_emails, allow=gate.allow)
    else:
        _, clean, counts = gate.sections(name, sections)
        text = _layout(clean)
    sys.stdout.write(text)
    if report:
        total = sum(counts.values())
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())) or "nothing"
        click.echo(f"redacted {total}: {kinds}", err=True)


def _read_for_preview(file: str, settings: config.Settings, gate) -> tuple[str, str | None, list | None]:
    """(its name as ingest stores it, the text of a text file, the sections of a document): a
    file read by ingest's own reader, so that what scrub shows is what ingest would keep. A
    text file is shown whole, front matter included, as scrub always showed it; one ingest
    would skip is one line naming why, and what the reader left out is said on stderr."""
    from ..ingest import read_file
    from ..ingest.sources import Skip, decode

    try:
        doc, sections, raw = read_file(file, settings)
    except Skip as skip:
        raise _fail(f"ingest would skip {gate.shown(file)}: {skip.reason}") from None
    for what, n in sorted(getattr(sections, "notes", {}).items()):
        click.echo(f"{n} {what}", err=True)
    if doc.format == "text":
        return doc.path, decode(raw), None
    return doc.path, None, sections


def _layout(sections) -> str:
    """A document's sections as one text to read: the document's title (the first a section
    has, the one ingest keeps), then each section's text under a `---` line with its metadata
    (page, heading, chapter, sender), so a page or a message can be told from the next."""
    title = next((s.title for s in sections if s.title), None)
    out = [f"title: {title}\n"] if title else []
    for section in sections:
        fields = "; ".join(f"{k}: {', '.join(v) if isinstance(v, list) else v}"
                           for k, v in (section.meta or {}).items())
        out.append(f"--- {fields}\n" if fields else "---\n")
        out.append(section.text if section.text.endswith("\n") else section.text + "\n")
    return "".join(out)


def _explain(source: str, strip_emails: bool, allow) -> None:
    """Print why scrubbing `source` redacts what it redacts, by position: never a value."""
    import bisect

    from ..scrub import explain

    redactions, released = explain(source, strip_emails=strip_emails, allow=allow)
    starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]

    def where(pos: int) -> str:
        line = bisect.bisect_right(starts, pos)
        return f"{line}:{pos - starts[line - 1] + 1}"

    for r in redactions:
        click.echo(f"{where(r.start):<10} redacted  {','.join(r.rules):<28} {r.kind:<24} length {r.end - r.start}")
    for r in released:
        click.echo(f"{where(r.start):<10} let go    {r.found_by:<28} {r.filter}")
    click.echo(f"{len(redactions)} redacted, {len(released)} let go")


def _embed_options(fn):
    fn = json_option(fn)
    fn = click.option("--no-progress", is_flag=True, help="Hide the progress bar (shown on a terminal)")(fn)
    fn = click.option("--retry-failed", is_flag=True,
                      help="First put chunks that failed before back in the queue")(fn)
    fn = click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True,
                      help="Chunks per request to the embedding server")(fn)
    return db_option(fn)


def _run_embed(db_path, *, reembed: bool, as_json: bool, no_progress: bool, **kwargs) -> None:
    from ..embed import EmbedInterrupted

    try:
        with _open(db_path) as sb:
            # EmbedError is a click.ClickException: one line on stderr, exit code 1.
            run = sb.reembed if reembed else sb.embed
            report = run(progress=not no_progress, **kwargs)
    except EmbedInterrupted as stop:  # as ingest does: what was done, and exit 130
        click.echo(f"interrupted; {stop.report.summary()}", err=True)
        sys.exit(130)
    click.echo(json.dumps(report.as_dict()) if as_json else report.summary())


@brain.command(name="embed")
@_embed_options
def embed_cmd(db_path, **kwargs):
    """Embed pending chunks with the configured model.

    SECONDBRAIN_EMBED_MODEL names an Ollama model (default nomic-embed-text, at
    OLLAMA_URL) or llm:<model id> for any llm embedding model; unset, a brain keeps the
    model it was built with. Safe to interrupt: the next run continues. Chunks that cannot
    be embedded are set aside (--retry-failed).

    \b
    Example:
        OLLAMA_URL=http://gpu-box:11434 llm brain embed
    """
    _run_embed(db_path, reembed=False, **kwargs)


@brain.command(name="reembed")
@_embed_options
def reembed_cmd(db_path, **kwargs):
    """Rebuild every vector with the current model (after changing SECONDBRAIN_EMBED_MODEL
    or the prefixes). Safe to interrupt: running it again continues where it stopped.

    \b
    Example:
        SECONDBRAIN_EMBED_MODEL=mxbai-embed-large llm brain reembed
    """
    _run_embed(db_path, reembed=True, **kwargs)


def _path_filter(value: str) -> str:
    """--path as a user types it: a file or folder (relative to here, like forget takes it)
    becomes the stored absolute path (a folder: everything under it); anything else is a glob."""
    import os

    from ..ingest.sources import resolve

    if any(ch in value for ch in "*?[") or not os.path.exists(value):
        return value
    from ..ingest import Gate

    real = Gate(config.load()).shown(resolve(value))  # the name the brain stores it under
    return real + os.sep + "*" if os.path.isdir(resolve(value)) else real


@brain.command(name="remember")
@click.argument("text", nargs=-1, required=True)
@click.option("--tag", "tags", multiple=True, help="A tag for the fact (repeatable)")
@click.option("--project", help="Project stored with the fact")
@click.option("--supersedes", type=click.IntRange(min=1), metavar="ID",
              help="This fact replaces fact ID: recall shows the older one only with --history")
@json_option
@db_option
def remember_cmd(text, tags, project, supersedes, as_json, db_path):
    """Remember TEXT as a fact (or - to read it from standard input).

    The fact is scrubbed like everything else, stored once however often it is remembered,
    found by recall and cited as fact:<id>. Without Ollama it is stored all the same and
    embedded later (llm brain embed). With --supersedes ID the older fact stays, marked as
    replaced: recall leaves it out unless asked (--history); forgetting the newer fact
    makes it current again. A fact already superseded is refused, naming the fact that
    replaced it: supersede that one instead.

    \b
    Example:
        llm brain remember "the boiler service interval is now 18 months" --supersedes 3
    """
    body = sys.stdin.read() if text == ("-",) else " ".join(text)
    with _open(db_path, create=True) as sb:
        fact = sb.remember(body, tags=tags, project=project, origin="cli", supersedes=supersedes)
    embedding = fact.embedding or {}
    if embedding.get("error"):
        click.echo(f"embedding pending ({embedding['error'].rstrip('.')}); "
                   "run: llm brain embed", err=True)
    if as_json:
        click.echo(json.dumps(fact.as_dict()))
    else:
        click.echo(f"{'remembered' if fact.stored else 'already remembered'}: {fact.citation}"
                   + (f" (supersedes fact:{fact.supersedes})" if fact.supersedes else ""))


@brain.command(name="facts")
@json_option
@db_option
def facts_cmd(as_json, db_path):
    """List remembered facts: id, when, project, tags and text."""
    with _open(db_path) as sb:
        rows = sb.facts()
    for fact in rows:
        if as_json:
            click.echo(json.dumps(fact.as_dict()))
            continue
        tags = f"  #{' #'.join(fact.tags)}" if fact.tags else ""
        project = f"  [{fact.project}]" if fact.project else ""
        replaced = f"  (superseded by fact:{fact.superseded_by} on {fact.superseded})" if fact.superseded_by else ""
        click.echo(f"{fact.citation}  {fact.created}{project}{tags}{replaced}")
        click.echo(f"    {' '.join(fact.text.split())}")
    if not rows and not as_json:
        click.echo("no facts remembered yet", err=True)


@brain.command(name="mcp")
@click.option("--read-only", is_flag=True, help="Offer recall, sources and stats only (no remember)")
@click.option("--http", "address", metavar="[HOST:]PORT",
              help="Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: 127.0.0.1)")
@click.option("--allow-remote", is_flag=True,
              help="With --http: allow a non-loopback HOST (needs SECONDBRAIN_MCP_TOKEN)")
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="With --http: another Host (and Origin) name clients may use (repeatable)")
@db_option
def mcp_cmd(read_only, address, allow_remote, allowed_hosts, db_path):
    """Run an MCP server for agents outside llm: on standard input and output, or with
    --http over Streamable HTTP, one warm brain for every agent on the machine.

    Tools: recall, sources, stats and (unless --read-only) remember. Configure your MCP
    client to start: llm brain mcp (optionally with --db PATH), or point it at
    http://127.0.0.1:PORT/mcp. Over HTTP the Host and Origin headers are checked (a web page
    cannot call it), SECONDBRAIN_MCP_TOKEN makes every request carry that bearer token, and
    an address other machines reach needs --allow-remote and the token. Needs the mcp
    extra: llm install 'llm-secondbrain[mcp]'.

    \b
    Examples:
        llm brain mcp
        llm brain mcp --http 8765
    """
    if (allow_remote or allowed_hosts) and not address:
        raise _fail("--allow-remote and --allow-host go with --http")
    try:
        from .mcp_server import serve
        if address:
            from .mcp_http import serve_http
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("mcp", "jsonschema", "uvicorn", "starlette"):
            raise
        raise _fail("llm brain mcp needs the mcp extra: llm install 'llm-secondbrain[mcp]'") from None
    if address:
        from .mcp_http import check, parse_address, TOKEN_VAR
        import os

        host, _ = parse_address(address)  # refused before the brain is opened
        check(host, allow_remote=allow_remote, token=os.environ.get(TOKEN_VAR))
    with _open(db_path, create=not read_only) as sb:
        if address:
            serve_http(sb, address, read_only=read_only, allow_remote=allow_remote, allowed_hosts=allowed_hosts)
        else:
            serve(sb, read_only=read_only)


@brain.command(name="update")
@click.argument("paths", nargs=-1)
@click.option("--no-embed", is_flag=True, help="Only store; embed later with: llm brain embed")
@click.option("--no-progress", is_flag=True, help="Hide the embedding progress bar")
@json_option
@db_option
def update_cmd(paths, no_embed, no_progress, as_json, db_path):
    """Re-ingest every root (or the roots PATHS) with the options it was ingested with.

    A root is each folder or file given to ingest; the last ingest of a path decides its
    options. Unchanged files cost a stat each. A root that no longer exists is reported and
    its chunks are kept (a missing mount must not erase a brain).
    """
    with _open(db_path) as sb:
        report = sb.update(list(paths), embed=not no_embed, progress=not no_progress, on_skip=_say_skip)
    if not report.roots:
        click.echo("no roots yet: each folder or file given to llm brain ingest becomes one", err=True)
    if as_json:
        click.echo(json.dumps(report.as_dict()))
    else:
        for line in report.lines():
            click.echo(line)
    embedding = report.total.embedding or {}
    if embedding.get("error") and not as_json:
        click.echo(f"{embedding['pending']} chunks stored, embedding pending "
                   f"({embedding['error'].rstrip('.')}); run: llm brain embed", err=True)
    failed = [r for r in report.roots if r.status == "failed"]
    if failed:  # the others were brought up to date; a script still learns that one was not
        raise _fail(f"{len(failed)} of {len(report.roots)} roots could not be updated")


@brain.command(name="roots")
@click.option("--remove", "remove", metavar="PATH", help="Stop tracking this root (its chunks stay until forget)")
@json_option
@db_option
def roots_cmd(remove, as_json, db_path):
    """List the roots update and watch follow: each with its options and when it was last
    brought up to date."""
    with _open(db_path) as sb:
        if remove is not None:
            sb.remove_root(remove)
            click.echo(f"no longer tracking {remove}; its chunks stay (llm brain forget {remove})")
            return
        rows = sb.roots()
    for row in rows:
        if as_json:
            click.echo(json.dumps(row))
            continue
        options = " ".join(_as_flags(row["options"]))
        state = "" if row["exists"] else "  (missing: chunks kept)"
        click.echo(f"{row['path']}\t{options or '-'}\tupdated {row['updated']}{state}")
        for name in row["forgotten"]:
            click.echo(f"  forgotten, kept out: {name}")


def _as_flags(options: dict) -> list[str]:
    """A root's remembered options as the ingest flags that would give them."""
    flags = []
    for key, value in sorted(options.items()):
        if key == "max_bytes":
            flags.append(f"--max-size {value / 1024 / 1024:.2g}")
        elif value is True:
            flags.append(f"--{key.replace('_', '-')}")
        else:
            flags += [f"--{key.replace('_', '-')} {v}" for v in (value if isinstance(value, list) else [value])]
    return flags


@brain.command(name="watch")
@click.argument("paths", nargs=-1)
@click.option("--no-embed", is_flag=True, help="Only store; embed later with: llm brain embed")
@click.option("--debounce", type=click.IntRange(min=50), default=1600, show_default=True,
              help="Longest a burst of changes is gathered into one batch, in ms")
@db_option
def watch_cmd(paths, no_embed, debounce, db_path):
    """Keep the brain up to date while this runs: every root, or the roots PATHS.

    Brings each root up to date first (changes made while it was stopped), then ingests
    changed files in debounced batches, one line per batch. Ctrl-C stops it cleanly.
    Needs the watch extra: llm install 'llm-secondbrain[watch]'.
    """
    import signal

    try:
        import watchfiles  # noqa: F401  (the [watch] extra)
    except ImportError:
        raise _fail("llm brain watch needs the watch extra: llm install 'llm-secondbrain[watch]'") from None
    from ..ingest.roots import LLM_LOGS, all_roots, select
    from .watch import Watch, WatchError

    # a service manager stops us with SIGTERM: end as cleanly as on Ctrl-C
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    batches = 0
    with _open(db_path) as sb:
        chosen = select(all_roots(sb.brain), paths) if paths else all_roots(sb.brain)
        chosen = [r for r in chosen if r.path != LLM_LOGS]  # llm's log is followed by update
        if not chosen:
            raise _fail("no roots to watch yet: ingest a folder first (llm brain ingest PATH)")
        try:
            with Watch(sb, chosen, embed=not no_embed, debounce_ms=debounce) as watch:
                report = sb.update([r.path for r in chosen], embed=not no_embed, progress=False,
                                   on_skip=_say_skip)
                for line in report.lines():
                    click.echo(line)
                click.echo(f"watching {len(watch.watched)} roots (Ctrl-C to stop)")
                for batch in watch.batches():
                    batches += 1
                    for skipped in batch.report.skipped_files:  # a bad file is named, then watched on
                        _say_skip(skipped["path"], skipped["reason"])
                    click.echo(batch.line())
        except KeyboardInterrupt:
            pass
        except WatchError as e:
            raise _fail(str(e)) from None
    click.echo(f"stopped after {batches} batches; the brain is up to date as of the last one")


@brain.command(name="eval")
@click.argument("queries_file", metavar="QUERIES.jsonl", type=click.File("r", encoding="utf-8"))
@click.option("--mode", "modes", multiple=True, type=click.Choice(["hybrid", "dense", "lexical"]),
              help="Score this mode (repeatable; default: all three)")
@click.option("--negatives", "negatives_file", type=click.File("r", encoding="utf-8"),
              metavar="NEGATIVES.jsonl", help="Questions the brain cannot answer: count those that get nothing")
@click.option("--project", help="Search only chunks of this project")
@click.option("--source", help="Search only chunks of this source (files, stdin, llm, ...)")
@click.option("--path", help="Search only chunks whose file path matches this glob (or is under this folder)")
@click.option("--per-query", is_flag=True, help="With --json: every query's figures and top notes too")
@json_option
@db_option
def eval_cmd(queries_file, modes, negatives_file, project, source, path, per_query, as_json, db_path):
    """Score recall on your own golden queries: hit@1, MRR@10, nDCG@10, recall@10 per mode.

    QUERIES.jsonl holds one {"id", "query", "answers": [paths], "class"} per line (class is
    optional). Hits are ranked by note; an answer matches a stored path that ends with it.
    NEGATIVES.jsonl holds questions nothing answers ({"id", "query"}); each should get
    "nothing matches". --project, --source and --path narrow every search, as for recall.

    \b
    Example:
        llm brain eval golden.jsonl --negatives unanswerable.jsonl --project notes --mode hybrid
    """
    from .evaluate import evaluate, read_queries, table

    queries = read_queries(queries_file)
    negatives = read_queries(negatives_file, negatives=True) if negatives_file else []
    if not queries:
        raise _fail("no queries in the file")
    filters = {"project": project, "source": source, "path": _path_filter(path) if path else None}
    with _open(db_path) as sb:
        report = evaluate(sb, queries, modes or ("hybrid", "dense", "lexical"),
                          negatives=negatives, filters=filters)
    if not per_query:
        report.pop("queries")
    click.echo(json.dumps(report, indent=2) if as_json else table(report))
