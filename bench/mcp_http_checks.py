#!/usr/bin/env python3
"""What `llm brain mcp --http` answers to requests a browser page, another machine's name or a
client without the token would send: one `initialize` per case, the HTTP status printed
(200: answered).

    PYTHONPATH=. python3 bench/mcp_http_checks.py

Starts the server on 127.0.0.1 (a free port) over an empty brain in a temp folder, once without
and once with SECONDBRAIN_MCP_TOKEN. Takes about 10 s.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-" + "k" * 26


def start(env: dict) -> tuple[subprocess.Popen, str]:
    err = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([sys.executable, "-m", "llm", "brain", "mcp", "--http", "127.0.0.1:0"],
                            env=env, stdout=subprocess.DEVNULL, stderr=err)
    while True:
        err.seek(0)
        text = err.read()
        if "serving MCP on " in text:
            url = text.split("serving MCP on ")[1].split()[0]
            for _ in range(100):
                try:
                    httpx2.get(url.rsplit("/", 1)[0] + "/")
                    return proc, url
                except httpx2.TransportError:
                    time.sleep(0.05)
        if proc.poll() is not None:
            sys.exit(f"mcp_http_checks: the server stopped: {text}")
        time.sleep(0.05)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="mcp-http-checks-"))
    base = {**os.environ, "PYTHONPATH": str(ROOT), "LLM_USER_PATH": str(work), "SECONDBRAIN_DB": str(work / "brain.db")}
    base.pop("SECONDBRAIN_MCP_TOKEN", None)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "checks", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    for token in (None, TOKEN):
        proc, url = start({**base, **({"SECONDBRAIN_MCP_TOKEN": token} if token else {})})
        port = url.split(":")[2].split("/")[0]
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        cases = [
            ("a local client (no Origin)", {}),
            ("Host: localhost", {"Host": f"localhost:{port}"}),
            ("DNS rebinding: Host evil.example", {"Host": f"evil.example:{port}"}),
            ("Host 127.0.0.1.evil.example", {"Host": f"127.0.0.1.evil.example:{port}"}),
            ("Host: the machine's LAN address", {"Host": f"192.168.1.20:{port}"}),
            ("Origin: http://evil.example", {"Origin": "http://evil.example"}),
            ("Origin: http://localhost.evil.example", {"Origin": "http://localhost.evil.example"}),
            ("Origin: null (a sandboxed page)", {"Origin": "null"}),
            ("Origin: http://localhost:3000 (another local server's page)", {"Origin": "http://localhost:3000"}),
            ("Origin: the server's own", {"Origin": f"http://127.0.0.1:{port}"}),
        ]
        if token:
            cases += [("no token", {"Authorization": ""}), ("a wrong token", {"Authorization": "Bearer nope"})]
        print(f"SECONDBRAIN_MCP_TOKEN {'set' if token else 'unset'} ({url}):")
        for what, headers in cases:
            sent = {**accept, **auth, **headers}
            sent = {k: v for k, v in sent.items() if v}
            status = httpx2.post(url, json=ping, headers=sent).status_code
            print(f"  {status}  {what}")
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
