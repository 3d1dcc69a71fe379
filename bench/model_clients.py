"""Cost of one chat call through each model client, against a scripted provider on
127.0.0.1 that answers at once (so only the client's own work and the connection
count): the pooled SDK/httpx2 clients side by side with a stdlib ``urllib`` POST
that opens a connection per call (how the clients worked before they moved to
maintained libraries). Sequential calls, then 8 worker threads sharing one model.

    python -m bench.model_clients [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from chat.scripted_server import (
    ScriptedServer,
    anthropic_reply,
    ollama_reply,
    openai_reply,
)

from flink_agents_ltm.api.chat_models import ChatMessage
from flink_agents_ltm.integrations.chat_models.anthropic import (
    AnthropicChatModelSetup,
)
from flink_agents_ltm.integrations.chat_models.ollama import OllamaChatModelSetup
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup

CALLS = 300
THREADS = 8
QUESTION = [ChatMessage("user", "where is order 7?")]


def answer(request: Any) -> dict:
    if request.path.endswith("/v1/messages"):
        return anthropic_reply("shipped")
    if request.path.endswith("/api/chat"):
        return ollama_reply("shipped")
    return openai_reply("shipped")


def urllib_call(url: str) -> Callable[[], Any]:
    body = json.dumps({"model": "m", "messages": [{"role": "user",
                                                   "content": "where is order 7?"}]}).encode()

    def call() -> Any:
        request = urllib.request.Request(url + "/chat/completions", body,
                                         {"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    return call


def per_call_ms(call: Callable[[], Any], threads: int, calls: int = CALLS) -> float:
    for _ in range(min(20, calls)):
        call()  # warm up: imports, first connection
    started = time.perf_counter()
    if threads == 1:
        for _ in range(calls):
            call()
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda _: call(), range(calls)))
    return (time.perf_counter() - started) / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=CALLS, help="timed calls per client and "
                        "thread count")
    args = parser.parse_args()
    with ScriptedServer(answer) as server:
        clients: dict[str, Callable[[], Any]] = {
            "urllib, a connection per call": urllib_call(server.url)}
        for name, model in [
                ("openai SDK, pooled", OpenAIChatModelSetup("m", server.url, api_key_env=None)),
                ("anthropic SDK, pooled", AnthropicChatModelSetup("m", server.url,
                                                                  api_key_env=None)),
                ("ollama on httpx2, pooled", OllamaChatModelSetup("m", server.url))]:
            clients[name] = lambda model=model: model.chat(QUESTION)
        print(f"{args.calls} chat calls to a provider on 127.0.0.1 that answers at once")
        print(f"{'client':<32}{'1 thread ms/call':>18}{f'{THREADS} threads ms/call':>20}")
        baseline: tuple[float, float] | None = None
        for name, call in clients.items():
            one, many = per_call_ms(call, 1, args.calls), per_call_ms(call, THREADS, args.calls)
            baseline = baseline or (one, many)
            print(f"{name:<32}{one:>12.2f} ({one / baseline[0]:.2f}x){many:>13.2f} "
                  f"({many / baseline[1]:.2f}x)")


if __name__ == "__main__":
    main()
