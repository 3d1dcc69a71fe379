"""How long-term memory reaches a pgvector server: escaped credentials, bounded waits, errors
that name the server and never the password.

Why: Mem0 builds ``postgresql://{user}:{password}@{host}:{port}/{dbname}`` from the config
without escaping, so a password holding ``@``, ``:`` or ``/`` connects elsewhere and libpq
names a piece of it ("could not translate host name ..."); and libpq waits forever by
default, so a server that accepts connections but never answers blocked the first memory
use for good, and a statement stuck behind a lock blocked its worker thread.

So the config Mem0 gets carries a libpq keyword connection string built here (every value
quoted by libpq's own rules) with two bounds, set by two keys of the vector store's config
that are ours and never reach Mem0:

* ``connect_timeout_s`` (default 10): libpq's ``connect_timeout``, the longest wait for a
  connection, startup and login included; ``0`` waits forever. libpq treats 1 as 2.
* ``statement_timeout_s`` (default 30): PostgreSQL's ``statement_timeout``, sent as a startup
  option (``options=-c statement_timeout=...``); ``0`` sends none (PgBouncer, for one,
  refuses the ``options`` startup parameter unless told to ignore it).

Both apply to ``host``/``port``/... configs and to ``connection_string`` (whose own
``connect_timeout`` and ``options`` they override or extend). When a bound is hit the error
names ``host:port`` and the key to raise (:meth:`PgvectorConnection.explain`). A
``connection_pool`` given to Mem0 is used as it is: it was built by the caller.

Two more keys of ours say how searches run (``providers.pgvector.backend``):

* ``exact_search_up_to`` (default 10,000 rows): a long-term memory search whose filters match
  up to that many rows ranks them all exactly; above it, Mem0's HNSW index serves it,
  approximately.
* ``min_recall`` (default 0.9): the share of the true nearest rows that HNSW-served searches
  of a table must find. Some of them are checked against the exact ranking (the first eight
  of a table in a process, then one in 256); when their mean falls below it, the
  table's searches are ranked exactly from then on, in this process. ``0`` checks none.
"""

from __future__ import annotations

import math
import select
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.integrations.extras import require_extra
from flink_agents_ltm.integrations.mem0 import private_api

__all__ = [
    "CONNECT_TIMEOUT",
    "EXACT_SEARCH_UP_TO",
    "MIN_RECALL",
    "OUR_KEYS",
    "STATEMENT_TIMEOUT",
    "TIMEOUT_KEYS",
    "PgvectorConnection",
    "PgvectorTimeoutError",
    "PgvectorUnavailableError",
    "dropped",
    "without_our_keys",
]

CONNECT_TIMEOUT = "connect_timeout_s"
STATEMENT_TIMEOUT = "statement_timeout_s"
TIMEOUT_KEYS = frozenset({CONNECT_TIMEOUT, STATEMENT_TIMEOUT})
EXACT_SEARCH_UP_TO = "exact_search_up_to"
MIN_RECALL = "min_recall"
SEARCH_KEYS = (EXACT_SEARCH_UP_TO, MIN_RECALL)
"""Our keys that a vector-store resource's pgvector config takes too."""
OUR_KEYS = TIMEOUT_KEYS | set(SEARCH_KEYS)
DEFAULT_EXACT_SEARCH_UP_TO = 10_000
DEFAULT_MIN_RECALL = 0.9
DEFAULT_CONNECT_TIMEOUT_S = 10
DEFAULT_STATEMENT_TIMEOUT_S = 30.0
# Keys of Mem0's pgvector config that only describe how to connect; they become the DSN.
_CONNECTION_KEYS = ("host", "port", "dbname", "user", "password", "sslmode")
_QUERY_CANCELED = "57014"
# admin_shutdown (a fast stop, pg_terminate_backend), crash_shutdown (another backend crashed:
# recovery follows), cannot_connect_now (starting up, shutting down, in recovery).
_SERVER_GONE_CODES = {"57P01": "it ended the session (a restart, a stop or "
                               "pg_terminate_backend)",
                      "57P02": "another server process crashed and the server is recovering",
                      "57P03": "it does not accept connections now"}
# libpq's and psycopg2's words for a connection the server dropped or never accepted.
_SERVER_GONE_TEXT = {"server closed the connection unexpectedly": "it closed the connection",
                     "connection already closed": "it closed the connection",
                     "terminating connection": "it ended the session",
                     "the database system is": "it does not accept connections now",
                     "connection refused": "it refused the connection",
                     "could not connect to server": "it refused the connection",
                     "no connection to the server": "it closed the connection",
                     "eof detected": "it closed the connection"}


