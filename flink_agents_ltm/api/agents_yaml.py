"""An agent's resources and options in a YAML file, as in Flink Agents' YAML API.

.. code-block:: yaml

    config:                       # agents.* and long-term-memory.* options
      agents.job-id: support-bot
      agents.durable-async.timeout-ms: 30 s
      long-term-memory:           # nested keys work too, as in Flink's config.yaml
        max-item-length: 4096
    chat_model_setups:
      - name: assistant
        clazz: ollama             # an alias, or a class path (module.Class or module:Class)
        model: qwen3:8b
        base_url: http://localhost:11434
    embedding_model_setups:
      - {name: embedder, clazz: openai, model: text-embedding-3-small}
    vector_stores:
      - name: shared              # Mem0's own format: provider + config, no clazz
        provider: pgvector
        config: {host: 127.0.0.1, port: 5433, dbname: mem0, user: mem0}
    rerankers:                    # long-term-memory.reranker names one
      - {name: reranker, clazz: lexical}
    prompts:                      # ctx.chat(prompt="triage", values={...})
      - name: triage
        text: "Is this urgent? {input}"
      - name: answer
        messages:
          - {role: system, content: "You answer for {shop}."}
          - {role: user, content: "{input}"}
    mcp_servers:                  # tools and prompts of an MCP server (the mcp extra)
      - name: orders
        clazz: mcp
        endpoint: http://127.0.0.1:8765/mcp
        bearer_token_env: ORDERS_MCP_TOKEN

``AgentsExecutionEnvironment.load_yaml(path)`` sets the options on the
environment's configuration (as if the program had set them at that point)
and adds the resources to the environment, where every agent of the job finds
them by name. Every key beyond ``name`` and ``clazz`` is an argument of the
class; a prompt has ``text`` or ``messages`` (each a ``role`` and a ``content``)
instead. Actions stay in Python code. Keep secrets out of the file: the model
setups read API keys from environment variables (``api_key_env``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    BaseEmbeddingModelSetup,
    ChatMessage,
)
from flink_agents_ltm.api.configuration import (
    Configuration,
    did_you_mean,
    unknown_key_message,
)
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.prompts import Prompt, prompt_descriptor
from flink_agents_ltm.api.rerankers import BaseReranker
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType

__all__ = ["AgentsYaml", "AgentsYamlError", "alias_group", "class_aliases", "read_agents_yaml"]

SECTIONS = {
    "chat_model_setups": ResourceType.CHAT_MODEL,
    "embedding_model_setups": ResourceType.EMBEDDING_MODEL,
    "vector_stores": ResourceType.VECTOR_STORE,
    "rerankers": ResourceType.RERANKER,
    "prompts": ResourceType.PROMPT,
    "mcp_servers": ResourceType.MCP_SERVER,
}


def alias_group(resource_type: ResourceType) -> str:
    """The entry point group whose names are the ``clazz`` aliases of ``resource_type``
    (``flink_agents_ltm.chat_model``: ``openai``, ``ollama``, ``scripted``, declared in
    pyproject.toml; another package may add its own)."""
    return f"flink_agents_ltm.{resource_type.value}"


def class_aliases(resource_type: ResourceType) -> dict[str, str]:
    """``{alias: 'module:Class'}`` of ``resource_type``, as the installed packages
    register them."""
    return {entry.name: entry.value
            for entry in sorted(entry_points(group=alias_group(resource_type)),
                                key=lambda entry: entry.name)}


_BASES: dict[ResourceType, type] = {
    ResourceType.CHAT_MODEL: BaseChatModelSetup,
    ResourceType.EMBEDDING_MODEL: BaseEmbeddingModelSetup,
    ResourceType.RERANKER: BaseReranker,
}


class AgentsYamlError(FlinkAgentsLtmError, ValueError):
    """The YAML file is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class AgentsYaml:
    """What one file declares: option values and resources."""

    options: dict[str, Any]
    resources: dict[str, tuple[ResourceType, ResourceDescriptor]]


def read_agents_yaml(path: str | Path, into: Configuration) -> AgentsYaml:
    """Read and check ``path``, setting its options on ``into`` (an empty
    configuration of the same options, so that every option's checks run)."""
    import yaml  # PyYAML, installed with PyFlink (apache-beam)

    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except OSError as error:
        raise AgentsYamlError(f"cannot read agents YAML {path}: {error}") from None
    except yaml.YAMLError as error:
        raise AgentsYamlError(f"{path} is not valid YAML: {error}") from None
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        raise AgentsYamlError(f"{path}: the top level must be a map of sections "
                              f"(config, {', '.join(SECTIONS)})")
    known_sections = ["config", *SECTIONS]
    for section in document:
        if section not in known_sections:
            raise AgentsYamlError(f"{path}: unknown section '{section}'"
                                  f"{did_you_mean(section, known_sections)} Sections: "
                                  f"{', '.join(known_sections)}")
    options = _options(document.get("config") or {}, into, path)
    resources: dict[str, tuple[ResourceType, ResourceDescriptor]] = {}
    for section, resource_type in SECTIONS.items():
        entries = document.get(section) or []
        if not isinstance(entries, list):
            raise AgentsYamlError(f"{path}: '{section}' must be a list of entries with a name")
        for index, entry in enumerate(entries):
            where = f"{path}: {section}[{index}]"
            name, descriptor = _resource(entry, resource_type, where)
            if name in resources:
                raise AgentsYamlError(f"{where}: resource '{name}' is declared twice")
            resources[name] = (resource_type, descriptor)
    return AgentsYaml(options, resources)


