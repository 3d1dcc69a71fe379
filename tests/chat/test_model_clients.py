"""The model clients against a scripted provider on 127.0.0.1: what they send, what
they make of the answers, and the errors they give."""

import pytest

from chat.scripted_server import (
    Reply,
    ScriptedServer,
    anthropic_reply,
    ollama_reply,
    openai_reply,
)
from flink_agents_ltm.api.chat_models import (
    ChatMessage,
    MessageRole,
    ModelProviderError,
    ToolCall,
    tool,
)
from flink_agents_ltm.integrations.chat_models.anthropic import AnthropicChatModelSetup
from flink_agents_ltm.integrations.chat_models.ollama import OllamaChatModelSetup
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.integrations.embedding_models.ollama import OllamaEmbeddingModelSetup
from flink_agents_ltm.integrations.embedding_models.openai import OpenAIEmbeddingModelSetup


@tool
def order_status(order_id: str) -> str:
    """The shipping status of an order."""
    return "shipped"


QUESTION = [ChatMessage("system", "be brief"), ChatMessage("user", "where is order 7?")]


@pytest.fixture
def openai_key(monkeypatch):
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test")
    return "SCRIPTED_KEY"


def test_openai_client_sends_messages_tools_and_key_and_reads_tool_calls(openai_key):
    with ScriptedServer([openai_reply(tool_calls=[("c1", "order_status",
                                                   {"order_id": "7"})])]) as server:
        model = OpenAIChatModelSetup("gpt-x", server.url + "/v1", api_key_env=openai_key)
        reply = model.chat(QUESTION, [order_status])
    assert reply == ChatMessage(MessageRole.ASSISTANT, "",
                                (ToolCall("c1", "order_status", {"order_id": "7"}),))
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body["model"] == "gpt-x"
    assert request.body["messages"] == [{"role": "system", "content": "be brief"},
                                        {"role": "user", "content": "where is order 7?"}]
    assert request.body["tools"] == [{"type": "function", "function": {
        "name": "order_status", "description": "The shipping status of an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}}]


def test_openai_client_sends_tool_results_paired_with_their_call_and_asks_for_json(openai_key):
    history = [
        *QUESTION,
        ChatMessage("assistant", "", (ToolCall("c1", "order_status", {"order_id": "7"}),)),
        ChatMessage("tool", "shipped", tool_call_id="c1", name="order_status")]
    with ScriptedServer([openai_reply('{"status": "shipped"}')]) as server:
        model = OpenAIChatModelSetup("gpt-x", server.url, api_key_env=openai_key)
        reply = model.chat(history, json_mode=True)
    assert reply.content == '{"status": "shipped"}'
    sent = server.requests[0].body
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["messages"][2]["tool_calls"] == [{"id": "c1", "type": "function", "function": {
        "name": "order_status", "arguments": '{"order_id": "7"}'}}]
    assert sent["messages"][3] == {"role": "tool", "content": "shipped", "tool_call_id": "c1"}


def test_a_server_without_keys_gets_no_authorization_header():
    with ScriptedServer([openai_reply("hi")]) as server:
        OpenAIChatModelSetup("local", server.url, api_key_env=None).chat(QUESTION)
    assert "Authorization" not in server.requests[0].headers


def test_a_server_without_keys_never_gets_a_key_the_sdk_finds_in_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ambient-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ambient-anthropic")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "sk-ambient-token")
    with ScriptedServer([openai_reply("hi"), anthropic_reply("hi")]) as server:
        OpenAIChatModelSetup("local", server.url, api_key_env=None).chat(QUESTION)
        AnthropicChatModelSetup("local", server.url, api_key_env=None).chat(QUESTION)
    assert len(server.requests) == 2
    assert [h for r in server.requests for h in r.headers.values() if "sk-ambient" in h] == []


@pytest.mark.parametrize("value", [None, "", "  "])
def test_an_unset_or_empty_key_variable_is_refused_when_the_model_is_built(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("SCRIPTED_KEY", raising=False)
    else:
        monkeypatch.setenv("SCRIPTED_KEY", value)
    with pytest.raises(ValueError, match="API key variable SCRIPTED_KEY is unset or empty"):
        OpenAIChatModelSetup("gpt-x", "http://127.0.0.1:9", api_key_env="SCRIPTED_KEY")


def test_ollama_client_posts_to_api_chat_and_numbers_its_tool_calls():
    with ScriptedServer([ollama_reply(tool_calls=[("order_status", {"order_id": "7"}),
                                                  ("order_status", {"order_id": "8"})])]) as s:
        model = OllamaChatModelSetup("qwen", s.url, options={"temperature": 0})
        reply = model.chat([*QUESTION, ChatMessage("tool", "x", tool_call_id="call_0",
                                                   name="order_status")],
                           [order_status], json_mode=True)
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [
        ("call_0", {"order_id": "7"}), ("call_1", {"order_id": "8"})]
    sent = s.requests[0]
    assert sent.path == "/api/chat"
    assert sent.body["stream"] is False and sent.body["format"] == "json"
    assert sent.body["options"] == {"temperature": 0}
    assert sent.body["messages"][-1] == {"role": "tool", "content": "x",
                                         "tool_name": "order_status"}
    assert sent.body["tools"][0]["function"]["name"] == "order_status"


def test_azure_openai_posts_to_the_deployment_with_its_api_version_and_key_header(monkeypatch):
    monkeypatch.setenv("AZURE_KEY", "az-secret")
    with ScriptedServer([openai_reply("hi"), {"data": [{"index": 0, "embedding": [1.0]}]}]) \
            as server:
        chat = OpenAIChatModelSetup("my-deployment", server.url, api_key_env="AZURE_KEY",
                                    azure_api_version="2024-10-21")
        assert chat.chat(QUESTION).content == "hi"
        embedder = OpenAIEmbeddingModelSetup("my-embeddings", server.url, api_key_env="AZURE_KEY",
                                             azure_api_version="2024-10-21")
        assert embedder.embed(["a"]) == [[1.0]]
    first, second = server.requests
    assert first.path == "/openai/deployments/my-deployment/chat/completions" \
                         "?api-version=2024-10-21"
    assert first.headers["api-key"] == "az-secret"
    assert second.path == "/openai/deployments/my-embeddings/embeddings?api-version=2024-10-21"


def test_azure_openai_without_its_endpoint_or_key_is_refused():
    with pytest.raises(ValueError, match="azure-openai: give base_url= your Azure OpenAI"):
        OpenAIChatModelSetup("dep", api_key_env=None, azure_api_version="2024-10-21")


def test_anthropic_client_maps_system_tools_and_tool_results_onto_content_blocks(monkeypatch):
    monkeypatch.setenv("SCRIPTED_ANTHROPIC_KEY", "sk-ant-test")
    history = [
        *QUESTION,
        ChatMessage("assistant", "Let me look.",
                    (ToolCall("tu_1", "order_status", {"order_id": "7"}),
                     ToolCall("tu_2", "order_status", {"order_id": "8"}))),
        ChatMessage("tool", "shipped", tool_call_id="tu_1", name="order_status"),
        ChatMessage("tool", "lost", tool_call_id="tu_2", name="order_status")]
    with ScriptedServer([anthropic_reply("Order 7 shipped.", [
            ("tu_3", "order_status", {"order_id": "9"})])]) as server:
        model = AnthropicChatModelSetup("claude-x", server.url, max_tokens=300,
                                        api_key_env="SCRIPTED_ANTHROPIC_KEY")
        reply = model.chat(history, [order_status], json_mode=True)
    assert reply == ChatMessage(MessageRole.ASSISTANT, "Order 7 shipped.",
                                (ToolCall("tu_3", "order_status", {"order_id": "9"}),))
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert "sk-ant-test" in (request.headers["x-api-key"] or request.headers["Authorization"])
    sent = request.body
    assert (sent["model"], sent["max_tokens"]) == ("claude-x", 300)
    assert sent["system"] == "be brief\n\nAnswer with one JSON object and nothing else."
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "where is order 7?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "tu_1", "name": "order_status",
             "input": {"order_id": "7"}},
            {"type": "tool_use", "id": "tu_2", "name": "order_status",
             "input": {"order_id": "8"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_1", "content": "shipped"},
            {"type": "tool_result", "tool_use_id": "tu_2", "content": "lost"}]}]
    assert sent["tools"] == [{"name": "order_status",
                              "description": "The shipping status of an order.",
                              "input_schema": {"type": "object",
                                               "properties": {"order_id": {"type": "string"}},
                                               "required": ["order_id"]}}]


PATHS = {"openai": "/chat/completions", "ollama": "/api/chat", "anthropic": "/v1/messages"}
ANSWERS = {"openai": openai_reply, "ollama": ollama_reply, "anthropic": anthropic_reply}


def chat_model(provider, url, **settings):
    if provider == "openai":
        return OpenAIChatModelSetup("m", url, api_key_env=None, **settings)
    if provider == "anthropic":
        return AnthropicChatModelSetup("m", url, api_key_env=None, **settings)
    return OllamaChatModelSetup("m", url, **settings)


@pytest.mark.parametrize("client", ["openai", "ollama", "anthropic"])
def test_an_http_error_names_the_provider_the_url_and_the_status(client):
    with ScriptedServer(lambda request: Reply(503, {"error": "overloaded"})) as server:
        model = chat_model(client, server.url, max_retries=0)
        with pytest.raises(ModelProviderError) as failure:
            model.chat(QUESTION)
    assert f"{client} model 'm' at {server.url}{PATHS[client]}: HTTP 503" in str(failure.value)
    assert "overloaded" in str(failure.value)
    assert (failure.value.provider, failure.value.status) == (client, 503)
    assert len(server.requests) == 1


@pytest.mark.parametrize("client", ["openai", "ollama", "anthropic"])
def test_a_provider_slower_than_the_timeout_fails_with_a_timeout_error(client):
    with ScriptedServer(lambda request: Reply(body=ANSWERS[client]("late"), delay_s=1.0)) \
            as server:
        model = chat_model(client, server.url, timeout_s=0.2, max_retries=0)
        with pytest.raises(ModelProviderError, match=r"no answer within 0.2 s \(timeout_s\)"):
            model.chat(QUESTION)


@pytest.mark.parametrize("client", ["openai", "ollama", "anthropic"])
def test_an_unreachable_provider_is_named_in_the_error(client):
    with ScriptedServer([]) as server:
        url = server.url
    model = chat_model(client, url, max_retries=0)
    with pytest.raises(ModelProviderError, match=f"{client} model 'm' at {url}{PATHS[client]}: "
                                                 "cannot connect"):
        model.chat(QUESTION)


@pytest.mark.parametrize("answer, what", [
    (b"<html>gateway</html>", "answered something that is not JSON"),
    ([1, 2], "answered JSON that is not an object"),
    ({"choices": []}, "malformed reply"),
    ({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": "{not json"}}]}}]},
     "malformed reply"),
    ({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "custom", "custom": {"name": "f", "input": "x"}}]}}]},
     "malformed reply .*a tool call of type 'custom'; only functions were offered"),
])
def test_a_malformed_reply_is_an_error_not_an_empty_answer(answer, what):
    with ScriptedServer([Reply(200, answer)]) as server:
        model = OpenAIChatModelSetup("m", server.url, api_key_env=None)
        with pytest.raises(ModelProviderError, match=what) as failure:
            model.chat(QUESTION)
    assert failure.value.status == 200