def without_our_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` without our keys, which Mem0's pgvector config does not know."""
    return {key: value for key, value in config.items() if key not in OUR_KEYS}


def _dsn_functions() -> tuple[Any, Any]:
    """libpq's own quoting, from the driver of the ``pgvector`` extra: imported here, where a
    pgvector store is configured, so that a job on another store needs no PostgreSQL driver."""
    require_extra("pgvector", "the pgvector vector store")
    from psycopg2.extensions import make_dsn, parse_dsn

    return make_dsn, parse_dsn


class PgvectorTimeoutError(FlinkAgentsLtmError, TimeoutError):
    """The pgvector server did not connect or finish a statement within its bound."""


class PgvectorUnavailableError(FlinkAgentsLtmError, ConnectionError):
    """The pgvector server dropped or refused the connection (restarting, recovering from a
    crash, stopped); the next operation connects again."""


@dataclass(frozen=True)
class PgvectorConnection:
    """Where and how long: built from a pgvector config with :meth:`from_config`.

    ``dsn`` holds the password: it is excluded from ``repr`` and only ever handed to Mem0
    (and to the PostgreSQL action-state store, which connects to the same server). ``what``
    names the user of the connection in its errors (``dataclasses.replace`` to change it).
    """

    target: str  # host:port/dbname, for messages
    connect_timeout_s: int
    statement_timeout_s: float
    dsn: str | None = field(default=None, repr=False)
    exact_search_up_to: int = DEFAULT_EXACT_SEARCH_UP_TO
    min_recall: float = DEFAULT_MIN_RECALL
    what: str = "the pgvector store"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> PgvectorConnection:
        """Read (and check) our keys and the connection settings of a Mem0 pgvector
        config; raises ``ValueError`` naming a bad key, never a value of a secret one."""
        exact = config.get(EXACT_SEARCH_UP_TO, DEFAULT_EXACT_SEARCH_UP_TO)
        if isinstance(exact, bool) or not isinstance(exact, int) or exact < 0:
            raise ValueError(f"the pgvector config's '{EXACT_SEARCH_UP_TO}' must be a whole "
                             f"number of rows >= 0, got {type(exact).__name__} {exact!r}")
        recall = config.get(MIN_RECALL, DEFAULT_MIN_RECALL)
        if (isinstance(recall, bool) or not isinstance(recall, (int, float))
                or not 0 <= recall <= 1):
            raise ValueError(f"the pgvector config's '{MIN_RECALL}' must be a number from 0 "
                             f"to 1, got {type(recall).__name__} {recall!r}")
        connect = _timeout(config, CONNECT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT_S)
        statement = _timeout(config, STATEMENT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT_S)
        if isinstance(connect, float) and not connect.is_integer():
            raise ValueError(f"the pgvector config's '{CONNECT_TIMEOUT}' is a whole number of "
                             f"seconds, got {connect!r}")
        if config.get("connection_pool") is not None:
            return cls("a connection pool given in the config", int(connect), statement,
                       exact_search_up_to=exact, min_recall=float(recall))
        given = config.get("connection_string")
        if given is not None and not isinstance(given, str):
            raise ValueError("the pgvector config's 'connection_string' must be a str, got "
                             f"{type(given).__name__}")
        settings = {key: config[key] for key in _CONNECTION_KEYS if config.get(key) is not None}
        make_dsn, parse_dsn = _dsn_functions()
        try:
            base = parse_dsn(given) if given else {}
        except Exception:  # noqa: BLE001 - its text holds the password: name the key only
            raise ValueError("the pgvector config's 'connection_string' is not a valid "
                             "PostgreSQL connection string (URI or key=value pairs)") from None
        merged = {**base, **({} if given else settings)}
        _refuse_user_info(merged, "connection_string" if given else None)
        if given and config.get("sslmode") is not None:
            merged["sslmode"] = config["sslmode"]
        merged["connect_timeout"] = str(int(connect))
        if statement:
            option = f"-c statement_timeout={max(1, round(statement * 1000))}"
            merged["options"] = f"{merged['options']} {option}" if merged.get("options") \
                else option
        target = (f"{merged.get('host', 'localhost')}:{merged.get('port', 5432)}/"
                  f"{merged.get('dbname', 'postgres')}")
        return cls(target, int(connect), statement, make_dsn(**merged), exact, float(recall))

    def mem0_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``config`` as Mem0 takes it: our keys removed, the connection settings replaced by
        the connection string built here."""
        mem0 = without_our_keys(config)
        if self.dsn is not None:
            for key in _CONNECTION_KEYS:
                mem0.pop(key, None)
            mem0["connection_string"] = self.dsn
        return mem0

    def connect(self) -> Any:
        """A psycopg2 connection of our own to this server (not Mem0's pool): a timeout
        raises :class:`PgvectorTimeoutError`, any other failure a ``ConnectionError`` naming
        ``host:port/db`` with the driver's text masked."""
        if self.dsn is None:
            raise ValueError("cannot connect through a connection pool given in the config; "
                             "give the connection settings instead")
        import psycopg2

        try:
            return psycopg2.connect(self.dsn)
        except psycopg2.OperationalError as error:
            timeout = self.explain(error)
            if timeout is not None:
                raise timeout from None
            raise ConnectionError(f"cannot connect to {self.what} at {self.target}: "
                                  f"{redact_text(' '.join(str(error).split()))}") from None

    def explain(self, error: BaseException) -> PgvectorTimeoutError | None:
        """The clear error for a timeout of this server, ``None`` for any other error."""
        text = str(error)
        code = getattr(error, "pgcode", None) or getattr(error, "sqlstate", None)
        if code == _QUERY_CANCELED and "statement timeout" in text:
            return PgvectorTimeoutError(
                f"{self.what} at {self.target} did not finish a statement within "
                f"{self.statement_timeout_s:g} s and cancelled it (a lock held by another "
                f"session, or a large table); raise '{STATEMENT_TIMEOUT}' in the vector "
                "store config if such statements are expected")
        if type(error).__name__ == "OperationalError" and "timeout expired" in text:
            return self.connect_timeout()
        return None

    def unavailable(self, error: BaseException) -> PgvectorUnavailableError | None:
        """:class:`PgvectorUnavailableError` when ``error`` (or the error it was raised while
        handling: Mem0 rolls back on a closed connection, and that raises ``InterfaceError:
        connection already closed`` over the real cause) says the server dropped or refused
        the connection; else ``None``."""
        found: list[tuple[str, str, bool]] = []  # (why, driver text, said by the server)
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if type(current).__name__ in ("OperationalError", "InterfaceError"):
                code = getattr(current, "pgcode", None) or getattr(current, "sqlstate", None)
                text = " ".join(str(current).split())
                why = _SERVER_GONE_CODES.get(code or "") or next(
                    (why for words, why in _SERVER_GONE_TEXT.items() if words in text.lower()),
                    None)
                if why is not None:
                    found.append((why, text, type(current).__name__ == "OperationalError"))
            current = current.__cause__ or current.__context__
        if not found:
            return None
        # The driver's own "connection already closed" hides what the server said.
        why, text, _ = next((entry for entry in found if entry[2]), found[0])
        return PgvectorUnavailableError(
            f"{self.what} at {self.target} is restarting or recovering, or stopped: "
            f"{why} ({redact_text(text)[:200]}); this operation failed, the next one "
            "connects again")

    def clear_error(self, error: BaseException) -> Exception | None:
        """The one-line error naming this server for a timeout or a connection the server
        dropped or refused (:meth:`explain`, :meth:`unavailable`); ``None`` for others."""
        return self.explain(error) or self.unavailable(error)

    def connect_timeout(self) -> PgvectorTimeoutError:
        return PgvectorTimeoutError(
            f"{self.what} at {self.target} did not complete a connection within "
            f"{self.connect_timeout_s} s (it accepts connections but does not answer, or the "
            f"network drops them); check the server, or raise '{CONNECT_TIMEOUT}' in the "
            "vector store config")

    def name_timeouts(self, store: Any) -> None:
        """Make every cursor of Mem0's pgvector ``store`` raise :class:`PgvectorTimeoutError`
        for a timeout and :class:`PgvectorUnavailableError` for a connection the server
        dropped or refused (a restart, crash recovery) instead of a bare driver error (for a
        dropped one Mem0's rollback raises ``InterfaceError: connection already closed``).
        Wraps Mem0's ``PGVector._get_cursor``, through which all its statements run (a test
        pins that). The pool discards the closed connection, and :mod:`.store`
        drops idle ones the server closed, so the next operation connects again."""
        def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
            @contextmanager
            def cursor(commit: bool = False) -> Iterator[Any]:
                try:
                    with original(commit=commit) as cur:
                        yield cur
                except Exception as error:
                    clear = self.clear_error(error)
                    if clear is None:
                        raise
                    raise clear from error

            return cursor

        private_api.pg_replace_cursor(getattr(store, "inner", store), wrap)


def dropped(conn: Any) -> bool:
    """An idle psycopg2 connection the server closed: the server wrote to it (a FATAL message
    at a restart or pg_terminate_backend, or EOF when it died) though we sent nothing. Costs
    no round trip; psycopg2 itself only notices at the next statement, which then fails.
    The one rule for both users of a pgvector server (Mem0's pool and the action-state
    store): check before a statement, and connect again when it says so."""
    if conn.closed:
        return True
    try:
        readable, _, _ = select.select([conn], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _refuse_user_info(settings: Mapping[str, Any], key: str | None) -> None:
    """No host, port or database name holds an ``@``: in a URI it means a user name or
    password with an unencoded ``@`` or ``/``, whose pieces libpq then reads as host, port or
    database (and an error would print them). Names the key, never the value."""
    for part in ("host", "port", "dbname"):
        if "@" in str(settings.get(part, "")):
            if key is None:
                raise ValueError(f"the pgvector config's '{part}' holds an '@'; give the user "
                                 "and password in their own keys")
            raise ValueError(
                f"the pgvector config's '{key}' does not parse into a host, port and database "
                "(an '@' lands in its host, port or database): percent-encode a user name or "
                "password holding '@', '/', ':' or '%' ('@' is %40, '/' is %2F), or give "
                "host/port/dbname/user/password as keys instead")


def _timeout(config: Mapping[str, Any], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0:
        raise ValueError(f"the pgvector config's '{key}' must be a number of seconds >= 0 "
                         f"(0: no bound), got {type(value).__name__} {value!r}")
    return value