def _options(config: Any, into: Configuration, path: Path) -> dict[str, Any]:
    if not isinstance(config, Mapping):
        raise AgentsYamlError(f"{path}: 'config' must be a map of option keys to values")
    by_key = {option.key for option in into.options()}
    for key, value in _flatten(config, into):
        if not into.knows(key):
            raise AgentsYamlError(f"{path}: config: "
                                  f"{unknown_key_message(key, by_key, into.alias_keys())}")
        try:
            # YAML gives ints, bools and maps typed; text is parsed like Flink's ("30 s").
            if isinstance(value, str):
                into.set_string(key, value)
            else:
                into.set(key, value)
        except (KeyError, TypeError, ValueError) as error:
            raise AgentsYamlError(f"{path}: config: {error}") from None
    return into.to_dict()


def _flatten(tree: Mapping[str, Any], into: Configuration,
             prefix: str = "") -> list[tuple[str, Any]]:
    """Nested maps to dotted keys, stopping at a key ``into`` knows (whose value may be
    a map)."""
    flat: list[tuple[str, Any]] = []
    for part, value in tree.items():
        key = f"{prefix}{part}"
        if not into.knows(key) and isinstance(value, Mapping):
            flat.extend(_flatten(value, into, key + "."))
        else:
            flat.append((key, value))
    return flat


def _resource(entry: Any, resource_type: ResourceType,
              where: str) -> tuple[str, ResourceDescriptor]:
    if not isinstance(entry, Mapping):
        raise AgentsYamlError(f"{where}: an entry is a map with a 'name'")
    arguments = dict(entry)
    name = arguments.pop("name", None)
    if not isinstance(name, str) or not name.strip():
        raise AgentsYamlError(f"{where}: 'name' must be a non-empty string, got {name!r}")
    if resource_type is ResourceType.PROMPT:
        return name, _prompt(arguments, f"{where} ('{name}')", name)
    clazz = arguments.pop("clazz", None)
    if clazz is None:
        if resource_type is ResourceType.VECTOR_STORE:
            return name, ResourceDescriptor(**arguments)
        raise AgentsYamlError(f"{where} ('{name}'): 'clazz' is required: an alias "
                              f"({', '.join(class_aliases(resource_type))}) or a class path")
    return name, ResourceDescriptor(_load_class(clazz, resource_type, f"{where} ('{name}')"),
                                    **arguments)


def _prompt(fields: dict[str, Any], where: str, name: str) -> ResourceDescriptor:
    """A prompt entry: ``text: ...`` or ``messages: [{role, content}, ...]``."""
    if set(fields) not in ({"text"}, {"messages"}):
        raise AgentsYamlError(f"{where}: a prompt has either 'text' or 'messages' (a list of "
                              f"{{role, content}}) beside its name; got {sorted(fields)}")
    try:
        if "text" in fields:
            if not isinstance(fields["text"], str):
                raise TypeError(f"'text' must be a string, got {type(fields['text']).__name__}")
            return prompt_descriptor(Prompt.from_text(fields["text"]), name)
        entries = fields["messages"]
        if not isinstance(entries, list):
            raise TypeError("'messages' must be a list of {role, content}")
        messages = []
        for index, entry in enumerate(entries):
            if not isinstance(entry, Mapping) or set(entry) != {"role", "content"}:
                raise TypeError(f"message {index} must be a map of 'role' and 'content', "
                                f"got {entry!r}")
            messages.append(ChatMessage(entry["role"], entry["content"]))
        return prompt_descriptor(Prompt.from_messages(messages), name)
    except (TypeError, ValueError) as error:
        raise AgentsYamlError(f"{where}: {error}") from None


def _load_class(clazz: Any, resource_type: ResourceType, where: str) -> type:
    if not isinstance(clazz, str) or not clazz.strip():
        raise AgentsYamlError(f"{where}: 'clazz' must be a string, got {clazz!r}")
    aliases = class_aliases(resource_type)
    path = aliases.get(clazz, clazz)
    module_name, _, class_name = path.partition(":") if ":" in path else path.rpartition(".")
    if not module_name:
        known = ", ".join(aliases) or "none"
        raise AgentsYamlError(f"{where}: '{clazz}' is neither an alias ({known}) nor a "
                              "class path like my_pkg.models.MyChatModel")
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise AgentsYamlError(f"{where}: cannot import '{path}': {error}") from None
    base = _BASES.get(resource_type)
    if not isinstance(found, type) or (base is not None and not issubclass(found, base)):
        expected = f"a subclass of {base.__name__}" if base is not None else "a class"
        raise AgentsYamlError(f"{where}: '{path}' is not {expected}")
    return found
