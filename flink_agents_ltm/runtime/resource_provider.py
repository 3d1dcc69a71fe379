"""Declared resources: built once per process, shared by value, released with the last user.

Several operator subtasks of one job share a process in thread mode; building
a resource once per identity lets them share it too, which matters for stores:
an embedded store admits one client per process. A resource's identity is its
:class:`ResourceDescriptor` (a value) together with the identities of the
resources its arguments name (a vector store's embedding model), so two agents
whose ``"embedder"`` differs never share a store, and a class redefined under an
old name or an object at a reused address can never alias another resource.

Each :class:`ResourceProvider` (one per operator) counts as one user of every
resource it looked up, and a resource counts as a user of those it opened with.
When the last user is gone the resource is closed (``close()``, if it has one)
and forgotten: a TaskManager running job after job does not accumulate them.

Threading: the registry is guarded by one re-entrant lock, held while a
resource is built and opened (a resource opening its embedding model re-enters).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.redaction import MaskedError, redact_text
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    Resource,
    ResourceDescriptor,
    ResourceType,
)

log = logging.getLogger(__name__)

Declared = Mapping[str, tuple[ResourceType, ResourceDescriptor]]


class ResourceError(MaskedError, RuntimeError):
    """A declared resource could not be built, opened or checked; the message names it
    (its descriptor with secrets masked)."""


@runtime_checkable
class _Closeable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True)
class ResourceKey:
    """The identity of a built resource: its descriptor and, per argument that names
    another resource, that resource's identity."""

    descriptor: ResourceDescriptor
    dependencies: tuple[tuple[str, ResourceKey], ...] = ()


@dataclass(eq=False)
class _Entry:
    key: ResourceKey
    resource: Any
    users: int = 0
    dependencies: list[_Entry] = field(default_factory=list)


_registry: dict[ResourceKey, _Entry] = {}
_lock = threading.RLock()


def live_resources() -> int:
    """How many built resources the process holds (for tests and logs)."""
    with _lock:
        return len(_registry)


def _kind(resource_type: ResourceType | None) -> str:
    return resource_type.value.replace("_", " ") if resource_type else "resource"


def check_declarations(declared: Declared, owner: str) -> None:
    """Static checks (no resource is built): every name an argument gives is declared
    with the right type, and no resource depends on itself."""
    for name, (_, descriptor) in declared.items():
        _dependency_names(declared, owner, name, descriptor)
    for name in declared:
        _acyclic(declared, name, ())


def _dependency_names(declared: Declared, owner: str, name: str,
                      descriptor: ResourceDescriptor) -> dict[str, tuple[str, ResourceType]]:
    try:
        dependencies = descriptor.dependencies()
    except (ImportError, TypeError) as error:
        raise ResourceError(f"resource '{name}' ({descriptor!r}) of {owner}: "
                            f"{descriptor.redact(str(error))}") from None
    for argument, (other, other_type) in dependencies.items():
        found = declared.get(other)
        if found is None or found[0] is not other_type:
            known = ", ".join(f"{n} ({t.value})" for n, (t, _) in declared.items())
            raise MissingResourceError(
                f"resource '{name}' of {owner} names the {_kind(other_type)} '{other}' in its "
                f"argument '{argument}', but no {_kind(other_type)} named '{other}' is "
                f"declared; declared: {known}")
    return dependencies


def _acyclic(declared: Declared, name: str, path: tuple[str, ...]) -> None:
    if name in path:
        raise ResourceError(f"resources depend on each other in a cycle: "
                            f"{' -> '.join((*path, name))}")
    for other, _ in declared[name][1].dependencies().values():
        _acyclic(declared, other, (*path, name))


def check_resources(agent: Agent, extra: Declared | None = None) -> None:
    """What the client can check when the job is built, before anything runs: names,
    types and dependencies of the declared resources, and the arguments of every
    :class:`Resource` (their constructors validate and do no I/O; they connect in
    ``open``). Raises the error the job would otherwise fail with at start."""
    provider = ResourceProvider(agent, lambda: None, extra)
    for name, (_, descriptor) in provider.declared.items():
        clazz = descriptor.clazz
        if clazz is not None and issubclass(clazz, Resource):
            provider._construct(name, descriptor)