@pytest.mark.parametrize("answer, what", [
    (b"not json", "answered something that is not JSON"),
    ({"type": "message", "content": 7}, "malformed reply"),
    ({"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "f",
                                      "input": [1]}]}, "malformed reply"),
])
def test_a_malformed_anthropic_reply_is_an_error_not_an_empty_answer(answer, what):
    with ScriptedServer([Reply(200, answer)]) as server:
        model = AnthropicChatModelSetup("m", server.url, api_key_env=None)
        with pytest.raises(ModelProviderError, match=what) as failure:
            model.chat(QUESTION)
    assert failure.value.status == 200


def test_openai_embeddings_come_back_in_input_order_with_the_declared_length():
    data = [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]
    with ScriptedServer([{"data": data}]) as server:
        model = OpenAIEmbeddingModelSetup("e", server.url, api_key_env=None, dimensions=2)
        assert model.embed(["a", "b"]) == [[1.0, 0.0], [0.0, 1.0]]
    assert server.requests[0].path == "/embeddings"
    assert server.requests[0].body == {"model": "e", "input": ["a", "b"], "dimensions": 2,
                                       "encoding_format": "float"}


def test_ollama_embeddings_post_to_api_embed():
    with ScriptedServer([{"embeddings": [[1, 2, 3]]}]) as server:
        assert OllamaEmbeddingModelSetup("e", server.url).embed(["a"]) == [[1.0, 2.0, 3.0]]
    assert (server.requests[0].path, server.requests[0].body) == (
        "/api/embed", {"model": "e", "input": ["a"]})


