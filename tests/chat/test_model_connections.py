"""How every model client treats its connection: retries (408/409/429/5xx, timeouts,
failed connections; Retry-After honoured; a 400 is not retried), one pooled connection
per model shared by worker threads, released by close(), and an API key that never shows. The
provider is a scripted server on 127.0.0.1; a connect timeout, which loopback
cannot produce, comes from an injected transport."""

import email.utils
import logging
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest

from chat.scripted_server import (
    Reply,
    Request,
    ScriptedServer,
    anthropic_reply,
    ollama_reply,
    openai_reply,
)
from flink_agents_ltm.api.chat_models import ChatMessage, ModelProviderError
from flink_agents_ltm.integrations.chat_models.anthropic import AnthropicChatModelSetup
from flink_agents_ltm.integrations.chat_models.ollama import OllamaChatModelSetup
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.integrations.embedding_models.ollama import OllamaEmbeddingModelSetup
from flink_agents_ltm.integrations.embedding_models.openai import OpenAIEmbeddingModelSetup
from flink_agents_ltm.integrations.model_endpoint import retry_delay_s


def number(text: str) -> int:
    return int(text.rsplit(" ", 1)[-1])


@dataclass(frozen=True)
class Client:
    """One kind of model: how to build and call it, and how its provider answers."""

    name: str
    build: Callable[..., Any]  # (url, **settings)
    call: Callable[[Any, str], Any]  # (model, question) -> what it answered
    answer: Callable[[str], Any]  # question -> the provider's answer body
    question_of: Callable[[Request], str]

    def expected(self, question: str) -> Any:
        return question if "chat" in self.name else [float(number(question))]

    def __str__(self) -> str:
        return self.name


def chat(model, question):
    return model.chat([ChatMessage("user", question)]).content


def embed(model, question):
    return model.embed([question])[0]


OPENAI_CHAT = Client(
    "openai chat", lambda url, **s: OpenAIChatModelSetup("m", url, api_key_env=None, **s),
    chat, openai_reply, lambda r: r.body["messages"][-1]["content"])
ANTHROPIC_CHAT = Client(
    "anthropic chat", lambda url, **s: AnthropicChatModelSetup("m", url, api_key_env=None, **s),
    chat, anthropic_reply, lambda r: r.body["messages"][-1]["content"][0]["text"])
OLLAMA_CHAT = Client(
    "ollama chat", lambda url, **s: OllamaChatModelSetup("m", url, **s),
    chat, ollama_reply, lambda r: r.body["messages"][-1]["content"])
OPENAI_EMBEDDINGS = Client(
    "openai embeddings",
    lambda url, **s: OpenAIEmbeddingModelSetup("m", url, api_key_env=None, **s), embed,
    lambda q: {"data": [{"index": 0, "embedding": [float(number(q))]}]},
    lambda r: r.body["input"][0])
OLLAMA_EMBEDDINGS = Client(
    "ollama embeddings", lambda url, **s: OllamaEmbeddingModelSetup("m", url, **s), embed,
    lambda q: {"embeddings": [[float(number(q))]]}, lambda r: r.body["input"][0])

CHATS = [OPENAI_CHAT, ANTHROPIC_CHAT, OLLAMA_CHAT]
EVERY = [*CHATS, OPENAI_EMBEDDINGS, OLLAMA_EMBEDDINGS]
SOON = {"retry-after-ms": "10"}  # retry at once: these tests are about whether, not when


def answering(client: Client) -> Callable[[Request], Any]:
    return lambda request: client.answer(client.question_of(request))


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_a_rate_limit_and_an_overload_are_retried_until_the_answer_comes(client, caplog):
    caplog.set_level(logging.INFO)
    with ScriptedServer([Reply(429, {"error": "slow down"}, headers=SOON),
                         Reply(503, {"error": "overloaded"}, headers=SOON),
                         client.answer("question 7")]) as server:
        assert client.call(client.build(server.url), "question 7") == \
            client.expected("question 7")
    assert len(server.requests) == 3
    if client.name.startswith("ollama"):
        assert "HTTP 429 Too Many Requests: {\"error\": \"slow down\"}; retry 1 of 2" in \
            caplog.text


