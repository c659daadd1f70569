"""`llm brain mcp --http [HOST:]PORT`: the same MCP server over the SDK's Streamable HTTP
transport, so every agent on the machine shares one warm brain instead of each starting a
stdio server (seconds of imports, a cold vector index).

What a server on a port must add to what the stdio server guarantees:
- it binds to 127.0.0.1 unless told otherwise, and refuses a non-loopback address without
  `--allow-remote`, which also requires a token (fail closed: a brain is private data);
- it checks `Host` and `Origin` (the SDK's DNS-rebinding protection, on for every bind): a web
  page whose name was made to resolve to 127.0.0.1 sends its own name as Host (421) and its
  own origin (403), so it cannot call the tools from the user's browser; an Origin must be
  the server's own, so a page on another local port cannot either;
- with SECONDBRAIN_MCP_TOKEN set, every request must carry `Authorization: Bearer <token>`
  (401 otherwise), compared in constant time.
The tools, their argument checks, the query limit, the per-call timeout and the connection
pool are BrainServer's, shared by every HTTP client; a malformed body is answered by the
transport with a JSON-RPC error. Request bodies are capped at MAX_BODY bytes.
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
import sys

from mcp.server.transport_security import TransportSecuritySettings

from ..api import SecondBrain
from ..recall import vindex
from .mcp_server import BrainServer, make_server

TOKEN_VAR = "SECONDBRAIN_MCP_TOKEN"
PATH = "/mcp"
MAX_BODY = 1024 * 1024  # a tool call is a query or a fact, never a megabyte
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def parse_address(text: str) -> tuple[str, int]:
    """`8765`, `127.0.0.1:8765`, `[::1]:8765`, `0.0.0.0:8765` -> (host, port)."""
    text = text.strip()
    host, _, port = text.rpartition(":") if ":" in text else ("127.0.0.1", "", text)
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--http takes [HOST:]PORT, as in 8765 or 127.0.0.1:8765, not {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Does `host` name this machine only (every address it resolves to is loopback)?"""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def security(host: str, port: int, allowed_hosts: tuple[str, ...]) -> TransportSecuritySettings:
    """Host and Origin allowed: this machine's loopback names, and with --allow-remote the
    address bound and the names given with --allow-host. An Origin must be this server's own
    (a page on another local port, another dev server, is refused too); MCP clients that are
    not browsers send none."""
    names = list(LOOPBACK_NAMES)
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        names.append(f"[{host}]" if ":" in host else host)
    names += [f"[{h}]" if ":" in h and not h.startswith("[") else h for h in allowed_hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[f"{n}:*" for n in names] + names,
        allowed_origins=[f"{scheme}://{n}:{port}" for n in names for scheme in ("http", "https")])


class BearerToken:
    """ASGI middleware: every HTTP request carries `Authorization: Bearer <token>`."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"error": "a bearer token is required (SECONDBRAIN_MCP_TOKEN)"}).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def check(host: str, *, allow_remote: bool, token: str | None) -> None:
    """Refuse what would expose the brain: a non-loopback bind without --allow-remote, or
    with it but without a token."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise ValueError(f"{host} is reachable from other machines: bind to 127.0.0.1, or add "
                         f"--allow-remote (with {TOKEN_VAR} set)")
    if not token:
        raise ValueError(f"--allow-remote needs {TOKEN_VAR}: a token every client must send")


def serve_http(brain: SecondBrain, address: str, *, read_only: bool = False, allow_remote: bool = False,
               allowed_hosts: tuple[str, ...] = ()) -> None:
    """Serve the tools on http://HOST:PORT/mcp until interrupted."""
    import uvicorn

    host, port = parse_address(address)
    token = os.environ.get(TOKEN_VAR) or None
    check(host, allow_remote=allow_remote, token=token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # a client that connects before the server is up waits in the backlog
    except OSError as e:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    vindex.keep_warm()
    tools = BrainServer(brain, read_only=read_only)
    bound = sock.getsockname()[1]
    app = make_server(tools).streamable_http_app(
        streamable_http_path=PATH, host=host, transport_security=security(host, bound, allowed_hosts),
        max_request_body_size=MAX_BODY)
    if token:
        app = BearerToken(app, token)
    shown = f"[{host}]" if ":" in host else host
    print(f"serving MCP on http://{shown}:{bound}{PATH}" + (" (bearer token required)" if token else "")
          + " - Ctrl-C to stop", file=sys.stderr, flush=True)
    # an agent's open event stream must not keep Ctrl-C waiting
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                           timeout_graceful_shutdown=2))
    try:
        server.run(sockets=[sock])
    finally:
        tools.close()
        sock.close()
