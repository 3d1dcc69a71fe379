"""Typed configuration options, in the style of Flink's ``ConfigOption``.

An option is a value object (key, type, default, description). A
:class:`Configuration` only accepts options it knows and values of their
type, so a typo in a key or a wrong type fails when it is set, not deep
inside a running job.

Values written as text (Flink's ``config.yaml``, ``-D`` on ``flink run``, a
YAML file) are parsed by the option's type with :meth:`ConfigOption.parse`:
``"32"`` is 32, ``"true"`` is ``True``, a duration option (milliseconds) also
takes ``"500 ms"``, ``"30 s"`` or ``"1 min"``, and an option that takes a dict
takes a JSON object.

An option that takes a dict or a name (a vector store: inline, or the name of a
declared one) takes JSON text too, set or parsed: text that starts with ``{`` is
the dict it spells, since Flink's ``-D`` and ``config.yaml`` carry only text; text
quoted once too often (a JSON string, backslash-escaped quotes, YAML single quotes,
URL-encoding) is decoded once more, up to four times (:func:`spec_or_name`, the one
rule). Such text may hold a password, so no error ever shows it: a malformed object
is refused by where it breaks (line and column), and a "name" that holds a credential
(a connection URL, ``password=...``) or looks like a configuration (braces, quotes,
backslashes, ``=``, %-escapes) is refused outright.

A configuration may also know other keys for its options (:class:`KeyAlias`, e.g. the
keys Apache Flink Agents uses) and keys that have no option here
(:class:`ForeignKey`): an alias sets the option it stands for, in every way a value
is set (``set``, ``set_string``, the constructor), and an option given under two keys
with different values is refused, naming both.
"""

from __future__ import annotations

import builtins
import dataclasses
import difflib
import enum
import json
import logging
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, cast, overload

from flink_agents_ltm.api.redaction import MaskedError, redact_text

