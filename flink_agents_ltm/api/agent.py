"""The agent an author writes: a class whose ``@action`` methods react to events.

.. code-block:: python

    class Greeter(Agent):
        @action(InputEvent)
        async def greet(event, ctx):
            count = (ctx.short_term_memory.get("count") or 0) + 1
            ctx.short_term_memory.set("count", count)
            reply = await ctx.durable_execute_async(slow_lookup, event.input)
            ctx.send_event(OutputEvent(reply))

Actions are static (they take ``(event, ctx)``), sync or ``async def``. For one
input the runtime runs actions in a fixed order (events first in, first out;
actions of one event in declaration order), which is what lets a run be
replayed after a failure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, ItemsView
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from flink_agents_ltm.api.events import Event
from flink_agents_ltm.api.prompts import prompt_descriptor
from flink_agents_ltm.api.resources import (
    RESOURCE_TYPE_ATTRIBUTE,
    ResourceDescriptor,
    ResourceType,
)

__all__ = ["Action", "Agent", "action"]

_LISTENS_TO = "_flink_agents_listens_to"


def action(*event_types: type[Event]) -> Callable[
        [Callable[..., Any] | staticmethod[..., Any]], staticmethod[..., Any]]:
    """Declare a static method as an action triggered by events of these types
    (subclasses included)."""
    if not event_types:
        raise TypeError("@action needs at least one event type, e.g. @action(InputEvent)")
    for event_type in event_types:
        if not (isinstance(event_type, type) and issubclass(event_type, Event)):
            raise TypeError(f"@action takes Event subclasses, got {event_type!r}")

    def decorate(function: Callable[..., Any] | staticmethod[..., Any]) -> staticmethod[..., Any]:
        target = function.__func__ if isinstance(function, staticmethod) else function
        setattr(target, _LISTENS_TO, tuple(event_types))
        return staticmethod(target)

    return decorate


@dataclass(frozen=True)
class Action:
    name: str
    function: Callable[..., Any]
    listens_to: tuple[type[Event], ...]

    @cached_property
    def is_async(self) -> bool:  # asked for every step: looked up once
        return inspect.iscoroutinefunction(self.function)


class Agent:
    """Base class of agents. Subclasses declare actions and resources; the
    runtime reads them through :meth:`actions` and :meth:`resources`."""

    @classmethod
    def actions(cls) -> list[Action]:
        found = []
        for name, member in _static_members(cls):
            listens_to = getattr(member, _LISTENS_TO, None)
            if listens_to is not None:
                found.append(Action(name, member, listens_to))
        return found

    @classmethod
    def resources(cls) -> dict[str, tuple[ResourceType, ResourceDescriptor]]:
        found: dict[str, tuple[ResourceType, ResourceDescriptor]] = {}
        for name, member in _static_members(cls):
            resource_type = getattr(member, RESOURCE_TYPE_ATTRIBUTE, None)
            if resource_type is None:
                continue
            descriptor = member()
            if resource_type is ResourceType.PROMPT:
                descriptor = prompt_descriptor(descriptor, name)
            if not isinstance(descriptor, ResourceDescriptor):
                raise TypeError(f"resource setup '{name}' of {cls.__name__} must return a "
                                f"ResourceDescriptor, got {type(descriptor).__name__}")
            found[name] = (resource_type, descriptor)
        return found

    @classmethod
    def actions_for(cls, event: Event) -> list[Action]:
        return [a for a in cls.actions() if isinstance(event, a.listens_to)]


def _static_members(cls: type) -> ItemsView[str, Callable[..., Any]]:
    """Static methods in definition order, base classes first."""
    members: dict[str, Callable[..., Any]] = {}
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            if isinstance(member, staticmethod):
                members[name] = member.__func__  # a subclass overrides in place
    return members.items()
