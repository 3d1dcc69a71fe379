"""The clients against real providers; each test skips when its variable is unset or
empty (OPENAI_API_KEY; ANTHROPIC_API_KEY; OLLAMA_HOST, e.g. http://localhost:11434).
Models can be chosen with OPENAI_CHAT_MODEL / OPENAI_EMBEDDING_MODEL /
OPENAI_BASE_URL, ANTHROPIC_CHAT_MODEL and OLLAMA_CHAT_MODEL /
OLLAMA_EMBEDDING_MODEL."""

import os

import pytest

from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole, tool
from flink_agents_ltm.integrations.chat_models.anthropic import AnthropicChatModelSetup
from flink_agents_ltm.integrations.chat_models.ollama import OllamaChatModelSetup
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.integrations.embedding_models.ollama import OllamaEmbeddingModelSetup
from flink_agents_ltm.integrations.embedding_models.openai import OpenAIEmbeddingModelSetup


def configured(variable):
    return os.environ.get(variable, "").strip()


needs_openai = pytest.mark.skipif(not configured("OPENAI_API_KEY"),
                                  reason="OPENAI_API_KEY is unset or empty")
needs_anthropic = pytest.mark.skipif(not configured("ANTHROPIC_API_KEY"),
                                     reason="ANTHROPIC_API_KEY is unset or empty")
needs_ollama = pytest.mark.skipif(not configured("OLLAMA_HOST"),
                                  reason="OLLAMA_HOST is unset or empty")


@tool
def order_status(order_id: str) -> str:
    """The shipping status of an order, by its id."""
    return "shipped"


QUESTION = [ChatMessage("system", "Answer with the order_status tool when asked about an "
                                  "order."),
            ChatMessage("user", "What is the status of order 42?")]


def openai_base_url():
    return configured("OPENAI_BASE_URL") or "https://api.openai.com/v1"


@needs_openai
def test_openai_asks_for_the_tool_with_the_order_id():
    model = OpenAIChatModelSetup(configured("OPENAI_CHAT_MODEL") or "gpt-4o-mini",
                                 openai_base_url())
    reply = model.chat(QUESTION, [order_status])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("order_status",
                                                                  {"order_id": "42"})]


@needs_openai
def test_openai_embeds_texts_into_vectors_of_one_length():
    model = OpenAIEmbeddingModelSetup(configured("OPENAI_EMBEDDING_MODEL")
                                      or "text-embedding-3-small", openai_base_url())
    vectors = model.embed(["tea", "coffee"])
    assert len(vectors) == 2 and len(vectors[0]) == len(vectors[1]) > 0


@needs_anthropic
def test_anthropic_asks_for_the_tool_and_answers_from_its_result():
    model = AnthropicChatModelSetup(configured("ANTHROPIC_CHAT_MODEL") or "claude-haiku-4-5",
                                    max_tokens=300)
    reply = model.chat(QUESTION, [order_status])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("order_status",
                                                                  {"order_id": "42"})]
    results = [ChatMessage(MessageRole.TOOL, "shipped", tool_call_id=c.id, name=c.name)
               for c in reply.tool_calls]
    answer = model.chat([*QUESTION, reply, *results], [order_status])
    assert not answer.tool_calls and "shipped" in answer.content.lower()


@needs_ollama
def test_ollama_asks_for_the_tool_with_the_order_id():
    model = OllamaChatModelSetup(configured("OLLAMA_CHAT_MODEL") or "llama3.2",
                                 configured("OLLAMA_HOST"))
    reply = model.chat(QUESTION, [order_status])
    assert [c.name for c in reply.tool_calls] == ["order_status"]
    assert str(reply.tool_calls[0].arguments["order_id"]) == "42"


@needs_ollama
def test_ollama_embeds_texts_into_vectors_of_one_length():
    model = OllamaEmbeddingModelSetup(configured("OLLAMA_EMBEDDING_MODEL") or "nomic-embed-text",
                                      configured("OLLAMA_HOST"))
    vectors = model.embed(["tea", "coffee"])
    assert len(vectors) == 2 and len(vectors[0]) == len(vectors[1]) > 0
