"""Resources an agent declares (chat models, embedding models, vector stores, rerankers,
prompts, MCP servers).

A resource is declared on the agent class by a static method decorated with
``@chat_model_setup``, ``@embedding_model_setup``, ``@vector_store_setup``,
``@reranker_setup`` or ``@mcp_server``
that returns a :class:`ResourceDescriptor`, or with ``@prompt``, returning a
:class:`~flink_agents_ltm.api.prompts.Prompt` (as upstream's ``@prompt``
does). The method's name is the
resource's name: actions call ``ctx.get_resource(name)`` and the long-term
memory options name it.

A descriptor is a value: the module-qualified class plus normalized keyword
arguments. Equal descriptors describe the same resource, so the runtime builds
it once per process and shares it between the operators that declare it (an
embedded store admits one client per process), and releases it when the last of
them closes. A descriptor pickles (it travels to the TaskManagers) and never
shows a secret: arguments such as ``api_key`` or ``password`` are masked in its
``repr`` and in the errors that mention it.

A resource that uses other declared resources (a vector store embeds through an
embedding model) derives from :class:`Resource`, names those arguments in
``resource_arguments`` and gets them in :meth:`Resource.open`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, ClassVar, TypeAlias

from flink_agents_ltm.api.redaction import MaskedError, is_secret_key

__all__ = [
    "MissingResourceError",
    "Resource",
    "ResourceDescriptor",
    "ResourceLookup",
    "ResourceType",
    "chat_model_setup",
    "embedding_model_setup",
    "mcp_server",
    "prompt",
    "reranker_setup",
    "vector_store_setup",
]


class ResourceType(StrEnum):
    CHAT_MODEL = "chat_model"
    EMBEDDING_MODEL = "embedding_model"
    VECTOR_STORE = "vector_store"
    RERANKER = "reranker"
    PROMPT = "prompt"
    MCP_SERVER = "mcp_server"


class MissingResourceError(MaskedError, KeyError):
    """No resource of that name (and type) is declared on the agent."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


ResourceLookup: TypeAlias = Callable[[str, ResourceType], Any]
"""``get_resource(name, type)``: another declared resource, built and opened."""


class Resource:
    """Base of resources that use other declared resources or hold something to release.

    ``resource_arguments`` maps constructor arguments to the type of the resource
    they name, e.g. ``{"embedding_model": ResourceType.EMBEDDING_MODEL}``: the
    runtime checks those names when the job is built and includes what they
    resolve to in the resource's identity (two agents whose ``"embedder"`` differs
    never share a store). :meth:`open` runs once, after construction, on the thread
    that opens the operator; :meth:`close` once, when the last operator using the
    resource closes. Both may raise: an error in ``open`` fails the job at start.
    """

    resource_arguments: ClassVar[Mapping[str, ResourceType]] = {}

    def open(self, get_resource: ResourceLookup) -> None:
        """Acquire what the resource needs; ``get_resource`` serves the names given in
        the arguments listed in ``resource_arguments``."""

    def close(self) -> None:
        """Release what :meth:`open` or later calls acquired."""


_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*:)(?P<secret>[^@\s]+)@")
_MASK = "***"


def _is_secret_name(name: Any) -> bool:
    """``api_key``, ``password``, ``auth_token``, ... but not ``api_key_env`` (the name of
    a variable) or ``max_tokens``: the one rule (``redaction.is_secret_key``)."""
    return is_secret_key(name)


def _masked(value: Any, secret: bool = False) -> Any:
    """``value`` with secrets replaced by ``***`` (for repr and logs)."""
    if secret and value is not None:
        return _MASK
    if isinstance(value, Mapping):
        return {k: _masked(v, _is_secret_name(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_masked(v) for v in value)
    if isinstance(value, str):
        return _URL_PASSWORD.sub(lambda m: m.group("head") + _MASK + "@", value)
    return value


def _secrets_in(value: Any, secret: bool = False) -> list[str]:
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _secrets_in(v, secret or _is_secret_name(k))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _secrets_in(v, secret)]
    if isinstance(value, str):
        found = [m.group("secret") for m in _URL_PASSWORD.finditer(value)]
        return [value, *found] if secret else found
    if secret and value is not None:
        return [str(value)]
    return []


def _copied(value: Any) -> Any:
    """Containers copied (so nobody mutates a descriptor through them), objects shared."""
    if isinstance(value, Mapping):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    if isinstance(value, set | frozenset):
        return type(value)(value)
    return value


def _normalized(value: Any, where: str) -> Any:
    """A hashable form that equal arguments share; scalars keep their type, so
    ``True``, ``1`` and ``1.0`` stay three different values."""
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: dict keys in resource arguments must be str, got "
                                f"{type(key).__name__}")
            items.append((key, _normalized(item, f"{where}[{key!r}]")))
        return ("dict", tuple(sorted(items)))
    if isinstance(value, list | tuple):
        return ("seq", tuple(_normalized(v, f"{where}[{i}]") for i, v in enumerate(value)))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_normalized(v, where) for v in value))
    if value is None or isinstance(value, str | bytes | bool | int | float):
        return (type(value).__name__, value)
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{where}: a resource argument must be a value (str, number, bool, "
                        f"None, list, dict) or a hashable object, got unhashable "
                        f"{type(value).__name__}") from None
    return ("object", value)


def _class_of(module: str, qualname: str) -> type:
    try:
        target: Any = importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"resource class {module}.{qualname}: cannot import module "
                          f"'{module}': {error}") from error
    for part in qualname.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ImportError(f"resource class {module}.{qualname}: module '{module}' has no "
                              f"'{qualname}'") from None
    if not isinstance(target, type):
        raise TypeError(f"resource class {module}.{qualname} is a {type(target).__name__}, "
                        "not a class")
    return target


