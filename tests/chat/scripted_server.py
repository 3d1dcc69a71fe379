"""A model provider stand-in at the network edge: a real HTTP/1.1 server on 127.0.0.1
that answers from a script and records every request.

The script is a list (consumed in order) or a function of the request. An
answer is a JSON-able object (HTTP 200), a ``Reply(status, body, delay_s,
headers)``, or raw bytes. Connections are kept alive, as a provider keeps them,
so a test can tell whether a client reuses its connection (``Request.client``)
and closes it (:meth:`ScriptedServer.wait_for_closed_connections`). Runs in a
daemon thread; use it as a context manager so it stops.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)
    delay_s: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Request:
    path: str
    body: Any
    headers: Message  # names are case-insensitive, as in HTTP
    client: tuple[str, int]  # the client's address: one per connection
    received_at: float  # time.monotonic()


class ScriptedServer:
    def __init__(self, script: list[Any] | Callable[[Request], Any]):
        self._script = script
        self.requests: list[Request] = []
        self._lock = threading.Condition()
        self._open: set[socket.socket] = set()
        self.closed_connections = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                # Headers and body go out in two writes: without this, Nagle's algorithm
                # holds the body of a kept-alive connection until the client's delayed ACK.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with server._lock:
                    server._open.add(self.connection)

            def finish(self):
                try:
                    super().finish()
                finally:
                    with server._lock:
                        server._open.discard(self.connection)
                        server.closed_connections += 1
                        server._lock.notify_all()

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = Request(self.path, json.loads(raw or b"null"), self.headers,
                                  self.client_address, time.monotonic())
                answer = server._answer(request)
                if not isinstance(answer, Reply):
                    answer = Reply(body=answer)
                time.sleep(answer.delay_s)
                payload = answer.body if isinstance(answer.body, bytes) else \
                    json.dumps(answer.body).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (a timeout test)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # kept-alive connections end in __exit__
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    def _answer(self, request: Request) -> Any:
        with self._lock:
            self.requests.append(request)
            if callable(self._script):
                return self._script(request)
            if not self._script:
                return Reply(500, {"error": "the script has no more answers"})
            return self._script.pop(0)

    def wait_for_closed_connections(self, count: int, timeout_s: float = 10.0) -> bool:
        """Whether ``count`` client connections have ended (waits up to ``timeout_s``)."""
        with self._lock:
            return self._lock.wait_for(lambda: self.closed_connections >= count, timeout_s)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        self._thread.join()


def openai_reply(content: str = "", tool_calls: list[tuple[str, str, dict]] = ()) -> dict:
    """A /chat/completions answer; ``tool_calls`` as (id, name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if tool_calls:
        message["tool_calls"] = [{"id": i, "type": "function",
                                  "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in tool_calls]
    return {"id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def ollama_reply(content: str = "", tool_calls: list[tuple[str, dict]] = ()) -> dict:
    """An /api/chat answer; ``tool_calls`` as (name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for n, a in tool_calls]
    return {"model": "m", "message": message, "done": True}


def anthropic_reply(text: str = "", tool_uses: list[tuple[str, str, dict]] = ()) -> dict:
    """A /v1/messages answer; ``tool_uses`` as (id, name, input)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": content, "stop_reason": "tool_use" if tool_uses else "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}}
