"""`llm brain`: the group the commands hang on, and its error boundary. `llm` builds its command
line at every start (`llm --version`, `llm -m echo hi`), so this module imports nothing but
click: the commands themselves (cli.py) load when one runs or help lists them."""
from __future__ import annotations

import sys

import click


class BrainGroup(click.Group):
    """The group's one error boundary: expected failures are one line and exit 1, never a
    traceback. ClickExceptions (usage errors, EmbedError) pass through as click shows them.
    Every message leaves scrubbed: an error repeats what a person typed (a path, a project, an
    option's value), and what they typed may hold a secret."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        _load_commands()
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.ClickException as e:
            e.message = _scrubbed(e.message)
            raise
        except BrokenPipeError:
            _quiet_after_broken_pipe()
        except Exception as e:
            message = _expected(e)
            if message is None:
                raise
            raise _fail(message) from None


def _expected(error: Exception) -> str | None:
    """The one line for a failure a person can cause (a bad brain file, path or value), or
    None. The error types are looked up among the modules already loaded, not imported: one
    that is not loaded cannot have raised, and importing the ingest side would cost every
    recall ~50 ms."""
    store = sys.modules.get("llm_secondbrain.store")
    sources = sys.modules.get("llm_secondbrain.ingest.sources")
    if (isinstance(error, ValueError) or (store and isinstance(error, store.BrainError))
            or (sources and isinstance(error, sources.SourceError))):
        return str(error)
    if store and isinstance(error, store.DB_ERRORS):
        if "readonly" in str(error):
            return ("the brain is read-only here: it can be searched, not changed (check the "
                    "permissions of the file and its folder, or name another brain with --db)")
        return f"brain database error: {error}"
    if isinstance(error, OSError):
        return f"{error.strerror or error}: {error.filename or ''}".rstrip(": ")
    return None


def _load_commands() -> None:
    from . import cli  # noqa: F401  (its decorators add each command to `brain`)


def _quiet_after_broken_pipe() -> None:
    """`llm brain recall ... | head`: the reader left, so stop without a word. Point stdout
    at /dev/null so the interpreter's final flush does not complain either."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


def _fail(message: str) -> click.ClickException:
    return click.ClickException(_scrubbed(message.splitlines()[0]) if message else "failed")


def _scrubbed(message: str) -> str:
    from ..scrub import scrub  # (only when a command fails: recall's start-up stays light)

    return scrub(message)


@click.group(name="brain", cls=BrainGroup)
def brain():
    """A personal second brain: scrubbed notes, hybrid recall.

    Ingest folders, files and standard input into one SQLite file, with every secret
    redacted before it is stored, then recall by meaning or by exact token.
    """
