"""One folder per Mem0 vector store provider, its :class:`~.base.StoreBackend` looked up
here by name.

Every fact about a provider lives in its folder (:mod:`.embedded`, :mod:`.qdrant`,
:mod:`.pgvector`, :mod:`.faiss`: each a ``backend`` plus what it needs, e.g. pgvector's
``store``, ``connection`` and ``selfcheck``; :mod:`.generic` for Mem0's other stores); no
other module decides by a provider's name or a store's class
(``tests/test_provider_knowledge.py``).

Filters (:func:`native_filter`): Mem0's stores translate its filter dicts each in their
own way, and not always faithfully: pgvector compares ``payload->>key`` as text (``True``
becomes ``'True'`` under ``eq``, ``ne`` drops rows without the key, ``gt`` fails on a
non-numeric value), embedded Qdrant matches ``contains`` by whole, case-folded words and
tells ``1`` from ``1.0``, Chroma turns ``contains`` into equality, FAISS understands
equality only and filters just ``2 * top_k`` neighbours of a search. So nothing relies
on a store's verdict: the store gets a *superset* condition (every document that matches
the filter also matches it) built from the top-level parts it is known to evaluate no
narrower than :func:`~flink_agents_ltm.api.filters.matches`, and every row that comes
back is checked with ``matches``. The pushed part only makes fewer rows travel;
correctness never depends on it. Parts a store cannot take stay with Python, string
orderings always (pgvector casts to numeric, Qdrant reads ISO text as dates). Two stores
get all of the filter, since they evaluate the language itself: our own stores under
Mem0 (:mod:`~flink_agents_ltm.integrations.mem0.resource_store`) and the embedded
default -- unless the filter reads a reserved field.
"""

from __future__ import annotations

from typing import Any

from flink_agents_ltm.api.filters import MetadataFilter, conjuncts
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.providers.base import StoreBackend, inner
from flink_agents_ltm.integrations.mem0.providers.embedded.backend import (
    EmbeddedBackend,
    ResourceBackend,
)
from flink_agents_ltm.integrations.mem0.providers.faiss.backend import FaissBackend
from flink_agents_ltm.integrations.mem0.providers.filter_parts import NativeFilter
from flink_agents_ltm.integrations.mem0.providers.generic import ChromaBackend, GenericBackend
from flink_agents_ltm.integrations.mem0.providers.pgvector.backend import PgVectorBackend
from flink_agents_ltm.integrations.mem0.providers.qdrant.backend import QdrantBackend

import_mem0()
from mem0.utils.factory import VectorStoreFactory  # noqa: E402

__all__ = ["NativeFilter", "StoreBackend", "backend_for", "backend_of", "native_filter"]

_BACKENDS: dict[str, StoreBackend] = {backend.provider: backend for backend in (
    EmbeddedBackend(), ResourceBackend(), QdrantBackend(), PgVectorBackend(), FaissBackend(),
    ChromaBackend())}
_GENERIC = GenericBackend()


def backend_for(provider: str) -> StoreBackend:
    """The backend of Mem0's store ``provider`` (:class:`GenericBackend` for one we have
    not tested)."""
    return _BACKENDS.get(provider, _GENERIC)


def backend_of(store: Any) -> StoreBackend:
    """The backend of a Mem0 store object (possibly behind our lock): the provider whose
    class Mem0's ``VectorStoreFactory`` makes is the store's class."""
    kind = type(inner(store))
    path = f"{kind.__module__}.{kind.__qualname__}"
    for provider, class_path in VectorStoreFactory.provider_to_class.items():
        if class_path == path:
            return backend_for(provider)
    return _GENERIC


def native_filter(provider: str, filter_: MetadataFilter | None, *, search: bool,
                  reserved: frozenset[str]) -> NativeFilter:
    """The superset condition to give Mem0's ``provider`` store for a ``search`` (else a
    ``list``), and whether it is the whole filter."""
    if filter_ is None:
        return NativeFilter(None, True)
    return backend_for(provider).native_filter(filter_, conjuncts(filter_), search=search,
                                               reserved=reserved)