class ResourceDescriptor:
    """How to build a resource: ``clazz(**arguments)``, as a value.

    ``clazz`` is a class or its module-qualified name (``"pkg.module.Class"``).
    For long-term memory a vector store may instead be given in Mem0's own format,
    ``ResourceDescriptor(provider="qdrant", config={...})``, with no class.
    """

    def __init__(self, clazz: type | str | None = None, /, **arguments: Any):
        self._class: type | None = None
        if clazz is None:
            self.module, self.qualname = None, None
        elif isinstance(clazz, str):
            module, dot, qualname = clazz.rpartition(".")
            if not dot or not module or not qualname:
                raise ValueError(f"a resource class given by name is module-qualified, e.g. "
                                 f"'package.module.Class'; got {clazz!r}")
            self.module, self.qualname = module, qualname
        elif isinstance(clazz, type):
            self.module, self.qualname = clazz.__module__, clazz.__qualname__
            self._class = clazz
        else:
            raise TypeError(f"ResourceDescriptor takes a class or a module-qualified class "
                            f"name, got {type(clazz).__name__}")
        self._arguments = {name: _copied(value) for name, value in arguments.items()}
        identity: Any = (self.module, self.qualname)
        if self._class is not None and not self._importable_by_name(self._class):
            identity = ("class", self._class)  # a local class: its name does not identify it
        self._key = (identity, _normalized(self._arguments, "arguments"))

    @staticmethod
    def _importable_by_name(clazz: type) -> bool:
        """Whether the class's name finds it wherever the descriptor goes: not a local
        class, nor one of a job's main script (``__main__`` is another module on a
        TaskManager; cloudpickle ships such classes by value)."""
        if "<locals>" in clazz.__qualname__ or clazz.__module__ == "__main__":
            return False
        try:
            return _class_of(clazz.__module__, clazz.__qualname__) is clazz
        except (ImportError, TypeError):
            return False

    @property
    def clazz(self) -> type | None:
        """The resource class (imported on first use), ``None`` for Mem0's format."""
        if self._class is None and self.module is not None:
            self._class = _class_of(self.module, self.qualname or "")
        return self._class

    @property
    def class_name(self) -> str | None:
        return None if self.module is None else f"{self.module}.{self.qualname}"

    @property
    def arguments(self) -> dict[str, Any]:
        """A copy of the keyword arguments."""
        return {name: _copied(value) for name, value in self._arguments.items()}

    def dependencies(self) -> dict[str, tuple[str, ResourceType]]:
        """``{argument: (resource name, type)}`` for the arguments that name other declared
        resources (see :attr:`Resource.resource_arguments`); unset ones are left out."""
        clazz = self.clazz
        if clazz is None or not issubclass(clazz, Resource):
            return {}
        found = {}
        for argument, resource_type in clazz.resource_arguments.items():
            name = self._arguments.get(argument)
            if name is None:
                continue
            if not isinstance(name, str) or not name.strip():
                raise TypeError(f"argument '{argument}' of {self.class_name} names a "
                                f"{ResourceType(resource_type).value.replace('_', ' ')} "
                                f"resource, so it is a non-empty str; got {name!r}")
            found[argument] = (name, ResourceType(resource_type))
        return found

    def build(self) -> Any:
        """A new resource: ``clazz(**arguments)``, or Mem0's config dict without a class."""
        clazz = self.clazz
        if clazz is None:  # Mem0's format: no module, no class
            return self.arguments
        return clazz(**self.arguments)

    def redact(self, text: str) -> str:
        """``text`` (an error message, say) with this descriptor's secrets masked."""
        for secret in sorted(set(_secrets_in(self._arguments)), key=len, reverse=True):
            if secret:
                text = text.replace(secret, _MASK)
        return _URL_PASSWORD.sub(lambda m: m.group("head") + _MASK + "@", text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ResourceDescriptor) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in
                          _masked(self._arguments).items())
        name = self.class_name or "mem0"
        return f"ResourceDescriptor({name}{', ' if shown else ''}{shown})"


RESOURCE_TYPE_ATTRIBUTE = "_flink_agents_resource_type"


def _setup(resource_type: ResourceType) -> Callable[[Callable[..., Any]], staticmethod[..., Any]]:
    def decorate(function: Callable[..., Any]) -> staticmethod[..., Any]:
        target = function.__func__ if isinstance(function, staticmethod) else function
        setattr(target, RESOURCE_TYPE_ATTRIBUTE, resource_type)
        return staticmethod(target)

    return decorate


chat_model_setup = _setup(ResourceType.CHAT_MODEL)
embedding_model_setup = _setup(ResourceType.EMBEDDING_MODEL)
vector_store_setup = _setup(ResourceType.VECTOR_STORE)
reranker_setup = _setup(ResourceType.RERANKER)
# Declares a prompt: the static method returns a Prompt (or a ResourceDescriptor that
# builds one); ctx.chat(prompt="name", ...) and ctx.get_resource("name",
# ResourceType.PROMPT) find it by the method's name.
prompt = _setup(ResourceType.PROMPT)
mcp_server = _setup(ResourceType.MCP_SERVER)
"""Declares an MCP server (``MCPServer`` of the MCP integration, the ``mcp`` extra): its
tools and prompts, ``ctx.get_resource(name, ResourceType.MCP_SERVER).tools()``."""
