"""What the ``flink-agents-ltm`` commands read of a job: its options from ``--config FILE``
or an environment variable (never from the command line, where every user of the machine
can read them), the vector store of ``--vector-store-file``, and the long-term memory
options an erasure needs (no model: an embedding model that only declares its size).
Messages mask passwords."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.home import home
from flink_agents_ltm.api.options import AgentsConfiguration, LongTermMemoryOptions
from flink_agents_ltm.api.redaction import redact_text

PROGRAM = "flink-agents-ltm"
CONFIG_VARIABLE = "FLINK_AGENTS_LTM_CONFIG"
# Options erasure never uses: no model is called.
_UNUSED_FOR_ERASURE = (LongTermMemoryOptions.CHAT_MODEL_SETUP, LongTermMemoryOptions.INFER,
                       LongTermMemoryOptions.RERANKER)
_DIMENSIONS_ONLY = "erase-key-embedding-dims"
DEFAULT_EMBEDDING_DIMS = 384  # the default model's (all-MiniLM-L6-v2)


class UsageError(FlinkAgentsLtmError):
    """Bad arguments or configuration: exit 2, like argparse."""


class DimensionsOnly(BaseEmbeddingModelSetup):
    """Stands in for a job's own embedding model: declares its vector size, embeds nothing."""

    def __init__(self, dimensions: int):
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError(f"{PROGRAM} erase-key embeds nothing; this model only declares "
                           f"its {self.dimensions} dimensions")


_NO_CONFIG = "no configuration (the embedded default)"


def read_config(path: str | None, variable: str | None) -> tuple[dict[str, Any], str]:
    """The option mapping from ``path``, else from the environment ``variable`` (default
    :data:`CONFIG_VARIABLE`); returns it with a description of where it came from."""
    if path is not None:
        file = Path(path).expanduser()
        return _parse(_read(file), str(file)), str(file)
    name = variable or CONFIG_VARIABLE
    text = os.environ.get(name, "")
    if not text.strip():
        if variable is not None:
            raise UsageError(f"the environment variable {name} is unset or empty")
        return {}, _NO_CONFIG
    return _parse(text, f"${name}"), f"${name}"


def _read(file: Path) -> str:
    """The text of a file that may hold a secret; warns when other users may read it."""
    try:
        text = file.expanduser().read_text()
        mode = stat.S_IMODE(file.expanduser().stat().st_mode)
    except OSError as error:
        raise UsageError(f"cannot read {file}: {error.strerror}") from None
    if mode & 0o077 and redact_text(text) != text:
        print(f"{PROGRAM}: warning: {file} holds a secret and other users may read it "
              f"(mode {mode:04o}); chmod 600 it", file=sys.stderr)
    return text


def _parse(text: str, source: str, expected: str = "a mapping of option keys (e.g. "
           f"'{LongTermMemoryOptions.VECTOR_STORE.key}') to values") -> dict[str, Any]:
    try:
        config = yaml.safe_load(text)  # YAML is a superset of JSON
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise UsageError(f"{source} is not valid YAML or JSON{where}; its text is not shown, "
                         "it may hold a password") from None
    if config is None:
        return {}
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        raise UsageError(f"{source} must be {expected}")
    return config


def memory_options(values: dict[str, Any], embedding_dims: int | None
                   ) -> tuple[AgentsConfiguration, Callable[[str, str], Any]]:
    """The configuration the factory gets, and the resources it may resolve: none but a
    :class:`DimensionsOnly` embedding model of the job's model size."""
    try:
        config = AgentsConfiguration(values)
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(redact_text(str(error.args[0] if error.args else error))) from None
    kept = {key: value for key, value in config.to_dict().items()
            if key not in {option.key for option in _UNUSED_FOR_ERASURE}}
    config = AgentsConfiguration(kept)
    store = config.get(LongTermMemoryOptions.VECTOR_STORE)
    if isinstance(store, str):
        raise UsageError(f"'{LongTermMemoryOptions.VECTOR_STORE.key}' names the declared vector "
                         f"store '{store}'; {PROGRAM} builds no declared resources: give the "
                         'store inline ({"provider": ..., "config": {...}})')
    declared = config.get(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP)
    if declared is not None and embedding_dims is None:
        raise UsageError(f"'{LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key}' names the "
                         f"declared embedding model '{declared}', which {PROGRAM} cannot build; "
                         "pass --embedding-dims with its vector size instead")
    # No model is loaded (the default one takes seconds): a stand-in declares its size.
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, _DIMENSIONS_ONLY)
    model = DimensionsOnly(embedding_dims or DEFAULT_EMBEDDING_DIMS)

    def resources(kind: str, name: str) -> Any:
        if kind == "embedding_model" and name == _DIMENSIONS_ONLY:
            return model
        raise UsageError(f"{PROGRAM} builds no declared resources (asked for the {kind} "
                         f"'{name}')")

    return config, resources


def describe_store(config: AgentsConfiguration, job_id: str) -> str:
    """Where the memory lives, with secrets masked."""
    store = config.get(LongTermMemoryOptions.VECTOR_STORE)
    if store is None:
        base = home(config.get(LongTermMemoryOptions.BASE_DIR))
        return f"the embedded store of job '{job_id}' under {base}"
    if isinstance(store, str):
        return f"the declared vector store '{store}'"
    settings = store.get("config") or {}
    where = settings.get("host") and f" at {settings['host']}:{settings.get('port', 5432)}"
    table = settings.get("collection_name")
    return (f"the {store.get('provider')} store{where or ''}"
            f"{f', collection {table!r}' if table else ''}")


def read_options(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The option mapping of ``--config``/``--config-env``, with ``--vector-store-file``'s
    store over its own, and where they came from."""
    values, source = read_config(args.config, args.config_env)
    if args.vector_store_file is not None:
        values[LongTermMemoryOptions.VECTOR_STORE.key] = _parse(
            _read(Path(args.vector_store_file)), args.vector_store_file,
            'a vector store ({"provider": ..., "config": {...}})')
        source = (args.vector_store_file if source == _NO_CONFIG
                  else f"{source} and {args.vector_store_file}")
    return values, source


def require_store(config: AgentsConfiguration, job_id: str) -> None:
    """Refuse a job that has no store of the Mem0 factory, before anything is created: a
    misspelt ``--job-id`` would otherwise erase nothing, say so with exit 0, and leave an
    empty store (a folder, or a table) behind. The store's backend knows where a job's
    rows live (``StoreBackend.missing_job``); stores that cannot tell are not checked."""
    store = resolved_store(config, job_id)
    if store is None:
        return
    from flink_agents_ltm.integrations.mem0.providers import backend_for

    reason = backend_for(str(store.get("provider"))).missing_job(
        dict(store.get("config") or {}), job_id, describe_store(config, job_id))
    if reason is not None:
        raise UsageError(reason)


def resolved_store(config: AgentsConfiguration, job_id: str) -> dict[str, Any] | None:
    """The job's Mem0 vector store as ``{"provider", "config"}``: the configured one, or
    the embedded default resolved for the job; ``None`` for a declared store's name."""
    store = config.get(LongTermMemoryOptions.VECTOR_STORE)
    if store is None:
        from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec

        base = config.get(LongTermMemoryOptions.BASE_DIR)
        spec = StoreSpec(job_id, base_dir=Path(base).expanduser() if base else None)
        resolved: dict[str, Any] = spec.resolved_vector_store()
        return resolved
    return store if isinstance(store, dict) else None
