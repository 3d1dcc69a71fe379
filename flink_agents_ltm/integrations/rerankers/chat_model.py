"""An LLM reranker: a declared chat model reads the query and the candidates and ranks them.

.. code-block:: python

    @reranker_setup
    def reranker():
        return ResourceDescriptor(ChatModelReranker, chat_model="assistant")

One chat call per reranked search (JSON mode): the candidates are numbered in
the prompt and the model answers ``{"ranking": [3, 0, 2, ...]}``, most relevant
first. Candidates the answer leaves out keep the store's order behind the
ranked ones; an answer that is not such a list fails the search with a
:class:`~flink_agents_ltm.api.rerankers.RerankerError` (the candidates' text is
not in the message). The candidates' text goes to the chat model: declare one
you may send the memory's contents to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from flink_agents_ltm.api.chat_models import BaseChatModelSetup, ChatMessage, MessageRole
from flink_agents_ltm.api.rerankers import BaseReranker, RerankerError
from flink_agents_ltm.api.resources import Resource, ResourceLookup, ResourceType

__all__ = ["ChatModelReranker"]

INSTRUCTIONS = (
    "You rank stored memory items by how well each answers the user's query. Reply with a "
    'JSON object {"ranking": [...]} listing item numbers, most relevant first; leave out '
    "items that do not help.")


class ChatModelReranker(Resource, BaseReranker):
    """Ranks with the declared chat model ``chat_model``; ``max_chars`` cuts each candidate's
    text in the prompt."""

    resource_arguments: ClassVar[Mapping[str, ResourceType]] = {
        "chat_model": ResourceType.CHAT_MODEL}

    def __init__(self, chat_model: str, max_chars: int = 500):
        if not isinstance(chat_model, str) or not chat_model.strip():
            raise ValueError("ChatModelReranker needs chat_model, the name of a declared chat "
                             f"model; got {chat_model!r}")
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError(f"ChatModelReranker max_chars is a positive int, got {max_chars!r}")
        self.chat_model, self.max_chars = chat_model, max_chars
        self._model: BaseChatModelSetup | None = None

    def open(self, get_resource: ResourceLookup) -> None:
        model = get_resource(self.chat_model, ResourceType.CHAT_MODEL)
        if not isinstance(model, BaseChatModelSetup):
            raise TypeError(f"ChatModelReranker: '{self.chat_model}' is a "
                            f"{type(model).__name__}, not a chat model")
        self._model = model

    def prompt(self, query: str, documents: Sequence[str]) -> list[ChatMessage]:
        listed = "\n".join(f"[{index}] {' '.join(text.split())[:self.max_chars]}"
                           for index, text in enumerate(documents))
        return [ChatMessage(MessageRole.SYSTEM, INSTRUCTIONS),
                ChatMessage(MessageRole.USER, f"Query: {query}\n\nItems:\n{listed}")]

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if self._model is None:
            raise RerankerError("ChatModelReranker is not open: declare it with "
                                "@reranker_setup so that the runtime opens it")
        answer = self._model.chat(self.prompt(query, documents), json_mode=True)
        ranking = _ranking(answer.content, len(documents))
        scores = [0.0] * len(documents)
        for place, index in enumerate(ranking):
            scores[index] = float(len(ranking) - place)
        return scores


def _ranking(content: str, count: int) -> list[int]:
    """The distinct item numbers of the model's answer, in its order."""
    try:
        parsed: Any = json.loads(content)
    except ValueError:
        parsed = None
    ranking = parsed.get("ranking") if isinstance(parsed, Mapping) else parsed
    if not isinstance(ranking, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in ranking):
        raise RerankerError('the chat model did not answer {"ranking": [item numbers]}; '
                            f"its answer had {len(content)} characters")
    seen: dict[int, None] = {}
    for index in ranking:
        if 0 <= index < count:
            seen.setdefault(index)
    return list(seen)
