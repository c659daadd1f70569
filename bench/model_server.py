#!/usr/bin/env python3
"""The shared MiniLM embedding server (../shared/retrieval/fake_ollama.py), its sockets set up
the way Ollama's are, for latency benchmarks. Takes the same arguments.

    ~/.venvs/minilm/bin/python bench/model_server.py --port 11502 [--cache FILE]

Ollama is a Go program, and Go's net package turns Nagle's algorithm off on every TCP
connection (TCP_NODELAY; "The default is true (no delay)", net.TCPConn.SetNoDelay). Python's
http.server leaves it on and writes a response's headers and body in two sends; on a kept-alive
connection the body then waits for the client's delayed ACK, about 40 ms on Linux, on every
request. That stall belongs to the test server, not to the plugin or to Ollama, so a latency
figure measured through it says little about what a user waits for. Quality benchmarks can use
either server: the vectors are the same.
"""
from __future__ import annotations

import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "retrieval"

if __name__ == "__main__":
    if not (SHARED / "fake_ollama.py").exists():
        sys.exit(f"model_server: {SHARED / 'fake_ollama.py'} not found (see ../shared/retrieval/README.md)")
    sys.path.insert(0, str(SHARED))
    import fake_ollama

    fake_ollama.Handler.disable_nagle_algorithm = True  # socketserver sets TCP_NODELAY per connection
    sys.exit(fake_ollama.main())
