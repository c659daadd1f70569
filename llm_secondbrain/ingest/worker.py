"""The worker process that reads the formats whose libraries parse what a stranger wrote
(PDF, DOCX, HTML, EPUB, mail, notebooks), so that one file can cost a bounded time and memory.

Ingest runs inside other people's processes too (the Python API, the fragment and the tool run
in `llm`'s or a host's), where an alarm signal or a resource limit would change that process
for everyone in it. So a reader runs in a child process of ours instead, started when the
first such file is read and fed files over a pipe, one at a time: the child limits its own
address space (a file that needs more is "too large to read") and its own CPU time (should we
be gone), and the parent gives each file `seconds`. A child that overruns is killed and the
file skipped ("too slow to read"); one that dies is replaced and the file skipped ("crashed
the reader"); either way the next file gets a fresh child. What the child costs (files,
seconds, peak memory, restarts) is in the ingest report.

The child imports our readers without our package's `__init__` modules (they load `llm`, the
store and the scrubber, none of which a reader needs): start-up is that of Python plus the
format's library. Its stdout and stderr are /dev/null (a library may print document bytes);
the protocol runs on pipes of its own. Where no child can be started (`sys.executable` is not
a Python, as in an application that embeds one) files are read in this process, bounded in
size and depth but not in time, and the report says so (`in_process`).
"""
from __future__ import annotations

import json
import os
import queue
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass

from .readers import Format, Limits, Section, Sections, read_bounded
from .sources import Skip

READ_SECONDS = 60.0  # a file's reading, from its bytes sent to its sections back
START_SECONDS = 30.0  # a child that has not said it is ready by then is not coming
_HEADER = struct.Struct(">IQ")  # header length, file length
_LENGTH = struct.Struct(">Q")  # answer length
_BOOT = """\
import sys, types
for name, path in (("llm_secondbrain", sys.argv[1]), ("llm_secondbrain.ingest", sys.argv[2])):
    shell = types.ModuleType(name)
    shell.__path__ = [path]
    sys.modules[name] = shell
from llm_secondbrain.ingest.worker import serve
serve()
"""


@dataclass
class ReadCost:
    """What reading in the child cost over one run."""

    files: int = 0
    seconds: float = 0.0  # wall time from a file sent to its answer
    peak_rss_mb: float = 0.0  # the child's largest resident set
    starts: int = 0
    overruns: int = 0  # files that took longer than `seconds`: the child was killed
    crashes: int = 0  # files during which the child died
    in_process: bool = False  # no child could be started: read here, unbounded in time

    def as_dict(self) -> dict:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        out["peak_rss_mb"] = round(self.peak_rss_mb, 1)
        return out

    @staticmethod
    def merged(one: dict | None, other: dict) -> dict:
        """Two runs' costs as one (the roots of an update): counts added, the peak the
        larger."""
        if not one:
            return dict(other)
        out = {k: one.get(k, 0) + v for k, v in other.items() if k not in ("peak_rss_mb", "in_process")}
        out["seconds"] = round(out["seconds"], 3)
        out["peak_rss_mb"] = max(one.get("peak_rss_mb", 0.0), other.get("peak_rss_mb", 0.0))
        out["in_process"] = bool(one.get("in_process") or other.get("in_process"))
        return out


