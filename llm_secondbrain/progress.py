"""Progress of long work on stderr, for our own commands only.

On a terminal a line is rewritten in place; anywhere else (a log, a pipe, cron) a line is
printed every few seconds, so a long first ingest into a log shows that it is alive.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Ticker:
    def __init__(self, label: str, *, every: float = 5.0, stream: TextIO | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every = min(0.2, every) if self.tty else every
        self.started = self.last = time.monotonic()
        self.shown = False

    def show(self, status: str) -> None:
        """Say `status` if it is time to (the caller may call this as often as it likes)."""
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        line = f"{self.label}: {status} ({now - self.started:.0f} s)"
        if self.tty:
            self.stream.write("\r" + line[:200] + "\x1b[K")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
