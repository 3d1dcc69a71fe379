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

import json
import logging
import re
import traceback
import urllib.parse
from collections.abc import Mapping
from importlib import resources
from typing import Any, cast

from flink_agents_ltm.api.errors import FlinkAgentsLtmError

__all__ = ["MASK", "MASKED_LOGGERS", "MaskedError", "MaskingFilter", "chainable",
           "is_secret_key", "mask_logger", "mask_logs", "redact", "redact_text"]

MASK = "***"
# The loggers whose records mask_logs masks: ours and Mem0's, at any depth.
MASKED_LOGGERS = ("flink_agents_ltm", "mem0")


def _secret_key_table() -> dict[str, Any]:
    """``secret_keys.json``: the one table of secret keys, which Java reads too."""
    return cast(dict[str, Any], json.loads(
        resources.files(__package__).joinpath("secret_keys.json").read_text("utf-8")))


_TABLE = _secret_key_table()
# A key is secret when its last word names a secret: "password", "db_password", "api_key",
# "auth_token", "client_secret"; not "max_tokens", "author" or "api_key_env".
_SECRET_KEY = re.compile(
    r"(^|_)(" + "|".join(map(re.escape, _TABLE["secret_words"])) + r")$")
# scheme://user:password@host  ->  scheme://user:***@host
_URL_CREDENTIALS = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@\s]*(?=@)")
_SECRET_WORDS = r"(?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)"
# password=secret / password: 'secret' / "api_key": "secret" in libpq, YAML and JSON text,
# also JSON encoded once more or twice (\"password\": \"secret\": quotes behind backslashes)
_KEY_VALUE = re.compile(
    r"(?P<key>['\"]?" + _SECRET_WORDS + r"(?:\\*['\"])?\s*[=:]\s*)"
    r"(?P<value>'[^']*'|\"(?:[^\"\\]|\\.)*\"|(?P<bs>\\+)\".*?(?<!\\)(?P=bs)\"|[^\s,;}&]+)",
    re.IGNORECASE)
# The same, URL-encoded: %22password%22%3A%20%22secret%22, password%3Dsecret
_URL_KEY_VALUE = re.compile(
    r"(?P<key>(?:(?:%5C)*(?:%22|%27))?" + _SECRET_WORDS + r"(?:(?:%5C)*(?:%22|%27))?"
    r"(?:%20|\+)*(?:%3A|%3D)(?:%20|\+)*)"
    r"(?P<value>(?:%5C)*(?P<q>%22|%27).*?(?:%5C)*(?P=q)|(?:(?!%2C|%26|%7D|%3B|%20)[^\s&,;}+])+)",
    re.IGNORECASE)
# A value that is already a mask, or the "password=..." of a message, with what closes it.
_PLACEHOLDER = re.compile(r"^['\"]?(\*\*\*|\.\.\.)['\")\].]*$")


def is_secret_key(key: object) -> bool:
    """``key`` names a secret (the table ``secret_keys.json``): lower-cased with ``-`` and
    ``.`` read as ``_``, it is a secret word or ends with ``_`` and one (``api_key_env``,
    the name of a variable, is not)."""
    if not isinstance(key, str):
        return False
    return _SECRET_KEY.search(key.lower().replace("-", "_").replace(".", "_")) is not None


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
    """``text`` with URL credentials and ``password=...``-style values masked, in plain
    text, in JSON encoded once or twice more (backslash-escaped quotes) and URL-encoded.
    Masking masked text changes nothing (an error built from masked text masks it again).

    Then, as a net for encodings the patterns miss: ``text`` is decoded (URL-decoded,
    backslash escapes undone, up to three times) and every secret value found in a decoded
    form is masked wherever it, or an encoding of it, still stands in ``text``."""
    masked = _URL_CREDENTIALS.sub(lambda m: m.group("head") + MASK, text)
    masked = _KEY_VALUE.sub(_masked_value, masked)
    masked = _URL_KEY_VALUE.sub(_masked_url_value, masked)
    if "%" not in text and "\\" not in text:
        return masked
    for secret in _secrets_of_decoded(text):
        for form in _encodings(secret):
            masked = masked.replace(form, MASK)
    return masked


def _masked_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if _PLACEHOLDER.match(value):
        return match.group(0)
    if match.group("bs"):
        return f'{match.group("key")}{match.group("bs")}"{MASK}{match.group("bs")}"'
    return match.group("key") + _quoted_mask(value)


def _masked_url_value(match: re.Match[str]) -> str:
    quote = match.group("q")
    if match.group("value") in (MASK, f"{quote}{MASK}{quote}"):
        return match.group(0)
    return match.group("key") + (f"{quote}{MASK}{quote}" if quote else MASK)


def _quoted_mask(value: str) -> str:
    return f"{value[0]}{MASK}{value[0]}" if value[:1] in ("'", '"') else MASK


_SHORTEST_NET = 4  # shorter "secrets" of decoded text are left to the patterns


def _secrets_of_decoded(text: str) -> set[str]:
    """The secret values that ``text``, decoded up to three times, shows."""
    found: set[str] = set()
    current = text
    for _ in range(3):
        decoded = urllib.parse.unquote_plus(current)
        decoded = decoded.replace('\\\\', '\x00').replace('\\"', '"').replace(
            "\\'", "'").replace('\x00', '\\')
        if decoded == current:
            break
        current = decoded
        for match in _KEY_VALUE.finditer(current):
            found.add(match.group("value").strip("'\"\\"))
        for match in _URL_CREDENTIALS.finditer(current):
            found.add(match.group(0)[len(match.group("head")):])
    return {secret for secret in found
            if len(secret) >= _SHORTEST_NET and not _PLACEHOLDER.match(secret)}


def _encodings(secret: str) -> list[str]:
    """``secret`` as it may stand in text: itself, JSON-escaped once and twice, URL-encoded."""
    escaped = json.dumps(secret)[1:-1]
    forms = {secret, escaped, json.dumps(escaped)[1:-1], urllib.parse.quote(secret, safe=""),
             urllib.parse.quote_plus(secret), urllib.parse.quote(secret)}
    return sorted(forms, key=len, reverse=True)


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