class ReadWorker:
    """One child reading files for one run (an ingest, a batch of `watch`); used from one
    thread at a time. Close it (or use it as a context manager) to stop the child."""

    def __init__(self, seconds: float = READ_SECONDS):
        self.seconds = seconds
        self.cost = ReadCost()
        self._proc: subprocess.Popen | None = None
        self._answers: queue.Queue = queue.Queue()

    def __enter__(self) -> "ReadWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def read(self, fmt: Format, raw: bytes, path: str, limits: Limits) -> Sections:
        """The file's sections, read by the child within `limits` and `seconds`; raises Skip."""
        started = time.monotonic()
        self.cost.files += 1
        if self.cost.in_process or not self._running():
            try:
                return read_bounded(fmt, raw, path, limits)
            finally:
                self.cost.seconds += time.monotonic() - started
        header = json.dumps({"module": fmt.module, "function": fmt.function, "path": path,
                             "limits": asdict(limits), "seconds": self.seconds}
                            ).encode("utf-8", "surrogatepass")
        try:
            self._proc.stdin.write(_HEADER.pack(len(header), len(raw)) + header)
            self._proc.stdin.write(raw)
            self._proc.stdin.flush()
            answer = self._answers.get(timeout=self.seconds)
        except queue.Empty:
            self.cost.overruns += 1
            self._stop()
            raise Skip(f"too slow to read (over {self.seconds:g} s)") from None
        except OSError:  # the pipe broke: the child is gone
            answer = None
        finally:
            self.cost.seconds += time.monotonic() - started
        if answer is None:
            self.cost.crashes += 1
            self._stop()
            raise Skip("crashed the reader")
        self.cost.peak_rss_mb = max(self.cost.peak_rss_mb, answer.get("rss_mb", 0.0))
        if "skip" in answer:
            raise Skip(answer["skip"])
        if "error" in answer:
            raise Skip(f"unreadable ({answer['error']})")
        return Sections([Section(**s) for s in answer["sections"]], notes=Counter(answer["notes"]))

    def close(self) -> None:
        self._stop()

    # -- the child -----------------------------------------------------------------------------

    def _running(self) -> bool:
        """A child ready for a file: the one there is, or a new one. False (and reading in
        this process from now on) when none can be started."""
        if self._proc is not None and self._proc.poll() is None:
            return True
        self._stop()
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if not _is_python(sys.executable) or getattr(sys, "frozen", False):
            self.cost.in_process = True
            return False
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, package, os.path.join(package, "ingest")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                close_fds=True)
        except OSError:
            self.cost.in_process = True
            return False
        self._answers = queue.Queue()
        threading.Thread(target=_pump, args=(self._proc.stdout, self._answers), daemon=True,
                         name="secondbrain-read-worker").start()
        try:
            ready = self._answers.get(timeout=START_SECONDS)
        except queue.Empty:
            ready = None
        if not ready or "ready" not in ready:
            self._stop()
            self.cost.in_process = True
            return False
        self.cost.starts += 1
        return True

    def _stop(self) -> None:
        """End the child (it holds nothing worth waiting for), then its pipes: the pump
        thread reads the end of its output and stops."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass


def _is_python(executable: str | None) -> bool:
    """Whether the interpreter running us can be started as `python -c`: an application that
    embeds Python (a server, a frozen app) has its own program there, which must not be run."""
    name = os.path.basename(executable or "").lower()
    return name.startswith(("python", "pypy"))


def _pump(stream, answers: queue.Queue) -> None:
    """Hand each answer the child writes to the waiting reader; None when the child is gone."""
    try:
        while True:
            head = stream.read(_LENGTH.size)
            if len(head) < _LENGTH.size:
                break
            (size,) = _LENGTH.unpack(head)
            body = stream.read(size)
            if len(body) < size:
                break
            answers.put(json.loads(body.decode("utf-8", "surrogatepass")))
    except (OSError, ValueError):
        pass
    answers.put(None)


# -- in the child --------------------------------------------------------------------------------


def serve() -> None:
    """The child's loop: read a file from the pipe, answer with its sections or why it was
    skipped, until the pipe closes. Runs only in the child this module starts."""
    import signal

    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)  # what a library prints goes nowhere
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _send(answers, {"ready": os.getpid()})
    while True:
        head = requests.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return
        header_size, raw_size = _HEADER.unpack(head)
        job = json.loads(requests.read(header_size).decode("utf-8", "surrogatepass"))
        raw = requests.read(raw_size)
        limits = Limits(**job["limits"])
        _bound_self(limits, job["seconds"])
        _send(answers, _answer(Format("", job["module"], job["function"]), raw, job["path"], limits))


def _answer(fmt: Format, raw: bytes, path: str, limits: Limits) -> dict:
    try:
        sections = read_bounded(fmt, raw, path, limits)
        out = {"sections": [asdict(s) for s in sections], "notes": dict(getattr(sections, "notes", {}))}
    except Skip as skip:
        out = {"skip": skip.reason}
    except MemoryError:
        out = {"skip": "too large to read"}
    except Exception as e:  # noqa: BLE001 - named to the parent, which skips the file
        out = {"error": type(e).__name__}
    out["rss_mb"] = _rss_mb()
    return out


def _send(answers, message: dict) -> None:
    body = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    answers.write(_LENGTH.pack(len(body)) + body)
    answers.flush()


def _bound_self(limits: Limits, seconds: float) -> None:
    """The child's own limits for the next file: its address space, and CPU time enough for
    the file (a backstop for when the parent that would kill it is gone)."""
    try:
        import resource
    except ImportError:  # not on Windows: the parent's deadline still holds
        return
    for which, soft in ((resource.RLIMIT_AS, limits.memory),
                        (resource.RLIMIT_CPU, int(time.process_time() + 2 * seconds) + 1)):
        try:
            hard = resource.getrlimit(which)[1]
            resource.setrlimit(which, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        except (ValueError, OSError, OverflowError):
            pass


def _rss_mb() -> float:
    try:
        import resource
    except ImportError:
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