class ResourceProvider:
    """The agent's declared resources plus ``extra`` ones declared on the environment
    (``AgentsExecutionEnvironment.add_resource``); a name may be declared once."""

    def __init__(self, agent: Agent, mailbox_check: Callable[[], None],
                 extra: Declared | None = None):
        self._owner = f"agent {type(agent).__qualname__}"
        self._declared = dict(agent.resources())
        for name, declared in (extra or {}).items():
            if name in self._declared:
                raise ValueError(f"resource '{name}' is declared both on agent "
                                 f"{type(agent).__qualname__} and on the environment; "
                                 "rename one")
            self._declared[name] = declared
        check_declarations(self._declared, self._owner)
        self._mailbox_check = mailbox_check
        self._acquired: dict[str, _Entry] = {}
        self._closed = False

    @property
    def declared(self) -> dict[str, tuple[ResourceType, ResourceDescriptor]]:
        return dict(self._declared)

    # ------------------------------------------------------------- lifecycle

    def open(self) -> None:
        """The operator opens (mailbox thread): build and open every declared resource
        that is a :class:`Resource` (vector stores and what they use), so a wrong
        dimension, an unknown provider or an unreachable server fails the job now
        rather than at its first write."""
        for name, (resource_type, descriptor) in self._declared.items():
            clazz = descriptor.clazz
            if clazz is not None and issubclass(clazz, Resource):
                self.resolve(name, resource_type)

    def close(self) -> None:
        """The operator closes: give back every resource this provider looked up; those
        nobody else uses are closed."""
        with _lock:
            acquired, self._acquired = list(self._acquired.values()), {}
            self._closed = True
            for entry in reversed(acquired):
                _release(entry)

    # ------------------------------------------------------------- lookups

    def get(self, name: str, resource_type: ResourceType | str | None = None) -> Any:
        """The resource ``name`` (mailbox thread only: resources are not shared with
        worker threads unless the action hands them over)."""
        self._mailbox_check()
        return self.resolve(name, resource_type)

    def resolve(self, name: str, resource_type: ResourceType | str | None = None) -> Any:
        """The resource ``name``, built and opened on first use (any thread)."""
        wanted = ResourceType(resource_type) if resource_type is not None else None
        declared = self._declared.get(name)
        if declared is None or (wanted is not None and declared[0] is not wanted):
            known = ", ".join(f"{n} ({t.value})" for n, (t, _) in self._declared.items())
            raise MissingResourceError(  # a "name" may be a misplaced secret: masked
                f"no {_kind(wanted)} named '{redact_text(str(name))}' is declared on "
                f"{self._owner}; declared: "
                f"{known or 'none'}. Declare it with @chat_model_setup, "
                "@embedding_model_setup, @vector_store_setup, @reranker_setup, @prompt or "
                "@mcp_server, or with agents_env.add_resource(...)")
        with _lock:
            if self._closed:
                raise RuntimeError(f"the resources of {self._owner} are closed")
            entry = self._acquired.get(name)
            if entry is None:
                entry = self._acquire(name)
                self._acquired[name] = entry
            return entry.resource

    def for_long_term_memory(self, kind: str, name: str) -> Any:
        """The resource ``name`` of ``kind`` for the long-term memory factory, which adapts it
        to its store (any thread: the memory is built where it is first used)."""
        return self.resolve(name, ResourceType(kind))

    # ------------------------------------------------------------- registry

    def _key(self, name: str) -> ResourceKey:
        descriptor = self._declared[name][1]
        dependencies = descriptor.dependencies()
        return ResourceKey(descriptor, tuple(sorted(
            (argument, self._key(other)) for argument, (other, _) in dependencies.items())))

    def _acquire(self, name: str) -> _Entry:
        """One more user of the resource ``name`` (built and opened if nobody has it)."""
        key = self._key(name)
        entry = _registry.get(key)
        if entry is None:
            entry = self._create(name, key)
            _registry[key] = entry
        entry.users += 1
        return entry

    def _construct(self, name: str, descriptor: ResourceDescriptor) -> Any:
        try:
            return descriptor.build()
        except Exception as error:  # noqa: BLE001 - re-raised, naming the resource
            raise self._failure("building", name, descriptor, error) from _cause(
                descriptor, error)

    def _create(self, name: str, key: ResourceKey) -> _Entry:
        descriptor = key.descriptor
        resource = self._construct(name, descriptor)
        entry = _Entry(key, resource)
        if isinstance(resource, Resource):
            allowed = set(descriptor.dependencies().values())

            def get_resource(other: str, other_type: ResourceType) -> Any:
                if (other, ResourceType(other_type)) not in allowed:
                    raise MissingResourceError(
                        f"resource '{name}' looked up the {_kind(ResourceType(other_type))} "
                        f"'{other}', which none of its arguments names; list the argument in "
                        f"{type(resource).__name__}.resource_arguments")
                dependency = self._acquire(other)
                entry.dependencies.append(dependency)
                return dependency.resource

            try:
                resource.open(get_resource)
            except Exception as error:
                _close_quietly(resource)
                for dependency in reversed(entry.dependencies):
                    _release(dependency)
                if isinstance(error, MissingResourceError | ResourceError):
                    raise
                raise self._failure("opening", name, descriptor, error) from _cause(
                    descriptor, error)
        log.info("built resource '%s' of %s: %r", name, self._owner, descriptor)
        return entry

    def _failure(self, doing: str, name: str, descriptor: ResourceDescriptor,
                 error: Exception) -> ResourceError:
        return ResourceError(f"{doing} resource '{name}' of {self._owner} from {descriptor!r} "
                             f"failed: {type(error).__name__}: {descriptor.redact(str(error))}")


def _cause(descriptor: ResourceDescriptor, error: Exception) -> Exception | None:
    """The original error, unless its text holds a secret (tracebacks print causes)."""
    return error if descriptor.redact(str(error)) == str(error) else None


def _release(entry: _Entry) -> None:
    entry.users -= 1
    if entry.users > 0:
        return
    _registry.pop(entry.key, None)
    _close_quietly(entry.resource)
    for dependency in reversed(entry.dependencies):
        _release(dependency)


def _close_quietly(resource: Any) -> None:
    if not isinstance(resource, _Closeable):
        return
    try:
        resource.close()
    except Exception:
        log.warning("closing resource %s failed", type(resource).__name__, exc_info=True)