@pytest.mark.parametrize("status, reason", [(408, "Request Timeout"), (409, "Conflict")])
@pytest.mark.parametrize("client", EVERY, ids=str)
def test_a_request_timeout_and_a_conflict_are_retried_until_the_answer_comes(client, status,
                                                                             reason, caplog):
    caplog.set_level(logging.INFO)
    with ScriptedServer([Reply(status, {"error": "try again"}, headers=SOON),
                         client.answer("question 3")]) as server:
        assert client.call(client.build(server.url), "question 3") == \
            client.expected("question 3")
    assert len(server.requests) == 2
    if client.name.startswith("ollama"):
        assert f'HTTP {status} {reason}: {{"error": "try again"}}; retry 1 of 2' in caplog.text


@pytest.mark.parametrize("client", CHATS, ids=str)
def test_the_wait_a_server_asks_for_in_retry_after_is_honoured(client):
    with ScriptedServer([Reply(429, {"error": "slow down"}, headers={"Retry-After": "1"}),
                         client.answer("question 1")]) as server:
        assert client.call(client.build(server.url), "question 1") == \
            client.expected("question 1")
    first, second = server.requests
    # Backoff alone would have retried within 0.5 s.
    assert second.received_at - first.received_at >= 1.0


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_retries_stop_after_max_retries_and_the_error_names_the_last_status(client):
    with ScriptedServer(lambda request: Reply(503, {"error": "still down"}, headers=SOON)) \
            as server:
        model = client.build(server.url, max_retries=1)
        with pytest.raises(ModelProviderError, match="HTTP 503 Service Unavailable: "
                                                     '{"error": "still down"}') as failure:
            client.call(model, "question 1")
    assert len(server.requests) == 2
    assert failure.value.status == 503


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_a_refused_request_is_not_retried(client):
    with (ScriptedServer(lambda request: Reply(400, {"error": "no such model"})) as server,
          pytest.raises(ModelProviderError, match='HTTP 400 Bad Request: {"error": '
                                                  '"no such model"}')):
        client.call(client.build(server.url), "question 1")
    assert len(server.requests) == 1


@pytest.mark.parametrize("client", CHATS, ids=str)
def test_an_answer_later_than_the_timeout_is_asked_for_again(client):
    script = [Reply(body=client.answer("question 1"), delay_s=1.0), client.answer("question 1")]
    with ScriptedServer(script) as server:
        model = client.build(server.url, timeout_s=0.3, max_retries=1)
        assert client.call(model, "question 1") == client.expected("question 1")
    assert len(server.requests) == 2


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_a_connect_timeout_is_retried_then_named_with_its_setting(client):
    attempts = []

    def no_connection(request: httpx2.Request) -> httpx2.Response:
        attempts.append(request.url)
        raise httpx2.ConnectTimeout("timed out", request=request)

    model = client.build("http://192.0.2.1:9", connect_timeout_s=0.5, max_retries=1,
                         transport=httpx2.MockTransport(no_connection))
    with pytest.raises(ModelProviderError, match=r"at http://192\.0\.2\.1:9/\S+: no connection "
                                                 r"within 0\.5 s \(connect_timeout_s\)"):
        client.call(model, "question 1")
    assert len(attempts) == 2


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_one_model_reuses_one_connection(client):
    with ScriptedServer(answering(client)) as server:
        model = client.build(server.url)
        for i in range(3):
            assert client.call(model, f"question {i}") == client.expected(f"question {i}")
    assert len({request.client for request in server.requests}) == 1


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_worker_threads_share_one_model_and_each_gets_its_own_answer(client):
    questions = [f"question {i}" for i in range(40)]
    with ScriptedServer(answering(client)) as server:
        model = client.build(server.url)
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda q: client.call(model, q), questions))
    assert answers == [client.expected(q) for q in questions]
    assert len({request.client for request in server.requests}) <= 8


@pytest.mark.parametrize("client", EVERY, ids=str)
def test_close_releases_the_connection_and_a_later_call_fails_clearly(client):
    with ScriptedServer(answering(client)) as server:
        model = client.build(server.url)
        client.call(model, "question 1")
        model.close()
        assert server.wait_for_closed_connections(1)
        with pytest.raises(ModelProviderError, match="the model was closed"):
            client.call(model, "question 2")
    assert len(server.requests) == 1