__all__ = ["ConfigOption", "Configuration", "ConfigurationError", "ConfigurationTypeError",
           "ForeignKey", "KeyAlias", "UnknownConfigKeyError", "did_you_mean", "enum_name",
           "spec_or_name", "unknown_key_message"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$")
_MILLIS_PER_UNIT = {
    **dict.fromkeys(("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1_000),
    **dict.fromkeys(("min", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
}


class ConfigurationError(MaskedError, ValueError):
    """A configuration value is refused; its message names the option and what to give,
    with any credential it quotes masked (:class:`MaskedError`)."""


class ConfigurationTypeError(MaskedError, TypeError):
    """A configuration value is of the wrong type; masked like :class:`ConfigurationError`."""


class UnknownConfigKeyError(MaskedError, KeyError):
    """A key no option of the configuration has; the message suggests the closest one."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    """An option whose values are of type ``T``: ``ConfigOption[int]`` for an option
    with a default, ``ConfigOption[int | None]`` for one that may stay unset, so
    :meth:`Configuration.get` returns what the option holds."""

    key: str
    # ``type`` is also this field's name: inside the class body the builtin is
    # ``builtins.type``.
    type: builtins.type[T] | tuple[builtins.type[Any], ...]
    default: T
    description: str
    # An int of milliseconds that text may also give with a unit, as Flink's durations.
    duration: bool = False

    def validate(self, value: object) -> T | None:
        """Return ``value`` if it fits this option, else raise ``TypeError`` naming it;
        ``None`` (unset) fits every option."""
        if value is None:
            return None
        types = self._types()
        if dict in types and isinstance(value, str):
            value = self._spec_or_name(value)
        if float in types and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if bool not in types and isinstance(value, bool):
            raise ConfigurationTypeError(
                f"option '{self.key}' expects {self._type_names()}, got bool")
        if not isinstance(value, types):
            # Only numbers are echoed: a text or a container may hold a password.
            shown = f": {value!r}" if isinstance(value, int | float) else ""
            raise ConfigurationTypeError(
                f"option '{self.key}' expects {self._type_names()}, "
                f"got {builtins.type(value).__name__}{shown}"
            )
        # The isinstance check above is what makes value a T (T is one of self._types()).
        return cast(T, value)

    def parse(self, text: str) -> T | None:
        """The value ``text`` stands for, as written in Flink's configuration or on
        ``-D``; ``ValueError`` naming the option and the expected form otherwise."""
        if not isinstance(text, str):
            raise ConfigurationTypeError(f"option '{self.key}': parse() takes text, got "
                                         f"{builtins.type(text).__name__}")
        types = self._types()
        stripped = text.strip()
        if bool in types:
            if stripped.lower() in ("true", "false"):
                return self.validate(stripped.lower() == "true")
            raise ConfigurationError(
                f"option '{self.key}' expects true or false, got {_shown(text)}")
        if int in types:
            return self.validate(self._parse_int(stripped, text))
        if float in types:
            try:
                return self.validate(float(stripped))
            except ValueError:
                raise ConfigurationError(
                    f"option '{self.key}' expects a number, got {_shown(text)}") from None
        if dict in types and stripped.startswith("{"):
            return self.validate(stripped)
        if str in types:
            return self.validate(text)
        raise ConfigurationError(f"option '{self.key}' expects a JSON object (text starting "
                                 "with '{'); its text is not shown, it may hold a password")

    def _spec_or_name(self, text: str) -> Any:
        """For an option that takes a dict: the dict that ``text`` spells, or ``text`` as a
        name (:func:`spec_or_name`). Never shows ``text`` (a store's JSON holds its
        password)."""
        return spec_or_name(text, f"option '{self.key}'")

    def _parse_int(self, stripped: str, text: str) -> int:
        if not self.duration:
            try:
                return int(stripped)
            except ValueError:
                raise ConfigurationError(
                    f"option '{self.key}' expects an integer, got {_shown(text)}") from None
        match = _DURATION.match(stripped.lower())
        if match is None or match.group(2) not in _MILLIS_PER_UNIT:
            raise ConfigurationError(
                f"option '{self.key}' expects milliseconds or a duration such as "
                f"'500 ms', '30 s', '1 min', '1 h', got {_shown(text)}")
        return int(match.group(1)) * _MILLIS_PER_UNIT[match.group(2)]

    def _types(self) -> tuple[builtins.type[Any], ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    def _type_names(self) -> str:
        return " or ".join(t.__name__ for t in self._types())


# What a name never holds and a configuration does: braces, quotes, backslashes, '=', a
# %-escape (URL-encoded text), or a "key": / key= of a store's spec.
_CONFIG_LIKE = re.compile(
    r"""[{}\[\]"'\\=]|%[0-9a-f]{2}|\b(provider|config|host|user|pass(word)?)\s*:""",
    re.IGNORECASE)
_DECODINGS = 4  # quoted once too often, and again: enough for any tool chain seen


def spec_or_name(text: str, what: str) -> dict[str, Any] | str:
    """The one rule for text that gives a dict or a name (a vector store inline or by the
    name of a declared one), wherever it comes from (``set``, ``-D``, ``config.yaml``, an
    environment variable, a file); ``what`` names it in errors (``option '...'``).

    Text that is a JSON object is that object. Text quoted once too often is decoded once
    more, up to four times, and then used if it is one: a JSON string that holds the object
    (``"{\\"provider\\": ...}"``), the object with backslash-escaped quotes
    (``{\\"provider\\": ...}``), a YAML single-quoted string, URL-encoded text (``%7B...``).
    Text that looks like a configuration (braces, quotes, backslashes, ``=``, %-escapes,
    ``password:``) but is none of these is refused with an error that names where the JSON
    breaks, never the text; so is a "name" that holds a credential. Any other text is a
    name."""
    current, decoded = text.strip(), False
    for _ in range(_DECODINGS):
        once = _decoded_once(current, what)
        if isinstance(once, dict):
            return once
        if once is None:
            break
        current, decoded = once.strip(), True
    if redact_text(current) != current:
        raise ConfigurationError(
            f"{what} is text that holds a credential (a connection URL or password=...), not "
            "a name: give the spec as a dict or a JSON object; its text is not shown")
    if _CONFIG_LIKE.search(current):
        raise ConfigurationError(
            f"{what} is text that looks like a configuration (braces, quotes, backslashes, "
            "'=' or %-escapes), not a name, but is no JSON object, even decoded once more (a "
            "JSON string, backslash-escaped quotes, URL-encoding); give a JSON object quoted "
            "once, or the name of a declared resource; its text is not shown, it may hold a "
            "password")
    return current if decoded else text


def _decoded_once(text: str, what: str) -> dict[str, Any] | str | None:
    """``text`` as a JSON object (a dict), or decoded once (a str: a JSON string, an object
    with backslash-escaped quotes, YAML single quotes, URL-encoding), or ``None`` when it is
    none of these."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as error:
            if '\\"' in text:  # {\"provider\": ...}: the quotes of one level further down
                try:
                    return str(json.loads(f'"{text}"'))
                except ValueError:
                    pass
            where = (f"{error.msg} at line {error.lineno} column {error.colno}"
                     if isinstance(error, json.JSONDecodeError) else type(error).__name__)
            raise ConfigurationError(
                f"{what} is text starting with '{{' but not a valid JSON object ({where}); "
                "its text is not shown, it may hold a password") from None
        return cast(dict[str, Any], value)  # text starting with '{' is an object or invalid
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if re.match(r"%(7b|22|27)", text, re.IGNORECASE):
        return urllib.parse.unquote_plus(text)  # quote() leaves no literal "+"
    return None


def enum_name(value: object) -> str | None:
    """The constant an enum value names, upper-case, in the forms a Flink user writes:
    ``FAIL``, ``fail``, ``ErrorHandlingStrategy.FAIL`` or the enum member itself;
    ``None`` for anything else (a number, a container)."""
    if isinstance(value, enum.Enum):
        return value.name.upper()
    if isinstance(value, bool):
        return str(value).upper()
    if isinstance(value, str):
        return value.strip().rsplit(".", 1)[-1].strip().upper()
    return None


@dataclass(frozen=True)
class KeyAlias:
    """Another key for ``option``: setting ``key`` sets ``option``. The value is checked
    by the option's type (errors name ``key``), then ``convert`` turns a value of the
    alias's form into the option's (``None``: as it is); ``convert`` raises
    ``ValueError`` with a message naming ``key`` to refuse a value. ``note`` says
    what differs, for the documentation. ``plain``: the alias's value is a plain number,
    not a duration, even where the option is one (an alias in seconds converts it)."""

    key: str
    option: ConfigOption[Any]
    convert: Callable[[Any], Any] | None = None
    note: str = ""
    plain: bool = False

    def value(self, value: Any, *, text: bool) -> Any:
        """``value`` (``text``: as written in a configuration file) as the option's value."""
        renamed = dataclasses.replace(self.option, key=self.key,
                                      duration=self.option.duration and not self.plain)
        valid = renamed.parse(value) if text else renamed.validate(value)
        if self.convert is None or valid is None:
            return valid
        try:
            return self.convert(valid)
        except ValueError as error:
            raise ConfigurationError(str(error)) from None


@dataclass(frozen=True)
class ForeignKey:
    """A key that has no option here. A value in ``accepted`` (compared as
    :func:`enum_name` spells it) asks for what this configuration does anyway and is
    taken with no effect; any other value is refused with ``note`` (what this
    configuration does instead), or, with ``warn``, logged at WARNING with ``note`` and
    ignored. ``prefix``: every key that starts with ``key``. Values are never shown."""

    key: str
    note: str
    accepted: tuple[str, ...] = ()
    warn: bool = False
    prefix: bool = False

    def matches(self, key: str) -> bool:
        return key.startswith(self.key) if self.prefix else key == self.key

    def admit(self, key: str, value: Any) -> None:
        """Take ``value`` of ``key`` with no effect, warn, or raise ``ConfigurationError``."""
        if self.accepted and enum_name(value) in self.accepted:
            return
        if self.warn:
            _log.warning("option '%s' has no effect in flink-agents-ltm and is ignored: %s",
                         key, self.note)
            return
        allowed = (f" (accepted with no effect: {', '.join(self.accepted)})"
                   if self.accepted else "")
        raise ConfigurationError(f"option '{key}' has no equivalent in flink-agents-ltm"
                                 f"{allowed}: {self.note}")


class Configuration:
    """Values for a known set of options; unknown keys are refused. ``aliases`` are
    other keys for the options (:class:`KeyAlias`) and keys known to have no option
    here (:class:`ForeignKey`)."""

    def __init__(self, options: Iterable[ConfigOption[Any]],
                 values: Mapping[str, Any] | None = None,
                 aliases: Iterable[KeyAlias | ForeignKey] = ()):
        self._options = {option.key: option for option in options}
        self._aliases = tuple(aliases)
        self._values: dict[str, Any] = {}
        # The key each value was set under (an alias's, or the option's own).
        self._written: dict[str, str] = {}
        for key, value in (values or {}).items():
            self.set(key, value)

    @overload
    def set(self, option: ConfigOption[T], value: T) -> Self: ...

    @overload
    def set(self, option: str, value: Any) -> Self: ...

    def set(self, option: ConfigOption[Any] | str, value: Any) -> Self:
        """Set an option, by itself or by a key of it (its own or an alias's). An option
        already set under another of its keys to a different value is refused."""
        return self._set(option, value, text=False, layer=False)

    def set_string(self, option: ConfigOption[Any] | str, text: str) -> Self:
        """Set an option from text, parsed by its type (``"32"``, ``"true"``, ``"1 min"``)."""
        return self._set(option, text, text=True, layer=False)

    def set_str(self, key: ConfigOption[Any] | str, value: str) -> Self:
        """:meth:`set` under Flink Agents' name; the option's type still decides."""
        return self.set(key, value)

    def set_int(self, key: ConfigOption[Any] | str, value: int) -> Self:
        """:meth:`set` under Flink Agents' name; the option's type still decides."""
        return self.set(key, value)

    def set_float(self, key: ConfigOption[Any] | str, value: float) -> Self:
        """:meth:`set` under Flink Agents' name; the option's type still decides."""
        return self.set(key, value)

    def set_bool(self, key: ConfigOption[Any] | str, value: bool) -> Self:
        """:meth:`set` under Flink Agents' name; the option's type still decides."""
        return self.set(key, value)

    def update(self, values: Mapping[str, Any]) -> Self:
        """Set several options as a later layer over this one (a YAML file loaded after the
        program set some): each value replaces what its option held, under whichever key."""
        for key, value in values.items():
            self._set(key, value, text=False, layer=True)
        return self

    def alias_keys(self) -> tuple[str, ...]:
        """The keys of this configuration's aliases and foreign keys (not the patterns)."""
        return tuple(a.key for a in self._aliases
                     if not (isinstance(a, ForeignKey) and a.prefix))

    def knows(self, key: str) -> bool:
        """Whether ``key`` is a key of an option here, or an alias or foreign key this
        configuration knows."""
        return key in self._options or self._alias(key) is not None

    def _set(self, option: ConfigOption[Any] | str, value: Any, *, text: bool,
             layer: bool) -> Self:
        key = option.key if isinstance(option, ConfigOption) else option
        if key not in self._options:
            alias = self._alias(key)
            if isinstance(alias, ForeignKey):
                alias.admit(key, value)
                return self
            if alias is not None:
                return self._store(alias.option, alias.value(value, text=text), key,
                                   layer=layer)
        known = self._option(option)
        return self._store(known, known.parse(value) if text else known.validate(value),
                           known.key, layer=layer)

    def _store(self, known: ConfigOption[Any], valid: Any, written: str, *,
               layer: bool) -> Self:
        try:
            self._check(known, valid)
        except ValueError as error:
            if written == known.key:
                raise
            raise ConfigurationError(f"{error} (given as '{written}')") from None
        before = self._written.get(known.key)
        if (not layer and before is not None and before != written
                and self._values[known.key] != valid):
            raise ConfigurationError(
                f"options '{before}' and '{written}' are one option"
                f"{'' if known.key in (before, written) else f' ({known.key!r})'}, set to "
                "different values; keep one")
        self._values[known.key] = valid
        self._written[known.key] = written
        return self

    @overload
    def get(self, option: ConfigOption[T]) -> T: ...

    @overload
    def get(self, option: str) -> Any: ...

    def get(self, option: ConfigOption[Any] | str) -> Any:
        known = self._option(option)
        return self._values.get(known.key, known.default)

    def contains(self, option: ConfigOption[Any] | str) -> bool:
        return self._option(option).key in self._values

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def options(self) -> tuple[ConfigOption[Any], ...]:
        return tuple(self._options.values())

    def _check(self, option: ConfigOption[Any], value: Any) -> None:
        """Rules beyond the option's type, for a subclass to add (``value`` is valid
        for ``option``'s type); raise ``ValueError`` naming the option to refuse it."""

    def _alias(self, key: str) -> KeyAlias | ForeignKey | None:
        return next((a for a in self._aliases
                     if (a.matches(key) if isinstance(a, ForeignKey) else a.key == key)), None)

    def _option(self, option: ConfigOption[Any] | str) -> ConfigOption[Any]:
        key = option.key if isinstance(option, ConfigOption) else option
        if key in self._options:
            return self._options[key]
        alias = self._alias(key)
        if isinstance(alias, KeyAlias):
            return alias.option
        if isinstance(alias, ForeignKey):
            raise ConfigurationError(f"option '{key}' has no equivalent in flink-agents-ltm: "
                                     f"{alias.note}")
        raise UnknownConfigKeyError(
            unknown_key_message(key, self._options, self.alias_keys())) from None


def _shown(text: str) -> str:
    """``text`` quoted for an error message: credentials masked, at most 40 characters."""
    masked = redact_text(text)
    return repr(masked if len(masked) <= 40 else masked[:37] + "...")


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'closest'?"``, or ``"."`` when nothing is close. Keys are
    compared whole and by their last dotted part (``agents.capacity`` finds
    ``agents.durable-async.capacity``)."""

    def likeness(candidate: str) -> float:
        whole = difflib.SequenceMatcher(None, word, candidate).ratio()
        last = difflib.SequenceMatcher(None, word.rsplit(".", 1)[-1],
                                       candidate.rsplit(".", 1)[-1]).ratio()
        return max(whole, last)

    scored = [(likeness(c), c) for c in candidates if c != word]
    best = max(scored, default=(0.0, ""))
    return f"; did you mean '{best[1]}'?" if best[0] >= 0.75 else "."


def unknown_key_message(key: str, known: Iterable[str], aliases: Iterable[str] = ()) -> str:
    """``unknown configuration key 'x'; did you mean 'y'?`` (one short line), or, when no
    known key is close, the known keys of the same first part (``agents.``, ...); the
    suggestion may also be one of ``aliases`` (other keys of the options, not listed)."""
    suggestion = did_you_mean(key, [*known, *aliases])
    if suggestion != ".":
        return f"unknown configuration key '{key}'{suggestion}"
    prefix = key.split(".", 1)[0] + "."
    near = sorted(k for k in known if k.startswith(prefix)) or sorted(known)
    return f"unknown configuration key '{key}'. Known keys: {', '.join(near)}"
