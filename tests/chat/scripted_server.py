"""A model provider stand-in at the network edge: a real HTTP server on 127.0.0.1
that answers from a script and records every request.

The script is a list (consumed in order) or a function of the request. An
answer is a JSON-able object (HTTP 200), a ``Reply(status, body, delay_s)``,
or raw bytes. Runs in a daemon thread; use it as a context manager so it stops.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Request:
    path: str
    body: Any
    headers: dict[str, str]


class ScriptedServer:
    def __init__(self, script: list[Any] | Callable[[Request], Any]):
        self._script = script
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = Request(self.path, json.loads(raw or b"null"), dict(self.headers))
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
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
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

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
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
