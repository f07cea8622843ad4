"""A local OpenAI-compatible chat server for tests, benchmarks and offline trials.

Standard library only; binds to 127.0.0.1 on a free port; never contacts anything else.
It answers ``POST /v1/chat/completions`` with a deterministic reply and token
log-probabilities, and ``POST /v1/completions`` (raw prompts, legacy format) with the same
reply, or with ``echo`` the prompt's own token log-probabilities (tokens are whitespace-led
words; each token's log-probability comes from a hash of its text, see :func:`token_logprob`).
It can misbehave on purpose, request by request, to exercise clients:

``faults``  a list consumed one entry per request: ``"429"`` (Too Many Requests with
            ``Retry-After``), ``"500"``, ``"slow"`` (answers after ``slow_seconds``),
            ``"close"`` (drops the connection without answering) or ``None`` (normal); a
            ``"slow"`` request ends early when the server stops.
``delay``   seconds every request takes (e.g. 0.2 to measure concurrency in a benchmark).
``gate``    hold every request until this many are in flight at once (then all pass, and
            later ones are not held): a client's concurrency shown by counting
            (``max_in_flight``) whatever the machine's speed. After ``gate_timeout`` seconds
            without reaching it the gate opens anyway, so a client that never reaches the
            bound fails its count instead of hanging.
``hold_after`` answer the first ``hold_after`` requests, hold the later ones until
            :meth:`StubServer.release` (or the server stops): a run that cannot finish before
            a test has done what it must do while the run is under way.
``ignore_n`` answer one choice whatever ``n`` asks for (like some servers do).
``no_logprobs`` never return log-probabilities.
``text_only`` answer HTTP 500 to every request with an image part, as a text-only model's
            llama.cpp server does.

The default reply is the first option letter found in the last user message ("A" if none),
with log-probabilities over the letters A-D derived from a hash of the message, so different
prompts get different but reproducible distributions.

Example
-------
>>> with StubServer() as server:
...     server.base_url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["StubServer", "default_reply", "stub_tokens", "token_logprob"]

LETTERS = "ABCD"


def default_reply(body: dict[str, Any]) -> tuple[str, list[tuple[str, float]]]:
    """Reply text and its top log-probabilities for a chat request body."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    digest = hashlib.sha256(str(content).encode()).digest()
    weights = [1.0 + digest[i] for i in range(len(LETTERS))]
    total = sum(weights)
    top = sorted(((c, math.log(w / total)) for c, w in zip(LETTERS, weights)),
                 key=lambda t: -t[1])
    return top[0][0], top


def stub_tokens(text: str) -> list[str]:
    """The stub's tokenisation: each token is a run of whitespace and the word after it."""
    return re.findall(r"\s*\S+|\s+$", text)


def token_logprob(token: str) -> float:
    """The stub's log-probability of a token: in (-5, -0.01], from a hash of its text."""
    digest = hashlib.sha256(token.encode()).digest()
    return -0.01 - 5.0 * digest[0] / 256


def _legacy(body: dict, text: str, top: list[tuple[str, float]], k: int, want: bool) -> dict:
    """A legacy completions choice: the reply, or with ``echo`` the prompt's tokens too."""
    prompt = str(body.get("prompt") or "")
    out_text = (prompt if body.get("echo") else "") + (text if body.get("max_tokens", 1) else "")
    if not want:
        return {"text": out_text, "logprobs": None}
    tokens, lps, tops, offsets, at = [], [], [], [], 0
    if body.get("echo"):
        for i, tok in enumerate(stub_tokens(prompt)):
            tokens.append(tok)
            lps.append(None if i == 0 else token_logprob(tok))  # as OpenAI: no first logprob
            tops.append(None)
            offsets.append(at)
            at += len(tok)
    if body.get("max_tokens", 1):
        tokens.append(text)
        lps.append(dict(top).get(text, top[0][1]))
        tops.append(dict(top[:k]) if k else None)
        offsets.append(at)
    return {"text": out_text, "logprobs": {"tokens": tokens, "token_logprobs": lps,
                                           "top_logprobs": tops, "text_offset": offsets}}


