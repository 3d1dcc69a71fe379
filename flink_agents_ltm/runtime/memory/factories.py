"""Which long-term memory an operator builds: factories found by name.

``agents.long-term-memory.factory`` names an entry point of the group
``flink_agents_ltm.long_term_memory`` (this package registers ``mem0``, the
default, and ``in-memory`` in its pyproject.toml; another package registers its
own the same way), or is ``module:callable``. A factory is called as
``factory(job_id, config, mailbox_check, resources=...)`` and must return a
:class:`~flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory`
(which implements what the operator calls, :class:`ActionMemory`): every
guard of the contract then holds for it. The runtime names no factory itself,
so it does not know the integrations that provide them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.options import LongTermMemoryOptions
from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.api.rerankers import BaseReranker
from flink_agents_ltm.api.resources import MissingResourceError

ENTRY_POINT_GROUP = "flink_agents_ltm.long_term_memory"
DEFAULT = "mem0"


def registered() -> list[str]:
    """The names of the factories installed under :data:`ENTRY_POINT_GROUP`."""
    return sorted({entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)})


def resolve_factory(name: str | None) -> Callable[..., Any]:
    """The factory ``name`` stands for (the default when ``None``); raises ``ValueError``
    naming the registered ones when it stands for nothing."""
    name = name or DEFAULT
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    if found:
        return next(iter(found)).load()
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        known = ", ".join(registered()) or "none: reinstall the package (pip install -e .)"
        raise ValueError(f"long-term memory factory {name!r} is neither an entry point of "
                         f"group '{ENTRY_POINT_GROUP}' (installed: {known}) nor "
                         "'module:callable'")
    try:
        found_object: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found_object = getattr(found_object, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"long-term memory factory {name!r} cannot be loaded: "
                         f"{type(error).__name__}: {error}") from error
    return found_object


def build_long_term_memory(name: str | None, job_id: str, config: Any,
                           mailbox_check: Callable[[], None],
                           resources: Callable[[str, str], Any] | None) -> BaseLongTermMemory:
    """Build the memory ``name`` stands for and check it fits the contract."""
    memory = resolve_factory(name)(job_id, config, mailbox_check, resources=resources)
    if not isinstance(memory, BaseLongTermMemory):
        raise TypeError(f"long-term memory factory {name or DEFAULT!r} returned a "
                        f"{type(memory).__name__}, not a BaseLongTermMemory: subclass it so "
                        "that every guard of the memory contract holds")
    memory.set_audit_log(LongTermMemoryOptions.audit_log(config))  # every factory's alike
    name, candidates = LongTermMemoryOptions.reranking(config)
    memory.set_reranker(_reranker(name, resources), candidates)
    return memory


def _reranker(name: str | None, resources: Callable[[str, str], Any] | None
              ) -> BaseReranker | None:
    """The declared reranker ``long-term-memory.reranker`` names, or ``None`` when unset."""
    if name is None:
        return None
    option = LongTermMemoryOptions.RERANKER.key
    if resources is None:
        raise ValueError(f"option '{option}' names the reranker '{redact_text(name)}', but no "
                         "declared resources are available here to resolve it; unset it")
    try:
        found = resources("reranker", name)
    except MissingResourceError as error:
        raise MissingResourceError(f"option '{option}': {error}") from None
    if not isinstance(found, BaseReranker):
        raise TypeError(f"option '{option}' names '{redact_text(name)}', a "
                        f"{type(found).__name__}, which is not a BaseReranker")
    return found
