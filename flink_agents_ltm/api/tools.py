"""Tools a chat model may call, described to it by a JSON schema built from the
function's signature, and given only arguments that fit it.

.. code-block:: python

    @tool
    def order_status(order_id: str, ctx: ToolContext) -> str:
        \"\"\"The shipping status of an order.\"\"\"
        seen = ctx.short_term_memory.get("orders_seen") or []
        ...

A pydantic model made from the signature gives both: the schema the model is
shown, and the validation of the arguments it sends back (types, missing and
unknown arguments; ``Annotated[int, Field(ge=1, description=...)]`` adds
constraints and descriptions). The function is called with the validated
values, so it gets the types it declares.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.errors import PydanticUserError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.memory_object import MemoryObject

__all__ = ["CONTEXT_PARAMETER", "Tool", "ToolCallError", "ToolCallTimeoutError", "ToolContext",
           "tool"]

CONTEXT_PARAMETER = "ctx"


class ToolCallError(FlinkAgentsLtmError, RuntimeError):
    """A tool raised while ``ctx.chat`` ran it; the cause is chained."""


class ToolCallTimeoutError(ToolCallError, TimeoutError):
    """A tool ``ctx.chat`` ran did not finish within ``agents.durable-async.timeout-ms``."""


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
    """A function plus what the model is told about it. Thread-safe: its arguments
    model is built once, on first use, and never changes."""

    name: str
    description: str
    parameters: Mapping[str, Any]  # a JSON schema of an object
    function: Callable[..., Any]
    #: Where the tool comes from, named in its errors (``"MCP server 'orders'"``).
    origin: str | None = None

    @property
    def wants_context(self) -> bool:
        return CONTEXT_PARAMETER in inspect.signature(self.function).parameters

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def argument_error(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` (from the model) do not fit the function, or ``None``."""
        try:
            self._bind(arguments)
        except ValueError as error:
            return str(error)
        return None

    def invoke(self, arguments: Mapping[str, Any], context: ToolContext | None = None) -> str:
        """Run the tool on the validated ``arguments`` (a ``ValueError`` says why they do
        not fit); its result as the text the model reads (JSON unless a str)."""
        kwargs = self._bind(arguments)
        if self.wants_context:
            kwargs[CONTEXT_PARAMETER] = context
        result = self.function(**kwargs)
        return result if isinstance(result, str) else json.dumps(result, default=str)

    def _bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(arguments, Mapping):
            raise ValueError(f"arguments of tool '{self.name}' must be a JSON object")
        if CONTEXT_PARAMETER in arguments:
            raise ValueError(f"'{CONTEXT_PARAMETER}' is not an argument of tool '{self.name}'")
        model = self._arguments_model()
        try:
            validated = model.model_validate(dict(arguments))
        except ValidationError as error:
            known = ", ".join(f.alias or n for n, f in model.model_fields.items()) or "none"
            problems = "; ".join(_problem(e, known) for e in error.errors())
            raise ValueError(f"bad arguments for tool '{self.name}': {problems}") from None
        return {field.alias or name: getattr(validated, name)
                for name, field in model.model_fields.items()
                if name in validated.model_fields_set}

    def _arguments_model(self) -> type[BaseModel]:
        model = self.__dict__.get("_model")
        if model is None:
            model = arguments_model(self.name, self.function)
            object.__setattr__(self, "_model", model)
        return model

    def __getstate__(self) -> dict[str, Any]:
        # The model is a class made at run time: rebuilt after unpickling, never shipped.
        return {k: v for k, v in self.__dict__.items() if k != "_model"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def tool(function: Callable[..., Any] | None = None, *, name: str | None = None,
         description: str | None = None) -> Any:
    """Make a :class:`Tool` of a function: ``@tool`` or ``@tool(name=..., description=...)``.
    The description defaults to the docstring's first paragraph."""

    def make(fn: Callable[..., Any]) -> Tool:
        if not callable(fn):
            raise TypeError(f"@tool decorates a function, got {type(fn).__name__}")
        text = description if description is not None else (inspect.getdoc(fn) or "")
        tool_name = name or fn.__name__
        return Tool(tool_name, text.split("\n\n")[0].strip(),
                    json_schema(arguments_model(tool_name, fn)), fn)

    return make(function) if function is not None else make


_CONFIG = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


def parameter_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved types of ``fn``'s parameters, ``ctx`` left out.

    Why not only ``typing.get_type_hints``: a function that a job ships by value
    (cloudpickle) keeps only the globals its code uses, so on the TaskManager an
    annotation such as ``ctx: ToolContext`` (a name used in annotations only) cannot be
    resolved. ``ctx`` is never shown to the model, so it needs no type; any other
    annotation that cannot be resolved is an error naming the parameter."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError:
        hints = {}
        namespace = getattr(fn, "__globals__", {})
        for name, annotation in getattr(fn, "__annotations__", {}).items():
            if name in (CONTEXT_PARAMETER, "return"):
                continue
            if isinstance(annotation, str):
                try:
                    annotation = eval(annotation, namespace)  # text of an annotation
                except NameError as error:
                    raise TypeError(f"tool {getattr(fn, '__name__', fn)!r}: the type of "
                                    f"parameter '{name}' cannot be resolved ({error}); "
                                    "import it where the function is defined") from None
            hints[name] = annotation
    hints.pop(CONTEXT_PARAMETER, None)
    return hints


def arguments_model(name: str, fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of ``fn``'s parameters (but ``ctx``), by their names. Fields
    have internal names and the parameter's name as alias, so any parameter name
    works (``json``, ``model_config``, ...)."""
    hints = parameter_hints(fn)
    fields: dict[str, Any] = {}
    for i, parameter in enumerate(inspect.signature(fn).parameters.values()):
        if parameter.name == CONTEXT_PARAMETER:
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD,
                              parameter.POSITIONAL_ONLY):
            raise TypeError(f"tool {name}: parameter '{parameter.name}' must be a plain "
                            "named parameter (the model passes arguments by name)")
        hint = hints.get(parameter.name, Any)
        if not _describable(hint):
            raise TypeError(f"tool {name}: cannot describe parameter type {hint!r} to a model; "
                            "use str, int, float, bool, list, dict, Literal, Optional of those, "
                            "or a pydantic model")
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[f"p{i}"] = (hint, Field(default, alias=parameter.name))
    try:
        return create_model(f"{name}_arguments", __config__=_CONFIG, **fields)
    except (PydanticUserError, TypeError) as error:
        raise TypeError(f"tool {name}: its parameters make no pydantic model: {error}") from None


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The compact JSON schema a chat model is shown: types, enums, constraints and
    descriptions, no titles or defaults (tokens the model pays for on every call)."""
    schema = model.model_json_schema(schema_generator=_CompactSchema)
    schema.pop("title", None)
    schema.pop("additionalProperties", None)
    return {"type": "object", "properties": {}, "required": [], **schema}


class _CompactSchema(GenerateJsonSchema):
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        return {"enum": list(schema["expected"])}


_SCALARS = (str, int, float, bool, type(None))


def _describable(hint: Any) -> bool:
    if hint is Any or hint in _SCALARS or hint in (list, tuple, dict, Mapping, Sequence):
        return True
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return True
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        return _describable(arguments[0])
    if origin is typing.Literal:
        return True
    if origin in (typing.Union, types.UnionType, list, tuple, dict, Mapping, Sequence):
        return all(a is Ellipsis or _describable(a) for a in arguments)
    return False


def _problem(error: Any, known: str) -> str:
    """One validation error as the model should read it."""
    location = error["loc"]
    if len(location) == 1 and error["type"] == "missing":
        return f"missing a required argument: '{location[0]}'"
    if len(location) == 1 and error["type"] == "extra_forbidden":
        return f"unexpected keyword argument '{location[0]}' (the arguments are: {known})"
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location)
    return f"argument '{path.lstrip('.')}': {error['msg']} (got {error['input']!r:.100})"