WRONG_KEY = "sk-wrong-0123456789abcdefSECRET"


def keyed_models(url):
    yield "openai", OpenAIChatModelSetup("m", url, api_key_env="WRONG_KEY", max_retries=0), chat
    yield "azure", OpenAIChatModelSetup("m", url, api_key_env="WRONG_KEY", max_retries=0,
                                        azure_api_version="2024-10-21"), chat
    yield "anthropic", AnthropicChatModelSetup("m", url, api_key_env="WRONG_KEY",
                                               max_retries=0), chat
    yield "embeddings", OpenAIEmbeddingModelSetup("m", url, api_key_env="WRONG_KEY",
                                                  max_retries=0), embed


def shown(error: BaseException, model) -> str:
    """Everything a user, a log or an error reporter could see of a failure: the
    error, its traceback, and every error chained to it, even a suppressed context."""
    seen = [str(error), repr(error), error.url, "".join(traceback.format_exception(error)),
            repr(model), repr(model.endpoint)]
    linked = error.__cause__ or error.__context__
    while linked is not None:
        seen += [str(linked), repr(linked)]
        linked = linked.__cause__ or linked.__context__
    return "\n".join(seen)


def test_a_wrong_api_key_never_shows_in_errors_reprs_or_logs(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("WRONG_KEY", WRONG_KEY)
    echo = lambda request: Reply(401, {"error": {  # noqa: E731 (a careless server)
        "message": f"Incorrect API key provided: {WRONG_KEY}"}})
    with ScriptedServer(echo) as server:
        for name, model, call in keyed_models(server.url):
            with pytest.raises(ModelProviderError, match="HTTP 401 Unauthorized") as failure:
                call(model, "question 1")
            assert WRONG_KEY not in shown(failure.value, model), name
            assert "Incorrect API key provided: ***" in str(failure.value), name
            assert WRONG_KEY in str(server.requests[-1].headers), name  # the key was sent
    assert caplog.text and WRONG_KEY not in caplog.text


def test_a_key_never_shows_when_the_provider_cannot_be_reached(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("WRONG_KEY", WRONG_KEY)
    with ScriptedServer([]) as server:
        url = server.url
    for name, model, call in keyed_models(url):
        with pytest.raises(ModelProviderError, match="cannot connect") as failure:
            call(model, "question 1")
        assert WRONG_KEY not in shown(failure.value, model), name
    assert WRONG_KEY not in caplog.text


def test_an_error_shows_the_url_without_its_password_or_query(monkeypatch):
    monkeypatch.setenv("WRONG_KEY", WRONG_KEY)
    with ScriptedServer(lambda request: Reply(404, {"error": "no deployment"})) as server:
        azure = OpenAIChatModelSetup("dep", server.url, api_key_env="WRONG_KEY", max_retries=0,
                                     azure_api_version="2024-10-21")
        with pytest.raises(ModelProviderError) as failure:
            azure.chat([ChatMessage("user", "hi")])
        assert "?api-version" in server.requests[0].path
    assert failure.value.url == f"{server.url}/openai/deployments/dep/chat/completions"
    assert "api-version" not in str(failure.value)

    host = server.url.removeprefix("http://")
    ollama = OllamaChatModelSetup("m", f"http://admin:hunter2@{host}", max_retries=0)
    with pytest.raises(ModelProviderError, match=f"at http://{host}/api/chat: cannot connect") \
            as failure:
        ollama.chat([ChatMessage("user", "hi")])
    assert "hunter2" not in str(failure.value) and "admin" not in failure.value.url


@pytest.mark.parametrize("headers, wait", [
    ({"Retry-After": "3"}, 3.0),
    ({"Retry-After": "0"}, 0.0),
    ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),
])
def test_a_retry_waits_what_the_server_asks(headers, wait):
    assert retry_delay_s(0, httpx2.Headers(headers)) == wait


def test_a_retry_after_date_is_a_wait_until_then():
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_delay_s(0, httpx2.Headers({"Retry-After": soon})) <= 30


def test_without_retry_after_the_wait_doubles_from_half_a_second_up_to_eight_with_jitter():
    for retry, longest in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        waits = [retry_delay_s(retry, httpx2.Headers()) for _ in range(50)]
        assert all(0.75 * longest <= w <= longest for w in waits), (retry, waits)
