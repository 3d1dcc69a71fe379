"""Every option of an agent job, in one module: :class:`AgentsOptions` (the agent runtime's)
and :class:`LongTermMemoryOptions` (long-term memory's, with its Mem0 group; still found at
its old home, ``api.memory.long_term_memory``), and :class:`AgentsConfiguration`, which
holds values for both. The runtime and the harness read
their settings from here; ``api.execution_environment`` re-exports the names it always
exported.

:data:`UPSTREAM_KEYS` is the one table of Apache Flink Agents' option keys: the ones
with a meaning here are aliases of our options (in the program, Flink's configuration,
``-D`` and a YAML file alike), the others are refused or, where they only change how
the job is observed, ignored with a warning (``docs/coming-from-flink-agents.md``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from flink_agents_ltm.api.configuration import (
    ConfigOption,
    Configuration,
    ConfigurationError,
    ForeignKey,
    KeyAlias,
    enum_name,
)
from flink_agents_ltm.api.event_log import SINKS, parse_level, parse_levels
from flink_agents_ltm.api.home import home
from flink_agents_ltm.api.memory.audit import FILE_NAME as AUDIT_FILE_NAME
from flink_agents_ltm.api.memory.audit import MemoryAuditLog
from flink_agents_ltm.api.memory.expiry import Retention
from flink_agents_ltm.api.memory.settings import RERANK_CANDIDATES, RERANKER_OPTION
from flink_agents_ltm.api.memory.validation import (
    ITEM_OPTION,
    METADATA_OPTION,
    NAME_OPTION,
    QUERY_OPTION,
    MemoryLimits,
)

__all__ = ["UPSTREAM_KEYS", "AgentsConfiguration", "AgentsOptions", "LongTermMemoryOptions",
           "long_term_memory_configuration"]


def _positive(option: ConfigOption[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise ConfigurationError(f"option '{option.key}' must be positive, got {value!r}")


def _at_least(lowest: float) -> Callable[[ConfigOption[Any], Any], None]:
    def check(option: ConfigOption[Any], value: Any) -> None:
        if value is not None and value < lowest:
            raise ConfigurationError(f"option '{option.key}' must be at least {lowest:g}, "
                                     f"got {value!r}")
    return check


def _one_of(choices: tuple[str, ...]) -> Callable[[ConfigOption[Any], Any], None]:
    def check(option: ConfigOption[Any], value: Any) -> None:
        if value is not None and value not in choices:
            raise ConfigurationError(f"option '{option.key}' is one of {', '.join(choices)}, "
                                     f"got {value!r}")
    return check


def _checked_by(parse: Callable[[Any, str], Any]) -> Callable[[ConfigOption[Any], Any], None]:
    def check(option: ConfigOption[Any], value: Any) -> None:
        if value is not None:
            try:
                parse(value, f"option '{option.key}'")
            except ValueError as error:
                raise ConfigurationError(str(error)) from None
    return check


class AgentsOptions:
    """Options of the agent runtime (the long-term memory ones are in
    :class:`LongTermMemoryOptions`)."""

    JOB_ID = ConfigOption(
        "agents.job-id", str, "flink-agents",
        "Identity of the job in long-term memory (Mem0 user_id). Keep it stable across "
        "restarts and upgrades, or the job starts with empty long-term memory.")
    ASYNC_CAPACITY = ConfigOption(
        "agents.durable-async.capacity", int, 32,
        "Most durable_execute_async calls in flight per operator subtask (worker threads). "
        "When full, the operator stops taking input until one finishes (back-pressure).")
    ASYNC_TIMEOUT_MS = ConfigOption(
        "agents.durable-async.timeout-ms", int, 60_000,
        "Per-call timeout of durable_execute_async; the action then fails and the call's "
        "slot is freed. Its worker thread cannot be interrupted and is abandoned until the "
        "call returns; more than `capacity` abandoned threads fail the job.",
        duration=True)
    ASYNC_POLL_INTERVAL_MS = ConfigOption(
        "agents.durable-async.poll-interval-ms", int, 5,
        "How often an action parked on a durable call checks for its result (a "
        "processing-time timer of its key).", duration=True)
    RETAIN_ACTION_STATE = ConfigOption(
        "agents.action-state.retained", bool, True,
        "Keep the results of an action's durable calls (model answers and tool results of "
        "ctx.chat included) in Flink state as they arrive, so that a replay after recovery "
        "reuses them: exactly-once calls. Off: only completed actions are kept; the calls "
        "of an action interrupted by a failure run again (at-least-once), which keeps "
        "state small. Memory writes are exactly-once either way.")
    ACTION_STATE_STORE: ConfigOption[str] = ConfigOption(
        "agents.action-state.store", str, "none",
        "Where durable results are written ahead, outside Flink's checkpoints, so that a "
        "call that completed after the last checkpoint is not run again after a failure: "
        "'none' (off), 'sqlite' (a 0600 file next to the job's embedded store, one "
        "machine), a registered name or 'module:callable'. A call that a crash interrupted "
        "asks its reconciler, if it has one, instead of running again.")
    ACTION_STATE_RETENTION_MS = ConfigOption(
        "agents.action-state.retention-ms", int, 600_000,
        "Where the host reports no completed checkpoints (PyFlink's Python operator), how "
        "long the action-state store keeps a finished action's records; keep it above the "
        "checkpoint interval plus a restart.", duration=True)
    ACTION_STATE_UNFINISHED_RETENTION_MS = ConfigOption(
        "agents.action-state.unfinished-retention-ms", int, 30 * 24 * 3_600_000,
        "How long the action-state store keeps the records of calls whose action never "
        "ended (in flight when a run of the job stopped): a savepoint or checkpoint restored "
        "within this time still finds them; later they are dropped.", duration=True)
    SHORT_TERM_MEMORY_TTL_MS: ConfigOption[int | None] = ConfigOption(
        "agents.short-term-memory.ttl-ms", int, None,
        "Time to live of short-term memory entries since their last write (Flink state "
        "TTL). Unset: no expiry.", duration=True)
    ERROR_HANDLING = ConfigOption(
        "agents.error-handling", str, "fail",
        "What a failing action does: 'fail' fails the job (Flink restarts it from the last "
        "checkpoint), 'ignore' logs the error, drops that input's run and goes on, 'retry' "
        "runs the action again from its start after a backoff (a timer of its key; the "
        "mailbox goes on with other keys), agents.error-handling.retry.max-retries times at "
        "most, then does what agents.error-handling.retry.then says.")
    RETRY_MAX_RETRIES = ConfigOption(
        "agents.error-handling.retry.max-retries", int, 3,
        "With error-handling 'retry': how many times a failed action runs again (0: never; "
        "an action runs at most 1 + this many times per input).")
    RETRY_INITIAL_BACKOFF_MS = ConfigOption(
        "agents.error-handling.retry.initial-backoff-ms", int, 1000,
        "With error-handling 'retry': the wait before the first retry (0: at once, on the "
        "key's next timer).", duration=True)
    RETRY_BACKOFF_MULTIPLIER = ConfigOption(
        "agents.error-handling.retry.backoff-multiplier", float, 2.0,
        "With error-handling 'retry': each further retry waits this many times longer "
        "(at least 1).")
    RETRY_MAX_BACKOFF_MS = ConfigOption(
        "agents.error-handling.retry.max-backoff-ms", int, 60_000,
        "With error-handling 'retry': the longest wait before a retry.", duration=True)
    RETRY_THEN = ConfigOption(
        "agents.error-handling.retry.then", str, "fail",
        "With error-handling 'retry': what the last failed attempt does, 'fail' (the job "
        "fails, as upstream's RETRY does) or 'ignore' (the input's run is dropped).")
    PROGRESS_INTERVAL_MS = ConfigOption(
        "agents.progress-interval-ms", int, 10_000,
        "How often each operator subtask logs a progress line (inputs, actions, durable "
        "calls) at INFO while it works.", duration=True)
    EVENT_LOG_SINK: ConfigOption[str] = ConfigOption(
        "agents.event-log.sink", str, "off",
        "Where the event log goes (every event and action of every key, one JSON object "
        "per line): 'off' (the default), 'logging' (the Python logger "
        "'flink_agents_ltm.event_log', which reaches Flink's log; not the console) or "
        "'file' (appended to agents.event-log.file, 0600, safe across processes).")
    EVENT_LOG_FILE: ConfigOption[str | None] = ConfigOption(
        "agents.event-log.file", str, None,
        "The file of the 'file' sink. Unset: event-log/events.jsonl under the embedded "
        "base-dir, else $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.")
    EVENT_LOG_LEVEL: ConfigOption[str] = ConfigOption(
        "agents.event-log.level", str, "INFO",
        "The level records of an event type are written at, for types "
        "agents.event-log.levels does not name: DEBUG, INFO, WARNING, ERROR or OFF (not "
        "written). The records of a failure are written at WARNING at least.")
    EVENT_LOG_LEVELS: ConfigOption[str | None] = ConfigOption(
        "agents.event-log.levels", str, None,
        "Levels per event type, e.g. 'InputEvent:INFO,ChatRequestEvent:DEBUG,"
        "MemorySearchEvent:OFF' (class name or module.QualifiedName). A record belongs to "
        "the type of the event it is about (an action's, a durable call's and a memory "
        "operation's: the event that triggered the action).")
    EVENT_LOG_MAX_PAYLOAD_CHARS: ConfigOption[int] = ConfigOption(
        "agents.event-log.max-payload-chars", int, 300,
        "Longest payload (an event's, a durable result's, an output's) a record carries, in "
        "characters of its JSON; a longer one is cut there and the record says its full "
        "length. Secrets are masked before the cut.")
    MEMORY_EVENTS_SHORT_TERM_WRITE: ConfigOption[bool] = ConfigOption(
        "agents.memory-events.short-term-write", bool, False,
        "When an action completes, send a ShortTermWriteEvent with each short-term memory "
        "path it wrote or removed and the path's last value (JSON form), for actions to "
        "listen to and the event log to record. Actions triggered by a memory event send "
        "none.")
    MEMORY_EVENTS_SHORT_TERM_READ: ConfigOption[bool] = ConfigOption(
        "agents.memory-events.short-term-read", bool, False,
        "When an action completes, send a ShortTermReadEvent with each short-term memory "
        "value it read.")
    MEMORY_EVENTS_SENSORY_WRITE: ConfigOption[bool] = ConfigOption(
        "agents.memory-events.sensory-write", bool, False,
        "When an action completes, send a SensoryWriteEvent with each sensory memory path it "
        "wrote or removed and the path's last value.")
    MEMORY_EVENTS_SENSORY_READ: ConfigOption[bool] = ConfigOption(
        "agents.memory-events.sensory-read", bool, False,
        "When an action completes, send a SensoryReadEvent with each sensory memory value it "
        "read.")
    LONG_TERM_MEMORY_FACTORY: ConfigOption[str] = ConfigOption(
        "agents.long-term-memory.factory", str, "mem0",
        "Which long-term memory the job builds: 'mem0' (the default), 'in-memory' (tests and "
        "demos; nothing survives the process), a name registered under the entry point group "
        "'flink_agents_ltm.long_term_memory', or 'module:callable' called as "
        "callable(job_id, config, mailbox_check, resources=...).")
    LONG_TERM_MEMORY_OPEN_AT_START: ConfigOption[bool | None] = ConfigOption(
        "agents.long-term-memory.open-at-start", bool, None,
        "Build the long-term memory when the operator opens, so that a wrong password, a "
        "server that is down or a missing extra fails the job at start, not at the first "
        "memory use: true, or false (built on first use). Unset: at start when the job names "
        "a vector store (long-term-memory.vector-store), on first use otherwise (a job that "
        "never uses it never loads the embedding model).")

    VALIDATORS: ClassVar[dict[str, Callable[[ConfigOption[Any], Any], None]]] = {
        ASYNC_CAPACITY.key: _positive,
        ASYNC_TIMEOUT_MS.key: _positive,
        ASYNC_POLL_INTERVAL_MS.key: _positive,
        PROGRESS_INTERVAL_MS.key: _positive,
        SHORT_TERM_MEMORY_TTL_MS.key: _positive,
        ACTION_STATE_RETENTION_MS.key: _positive,
        ACTION_STATE_UNFINISHED_RETENTION_MS.key: _positive,
        EVENT_LOG_MAX_PAYLOAD_CHARS.key: _positive,
        ERROR_HANDLING.key: _one_of(("fail", "ignore", "retry")),
        RETRY_MAX_RETRIES.key: _at_least(0),
        RETRY_INITIAL_BACKOFF_MS.key: _at_least(0),
        RETRY_BACKOFF_MULTIPLIER.key: _at_least(1),
        RETRY_MAX_BACKOFF_MS.key: _positive,
        RETRY_THEN.key: _one_of(("fail", "ignore")),
        EVENT_LOG_SINK.key: _one_of(SINKS),
        EVENT_LOG_LEVEL.key: _checked_by(parse_level),
        EVENT_LOG_LEVELS.key: _checked_by(parse_levels),
    }

    @classmethod
    def all(cls) -> tuple[ConfigOption[Any], ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, ConfigOption))

    @classmethod
    def all_by_key(cls) -> dict[str, ConfigOption[Any]]:
        return {option.key: option for option in cls.all()}


_LIMITS = MemoryLimits()


class LongTermMemoryOptions:
    """Configuration of long-term memory, set through the agents' configuration.

    The options every long-term memory reads (limits, ttl, audit log, reranker, the vector
    store and base folder the runtime reads too), and :class:`LongTermMemoryOptions.Mem0`,
    the ones only Mem0 reads. ``LongTermMemoryOptions.Mem0.CHAT_MODEL_SETUP`` (and
    ``EMBEDDING_MODEL_SETUP``, ``VECTOR_STORE``), Apache Flink Agents' names, are the same
    options as ``LongTermMemoryOptions.CHAT_MODEL_SETUP`` and so on; its keys
    (``long-term-memory.mem0.*``) are aliases of ours (:data:`UPSTREAM_KEYS`)."""

    class Mem0:
        """The options only the Mem0 long-term memory reads
        (:mod:`flink_agents_ltm.integrations.mem0`, as ``Mem0Options``), under Apache Flink
        Agents' names (``LongTermMemoryOptions.Mem0.CHAT_MODEL_SETUP``...). Declared here, in
        the api, because a job's configuration knows and checks every key before any
        integration is loaded (and the api imports no integration); the flat names
        (``LongTermMemoryOptions.INFER``...) are the same objects. ``VECTOR_STORE`` is
        the neutral option of that name (the runtime reads it too), set after the class."""

        CHAT_MODEL_SETUP: ConfigOption[str | None] = ConfigOption(
            "long-term-memory.chat-model-setup",
            str,
            None,
            "Name of a declared chat model setup that Mem0 uses to extract memories. "
            "Unset: items are stored as given (Mem0 infer=False).",
        )
        EMBEDDING_MODEL_SETUP: ConfigOption[str | None] = ConfigOption(
            "long-term-memory.embedding-model-setup",
            str,
            None,
            "Name of a declared embedding model setup. Unset: the local all-MiniLM-L6-v2 "
            "model shipped with the package (384 dimensions, offline).",
        )
        INFER: ConfigOption[bool | None] = ConfigOption(
            "long-term-memory.infer",
            bool,
            None,
            "Let Mem0's LLM extract memories from added items. Unset: on when a chat model is "
            "configured, off otherwise.",
        )
        SEARCH_THRESHOLD = ConfigOption(
            "long-term-memory.search-threshold",
            float,
            0.0,
            "Lowest similarity a search hit may have (Mem0's threshold); per call: "
            "search(..., threshold=x).",
        )
        VECTOR_STORE: ClassVar[ConfigOption[dict[str, Any] | str | None]]

    CHAT_MODEL_SETUP = Mem0.CHAT_MODEL_SETUP
    EMBEDDING_MODEL_SETUP = Mem0.EMBEDDING_MODEL_SETUP
    VECTOR_STORE: ConfigOption[dict[str, Any] | str | None] = ConfigOption(
        "long-term-memory.vector-store",
        (dict, str),
        None,
        'A Mem0 vector store given inline ({"provider": ..., "config": {...}}) or the '
        "name of a declared vector store. Unset: the embedded store, one SQLite file per job "
        "shared by the processes of one machine (use a server store such as pgvector for "
        "several TaskManagers).",
    )
    BASE_DIR: ConfigOption[str | None] = ConfigOption(
        "long-term-memory.embedded.base-dir",
        str,
        None,
        "Folder holding one private sub-folder per job for the embedded store. "
        "Unset: $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.",
    )
    INFER = Mem0.INFER
    MAX_ITEM_LENGTH = ConfigOption(
        ITEM_OPTION, int, _LIMITS.max_item_length,
        "Largest item, in characters, that add() accepts.")
    MAX_QUERY_LENGTH = ConfigOption(
        QUERY_OPTION, int, _LIMITS.max_query_length,
        "Longest search query, in characters.")
    MAX_NAME_LENGTH = ConfigOption(
        NAME_OPTION, int, _LIMITS.max_name_length,
        "Longest job id, partition key (as text) or memory set name, in characters.")
    MAX_METADATA_LENGTH = ConfigOption(
        METADATA_OPTION, int, _LIMITS.max_metadata_length,
        "Largest metadata of one item, in characters of its JSON text.")
    SEARCH_THRESHOLD = Mem0.SEARCH_THRESHOLD

    AUDIT_LOG: ConfigOption[bool] = ConfigOption(
        "long-term-memory.audit-log.enabled",
        bool,
        False,
        "Append a record of every memory write and erasure (operation, job, key, set, item "
        "ids, observation id, time; never a value, query or metadata) to a private JSON-lines "
        "file shared by the jobs of one machine.",
    )
    AUDIT_LOG_FILE: ConfigOption[str | None] = ConfigOption(
        "long-term-memory.audit-log.file",
        str,
        None,
        "The audit log's file. Unset: audit/memory-audit.jsonl under the embedded base-dir, "
        "else $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.",
    )
    AUDIT_READS: ConfigOption[bool] = ConfigOption(
        "long-term-memory.audit-log.reads",
        bool,
        False,
        "Also record gets and searches (the ids they returned) in the audit log.",
    )

    TTL: ConfigOption[float | None] = ConfigOption(
        "long-term-memory.ttl",
        float,
        None,
        "Seconds an item lives when add() or update() names no ttl (expired items are never "
        "read and are deleted by a sweep). Unset: items live until deleted.",
    )
    TTL_REFRESH_ON_READ: ConfigOption[bool] = ConfigOption(
        "long-term-memory.ttl.refresh-on-read",
        bool,
        False,
        "A get or search that returns an item with a ttl extends its expiry to now plus "
        "that ttl (LangGraph's refresh_on_read).",
    )

    @classmethod
    def retention(cls, config: Configuration) -> Retention:
        """The default ttl and refresh-on-read ``config`` sets."""
        return Retention(default_ttl=config.get(cls.TTL),
                         refresh_on_read=bool(config.get(cls.TTL_REFRESH_ON_READ)))

    RERANKER: ConfigOption[str | None] = ConfigOption(
        RERANKER_OPTION,
        str,
        None,
        "Name of a declared reranker (@reranker_setup) that orders the candidates of "
        "search(..., rerank=True). Unset: rerank=True is refused.",
    )
    RERANK_CANDIDATES: ConfigOption[int] = ConfigOption(
        "long-term-memory.rerank-candidates",
        int,
        RERANK_CANDIDATES,
        "How many candidates per result a reranked search fetches from the store "
        "(search(..., limit=k, rerank=True) reranks k times this many).",
    )

    @classmethod
    def reranking(cls, config: Configuration | Mapping[str, Any] | None
                  ) -> tuple[str | None, int]:
        """The declared reranker ``config`` names (``None``: none) and the candidates per
        result."""
        if config is None:
            return None, RERANK_CANDIDATES
        if not isinstance(config, Configuration):
            wanted = (cls.RERANKER, cls.RERANK_CANDIDATES)
            config = Configuration(wanted, {o.key: config[o.key] for o in wanted
                                            if config.get(o.key) is not None})
        return config.get(cls.RERANKER), config.get(cls.RERANK_CANDIDATES)

    @classmethod
    def audit_log(cls, config: Configuration | Mapping[str, Any] | None
                  ) -> MemoryAuditLog | None:
        """The audit log ``config`` (a configuration or a mapping of option keys) asks
        for, or ``None`` when it asks for none."""
        if config is None:
            return None
        if not isinstance(config, Configuration):
            wanted = (cls.AUDIT_LOG, cls.AUDIT_LOG_FILE, cls.AUDIT_READS, cls.BASE_DIR)
            config = Configuration(wanted, {o.key: config[o.key] for o in wanted
                                            if config.get(o.key) is not None})
        if not config.get(cls.AUDIT_LOG):
            return None
        file = config.get(cls.AUDIT_LOG_FILE)
        if not file:
            file = str(home(config.get(cls.BASE_DIR)) / "audit" / AUDIT_FILE_NAME)
        return MemoryAuditLog(file, reads=bool(config.get(cls.AUDIT_READS)))

    @classmethod
    def all(cls) -> tuple[ConfigOption[Any], ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, ConfigOption))

    @classmethod
    def limits(cls, config: Configuration) -> MemoryLimits:
        """The size limits ``config`` sets (defaults where it sets none)."""
        return MemoryLimits(
            max_item_length=config.get(cls.MAX_ITEM_LENGTH),
            max_query_length=config.get(cls.MAX_QUERY_LENGTH),
            max_name_length=config.get(cls.MAX_NAME_LENGTH),
            max_metadata_length=config.get(cls.MAX_METADATA_LENGTH),
        )



LongTermMemoryOptions.Mem0.VECTOR_STORE = LongTermMemoryOptions.VECTOR_STORE


def _error_handling(value: str) -> str:
    name = enum_name(value)
    if name in ("FAIL", "IGNORE", "RETRY"):
        return name.lower()
    raise ValueError("option 'error-handling-strategy' is FAIL, IGNORE or RETRY; its value is "
                     "not shown")


def _seconds_as_ms(value: int) -> int:
    if value < 0:
        raise ValueError(f"option 'retry-wait-interval' must be 0 or more seconds, got {value}")
    return value * 1000


def _state_ttl(value: int) -> int | None:
    if value < 0:
        raise ValueError(f"option 'short-term-memory.state-ttl.ms' must be 0 (no TTL) or "
                         f"positive, got {value}")
    return value or None


_ACTION_STATE_STORE = ("it configures Apache Flink Agents' Kafka or Fluss action-state "
                       "store; here the action-state store is "
                       f"{AgentsOptions.ACTION_STATE_STORE.key} (sqlite, postgres, or yours as "
                       "module:callable)")
_FLINK_AGENTS_0_2 = ("Flink Agents 0.2's vector-store long-term memory; here long-term memory "
                     f"is Mem0 over {LongTermMemoryOptions.VECTOR_STORE.key} (0.3's "
                     "long-term-memory.mem0.* keys are aliases)")
_EVENT_LOG = (f"the event log is {AgentsOptions.EVENT_LOG_SINK.key} (off, logging, file), "
              f"{AgentsOptions.EVENT_LOG_LEVEL.key}, {AgentsOptions.EVENT_LOG_LEVELS.key} and "
              f"{AgentsOptions.EVENT_LOG_MAX_PAYLOAD_CHARS.key}")
_MEMORY_EVENTS = ("every long-term memory operation of an action becomes a memory event "
                  "(update, read, search); short-term and sensory memory events are "
                  "agents.memory-events.* (off by default)")

#: Apache Flink Agents' option keys (``api/.../AgentConfigOptions.java``,
#: ``AgentExecutionOptions.java``, ``MemoryEventOptions.java``, ``LongTermMemoryOptions.java``
#: and their Python twins in ``flink_agents/api``, 0.2 to 0.3 and main): an alias of our
#: option where the key means the same here, else a key with no equivalent, refused or, when
#: it only changes how the job is observed, ignored with a warning. A Flink configuration
#: may carry them under ``agent.`` (Flink Agents' section of ``config.yaml``).
UPSTREAM_KEYS: tuple[KeyAlias | ForeignKey, ...] = (
    KeyAlias("long-term-memory.mem0.chat-model-setup", LongTermMemoryOptions.CHAT_MODEL_SETUP),
    KeyAlias("long-term-memory.mem0.embedding-model-setup",
             LongTermMemoryOptions.EMBEDDING_MODEL_SETUP,
             note="unset: the local all-MiniLM-L6-v2 model (upstream needs one)"),
    KeyAlias("long-term-memory.mem0.vector-store", LongTermMemoryOptions.VECTOR_STORE,
             note="the name of a declared vector store; an inline Mem0 spec works too "
                  "(unset: the embedded store)"),
    KeyAlias("job-identifier", AgentsOptions.JOB_ID,
             note="unset: 'flink-agents' (upstream: the Flink job id, new on every submission)"),
    KeyAlias("num-async-threads", AgentsOptions.ASYNC_CAPACITY,
             note="worker threads per subtask, which is also the most durable async calls in "
                  "flight (default 32, upstream: twice the CPUs)"),
    KeyAlias("error-handling-strategy", AgentsOptions.ERROR_HANDLING, _error_handling,
             note="FAIL, IGNORE or RETRY, any case; applies to every action (upstream: model "
                  "requests); a retry waits on a timer of its key, not on the thread"),
    KeyAlias("max-retries", AgentsOptions.RETRY_MAX_RETRIES,
             note="retries after the first attempt, as upstream (default 3); then "
                  f"{AgentsOptions.RETRY_THEN.key} (default fail, as upstream)"),
    KeyAlias("retry-wait-interval", AgentsOptions.RETRY_INITIAL_BACKOFF_MS, _seconds_as_ms,
             plain=True,
             note="seconds, as upstream (default 1); doubled per retry (backoff-multiplier 2), "
                  "up to agents.error-handling.retry.max-backoff-ms (upstream: no cap)"),
    KeyAlias("short-term-memory.state-ttl.ms", AgentsOptions.SHORT_TERM_MEMORY_TTL_MS,
             _state_ttl, note="0 (upstream's 'off') is unset; durations such as '10 min' too"),
    ForeignKey("short-term-memory.state-ttl.update-type",
               f"the TTL of {AgentsOptions.SHORT_TERM_MEMORY_TTL_MS.key} counts from an "
               "entry's last write", accepted=("ON_CREATE_AND_WRITE",)),
    ForeignKey("short-term-memory.state-ttl.visibility",
               "an expired short-term memory entry is never returned",
               accepted=("NEVER_RETURN_EXPIRED",)),
    ForeignKey("chat.async", "ctx.chat's model calls always run on the worker pool",
               accepted=("TRUE",)),
    ForeignKey("tool-call.async", "ctx.chat's plain tools always run on the worker pool (a "
               "tool that takes ctx runs on the mailbox thread, where keyed memory is)",
               accepted=("TRUE",)),
    ForeignKey("rag.async", "there is no built-in retrieval action; an action queries its "
               "store on the worker pool with ctx.durable_execute_async", accepted=("TRUE",)),
    ForeignKey("agent-run.begin-event", "there is no agent-run begin event",
               accepted=("FALSE",)),
    ForeignKey("action.trigger-condition.evaluate-failure-strategy",
               "actions have no trigger conditions; an action runs for every event of its "
               "types", warn=True),
    ForeignKey("event-listeners", "there are no event listeners; an action can listen to "
               "any event (memory events included), and the event log records them all"),
    ForeignKey("memory.generate-event", _MEMORY_EVENTS),
    *(ForeignKey(f"memory.generate-event.long-term-{op}", _MEMORY_EVENTS, accepted=("TRUE",))
      for op in ("update", "get", "search")),
    *(KeyAlias(f"memory.generate-event.{kind}-{op}",
               AgentsOptions.all_by_key()[f"agents.memory-events.{kind}-{op}"],
               note="off by default (upstream: writes on)")
      for kind in ("short-term", "sensory") for op in ("write", "read")),
    ForeignKey("eventLoggerType", _EVENT_LOG, warn=True),
    ForeignKey("baseLogDir", f"{_EVENT_LOG}; {AgentsOptions.EVENT_LOG_FILE.key} names the "
               "'file' sink's file", warn=True),
    ForeignKey("prettyPrint", "the event log is JSON lines", accepted=("FALSE",), warn=True),
    ForeignKey("event-log.level", _EVENT_LOG, warn=True),
    ForeignKey("event-log.trace.enabled", _EVENT_LOG, accepted=("FALSE",), warn=True),
    *(ForeignKey(f"event-log.standard.{limit}", _EVENT_LOG, warn=True)
      for limit in ("max-string-length", "max-array-elements", "max-depth")),
    ForeignKey("event-log.type.", _EVENT_LOG, warn=True, prefix=True),
    ForeignKey("actionStateStoreBackend", _ACTION_STATE_STORE),
    *(ForeignKey(key, _ACTION_STATE_STORE) for key in (
        "kafkaBootstrapServers", "kafkaActionStateTopic", "kafkaActionStateTopicNumPartitions",
        "kafkaActionStateTopicReplicationFactor", "flussBootstrapServers",
        "flussActionStateDatabase", "flussActionStateTable", "flussActionStateTableBuckets",
        "flussSecurityProtocol", "flussSaslMechanism", "flussSaslJaasConfig",
        "flussSaslUsername", "flussSaslPassword")),
    *(ForeignKey(key, _FLINK_AGENTS_0_2) for key in (
        "long-term-memory.backend", "long-term-memory.external-vector-store-name",
        "long-term-memory.async-compaction", "long-term-memory.async-compaction.thread-count")),
)


class AgentsConfiguration(Configuration):
    """Agent runtime options plus long-term memory options; Apache Flink Agents' keys
    (:data:`UPSTREAM_KEYS`) are known too."""

    def __init__(self, values: dict[str, Any] | None = None):
        super().__init__(AgentsOptions.all() + LongTermMemoryOptions.all(), values,
                         aliases=UPSTREAM_KEYS)

    def _check(self, option: ConfigOption[Any], value: Any) -> None:
        check = AgentsOptions.VALIDATORS.get(option.key)
        if check is not None:
            check(option, value)


def long_term_memory_configuration(values: Mapping[str, Any] | None = None) -> Configuration:
    """Long-term memory's options alone, with Flink Agents' keys of them: what
    ``Mem0LongTermMemory.from_config`` makes of a mapping of option keys (the Java bridge
    passes one)."""
    options = LongTermMemoryOptions.all()
    return Configuration(options, values, aliases=[
        alias for alias in UPSTREAM_KEYS
        if (alias.option in options if isinstance(alias, KeyAlias)
            else alias.key.startswith("long-term-memory."))])
