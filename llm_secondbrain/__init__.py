"""llm-secondbrain: the `llm` hooks. Kept thin: heavy modules load only when a hook runs, so
`llm --help` and `llm --version` stay fast for people with many plugins."""
from __future__ import annotations

import llm


@llm.hookimpl
def register_commands(cli):
    from .cli import register

    register(cli)
