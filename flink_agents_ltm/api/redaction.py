"""Secrets never reach a message, log line or repr.

Configurations (a vector store's ``password``, a model's ``api_key``, a
``connection_string`` with credentials) travel through error messages and logs
when something goes wrong. :func:`redact` replaces the values of secret-named
keys at any depth, and :func:`redact_text` the credentials inside connection
URLs and ``key=value`` connection strings, so that code can print a config or
an error safely. An error that wraps another with masked text chains it only
through :func:`chainable` (a traceback prints every chained error's text), and
:class:`MaskingFilter` masks the records of a logger we do not own (Mem0's pgvector
store logs every driver error's text).
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "MaskingFilter", "chainable", "is_secret_key", "mask_logger", "redact",
           "redact_text"]

MASK = "***"
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
    """``text`` with URL credentials and ``password=...``-style values masked."""
    text = _URL_CREDENTIALS.sub(lambda m: m.group("head") + MASK, text)
    return _KEY_VALUE.sub(lambda m: m.group("key") + _quoted_mask(m.group("value")), text)


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


class MaskingFilter(logging.Filter):
    """Masks credentials in a logger's records, message and traceback (see :func:`mask_logger`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if redact_text(text) != text:
            record.msg, record.args = redact_text(text), None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact_text("".join(traceback.format_exception(
                record.exc_info[1])).rstrip("\n"))
            record.exc_info = None
        return True


def mask_logger(name: str) -> None:
    """Mask credentials in every record of the logger ``name`` (idempotent)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, MaskingFilter) for f in logger.filters):
        logger.addFilter(MaskingFilter())
