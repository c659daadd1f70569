"""Plain http:// for httpx through the standard library's `http.client`.

A local Ollama is reached over plain http, and a one-shot recall makes one POST to it. httpx's
own transport imports httpcore (and h11) when a client is made: ~18 ms of CPU, an eighth of
what a one-shot recall may add to `llm` (issue 36). `http.client` is already loaded, so this
transport does the same job for the cost of a socket. The client above it is unchanged: it
still sees httpx requests, responses and exceptions (connect errors, timeouts, dropped
connections), so its retries and messages are the same for either transport. https keeps
httpx's transport (TLS, proxies, HTTP/2 are its job).

One kept-alive connection per thread (the MCP server embeds from worker threads); a kept
connection the server closed while idle is opened again once, as httpcore does.
"""
from __future__ import annotations

import http.client
import socket
import threading
import time

import httpx


class PlainHTTP(httpx.BaseTransport):
    def __init__(self, timeout: httpx.Timeout):
        self._timeout = timeout
        self._local = threading.local()
        self._open: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        target = request.url.raw_path.decode("ascii")
        headers = dict(request.headers.multi_items())
        kept = getattr(self._local, "conn", None)
        if kept is not None:
            try:
                return self._exchange(kept, request, target, body, headers)
            except _Stale:
                pass  # closed by the server while idle: once more on a new connection
        conn = self._connect(request)
        try:
            return self._exchange(conn, request, target, body, headers)
        except _Stale as e:
            raise httpx.RemoteProtocolError(str(e.__cause__ or "connection closed"), request=request) from None

    def _connect(self, request: httpx.Request) -> http.client.HTTPConnection:
        url = request.url
        conn = http.client.HTTPConnection(url.host, url.port or 80, timeout=self._timeout.connect)
        try:
            conn.connect()
        except (TimeoutError, socket.timeout) as e:
            raise httpx.ConnectTimeout(str(e) or "timed out connecting", request=request) from None
        except OSError as e:  # refused, unreachable, no such host
            raise httpx.ConnectError(str(e) or type(e).__name__, request=request) from None
        conn.sock.settimeout(self._timeout.read)
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._open.add(conn)
        self._local.conn = conn
        return conn

    def _exchange(self, conn: http.client.HTTPConnection, request: httpx.Request, target: str,
                  body: bytes, headers: dict) -> httpx.Response:
        sent = False
        try:
            conn.request(request.method, target, body=body, headers=headers)
            sent = True
            answer = conn.getresponse()
            content = self._body(conn, answer, time.monotonic() + self._timeout.read)
        except (TimeoutError, socket.timeout) as e:
            self._drop(conn)
            raise httpx.ReadTimeout(str(e) or "timed out", request=request) from None
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
            self._drop(conn)
            if not sent or isinstance(e, http.client.RemoteDisconnected):
                raise _Stale() from e
            raise httpx.ReadError(str(e) or type(e).__name__, request=request) from None
        except (OSError, http.client.HTTPException) as e:
            self._drop(conn)
            raise httpx.RemoteProtocolError(str(e) or type(e).__name__, request=request) from None
        if answer.will_close:
            self._drop(conn)
        return httpx.Response(answer.status, headers=answer.getheaders(), content=content, request=request)

    def _body(self, conn: http.client.HTTPConnection, answer: http.client.HTTPResponse,
              deadline: float) -> bytes:
        """The answer's body by the deadline: the socket's timeout bounds each read, and a
        server that sends a byte now and then would otherwise hold a recall for good."""
        parts = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the answer took longer than the timeout")
                conn.sock.settimeout(left)
                part = answer.read1(65536)
                if not part:
                    parts.append(answer.read())  # (marks the answer done: the connection is reused)
                    return b"".join(parts)
                parts.append(part)
        finally:
            if conn.sock is not None:
                conn.sock.settimeout(self._timeout.read)

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def close(self) -> None:
        with self._lock:
            conns, self._open = self._open, set()
        for conn in conns:
            conn.close()
        self._local = threading.local()


class _Stale(Exception):
    """A kept connection the server had closed."""
