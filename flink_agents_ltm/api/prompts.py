"""Prompts: a template of one text or a few chat messages with named placeholders.

.. code-block:: python

    triage = Prompt.from_messages([
        ChatMessage("system", "You answer for {shop}. Reply as JSON: {\\"urgent\\": true}"),
        ChatMessage("user", "{input}"),
    ])
    messages = triage.format_messages(shop="Acme", input=event.input)

A placeholder is a name in single braces, ``{input}``: letters, digits and
underscores, not starting with a digit. Any other brace is text and passes
through as written, so a JSON example needs no escaping. Every placeholder must
be given a value: a missing one is a :class:`PromptPlaceholderError` naming it,
never a prompt sent with ``{input}`` still in it. Values are turned into text
with ``str``; a value that itself holds ``{name}`` is not filled again.

A prompt is a value (frozen, equal by content, picklable), so it can be declared
once and used by any number of actions, agents and threads. Prompts read from an
MCP server are prompts of this kind too.

As a resource, a prompt is declared on the agent with ``@prompt`` (the static
method returns the ``Prompt``), added with ``agents_env.add_resource(name,
ResourceType.PROMPT, prompt)`` or listed under ``prompts:`` in the YAML resources
file; ``ctx.chat(prompt="name", values={...}, model=...)`` fills and sends it,
``ctx.get_resource("name", ResourceType.PROMPT)`` returns it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.resources import ResourceDescriptor

__all__ = ["Prompt", "PromptPlaceholderError", "prompt_descriptor"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptPlaceholderError(FlinkAgentsLtmError, KeyError):
    """A placeholder of the prompt was given no value."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


def _names(text: str) -> list[str]:
    return [match.group(1) for match in _PLACEHOLDER.finditer(text)]


@dataclass(frozen=True)
class Prompt:
    """A text (``from_text``) or a sequence of messages (``from_messages``) with
    ``{name}`` placeholders. ``name`` is optional and only shown in errors."""

    template: str | tuple[ChatMessage, ...]
    name: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.template, str):
            return
        if isinstance(self.template, Iterable):
            messages = tuple(self.template)
            for message in messages:
                if not isinstance(message, ChatMessage):
                    raise TypeError("Prompt.from_messages takes ChatMessage values, got "
                                    f"{type(message).__name__}")
            if not messages:
                raise ValueError("Prompt.from_messages needs at least one message")
            object.__setattr__(self, "template", messages)
            return
        raise TypeError("a prompt's template is a str or a sequence of ChatMessage, got "
                        f"{type(self.template).__name__}")

    @staticmethod
    def from_text(text: str, *, name: str | None = None) -> Prompt:
        """A prompt of one text; :meth:`format_messages` makes it one message."""
        if not isinstance(text, str):
            raise TypeError(f"Prompt.from_text takes a str, got {type(text).__name__}")
        return Prompt(text, name)

    @staticmethod
    def from_messages(messages: Sequence[ChatMessage], *, name: str | None = None) -> Prompt:
        """A prompt of chat messages, each message's content a template."""
        if isinstance(messages, str | bytes):
            raise TypeError("Prompt.from_messages takes a sequence of ChatMessage; for a "
                            "text use Prompt.from_text")
        return Prompt(tuple(messages), name)

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The placeholders' names, each once, in order of first appearance."""
        texts = ([self.template] if isinstance(self.template, str)
                 else [m.content for m in self.template])
        return tuple(dict.fromkeys(n for text in texts for n in _names(text)))

    def format_string(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> str:
        """The filled template as one text (messages as ``role: content`` lines)."""
        given = self._values(values, kwargs)
        if isinstance(self.template, str):
            return self._fill(self.template, given)
        return "\n".join(f"{MessageRole(m.role).value}: {self._fill(m.content, given)}"
                         for m in self.template)

    def format_messages(self, values: Mapping[str, Any] | None = None, /, *,
                        role: MessageRole | str = MessageRole.SYSTEM,
                        **kwargs: Any) -> list[ChatMessage]:
        """The filled messages; a text prompt becomes one message of ``role``."""
        given = self._values(values, kwargs)
        if isinstance(self.template, str):
            return [ChatMessage(role, self._fill(self.template, given))]
        return [ChatMessage(m.role, self._fill(m.content, given), m.tool_calls,
                            m.tool_call_id, m.name) for m in self.template]

    def _values(self, values: Mapping[str, Any] | None,
                kwargs: Mapping[str, Any]) -> dict[str, Any]:
        if values is not None and not isinstance(values, Mapping):
            raise TypeError("a prompt's values are a mapping of placeholder names, got "
                            f"{type(values).__name__}")
        given = {**(values or {}), **kwargs}
        missing = [n for n in self.placeholders if n not in given]
        if missing:
            what = f"prompt '{self.name}'" if self.name else "the prompt"
            names = ", ".join("{" + n + "}" for n in missing)
            raise PromptPlaceholderError(
                f"{what} has no value for placeholder{'s' if len(missing) > 1 else ''} "
                f"{names}; give {', '.join(missing)}= when formatting it")
        return given

    @staticmethod
    def _fill(text: str, values: Mapping[str, Any]) -> str:
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)


def prompt_descriptor(value: Prompt | ResourceDescriptor, name: str) -> ResourceDescriptor:
    """The descriptor of the prompt resource ``name``: a ``Prompt`` becomes one that
    builds it (named ``name`` in its errors unless it has a name), a descriptor that
    builds a ``Prompt`` stays as it is."""
    if isinstance(value, Prompt):
        return ResourceDescriptor(Prompt, template=value.template, name=value.name or name)
    if isinstance(value, ResourceDescriptor):
        clazz = value.clazz
        if not (isinstance(clazz, type) and issubclass(clazz, Prompt)):
            raise TypeError(f"prompt '{name}' is described by {value!r}, which does not "
                            "build a Prompt; return Prompt.from_text(...) or "
                            "Prompt.from_messages(...)")
        return value
    raise TypeError(f"prompt '{name}' must be a Prompt (Prompt.from_text or "
                    f"Prompt.from_messages), got {type(value).__name__}")
