"""Every option of an agent job, in one module: :class:`AgentsOptions` (the agent runtime's)
and :class:`~flink_agents_ltm.api.memory.long_term_memory.LongTermMemoryOptions` (long-term
memory's, declared next to the memory and re-exported here), and
:class:`AgentsConfiguration`, which holds values for both. The runtime and the harness read
their settings from here; ``api.execution_environment`` re-exports the names it always
exported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from flink_agents_ltm.api.configuration import ConfigOption, Configuration, ConfigurationError
from flink_agents_ltm.api.event_log import SINKS, parse_level, parse_levels
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions

__all__ = ["AgentsConfiguration", "AgentsOptions", "LongTermMemoryOptions"]


def _positive(option: ConfigOption[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise ConfigurationError(f"option '{option.key}' must be positive, got {value!r}")


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
    SHORT_TERM_MEMORY_TTL_MS: ConfigOption[int | None] = ConfigOption(
        "agents.short-term-memory.ttl-ms", int, None,
        "Time to live of short-term memory entries since their last write (Flink state "
        "TTL). Unset: no expiry.", duration=True)
    ERROR_HANDLING = ConfigOption(
        "agents.error-handling", str, "fail",
        "What a failing action does: 'fail' fails the job (Flink restarts it from the last "
        "checkpoint), 'ignore' logs the error, drops that input's run and goes on.")
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
        EVENT_LOG_MAX_PAYLOAD_CHARS.key: _positive,
        EVENT_LOG_SINK.key: _one_of(SINKS),
        EVENT_LOG_LEVEL.key: _checked_by(parse_level),
        EVENT_LOG_LEVELS.key: _checked_by(parse_levels),
    }

    @classmethod
    def all(cls) -> tuple[ConfigOption[Any], ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, ConfigOption))


class AgentsConfiguration(Configuration):
    """Agent runtime options plus long-term memory options."""

    def __init__(self, values: dict[str, Any] | None = None):
        super().__init__(AgentsOptions.all() + LongTermMemoryOptions.all(), values)

    def _check(self, option: ConfigOption[Any], value: Any) -> None:
        check = AgentsOptions.VALIDATORS.get(option.key)
        if check is not None:
            check(option, value)
        if option is AgentsOptions.ERROR_HANDLING and value not in ("fail", "ignore"):
            raise ConfigurationError(f"option '{option.key}' is 'fail' or 'ignore', got {value!r}")
