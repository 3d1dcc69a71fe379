"""Resources an agent declares (chat models, embedding models, vector stores).

A resource is declared on the agent class by a static method decorated with
``@chat_model_setup``, ``@embedding_model_setup`` or ``@vector_store_setup``
that returns a :class:`ResourceDescriptor`. The method's name is the
resource's name: actions call ``ctx.get_resource(name)`` and the long-term
memory options name it. The descriptor is generic (a class and its keyword
arguments) so that it can be shipped to the task managers and built there.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

__all__ = [
    "MissingResourceError",
    "ResourceDescriptor",
    "ResourceType",
    "chat_model_setup",
    "embedding_model_setup",
    "vector_store_setup",
]


class ResourceType(StrEnum):
    CHAT_MODEL = "chat_model"
    EMBEDDING_MODEL = "embedding_model"
    VECTOR_STORE = "vector_store"


class MissingResourceError(KeyError):
    """No resource of that name (and type) is declared on the agent."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class ResourceDescriptor:
    """How to build a resource: ``clazz(**arguments)``.

    For long-term memory a vector store descriptor may instead carry Mem0's own
    format, ``ResourceDescriptor(provider="qdrant", config={...})`` with no class.
    """

    def __init__(self, clazz: type | None = None, **arguments: Any):
        self.clazz = clazz
        self.arguments = arguments

    def build(self) -> Any:
        if self.clazz is None:
            return dict(self.arguments)
        return self.clazz(**self.arguments)

    def __repr__(self) -> str:
        name = getattr(self.clazz, "__qualname__", None)
        return f"ResourceDescriptor({name}, {self.arguments!r})"


RESOURCE_TYPE_ATTRIBUTE = "_flink_agents_resource_type"


def _setup(resource_type: ResourceType) -> Callable:
    def decorate(function: Callable) -> staticmethod:
        target = function.__func__ if isinstance(function, staticmethod) else function
        setattr(target, RESOURCE_TYPE_ATTRIBUTE, resource_type)
        return staticmethod(target)

    return decorate


chat_model_setup = _setup(ResourceType.CHAT_MODEL)
embedding_model_setup = _setup(ResourceType.EMBEDDING_MODEL)
vector_store_setup = _setup(ResourceType.VECTOR_STORE)
