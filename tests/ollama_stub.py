"""An Ollama-compatible embedding server for tests and benchmarks, with switchable faults.

    with OllamaStub() as stub:           # 127.0.0.1, a free port, a daemon thread
        os.environ["OLLAMA_URL"] = stub.url
        stub.fail_next(2)                # the next two embedding calls answer 500
        ...

    python tests/ollama_stub.py --port 11499 [--dim 384] [--delay 0.05]

Vectors are deterministic and mildly semantic: a signed hashed bag of words (lowercase
alphanumeric runs) plus, at a lower weight, the character trigrams of each word, in `dim`
buckets. Texts sharing words are close; unrelated texts are nearly orthogonal.
`/api/embed` answers L2-normalised vectors, `/api/embeddings` (legacy) the raw ones, as Ollama.

Faults, all settable at runtime from any thread:
  missing          set of model names answered with Ollama's 404 "model not found"
  old_server       True: /api/embed is a plain-text "404 page not found" (Ollama < 0.3.4)
  fail_next(n)     the next n embedding calls answer HTTP 500 (status configurable)
  drop_next(n)     the next n embedding calls close the socket without an answer
  delay            seconds to sleep before answering each embedding call
  drip             seconds between the bytes of an embedding answer's first 100 (leading blanks):
                   a server that keeps the connection busy and never finishes in time
  dim              the dimension of every vector (change it to play "another model")
  wrong_dim_marker texts containing it get a vector one element short
  nan_marker       texts containing it get a NaN in their vector
  reject_marker    a request holding a text that contains it is refused with 400
  crash_marker     a request holding a text that contains it fails with 500 (as Ollama's
                   runner does on some inputs), however often it is retried
  counts           request counters: embed, embeddings, texts, failed, dropped, rejected
  requests         every embedding request (path, model, input); wait_idle() first after a kill
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[a-z0-9]+")
DEFAULT_DIM = 768
TRIGRAM_WEIGHT = 0.35


def _bucket(token: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def raw_vector(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    """The unnormalised hashed bag-of-words vector of `text` (never all zeros)."""
    vec = [0.0] * dim
    words = WORD.findall(text.lower())
    for word in words:
        i, sign = _bucket("w:" + word, dim)
        vec[i] += sign
        padded = f"#{word}#"
        for k in range(len(padded) - 2):
            i, sign = _bucket("t:" + padded[k:k + 3], dim)
            vec[i] += sign * TRIGRAM_WEIGHT
    if not words:  # empty or symbols only: a fixed direction, so the vector stays valid
        i, sign = _bucket("empty:" + text, dim)
        vec[i] += sign
    # Scale like a real model's raw output (not unit length), so normalisation is observable.
    return [x * 3.0 for x in vec]


def unit_vector(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    v = raw_vector(text, dim)
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(x * x for x in b)) or 1.0
    return sum(x * y for x, y in zip(a, b)) / (na * nb)


class OllamaStub:
    def __init__(self, *, dim: int = DEFAULT_DIM, port: int = 0, version: str = "0.6.2",
                 tags: tuple[str, ...] = ("nomic-embed-text:latest", "all-minilm:latest")):
        self.dim = dim
        self.version = version
        self.tags = list(tags)
        self.missing: set[str] = set()
        self.old_server = False
        self.delay = 0.0
        self.drip = 0.0
        self.wrong_dim_marker: str | None = None
        self.nan_marker: str | None = None
        self.reject_marker: str | None = None
        self.crash_marker: str | None = None
        self.fail_status = 500
        self._fail_left = 0
        self._drop_left = 0
        self.lock = threading.Lock()
        self.counts = self._zero_counts()
        self.requests: list[dict] = []  # every embedding request body (model, inputs)
        self.keep_requests = True
        self.active = 0  # requests being answered right now
        self.fast_pool: list[str] | None = None  # see use_fast_pool()
        self._port = port
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # -- control -------------------------------------------------------------------------------

    @staticmethod
    def _zero_counts() -> dict:
        return {"embed": 0, "embeddings": 0, "texts": 0, "failed": 0, "dropped": 0, "rejected": 0}

    def reset(self) -> None:
        """Clear every fault and counter (the dimension is kept)."""
        with self.lock:
            self.missing = set()
            self.old_server = False
            self.delay = 0.0
            self.drip = 0.0
            self.wrong_dim_marker = self.nan_marker = self.reject_marker = self.crash_marker = None
            self.fail_status = 500
            self._fail_left = self._drop_left = 0
            self.counts = self._zero_counts()
            self.requests = []
            self.keep_requests = True

    def fail_next(self, n: int, status: int = 500) -> None:
        with self.lock:
            self._fail_left = n
            self.fail_status = status

    def drop_next(self, n: int) -> None:
        with self.lock:
            self._drop_left = n

    def use_fast_pool(self, size: int = 1024) -> None:
        """Answer /api/embed from `size` precomputed unit vectors (picked by a hash of the
        text), pre-encoded as JSON: an "instant" server for overhead benchmarks. The values
        are float32, printed the way Ollama prints them. Not semantic."""
        import random
        import struct

        rng = random.Random(1234)
        pool = []
        for _ in range(size):
            v = [rng.gauss(0, 1) for _ in range(self.dim)]
            n = math.sqrt(sum(x * x for x in v))
            v32 = struct.unpack(f"{self.dim}f", struct.pack(f"{self.dim}f", *(x / n for x in v)))
            pool.append("[" + ",".join(f"{x:.9g}" for x in v32) + "]")
        self.fast_pool = pool

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until no request is being answered (say, one a killed client left behind)."""
        deadline = time.monotonic() + timeout
        time.sleep(0.01)
        while self.active and time.monotonic() < deadline:
            time.sleep(0.01)

    @property
    def url(self) -> str:
        assert self.server is not None, "stub not started"
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        assert self.server is not None, "stub not started"
        return self.server.server_address[1]

    def start(self) -> "OllamaStub":
        handler = type("BoundHandler", (_Handler,), {"stub": self})
        self.server = _QuietServer(("127.0.0.1", self._port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="ollama-stub", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self) -> "OllamaStub":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- behaviour -----------------------------------------------------------------------------

    def known(self, model: str) -> bool:
        canon = lambda m: m if ":" in m else m + ":latest"  # noqa: E731
        return canon(model) not in {canon(m) for m in self.missing}

    def vector(self, text: str, *, normalised: bool) -> list[float]:
        dim = self.dim
        if self.wrong_dim_marker and self.wrong_dim_marker in text:
            dim -= 1
        v = unit_vector(text, dim) if normalised else raw_vector(text, dim)
        if self.nan_marker and self.nan_marker in text:
            v[0] = float("nan")
        return v

    def _take_fault(self) -> str | None:
        with self.lock:
            if self._drop_left > 0:
                self._drop_left -= 1
                self.counts["dropped"] += 1
                return "drop"
            if self._fail_left > 0:
                self._fail_left -= 1
                self.counts["failed"] += 1
                return "fail"
        return None


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # dropped connections are on purpose
        pass


class _Handler(BaseHTTPRequestHandler):
    stub: OllamaStub
    protocol_version = "HTTP/1.1"
    server_version = "ollama-stub/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def _send(self, code: int, body, ctype: str = "application/json; charset=utf-8") -> None:
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body, allow_nan=True).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _not_found(self) -> None:
        self._send(404, "404 page not found", "text/plain; charset=utf-8")

    def _body(self) -> dict | None:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError as e:
            self._send(400, {"error": f"invalid JSON: {e}"})
            return None
        if not isinstance(body, dict):
            self._send(400, {"error": "body must be a JSON object"})
            return None
        return body

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()

    def do_GET(self):
        stub = self.stub
        path = self.path.split("?", 1)[0]
        if path == "/":
            self._send(200, "Ollama is running", "text/plain; charset=utf-8")
        elif path == "/api/version":
            self._send(200, {"version": stub.version})
        elif path == "/api/tags":
            self._send(200, {"models": [{"name": t, "model": t, "size": 1, "digest": "0" * 64} for t in stub.tags]})
        elif path == "/_stub/counts":
            self._send(200, dict(stub.counts))
        else:
            self._not_found()

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        with self.stub.lock:
            self.stub.active += 1
        try:
            self._post()
        finally:
            with self.stub.lock:
                self.stub.active -= 1

    def _post(self):
        path = self.path.split("?", 1)[0]
        if path not in ("/api/embed", "/api/embeddings"):
            return self._not_found()
        stub = self.stub
        body = self._body()
        if body is None:
            return
        legacy = path == "/api/embeddings"
        if not legacy and stub.old_server:
            return self._not_found()
        with stub.lock:
            stub.counts["embeddings" if legacy else "embed"] += 1
        fault = stub._take_fault()
        if stub.delay:
            time.sleep(stub.delay)
        if fault == "drop":
            return self._drop()
        if fault == "fail":
            return self._send(stub.fail_status, {"error": "stub: failing on purpose"})
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return self._send(400, {"error": "model is required"})
        if not stub.known(model):
            return self._send(404, {"error": f'model "{model}" not found, try pulling it first'})
        if legacy:
            texts = [body.get("prompt", "")]
        else:
            inp = body.get("input", [])
            texts = [inp] if isinstance(inp, str) else inp
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return self._send(400, {"error": "input must be a string or a list of strings"})
        if stub.keep_requests:
            with stub.lock:
                stub.requests.append({"path": path, "model": model, "input": list(texts)})
        if stub.crash_marker and any(stub.crash_marker in t for t in texts):
            with stub.lock:
                stub.counts["failed"] += 1
            return self._send(500, {"error": "llama runner process has terminated: exit status 2"})
        if stub.reject_marker and any(stub.reject_marker in t for t in texts):
            with stub.lock:
                stub.counts["rejected"] += 1
            return self._send(400, {"error": "stub: this input cannot be embedded"})
        with stub.lock:
            stub.counts["texts"] += len(texts)
        if legacy:
            return self._send(200, {"embedding": stub.vector(texts[0], normalised=False)})
        if stub.fast_pool is not None:
            import zlib

            pool = stub.fast_pool
            parts = ",".join(pool[zlib.crc32(t.encode()) % len(pool)] for t in texts)
            return self._send(200, ('{"model":%s,"embeddings":[%s],"total_duration":1,'
                                    '"load_duration":0,"prompt_eval_count":%d}')
                              % (json.dumps(model), parts, len(texts)))
        vectors = [stub.vector(t, normalised=True) for t in texts]
        answer = {"model": model, "embeddings": vectors, "total_duration": 1, "load_duration": 0,
                  "prompt_eval_count": len(texts)}
        if stub.drip:
            return self._send_dripping(json.dumps(answer).encode(), stub.drip)
        self._send(200, answer)

    def _send_dripping(self, data: bytes, every: float) -> None:
        blanks = b" " * 100  # (JSON allows them before the value)
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(blanks) + len(data)))
        self.end_headers()
        try:
            for i in range(len(blanks)):
                self.wfile.write(blanks[i:i + 1])
                self.wfile.flush()
                time.sleep(every)
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up


def closed_port_url() -> str:
    """A loopback URL where nothing listens (a port the OS just handed out and took back)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dim", type=int, default=DEFAULT_DIM)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each embedding answer")
    parser.add_argument("--port-file", help="write the chosen port here once listening")
    parser.add_argument("--fast", action="store_true",
                        help="answer /api/embed from a pool of precomputed vectors (benchmarks)")
    args = parser.parse_args(argv)
    stub = OllamaStub(dim=args.dim, port=args.port)
    stub.delay = args.delay
    stub.keep_requests = False
    if args.fast:
        stub.use_fast_pool()
    stub.start()
    print(f"listening on {stub.url}", flush=True)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(stub.port))
        import os

        os.replace(args.port_file + ".tmp", args.port_file)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    main()
