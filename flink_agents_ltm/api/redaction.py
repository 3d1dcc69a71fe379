"""Secrets never reach a message, log line or repr.

Configurations (a vector store's ``password``, a model's ``api_key``, a
``connection_string`` with credentials) travel through error messages and logs
when something goes wrong. :func:`redact` replaces the values of secret-named
keys at any depth, and :func:`redact_text` the credentials inside connection
URLs and ``key=value`` connection strings, so that code can print a config or
an error safely. An error that wraps another with masked text chains it only
through :func:`chainable` (a traceback prints every chained error's text).

Masking happens in two places that every error and log record of ours passes, not at each
call site: an error class that mixes in :class:`MaskedError` (every
``LongTermMemoryError``, every configuration error) masks its text when it is built, and
:func:`mask_logs` (run when the package is imported) masks every log record of our
loggers and of Mem0's (``flink_agents_ltm.*``, ``mem0.*``: Mem0's pgvector store logs
every driver error's text) when the record is made, message and traceback.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Mapping
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError

__all__ = ["MASK", "MASKED_LOGGERS", "MaskedError", "MaskingFilter", "chainable",
           "is_secret_key", "mask_logger", "mask_logs", "redact", "redact_text"]

MASK = "***"
# The loggers whose records mask_logs masks: ours and Mem0's, at any depth.
MASKED_LOGGERS = ("flink_agents_ltm", "mem0")
# A key is secret when its last word names a secret: "password", "db_password", "api_key",
# "auth_token", "client_secret"; not "max_tokens" or "author".
_SECRET_KEY = re.compile(
    r"(^|[_.-])(pass(word|wd|phrase)?|secret|token|api[_-]?key|access[_-]?key|credentials?|"
    r"connection[_-]?string|conn[_-]?str|dsn|authorization|private[_-]?key)$", re.IGNORECASE)
# scheme://user:password@host  ->  scheme://user:***@host
_URL_CREDENTIALS = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@\s]*(?=@)")
# password=secret / password: 'secret' / "api_key": "secret" in libpq, YAML and JSON text
_KEY_VALUE = re.compile(
    r"(?P<key>['\"]?(?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key)['\"]?\s*[=:]\s*)(?P<value>'[^']*'|\"[^\"]*\"|[^\s,;}&]+)",
    re.IGNORECASE)
# A value that is already a mask, or the "password=..." of a message, with what closes it.
_PLACEHOLDER = re.compile(r"^['\"]?(\*\*\*|\.\.\.)['\")\].]*$")


def is_secret_key(key: object) -> bool:
    return isinstance(key, str) and _SECRET_KEY.search(key) is not None


def redact(value: Any) -> Any:
    """A copy of ``value`` whose secret-named entries (at any depth) read ``***`` and whose
    strings have their embedded credentials masked."""
    if isinstance(value, Mapping):
        return {key: (MASK if is_secret_key(key) and inner not in (None, "") else redact(inner))
                for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(inner) for inner in value)
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_text(text: str) -> str:
    """``text`` with URL credentials and ``password=...``-style values masked. Masking
    masked text changes nothing (an error built from masked text masks it again)."""
    text = _URL_CREDENTIALS.sub(lambda m: m.group("head") + MASK, text)
    return _KEY_VALUE.sub(_masked_value, text)


def _masked_value(match: re.Match[str]) -> str:
    if _PLACEHOLDER.match(match.group("value")):
        return match.group(0)
    return match.group("key") + _quoted_mask(match.group("value"))


def _quoted_mask(value: str) -> str:
    return f"{value[0]}{MASK}{value[0]}" if value[:1] in ("'", '"') else MASK


def chainable(error: BaseException) -> BaseException | None:
    """``error`` to chain (``raise ... from``) under an error that carries its masked text,
    or ``None`` when the text of ``error`` or of an error it chains holds a credential."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if redact_text(str(current)) != str(current):
            return None
        current = current.__cause__ or (None if current.__suppress_context__
                                        else current.__context__)
    return error


class MaskedError(FlinkAgentsLtmError):
    """Mixed into an error class (first base): its text arguments are masked when the error
    is built, so no code path can raise it with a credential in its message."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_text(arg) if isinstance(arg, str) else arg for arg in args))


def mask_record(record: logging.LogRecord) -> None:
    """Mask credentials in ``record``'s message, traceback and stack, in place."""
    try:
        text = record.getMessage()
    except (TypeError, ValueError, KeyError):  # arguments that do not fit: logging says so
        return
    if redact_text(text) != text:
        record.msg, record.args = redact_text(text), None
    if record.exc_info and record.exc_info[1] is not None:
        record.exc_text = redact_text("".join(traceback.format_exception(
            record.exc_info[1])).rstrip("\n"))
        record.exc_info = None
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info)


class MaskingFilter(logging.Filter):
    """Masks credentials in a logger's records, message and traceback (see :func:`mask_logger`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        mask_record(record)
        return True


def mask_logger(name: str) -> None:
    """Mask credentials in every record of the logger ``name`` (idempotent)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, MaskingFilter) for f in logger.filters):
        logger.addFilter(MaskingFilter())


def _is_masked_logger(name: object) -> bool:
    # logging.makeLogRecord(d) builds its record with name None and only then fills it from d.
    return isinstance(name, str) and name.split(".", 1)[0] in MASKED_LOGGERS


def mask_logs() -> None:
    """Mask credentials in every log record of :data:`MASKED_LOGGERS` (idempotent).

    A filter on a logger sees only the records logged on that very logger, not those of
    its children (``mem0.vector_stores.pgvector``), so the masking wraps the record
    factory, which makes every record, and leaves other libraries' records alone."""
    made_by = logging.getLogRecordFactory()
    if getattr(made_by, "masks_credentials", False):
        return

    def masking_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = made_by(*args, **kwargs)
        if _is_masked_logger(record.name):
            mask_record(record)
        return record

    masking_factory.masks_credentials = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(masking_factory)