class _QuietServer(ThreadingHTTPServer):
    """The threading server, silent about clients gone before their answer (a killed run's
    held requests, a client's timeout): those are what the faults are for."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class StubServer:
    """Context manager running the stub server in a background thread."""

    def __init__(self, *, faults: list[str | None] | None = None, delay: float = 0.0,
                 slow_seconds: float = 5.0, retry_after: str = "1", ignore_n: bool = False,
                 no_logprobs: bool = False, text_only: bool = False, gate: int = 0,
                 gate_timeout: float = 60.0, hold_after: int | None = None,
                 reply: Callable[[dict], tuple[str, list[tuple[str, float]]]] = default_reply
                 ) -> None:
        self.faults = list(faults or [])
        self.delay = delay
        self.slow_seconds = slow_seconds
        self.retry_after = retry_after
        self.ignore_n = ignore_n
        self.no_logprobs = no_logprobs
        self.text_only = text_only
        self.reply = reply
        self.gate = gate
        self.gate_timeout = gate_timeout
        self.hold_after = hold_after
        self.requests = 0
        self.completed = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[dict] = []
        self.received: list[bytes] = []  # every request body as bytes, to grep for leaks
        self.queries: list[str] = []  # the query string of every request (may be empty)
        self.auth_headers: list[str] = []
        self._lock = threading.Lock()
        self._gate_reached = threading.Condition(self._lock)
        self._gate_open = gate <= 1
        self._released = threading.Event()
        self._stopping = threading.Event()  # ends "slow" and held requests at exit
        self._server: _QuietServer | None = None

    def release(self) -> None:
        """Answer the requests held by ``hold_after``, and every later one at once."""
        self._released.set()

    def _pass_gate(self) -> None:
        """Wait (holding ``_lock``) until ``gate`` requests are in flight at once, or the
        gate has opened before, or ``gate_timeout`` has passed."""
        if not self._gate_open and self.in_flight >= self.gate:
            self._gate_open = True
            self._gate_reached.notify_all()
        if not self._gate_reached.wait_for(lambda: self._gate_open or self._stopping.is_set(),
                                           timeout=self.gate_timeout):
            self._gate_open = True  # never reached: let the client's count show it
            self._gate_reached.notify_all()

    def _hold(self, number: int) -> None:
        """Hold request ``number`` (1-based) while ``hold_after`` says so."""
        if self.hold_after is not None and number > self.hold_after:
            self._released.wait()  # set by release() or at exit

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> StubServer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                with stub._lock:
                    stub.received.append(raw)
                    stub.requests += 1
                    stub.bodies.append(body)
                    stub.auth_headers.append(self.headers.get("Authorization", ""))
                    fault = stub.faults.pop(0) if stub.faults else None
                    if stub.text_only and b'"image_url"' in raw:
                        fault = "500"
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                    number = stub.requests
                    stub._pass_gate()
                try:
                    stub._hold(number)
                    self._answer(body, fault)
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

            def _answer(self, body, fault):
                if stub.delay:
                    time.sleep(stub.delay)
                if fault == "close":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if fault == "slow":
                    stub._stopping.wait(stub.slow_seconds)
                if fault in ("429", "500"):
                    payload = json.dumps({"error": {"message": f"stub fault {fault}"}}).encode()
                    self.send_response(int(fault))
                    if fault == "429":
                        self.send_header("Retry-After", stub.retry_after)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                path, _, query = self.path.partition("?")
                path = path.rstrip("/")
                with stub._lock:
                    stub.queries.append(query)
                if path.endswith("/chat/completions"):
                    self._complete(body)
                elif path.endswith("/completions"):
                    self._complete_legacy(body)
                else:
                    self.send_error(404)

            def _complete_legacy(self, body):
                n = 1 if stub.ignore_n else int(body.get("n") or 1)
                prompt = str(body.get("prompt") or "")
                text, top = stub.reply({"messages": [{"content": prompt}]})
                want = body.get("logprobs") is not None and not stub.no_logprobs
                choice = _legacy(body, " " + text, [(" " + t, lp) for t, lp in top],
                                 int(body.get("logprobs") or 0), want)
                self._send({"id": f"stub-{stub.requests}", "object": "text_completion",
                            "created": int(time.time()), "model": body.get("model", "stub"),
                            "choices": [{"index": i, "finish_reason": "stop", **choice}
                                        for i in range(n)]})

            def _send(self, document):
                payload = json.dumps(document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                with stub._lock:
                    stub.completed += 1

            def _complete(self, body):
                n = 1 if stub.ignore_n else int(body.get("n") or 1)
                text, top = stub.reply(body)
                want_lp = bool(body.get("logprobs")) and not stub.no_logprobs
                k = int(body.get("top_logprobs") or 0)
                logprobs = None
                if want_lp:
                    chosen = dict(top).get(text, top[0][1])
                    logprobs = {"content": [{
                        "token": text, "logprob": chosen, "bytes": list(text.encode()),
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                         for t, lp in top[:k]]}]}
                choices = [{"index": i, "finish_reason": "stop", "logprobs": logprobs,
                            "message": {"role": "assistant", "content": text}}
                           for i in range(n)]
                self._send({
                    "id": f"stub-{stub.requests}", "object": "chat.completion",
                    "created": int(time.time()), "model": body.get("model", "stub"),
                    "choices": choices,
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()
        self._released.set()
        with self._lock:
            self._gate_reached.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
