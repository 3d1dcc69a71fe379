"""What Java's ``PythonLongTermMemory`` calls through Pemja.

Java owns one Python :class:`Mem0LongTermMemory` per operator and reaches it
through a :class:`JavaLongTermMemoryGateway`. Every method takes plain values
(strings, lists, maps) that Pemja converts from Java, rebuilds the Python
memory set with :func:`to_python_memory_set` (all four fields of the Java set),
calls the long-term memory, and answers with plain values Pemja converts back
(``list`` -> ``ArrayList``, ``dict`` -> ``HashMap``).

Answers are envelopes, so that Java can raise a typed exception carrying the
Python message without parsing Pemja's exception text:

* success: a one-element list ``[result]``;
* failure: a dict ``{"error": kind, "type": qualified name, "message": str(e),
  "traceback": text}`` where ``kind`` is one of :data:`ERROR_KINDS`.

Java calls these with ``invokeMethod`` only (Pemja 0.5.7's ``invoke`` may call a
stale function once another interpreter was closed), on a module object or a
gateway object bound in the interpreter's globals.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from flink_agents_ltm.api.memory.errors import (
    EmptyPartitionKeyError,
    LongTermMemoryError,
    MailboxThreadError,
    UnboundMemorySetError,
)
from flink_agents_ltm.api.memory.expiry import DEFAULT_TTL
from flink_agents_ltm.api.memory.items import MemorySetItem
from flink_agents_ltm.api.memory.write_position import BODY, write_position
from flink_agents_ltm.bridge.memory_sets import to_python_memory_set
from flink_agents_ltm.runtime.memory.factories import build_long_term_memory

__all__ = [
    "ERROR_KINDS",
    "JavaLongTermMemoryGateway",
    "close_long_term_memory",
    "gateway",
    "open_long_term_memory",
]

# Most specific first: the kind decides which Java exception type is thrown.
_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (UnboundMemorySetError, "unbound"),
    (EmptyPartitionKeyError, "empty_key"),
    (MailboxThreadError, "mailbox"),
    (LongTermMemoryError, "backend"),
    (TypeError, "type"),
    (ValueError, "value"),
    (KeyError, "value"),
)
ERROR_KINDS = frozenset(kind for _, kind in _KINDS) | {"other"}

# Pemja sets the root logger to DEBUG (Java's logging config filters what it forwards).
# sentence-transformers reads an effective INFO/DEBUG level as "show progress bars" and
# would draw a tqdm bar on stderr for every embedding; keep its own level at WARNING
# unless someone set one.
if logging.getLogger("sentence_transformers").level == logging.NOTSET:
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)

_gateways: dict[str, JavaLongTermMemoryGateway] = {}
_gateways_lock = threading.Lock()
_handles = itertools.count(1)


def _never_off_mailbox() -> None:
    """The Python-side mailbox check of a Java-owned memory: Java runs its own check
    (its ``getMemorySet`` never enters Python), and Pemja calls arrive on Java threads."""


def _error(error: BaseException) -> dict[str, Any]:
    kind = next((k for cls, k in _KINDS if isinstance(error, cls)), "other")
    return {
        "error": kind,
        "type": f"{type(error).__module__}.{type(error).__qualname__}",
        "message": str(error),
        "traceback": "".join(traceback.format_exception(error)),
    }


def _answer(call: Callable[[], Any]) -> Any:
    try:
        return [call()]
    except Exception as error:  # noqa: BLE001 - every Python failure becomes a Java exception
        return _error(error)


def _item(item: MemorySetItem) -> dict[str, Any]:
    return {
        "memory_set_name": item.memory_set_name,
        "id": item.id,
        "value": item.value,
        "metadata": dict(item.metadata),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "score": item.score,
    }


def _ttl(given: Any, seconds: Any) -> Any:
    """The ``ttl`` argument of a Java call: the default ttl unless Java gave one; a given
    ``ttl`` goes to Python as it came (Python's ``check_ttl`` refuses a bad one)."""
    return seconds if given else DEFAULT_TTL


def _java_resources(kind: str, name: str) -> Any:
    """Java declares no resources: a resource Java's config names (``long-term-memory.reranker``)
    is a module-qualified Python class, built with no arguments
    (``flink_agents_ltm.integrations.rerankers.lexical.LexicalReranker``)."""
    from flink_agents_ltm.api.resources import ResourceDescriptor

    if "." not in str(name):
        raise ValueError(f"a Java job declares no {kind} resources: name a module-qualified "
                         "Python class instead ('package.module.Class'; docs/java.md names "
                         "the offline BM25 reranker)")
    return ResourceDescriptor(str(name)).build()


def _plain(value: Any) -> Any:
    """A Java collection that reached Python as a proxy, as a Python list or dict."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    if isinstance(value, Mapping):
        return dict(value)
    if hasattr(value, "__iter__"):
        return list(value)
    return value


class JavaLongTermMemoryGateway:
    """One Java ``PythonLongTermMemory``'s view of its Python long-term memory."""

    def __init__(self, ltm: Any):
        self._ltm = ltm
        # delete_memory_set reads the Python context: switch and delete as one step.
        self._context_lock = threading.Lock()

    @property
    def ltm(self) -> Any:
        return self._ltm

    def _set(self, name: str, key: str | None, observation_id: str | None, suppressed: bool):
        return to_python_memory_set(name, key, observation_id, suppressed, ltm=self._ltm)

    def add(self, name, key, observation_id, suppressed, items, metadatas, position=BODY,
            ttl_given=False, ttl=None):
        """``position``: the write position Java's agent runtime is at (``body`` or
        ``call<k>``), so a Java action's items get the same replay-stable ids as Python's.
        ``ttl`` (seconds; ``None``: forever) applies when ``ttl_given``, else the default
        ttl does; Python checks it (:func:`_ttl`)."""
        def call():
            memory_set = self._set(name, key, observation_id, suppressed)
            with write_position(str(position)):
                return list(self._ltm.add(memory_set, _plain(items), _plain(metadatas),
                                          ttl=_ttl(ttl_given, ttl)))
        return _answer(call)

    def get(self, name, key, observation_id, suppressed, ids, filters, limit):
        def call():
            memory_set = self._set(name, key, observation_id, suppressed)
            found = self._ltm.get(memory_set, ids=_plain(ids), filters=_plain(filters),
                                  limit=int(limit))
            return [_item(item) for item in found]
        return _answer(call)

    def search(self, name, key, observation_id, suppressed, query, limit, filters, options):
        def call():
            memory_set = self._set(name, key, observation_id, suppressed)
            found = self._ltm.search(memory_set, query, limit=int(limit),
                                     filters=_plain(filters), **(_plain(options) or {}))
            return [_item(item) for item in found]
        return _answer(call)

    def update(self, name, key, observation_id, suppressed, item_id, value, metadata,
               ttl_given=False, ttl=None):
        """Update one item in place; ``[True]`` if it was an item of the set, else ``[False]``
        (an update mints no id, so it needs no write position to be replay-stable).
        ``ttl_given``/``ttl`` as for :meth:`add`."""
        def call():
            memory_set = self._set(name, key, observation_id, suppressed)
            return bool(self._ltm.update(memory_set, item_id, value, _plain(metadata),
                                         ttl=_ttl(ttl_given, ttl)))
        return _answer(call)

    def delete(self, name, key, observation_id, suppressed, ids):
        def call():
            memory_set = self._set(name, key, observation_id, suppressed)
            return list(self._ltm.delete(memory_set, ids=_plain(ids)))
        return _answer(call)

    def delete_memory_set(self, name, key, observation_id, suppressed):
        """Delete set ``name`` of the key Java has in scope (Java checked the thread)."""
        def call():
            with self._context_lock:
                self._ltm.switch_context(key, observation_id, suppressed)
                return bool(self._ltm.delete_memory_set(name))
        return _answer(call)

    def erase_key(self, key):
        """``[n]``: every item of every set of ``key`` erased (Python's ``erase_key``, which
        checks the key and runs on any thread)."""
        return _answer(lambda: int(self._ltm.erase_key(key)))

    def sweep_expired(self, limit):
        """``[n]``: up to ``limit`` expired items of the job deleted (Python's
        ``sweep_expired``, which checks ``limit`` and runs on any thread)."""
        return _answer(lambda: int(self._ltm.sweep_expired(limit)))

    def end_action(self, observation_id, completed):
        """The action (one attempt of a Java step) ended: ``[{"observations": [...],
        "items_added": n}]``, its observations as dicts (none unless ``completed``) and the
        items it stored either way, as :meth:`BaseLongTermMemory.end_action` reports them.
        Forgets the action, so a next attempt under the same id mints the same item ids."""
        def call():
            outcome = self._ltm.end_action(str(observation_id), bool(completed))
            return {"observations": [o.to_dict() for o in outcome.observations],
                    "items_added": int(outcome.items_added)}
        return _answer(call)

    def items_stored_by(self, observation_id):
        """``[n]``: how many items the action (attempt) with this observation id stored so
        far, without ending it (:meth:`BaseLongTermMemory.items_stored_by`). Java asks when
        it records a durable result, which a replay answers without storing again."""
        def call():
            return int(self._ltm.items_stored_by(str(observation_id)))
        return _answer(call)

    def ping(self):
        """The cheapest round trip (used to measure the bridge itself)."""
        return [None]


def _from_java(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Java's config map as ``from_config`` takes it.

    Java passes the vector store as text: a string for ``long-term-memory.vector-store``
    that starts with ``{`` is Mem0-format JSON (``{"provider": ..., "config": {...}}``)
    and becomes a dict; any other string stays the name of a declared vector store.
    Malformed JSON raises ``ValueError`` naming the option.
    """
    from flink_agents_ltm.api.options import LongTermMemoryOptions

    options = _plain(config)
    if not options:
        return None
    key = LongTermMemoryOptions.VECTOR_STORE.key
    store = options.get(key)
    if isinstance(store, str) and store.lstrip().startswith("{"):
        try:
            parsed = json.loads(store)
        except json.JSONDecodeError as error:
            raise ValueError(f"option '{key}' is not valid JSON ({error}); its text is not "
                             "shown, it may hold a password") from None
        options = {**options, key: parsed}
    return options


def open_long_term_memory(job_id: str, config: Mapping[str, Any] | None = None) -> Any:
    """Build a ``Mem0LongTermMemory`` for Java (the embedded default when ``config`` is
    empty); answers the handle Java passes to :func:`gateway`. ``config`` maps option keys
    to values; the vector store may be Mem0-format JSON text (see :func:`_from_java`)."""
    def call():
        ltm = build_long_term_memory(None, job_id, _from_java(config), _never_off_mailbox,
                                     resources=_java_resources)
        handle = f"ltm-{next(_handles)}"
        with _gateways_lock:
            _gateways[handle] = JavaLongTermMemoryGateway(ltm)
        return handle
    return _answer(call)


def gateway(handle: str) -> JavaLongTermMemoryGateway:
    """The gateway behind ``handle`` (Java binds it once per interpreter)."""
    with _gateways_lock:
        found = _gateways.get(handle)
    if found is None:
        raise LookupError(f"no open long-term memory '{handle}' (it was closed)")
    return found


def close_long_term_memory(handle: str) -> Any:
    """Close the memory behind ``handle``; closing twice is a no-op."""
    def call():
        with _gateways_lock:
            found = _gateways.pop(handle, None)
        if found is not None:
            found.ltm.close()
        return found is not None
    return _answer(call)
