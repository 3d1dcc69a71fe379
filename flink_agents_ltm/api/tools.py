"""Tools a chat model may call, described to it by a JSON schema built from the
function's signature.

.. code-block:: python

    @tool
    def order_status(order_id: str, ctx: ToolContext) -> str:
        \"\"\"The shipping status of an order.\"\"\"
        seen = ctx.short_term_memory.get("orders_seen") or []
        ...

A parameter named ``ctx`` is not shown to the model: ``ctx.chat`` injects a
:class:`ToolContext` there, whose memories read the calling action's sensory
and short-term memory (including its writes not yet persisted) while the
tool's own writes stay inside that chat call. Such a tool runs on the mailbox
thread, where keyed state lives, so keep it quick; a tool without ``ctx`` runs
on the worker pool and may block on I/O.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.runner_context import MemoryObject

__all__ = ["CONTEXT_PARAMETER", "Tool", "ToolCallError", "ToolContext", "tool"]

CONTEXT_PARAMETER = "ctx"


class ToolCallError(RuntimeError):
    """A tool raised while ``ctx.chat`` ran it; the cause is chained."""


class ToolContext(ABC):
    """What a tool sees of the action that runs the chat (mailbox thread only)."""

    @property
    @abstractmethod
    def key(self) -> Any: ...

    @property
    @abstractmethod
    def sensory_memory(self) -> MemoryObject: ...

    @property
    @abstractmethod
    def short_term_memory(self) -> MemoryObject: ...


@dataclass(frozen=True)
class Tool:
    """A function plus what the model is told about it."""

    name: str
    description: str
    parameters: Mapping[str, Any]  # a JSON schema of an object
    function: Callable[..., Any]

    @property
    def wants_context(self) -> bool:
        return CONTEXT_PARAMETER in inspect.signature(self.function).parameters

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def argument_error(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` (from the model) do not fit the function, or ``None``."""
        if not isinstance(arguments, Mapping):
            return f"arguments of tool '{self.name}' must be a JSON object"
        if CONTEXT_PARAMETER in arguments:
            return f"'{CONTEXT_PARAMETER}' is not an argument of tool '{self.name}'"
        bound = dict(arguments)
        if self.wants_context:
            bound[CONTEXT_PARAMETER] = None
        try:
            inspect.signature(self.function).bind(**bound)
        except TypeError as error:
            return f"bad arguments for tool '{self.name}': {error}"
        return None

    def invoke(self, arguments: Mapping[str, Any], context: ToolContext | None = None) -> str:
        """Run the tool; its result as the text the model reads (JSON unless a str)."""
        kwargs = dict(arguments)
        if self.wants_context:
            kwargs[CONTEXT_PARAMETER] = context
        result = self.function(**kwargs)
        return result if isinstance(result, str) else json.dumps(result, default=str)


def tool(function: Callable[..., Any] | None = None, *, name: str | None = None,
         description: str | None = None) -> Any:
    """Make a :class:`Tool` of a function: ``@tool`` or ``@tool(name=..., description=...)``.
    The description defaults to the docstring's first paragraph."""

    def make(fn: Callable[..., Any]) -> Tool:
        if not callable(fn):
            raise TypeError(f"@tool decorates a function, got {type(fn).__name__}")
        text = description if description is not None else (inspect.getdoc(fn) or "")
        return Tool(name or fn.__name__, text.split("\n\n")[0].strip(), _schema(fn), fn)

    return make(function) if function is not None else make


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required = []
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.name == CONTEXT_PARAMETER:
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD,
                              parameter.POSITIONAL_ONLY):
            raise TypeError(f"tool {fn.__name__}: parameter '{parameter.name}' must be a plain "
                            "named parameter (the model passes arguments by name)")
        properties[parameter.name] = _type_schema(hints.get(parameter.name, Any), fn)
        if parameter.default is parameter.empty:
            required.append(parameter.name)
    return {"type": "object", "properties": properties, "required": required}


_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_schema(hint: Any, fn: Callable[..., Any]) -> dict[str, Any]:
    if hint is Any:
        return {}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in arguments if a is not type(None)]
        if len(present) == 1:
            return _type_schema(present[0], fn)
        return {"anyOf": [_type_schema(a, fn) for a in present]}
    if origin is typing.Literal:
        return {"enum": list(arguments)}
    if hint in (list, tuple) or origin in (list, tuple):
        items = arguments[0] if arguments else Any
        return {"type": "array", "items": _type_schema(items, fn)}
    if hint is dict or origin in (dict, Mapping) or hint is Mapping:
        return {"type": "object"}
    raise TypeError(f"tool {fn.__name__}: cannot describe parameter type {hint!r} to a model; "
                    "use str, int, float, bool, list, dict, Literal or Optional of those")