@pytest.mark.parametrize("answer, what", [
    ({"embeddings": [[1.0, 2.0]]}, "a 2-dimensional vector, but the model is declared with "
                                   "dimensions=3"),
    ({"embeddings": []}, "expected 1 vector"),
    ({"embeddings": [["x", 1]]}, "not a list of numbers"),
])
def test_an_embedding_reply_of_the_wrong_shape_is_refused(answer, what):
    with ScriptedServer([answer]) as server, pytest.raises(ModelProviderError, match=what):
        OllamaEmbeddingModelSetup("e", server.url, dimensions=3).embed(["a"])


@pytest.mark.parametrize("kwargs, what", [
    ({"base_url": "localhost:11434"}, "base_url must start with http"),
    ({"model": " "}, "model must be a non-empty string"),
    ({"timeout_s": 0}, "timeout_s must be a positive number"),
    ({"connect_timeout_s": -1}, "connect_timeout_s must be a positive number"),
    ({"max_retries": -1}, "max_retries must be an int >= 0"),
    ({"max_retries": 1.5}, "max_retries must be an int >= 0"),
])
def test_a_bad_client_configuration_is_refused_with_its_name(kwargs, what):
    with pytest.raises(ValueError, match=what):
        OllamaChatModelSetup(**{"model": "m", **kwargs})
