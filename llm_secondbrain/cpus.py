"""Which CPUs the embedding threads run on.

The embedding workers spend their time decoding the server's JSON (they hold the GIL, so only
one of them runs at a time) while the writer thread spends its time inside SQLite (which lets
go of the GIL). Left to the scheduler, these threads hop between CPUs and each hop starts on
cold caches. On the 2-vCPU machine the benchmark runs on, in one interleaved run of six pairs
against a bare client (itself unpinned), the median ratio was 1.20x with no pinning and 1.11x
with the workers kept on one half of the CPUs and the writer on the other. A bare client gains
about 5% from staying on one CPU too, so bench/bench_embed.py pins its direct client the same way.

Only threads of our own are pinned for good (the workers, which end with the run); the calling
thread is pinned while it writes and gets its CPUs back afterwards. Where pinning is not
possible (not Linux, a single CPU, a sandbox that refuses it) nothing changes.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

CpuSet = frozenset[int]


def split() -> tuple[CpuSet, CpuSet] | None:
    """The CPUs the calling thread may use, in two halves: (for the workers, for the writer).
    None when there is nothing to split."""
    if not (hasattr(os, "sched_getaffinity") and hasattr(os, "sched_setaffinity")):
        return None
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except OSError:
        return None
    if len(cpus) < 2:
        return None
    half = len(cpus) // 2
    return frozenset(cpus[:half]), frozenset(cpus[half:])


def pin(cpus: CpuSet | None) -> None:
    """Keep the calling thread on `cpus` (an affinity is a hint worth having, never worth
    failing for: a refusal leaves the thread where it was)."""
    if cpus:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def pinned(cpus: CpuSet | None) -> Iterator[None]:
    """Keep the calling thread on `cpus` for the block, then give it back the CPUs it had."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    pin(cpus)
    try:
        yield
    finally:
        pin(frozenset(before))
